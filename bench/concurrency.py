"""Concurrency of model calls: the runner against a stub API that answers after 1 s.

Runs the 164 HumanEval tasks x (reflexion, baseline) with --workers 32 against a
local OpenAI-compatible stub server (latency 1 s per call) through the real openai
SDK and the Docker sandbox, then compares the run's time with the ideal
(total calls x 1 s / 32). Goal: ratio <= 1.25.

    python bench/concurrency.py [--workers 32] [--latency 1.0] [--trials 2]

The last line is `concurrency time/ideal ratio: <x>`.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.cli import main as harness_main  # noqa: E402
from tests.doubles.stub_server import Reply, StubRequest, StubServer  # noqa: E402

ENTRY = re.compile(r"function `(\w+)`")


def answer(request: StubRequest) -> str:
    """A plausible agent: tests that fail, a wrong implementation, a short lesson."""
    text = request.prompt_text
    found = ENTRY.search(text)
    name = found.group(1) if found else "f"
    if "writes unit tests" in text:
        return f"```python\nassert {name}(0) == 'never'\n```"
    if "why the implementation is wrong" in text:
        return "The implementation returns None; it should compute the answer."
    return f"```python\ndef {name}(*args, **kwargs):\n    return None\n```"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the stub takes per call")
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="fewer tasks, for a quick look")
    parser.add_argument("--sandbox", default="docker")
    args = parser.parse_args()

    with StubServer(latency_s=args.latency, default=Reply(answer)) as stub, tempfile.TemporaryDirectory() as tmp:
        argv = [
            "run", "--tasks", "humaneval", "--strategy", "both",
            "--model", f"openai:stub-model@{stub.openai_url}",
            "--workers", str(args.workers), "--trials", str(args.trials),
            "--sandbox", args.sandbox, "--out", str(Path(tmp) / "results"),
            "--memory-dir", str(Path(tmp) / "memory"), "--no-cache", "--no-report",
        ]
        if args.limit:
            argv += ["--limit", str(args.limit)]
        started = time.perf_counter()
        status = harness_main(argv)
        total_s = time.perf_counter() - started
        if status != 0:
            print(f"the run failed with status {status}", file=sys.stderr)
            return status
        (run_dir,) = list((Path(tmp) / "results").iterdir())
        summary = json.loads((run_dir / "summary.json").read_text())
        calls = len(stub.requests)
        trials_s = summary["timings"]["trials_s"]
        ideal = calls * args.latency / args.workers
        print()
        print(f"model calls: {calls} (stub latency {args.latency:.2f} s, workers {args.workers}, most in flight at once {stub.max_active})")
        print(f"ideal time (calls x latency / workers): {ideal:.1f} s")
        print(f"run time, trials phase: {trials_s:.1f} s; whole command incl. sandbox start-up: {total_s:.1f} s")
        print(f"concurrency time/ideal ratio: {trials_s / ideal:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
