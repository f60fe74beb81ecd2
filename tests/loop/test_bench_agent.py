"""bench/agent.py --smoke: the four strategies side by side on the scripted model, and
the python tool's speed against the sandbox's own job."""
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
    r"^agent: reflexion (\d\.\d{3}) react (\d\.\d{3}) react\+reflexion (\d\.\d{3}) resample (\d\.\d{3}) "
    r"\(pass@1, (\d+) tasks\); python tool (\d+\.\d{3}) s vs sandbox job (\d+\.\d{3}) s \(medians\)$"
)


@pytest.mark.slow
def test_the_smoke_runs_the_four_strategies_and_times_the_python_tool(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "agent.py"), "--smoke", "--out", str(tmp_path),
                           "--json", str(tmp_path / "m.json")], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = LAST_LINE.match(proc.stdout.strip().splitlines()[-1])
    assert found, proc.stdout[-2000:]
    reflexion, react, react_reflexion, resample, tasks, tool_s, job_s = found.groups()
    assert int(tasks) == 8
    # The script: every third task wrong at first. The plain agent submits it; its
    # Reflexion writes a lesson and the next episode passes.
    assert float(react_reflexion) == 1.0 and float(react) < 1.0
    measures = json.loads((tmp_path / "m.json").read_text())
    for run in measures["runs"]:
        rows = run["strategies"]
        assert set(rows) == {"reflexion", "react", "react+reflexion", "resample"}
        assert rows["react"]["turns"] == 2.0 and rows["react"]["tools"] == {"python": 4, "submit": 4}
        assert rows["react"]["stops"] == {"submitted": 4}
        assert all(r["calls"] > 0 and r["tokens"] > 0 and r["seconds"] > 0 for r in rows.values())
    speed = measures["speed"]
    assert speed["calls"] == 20  # 4 + 6 scripts per task set
    # The tool costs about what a plain sandbox job of the same script costs: both timed
    # on the host, interleaved in one run, so the machine's speed and load cancel out. A
    # cost the tool added per call (a fresh worker is ~100 jobs) would show in the ratio.
    assert float(tool_s) > 0 and float(job_s) > 0
    assert speed["tool_s"] <= 3 * speed["io_job_s"], speed
