"""bench/recall.py --smoke: the recall experiment end to end on the scripted model."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAST_LINE = re.compile(
    r"^recall: (\d\.\d{3}) - (\d\.\d{3}): ([+-]\d+\.\d) points \[95% CI ([+-]\d+\.\d), ([+-]\d+\.\d)\] "
    r"on (\d+) tasks; (\d+\.\d) lessons recalled per attempt$"
)


@pytest.mark.slow
def test_the_smoke_runs_both_runs_and_ends_with_the_recall_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "recall.py"), "--smoke", "--out", str(tmp_path), "--json",
         str(tmp_path / "m.json")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    found = LAST_LINE.match(last)
    assert found, last
    with_, without, diff, low, high, tasks, per_attempt = found.groups()
    assert int(tasks) == 6 and float(per_attempt) > 0
    assert float(low) <= float(diff) <= float(high)
    measures = json.loads((tmp_path / "m.json").read_text())
    assert measures["shown"] > 0 and measures["recall"]["k"] == 3
    assert measures["input_tokens"]["reflexion+recall"] > measures["input_tokens"]["reflexion"]  # recall costs tokens
    # Both runs are ordinary run folders; the second froze the first's lessons.
    runs = sorted((tmp_path / "results").iterdir())
    assert len(runs) == 2
    header = json.loads((runs[1] / "run.json").read_text())
    assert header["recall"]["source"] == str(runs[0].resolve()) and (runs[1] / "recall_pool.json").is_file()
