"""The report on real records: `harness run --strategy all` with the scripted model
through the Docker sandbox, then `harness report`, checked against trials.jsonl and
errors.jsonl as the run wrote them (no record written by hand)."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from harness.rundata import read_trials
from tests.helpers import run_harness

N_TASKS = 6  # mul/i: return n * i


def write_inputs(folder: Path) -> tuple[Path, Path]:
    tasks, rules = [], []
    rules.append({"match": "what should the next implementation do differently", "reply": "Multiply, do not add."})
    for i in range(N_TASKS):
        tasks.append({"task_id": f"mul/{i}", "prompt": f'def f{i}(n: int) -> int:\n    """Return n times {i}."""\n',
                      "entry_point": f"f{i}", "tests": [f"assert f{i}(3) == {3 * i}", f"assert f{i}(-2) == {-2 * i}"]})
        right = f"```python\ndef f{i}(n):\n    return n * {i}\n```"
        wrong = f"```python\ndef f{i}(n):\n    return n + {i}\n```"
        # mul/5's test writer fails for good: its attempts stop before any trial record
        tests = "!error: 503 after 5 retries" if i == 5 else f"```python\nassert f{i}(1) == {i}\nassert f{i}(5) == {5 * i}\n```"
        rules.append({"match": f"unit tests for the function `f{i}`", "reply": tests})
        rules.append({"match": f"improved implementation of `f{i}`", "reply": right})
        rules.append({"match": f"Implement the function `f{i}`", "reply": right if i % 2 == 0 else wrong})
    task_file, script = folder / "tasks.jsonl", folder / "script.jsonl"
    task_file.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    script.write_text("".join(json.dumps(r) + "\n" for r in rules))
    return task_file, script


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_harness(*args, cwd=cwd, timeout=600)


@pytest.mark.docker
@pytest.mark.slow
def test_report_on_a_real_four_strategy_run_with_a_model_outage(tmp_path: Path):
    tasks, script = write_inputs(tmp_path)
    proc = harness("run", "--tasks", f"jsonl:{tasks}", "--model", f"scripted:{script}", "--strategy", "all",
                   "--trials", "2", "--out", str(tmp_path / "out"), "--memory-dir", str(tmp_path / "mem"),
                   "--no-cache", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # three attempts did not finish
    (run_dir,) = list((tmp_path / "out").iterdir())
    # the run's own summary (written after its report) counts errors.jsonl too, and
    # its printout opens on the answer
    ran = json.loads((run_dir / "summary.json").read_text())
    assert (ran["harness_errors"], ran["strategies"]["resample"]["incomplete_attempts"]) == (3, 1)
    assert "timings" in ran
    # the run holds feedback: the answer opens on the lesson's own effect, and says which it is
    assert "\nThe lesson's own effect (feedback is reflexion without it): reflexion \u2212 feedback: +0.0 points" \
        in proc.stdout
    assert "\nTotal, against baseline (plain sampling): reflexion \u2212 baseline: +40.0 points [95% CI " in proc.stdout
    assert "note: 1 task of 6 left out of every figure: not completed by every strategy" in proc.stdout
    assert ran["status"]["state"] == "incomplete" and ran["session"]["exit"] == 1
    assert f"status: incomplete: 21 of 24 attempts complete" in proc.stdout
    assert f"Resume with: python -m harness run --resume {run_dir}" in proc.stdout
    errors = [json.loads(x) for x in (run_dir / "errors.jsonl").read_text().splitlines()]
    assert sorted((e["task_id"], e["strategy"]) for e in errors) == [
        ("mul/5", "feedback"), ("mul/5", "reflexion"), ("mul/5", "resample")]
    assert harness("report", str(run_dir), cwd=tmp_path).returncode == 0

    summary = json.loads((run_dir / "summary.json").read_text())
    assert (summary["tasks_compared"], summary["tasks_excluded"], summary["harness_errors"]) == (5, 1, 3)
    s = summary["strategies"]
    assert {k: v["incomplete_attempts"] for k, v in s.items()} == {
        "reflexion": 1, "feedback": 1, "resample": 1, "baseline": 0}
    # on mul/0..4: odd tasks are fixed by feedback (with or without a lesson), never by resampling
    assert {k: v["pass@1"] for k, v in s.items()} == {
        "reflexion": 1.0, "feedback": 1.0, "resample": pytest.approx(0.6), "baseline": pytest.approx(0.6)}
    pairs = {(p["a"], p["b"]): p for p in summary["paired"]}
    rb = pairs[("reflexion", "baseline")]
    assert (rb["fixed"], rb["broken"], rb["tasks"], rb["excluded"]) == (2, 0, 5, 1)
    assert rb["diff"] == pytest.approx(0.4)
    assert pairs[("resample", "baseline")]["diff"] == 0.0
    assert pairs[("reflexion", "resample")]["fixed"] == 2

    # compute curve: the records as they are, every strategy, calls and tokens
    records = [r for r in read_trials(run_dir / "trials.jsonl") if r.task_id != "mul/5"]
    curve = pd.read_csv(run_dir / "compute_curve.csv").set_index(["strategy", "budget"])
    for strategy in ("reflexion", "feedback", "resample"):
        for t in (1, 2):
            spent = [r for r in records if r.strategy == strategy and r.trial <= t]
            assert curve.loc[(strategy, f"t={t}"), "calls"] == pytest.approx(sum(r.model_calls for r in spent) / 5)
            assert curve.loc[(strategy, f"t={t}"), "tokens"] == pytest.approx(
                sum(r.input_tokens + r.output_tokens for r in spent) / 5)
    # the reflection about trial 1 is charged to trial 2: trial 1 costs the same with or
    # without a lesson, and trial 2 of reflexion costs one call more per failed task
    assert curve.loc[("reflexion", "t=1"), "calls"] == curve.loc[("feedback", "t=1"), "calls"]
    assert curve.loc[("reflexion", "t=2"), "calls"] - curve.loc[("feedback", "t=2"), "calls"] == pytest.approx(2 / 5)
    assert curve.loc[("baseline", "k=1"), "kind"] == "agent"

    page = (run_dir / "report.html").read_text(encoding="utf-8")
    top = re.search(r'<p class="topline">([^<]*)</p>', page).group(1)
    assert top.startswith("The lesson&#39;s own effect (feedback is reflexion without it): reflexion \u2212 feedback: ")
    total = re.search(r'<li>(Total, against baseline[^<]*)</li>', page).group(1)
    assert "reflexion \u2212 baseline: +40.0 points [95% CI " in total and "fixed 2, broken 0 of 5 tasks" in total
    caveats = dict(re.findall(r'data-caveat="([a-z_]+)">([^<]*)</li>', page))
    assert caveats["excluded"].startswith("1 task of 6 left out of every figure") and "mul/5" in caveats["excluded"]
    assert caveats["incomplete"].startswith("3 incomplete attempts (1 reflexion, 1 feedback, 1 resample)")
    assert caveats["errors"] == "3 harness errors in errors.jsonl left attempts unfinished (model error: 3)."
    # `harness report` afterwards keeps the session the run ended: still incomplete, not interrupted
    assert summary["status"]["state"] == "incomplete"
    assert "default prompts, digest sha256:" in page
