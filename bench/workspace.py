"""What a command in a workspace costs beside a bare exec in the same container. One run.

    python bench/workspace.py [--calls N] [--image IMAGE]

Opens one docker workspace (sandbox/workspace_docker.py) and, interleaved so that a
busy machine slows all alike, times N round trips of each:

- `Workspace.run("true")`: the harness's call (the sweep before and after, the output
  cap, the exit code);
- `docker exec <container> true` (the CLI, a fresh process each time);
- the same exec through the engine's API from this process (create, start, read, inspect),
  what the workspace's call is made of, without the workspace's work.

Prints the median of each and the ratios; the last line reads
`workspace run / docker exec: <ratio> (median <ms> vs <ms>)`.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sandbox import SandboxConfig, WorkspaceSpec, open_workspace  # noqa: E402


def _timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--image", default=SandboxConfig().image)
    args = parser.parse_args()
    with open_workspace(SandboxConfig(), WorkspaceSpec(image=args.image)) as workspace:
        container = workspace.container_id
        client = workspace._client.api

        def api_exec() -> None:
            created = client.exec_create(container, ["true"], user="65534:65534")
            client.exec_start(created["Id"])
            client.exec_inspect(created["Id"])

        def cli_exec() -> None:
            subprocess.run(["docker", "exec", container, "true"], check=True)

        def workspace_run() -> None:
            assert workspace.run("true").exit_code == 0

        calls = {"workspace run": workspace_run, "docker exec": cli_exec, "api exec": api_exec}
        for call in calls.values():  # warm
            call()
        times: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(args.calls):
            for name, call in calls.items():
                times[name].append(_timed(call))
    median = {name: statistics.median(values) * 1000 for name, values in times.items()}
    for name, value in median.items():
        print(f"{name:>14}: median {value:6.1f} ms over {args.calls} calls")
    print(f"workspace run - api exec: {median['workspace run'] - median['api exec']:+.1f} ms")
    print(f"workspace run / docker exec: {median['workspace run'] / median['docker exec']:.2f} "
          f"(median {median['workspace run']:.1f} ms vs {median['docker exec']:.1f} ms)")


if __name__ == "__main__":
    main()
