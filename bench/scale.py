"""Scaling on Ray: the runner on a local cluster of 1, 2 and 4 nodes against a 1 s stub API.

Runs the 164 HumanEval tasks x (reflexion, baseline) with `--executor ray` on a
cluster started here with Ray's `cluster_utils.Cluster` (each node: 1 CPU, no
dashboard, a 100 MB object store; every node runs `--workers` units at once and its
own Docker sandbox pool of `--sandbox-workers` containers), against the same
agent and stub server as bench/concurrency.py. For each cluster size it compares
the trials phase with the ideal: total calls x latency / (workers x nodes).
Goal at 4 nodes: ratio <= 1.3.

All nodes share this machine's cores and Docker engine, so the sandbox work of
4 nodes competes for the same CPUs: the ideal counts model latency only, and where
the sandbox's CPU work exceeds what this machine's cores do in that time, no number
of local "nodes" can reach it (a real cluster brings the cores with the nodes). The
time spent in the sandbox is printed beside each ratio. With --workers 8 the 4-node
run has the same concurrency (32) as bench/concurrency.py's local run.

    python bench/scale.py [--nodes 1,2,4] [--workers 8] [--latency 1.0] [--trials 2]

The last line is `ray scale time/ideal ratio at 4 nodes: <x>` (at the largest size).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from concurrency import answer  # noqa: E402

from harness.cli import main as harness_main  # noqa: E402
from tests.doubles.ray_cluster import start_local_cluster as start_cluster  # noqa: E402
from tests.doubles.stub_server import Reply, StubServer  # noqa: E402


def run_once(nodes: int, args: argparse.Namespace, tmp: Path) -> dict:
    started = time.perf_counter()
    cluster = start_cluster(nodes)
    cluster_s = time.perf_counter() - started
    try:
        with StubServer(latency_s=args.latency, default=Reply(answer)) as stub:
            out = tmp / f"results-{nodes}"
            argv = [
                "run", "--tasks", "humaneval", "--strategy", "both",
                "--model", f"openai:stub-model@{stub.openai_url}",
                "--executor", "ray", "--ray-address", cluster.address,
                "--workers", str(args.workers), "--sandbox-workers", str(args.sandbox_workers),
                "--trials", str(args.trials), "--sandbox", args.sandbox,
                "--out", str(out), "--memory-dir", str(tmp / f"memory-{nodes}"), "--no-cache", "--no-report",
            ]
            if args.limit:
                argv += ["--limit", str(args.limit)]
            status = harness_main(argv)
            if status != 0:
                raise SystemExit(f"the {nodes}-node run failed with status {status}")
            (run_dir,) = list(out.iterdir())
            timings = json.loads((run_dir / "summary.json").read_text())["timings"]
            calls, max_active = len(stub.requests), stub.max_active
    finally:
        cluster.shutdown()
    ideal = calls * args.latency / (args.workers * nodes)
    return {
        "nodes": nodes, "calls": calls, "max_active": max_active, "ideal": ideal,
        "trials_s": timings["trials_s"], "start_s": timings.get("cluster_start_s", 0.0) + cluster_s,
        "sandbox_s": timings["sandbox_s"],
        "ratio": timings["trials_s"] / ideal,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", default="1,2,4", help="cluster sizes to run, comma-separated")
    parser.add_argument("--workers", type=int, default=8, help="units in flight per node")
    parser.add_argument("--sandbox-workers", type=int, default=2, help="containers in each node's sandbox pool")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the stub takes per call")
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="fewer tasks, for a quick look")
    parser.add_argument("--sandbox", default="docker")
    args = parser.parse_args()
    sizes = [int(n) for n in args.nodes.split(",") if n.strip()]

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for nodes in sizes:
            results.append(run_once(nodes, args, Path(tmp)))
    print()
    for r in results:
        print(
            f"{r['nodes']} node(s): {r['calls']} calls, at most {r['max_active']} in flight; "
            f"ideal (calls x {args.latency:g} s / {args.workers * r['nodes']}) {r['ideal']:.1f} s; "
            f"trials phase {r['trials_s']:.1f} s; ratio {r['ratio']:.3f} "
            f"(cluster and node start-up, not counted: {r['start_s']:.1f} s; "
            f"time in the sandbox, summed over units: {r['sandbox_s']:.0f} s)"
        )
    last = results[-1]
    print(f"ray scale time/ideal ratio at {last['nodes']} nodes: {last['ratio']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
