"""What an io test costs in the sandbox beside a function test, in one run.

    python bench/io_cost.py [--backend docker|process] [--repeat R] [--tests N]

The same small problem both ways: the function task `add(a, b)` graded by an assert,
and the io task "read a and b, print a + b" graded by comparing its stdout, N tests
each (default 200) on one worker, interleaved by repetition; the fastest repetition
counts. Prints ms per test of each and the ratio io / function. A second pair does the
same with 10^5 numbers of input and output per test (a competitive-programming size).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox import IoCase, RunRequest, SandboxConfig, SandboxUnavailable, open_sandbox  # noqa: E402

FUNCTION = "def add(a, b):\n    return a + b\n"
PROGRAM = "a, b = map(int, input().split())\nprint(a + b)\n"
BIG_FUNCTION = "def double_all(xs):\n    return [2 * x for x in xs]\n"
BIG_PROGRAM = "import sys\nxs = sys.stdin.read().split()\nprint(' '.join(str(2 * int(x)) for x in xs))\n"
BIG_N = 100_000


def requests(tests: int) -> dict[str, RunRequest]:
    xs = list(range(BIG_N))
    big_input = " ".join(map(str, xs)) + "\n"
    big_output = " ".join(str(2 * x) for x in xs) + "\n"
    big_tests = max(1, tests // 20)
    return {
        "function": RunRequest(FUNCTION, [f"assert add({i}, {i + 1}) == {2 * i + 1}" for i in range(tests)], 5.0),
        "io": RunRequest(PROGRAM, [IoCase(f"{i} {i + 1}\n", f"{2 * i + 1}\n") for i in range(tests)], 5.0),
        f"function, {BIG_N} numbers": RunRequest(
            BIG_FUNCTION, [f"assert double_all(list(range({BIG_N}))) == [2 * x for x in range({BIG_N})]"] * big_tests, 10.0),
        f"io, {BIG_N} numbers": RunRequest(BIG_PROGRAM, [IoCase(big_input, big_output)] * big_tests, 10.0),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="docker", choices=("docker", "process"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tests", type=int, default=200)
    args = parser.parse_args()
    try:
        sandbox = open_sandbox(SandboxConfig(backend=args.backend, workers=1))
    except SandboxUnavailable as exc:
        print(f"sandbox unavailable: {exc}", file=sys.stderr)
        return 2
    try:
        jobs = requests(args.tests)
        for request in jobs.values():  # warm-up: the worker's first jobs, imports
            sandbox.run(RunRequest(request.program, list(request.tests)[:2], request.timeout_s, compare=request.compare))
        best = {name: float("inf") for name in jobs}
        for _ in range(args.repeat):
            for name, request in jobs.items():
                start = time.perf_counter()
                outcomes = sandbox.run(request)
                elapsed = time.perf_counter() - start
                bad = [o for o in outcomes if not o.passed]
                if bad:
                    print(f"{name}: {len(bad)} tests did not pass: {bad[0]}", file=sys.stderr)
                    return 1
                best[name] = min(best[name], elapsed / len(outcomes))
    finally:
        sandbox.close()
    print(f"backend {args.backend}, 1 worker, fastest of {args.repeat}")
    for name, seconds in best.items():
        print(f"  {name:<28} {seconds * 1000:8.2f} ms per test")
    names = list(best)
    print(f"io / function, small:   {best[names[1]] / best[names[0]]:.2f}")
    print(f"io / function, {BIG_N} numbers: {best[names[3]] / best[names[2]]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
