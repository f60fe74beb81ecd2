"""summary.json schema and values on the synthetic run (hand-computed in synthrun.py)."""
from __future__ import annotations

import json

import pytest

from harness.summary import build_summary, format_summary
from synthrun import TASKS, header, rec, synthetic_records

REQUIRED = {"pass@1", "pass@1_by_trial", "model_calls", "input_tokens", "output_tokens", "errors", "wall_s"}


def test_summary_schema_and_hand_values():
    s = build_summary(header(), synthetic_records())
    assert s["schema"] == 1 and s["run_id"] == "synthetic-run" and s["tasks"] == len(TASKS)
    assert list(s["strategies"]) == ["reflexion", "feedback", "baseline"]
    for entry in s["strategies"].values():
        assert REQUIRED | {"pass@2"} <= set(entry)
    r, b = s["strategies"]["reflexion"], s["strategies"]["baseline"]
    assert (s["tasks_compared"], s["tasks_excluded"]) == (4, 1)  # HumanEval/2: reflexion left it incomplete
    assert r["pass@1"] == pytest.approx(0.5)
    assert r["pass@2"] == pytest.approx(0.5)
    assert r["pass@1_by_trial"] == pytest.approx([0.375, 0.625, 0.5])
    assert r["incomplete_attempts"] == 1 and r["attempts"] == 9 and r["tasks_scored"] == 4
    assert r["tasks_completed"] == 4 and s["strategies"]["baseline"]["tasks_completed"] == 5
    assert r["errors"] == 1
    records = [x for x in synthetic_records() if x.strategy == "reflexion"]
    assert r["model_calls"] == sum(x.model_calls for x in records)
    assert r["wall_s"] == pytest.approx(0.5 * len(records))
    assert r["cost_usd"] == pytest.approx(sum(x.cost_usd for x in records))
    assert b["pass@1"] == pytest.approx(0.375) and b["pass@2"] == pytest.approx(0.5)
    assert b["pass@1_by_trial"] == pytest.approx([0.375])
    f = s["strategies"]["feedback"]
    assert f["pass@1_by_trial"] == pytest.approx([0.0, 0.5, 0.5])
    pairs = {(p["a"], p["b"]): p for p in s["paired"]}
    assert list(pairs) == [("reflexion", "baseline"), ("feedback", "baseline"), ("reflexion", "feedback")]
    rb = pairs[("reflexion", "baseline")]
    assert rb["diff"] == pytest.approx(0.125)
    assert (rb["fixed"], rb["broken"], rb["both"], rb["neither"]) == (1, 0, 3, 4)
    assert (rb["pairs"], rb["tasks"], rb["excluded"]) == (8, 4, 1)
    assert rb["ci_low"] <= rb["diff"] <= rb["ci_high"] and rb["p_value"] == 1.0
    # reflexion: 2 calls per trial (0 for the error trial), baseline 1 per sample;
    # per attempt /0 (4, 2), /1 (6, 2), /3 (0, 6), Evil (2, 2)
    assert rb["calls_ratio"] == pytest.approx(((4 + 2) / 2 + (6 + 2) / 2 + (0 + 6) / 2 + 2) / 4)
    # last element of pass@1 by trial is pass@1, for every strategy
    for entry in s["strategies"].values():
        assert entry["pass@1_by_trial"][-1] == pytest.approx(entry["pass@1"])
    json.dumps(s, allow_nan=False)  # strict JSON: no NaN anywhere


def test_k_above_samples_is_not_reported_and_missing_strategy_gives_nulls():
    head = header(samples=1, k=[1, 5], strategies=["reflexion", "baseline"])
    records = [rec("T1", "baseline", 1, 1, final=True, hidden=True, stop="single_sample")]
    s = build_summary(head, records)
    assert "pass@5" not in s["strategies"]["baseline"]
    assert s["strategies"]["reflexion"]["pass@1"] is None  # configured but nothing finished yet
    assert s["strategies"]["reflexion"]["pass@1_by_trial"] == [None, None, None]
    json.dumps(s, allow_nan=False)


def test_format_summary_table():
    text = format_summary(build_summary(header(oracle_feedback=True), synthetic_records()))
    lines = text.splitlines()
    assert "WARNING: oracle feedback" in text
    row = next(line for line in lines if line.startswith("reflexion ") and "0.500" in line)
    assert " 32 " in f" {row} " and "8.5" in row
    by_trial = next(line for line in lines if line.startswith("reflexion ") and "0.375" in line)
    assert by_trial.split()[1:] == ["0.375", "0.625", "0.500"]
    assert any(line.startswith("baseline (ref.)") for line in lines)
    assert lines[2].startswith("reflexion - baseline: +12.5 points [95% CI ")
    assert "fixed 1, broken 0 of 8 attempt pairs on 4 tasks" in lines[2]
    assert "1 task(s) left out: not completed by every strategy" in text
