"""What the agent's `bash` tool costs beside a bare `docker exec` in the same container. One run.

    python bench/agent_tools.py [--calls N] [--image IMAGE]

Opens one docker workspace and, interleaved so that a busy machine slows all alike,
times N round trips of each: the `bash` tool's call (harness/agent/workspace_tools.py:
the workspace's run, then the result the model reads), `Workspace.run("true")` beneath
it (bench/workspace.py measures that layer against the engine), and `docker exec
<container> true` (the CLI, a fresh process each time).

Prints the median of each; the last two lines read
`bash tool - workspace run: <+ms>` and
`bash tool / docker exec: <ratio> (median <ms> vs <ms>)`.
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

from harness.agent.workspace_tools import Bash, WorkspaceToolEnv  # noqa: E402
from harness.text.prompting import Prompts  # noqa: E402
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
        env = WorkspaceToolEnv(scope=None, settings=None, workspace=workspace, prompts=Prompts())
        bash = Bash()

        def tool_call() -> None:
            assert bash.run({"command": "true"}, env).status == "ok"

        def workspace_run() -> None:
            assert workspace.run("true").exit_code == 0

        def cli_exec() -> None:
            subprocess.run(["docker", "exec", workspace.container_id, "true"], check=True)

        calls = {"bash tool": tool_call, "workspace run": workspace_run, "docker exec": cli_exec}
        for call in calls.values():  # warm
            call()
        times: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(args.calls):
            for name, call in calls.items():
                times[name].append(_timed(call))
    median = {name: statistics.median(values) * 1000 for name, values in times.items()}
    for name, value in median.items():
        print(f"{name:>14}: median {value:6.1f} ms over {args.calls} calls")
    print(f"bash tool - workspace run: {median['bash tool'] - median['workspace run']:+.1f} ms")
    print(f"bash tool / docker exec: {median['bash tool'] / median['docker exec']:.2f} "
          f"(median {median['bash tool']:.1f} ms vs {median['docker exec']:.1f} ms)")


if __name__ == "__main__":
    main()
