"""summary.json schema and values on the synthetic run (hand-computed in synthrun.py)."""
from __future__ import annotations

import dataclasses
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
    assert r["pass@1"] == pytest.approx(0.6)
    assert r["pass@2"] == pytest.approx(0.5)
    assert r["pass@1_by_trial"] == pytest.approx([0.3, 0.5, 0.6])
    assert r["incomplete_attempts"] == 1 and r["attempts"] == 9 and r["tasks_scored"] == 5
    assert r["errors"] == 1
    records = [x for x in synthetic_records() if x.strategy == "reflexion"]
    assert r["model_calls"] == sum(x.model_calls for x in records)
    assert r["wall_s"] == pytest.approx(0.5 * len(records))
    assert r["cost_usd"] == pytest.approx(sum(x.cost_usd for x in records))
    assert b["pass@1"] == pytest.approx(0.5) and b["pass@2"] == pytest.approx(0.6)
    assert b["pass@1_by_trial"] == pytest.approx([0.5])
    f = s["strategies"]["feedback"]
    assert f["pass@1_by_trial"] == pytest.approx([0.0, 0.6, 0.6])
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
    row = next(line for line in lines if line.startswith("reflexion ") and "0.600" in line)
    assert "0.500" in row and " 32 " in f" {row} " and "8.5" in row
    by_trial = next(line for line in lines if line.startswith("reflexion ") and "0.300" in line)
    assert by_trial.split()[1:] == ["0.300", "0.500", "0.600"]
    assert any(line.startswith("baseline (ref.)") for line in lines)


def test_money_spent_and_cache_served_cost_are_separate():
    records = [rec("T1", "baseline", 1, 1, final=True, hidden=True, stop="single_sample"),
               rec("T2", "baseline", 1, 1, final=True, hidden=True, stop="single_sample")]
    records[1] = dataclasses.replace(records[1], cost_usd=None, cached_cost_usd=0.25, cached_calls=1)
    b = build_summary(header(strategies=["baseline"]), records)["strategies"]["baseline"]
    assert b["cost_usd"] == pytest.approx(records[0].cost_usd)
    assert b["cached_cost_usd"] == pytest.approx(0.25) and b["cached_calls"] == 1
    nothing_cached = build_summary(header(strategies=["baseline"]), records[:1])["strategies"]["baseline"]
    assert nothing_cached["cached_cost_usd"] is None
