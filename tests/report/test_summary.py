"""summary.json schema and values on the synthetic run (hand-computed in synthrun.py)."""
from __future__ import annotations

import msgspec
import dataclasses
import json
import re

import pytest

from harness.rundata.numbers import of_records as build_summary
from harness.report.table import format_summary
from synthrun import TASKS, header, rec, synthetic_records

REQUIRED = {"pass@1", "pass@1_by_trial", "model_calls", "input_tokens", "output_tokens", "errors", "wall_s"}


def test_summary_schema_and_hand_values():
    s = build_summary(header(), synthetic_records())
    assert s["schema"] == 2 and s["run_id"] == "synthetic-run" and s["tasks"] == len(TASKS)
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


def _text_table(lines: list[str], first_column: str) -> dict[str, dict[str, str]]:
    """The plain-text table whose header starts with `first_column`, as {row name: {column: cell}}."""
    start = next(i for i, line in enumerate(lines) if line.startswith(first_column + " "))
    head = re.split(r"\s{2,}", lines[start].strip())
    rows = {}
    for line in lines[start + 2:]:
        if not line.strip() or line.startswith("summed time ="):
            break
        cells = re.split(r"\s{2,}", line.strip())
        cells += [""] * (len(head) - len(cells))
        rows[cells[0]] = dict(zip(head, cells))
    return rows


def test_format_summary_table():
    summary = build_summary(header(oracle_feedback=True), synthetic_records())
    lines = format_summary(summary).splitlines()
    assert lines[1].startswith("status: interrupted: 29 of 30 attempts complete")
    assert lines[2].startswith("time: elapsed ")
    # compute beside dollars: wall time, model time, tokens/s; a scripted model has no price
    assert lines[3].startswith("compute: ") and "of model time" in lines[3] and "1,520 output tokens" in lines[3]
    assert lines[3].endswith("dollars: $0.0760 at list price")
    lines = lines[:3] + lines[4:]
    # the run holds feedback: the answer leads with the lesson's own effect, and says so
    assert lines[4].startswith("The lesson's own effect (feedback is reflexion without it): reflexion \u2212 feedback: ")
    assert lines[5].startswith("Total, against baseline (plain sampling): reflexion \u2212 baseline: +12.5 points [95% CI ")
    assert "fixed 1, broken 0 of 8 attempt pairs on 4 tasks" in lines[5]
    assert lines[6].startswith("feedback \u2212 baseline: ")
    assert lines[7].startswith("WARNING: Oracle feedback: the hidden tests fed the trial loop")
    assert any(line.startswith("note: 1 task of 5 left out of every figure") for line in lines)
    table = _text_table(lines, "strategy")
    assert list(table) == ["reflexion", "feedback", "baseline"]
    r = table["reflexion"]
    assert (r["pass@1 [95% CI]"], r["pass@2 [95% CI]"]) == ("50.0% [15.0%, 85.0%]", "50.0% [15.0%, 85.0%]")
    assert (r["calls"], r["summed time"], r["unusable answers"], r["model errors"], r["incomplete"]) == \
        ("32", "8 s", "1", "0", "1")
    assert (r["cost $"], r["cached $"]) == ("0.0320", "\u2013")
    by_trial = _text_table(lines, "pass@1 by trial")
    assert list(by_trial["reflexion"].values())[1:] == ["37.5%", "62.5%", "50.0%"]
    assert list(by_trial["baseline"].values())[1:] == ["37.5%", "", ""]  # one trial: nothing at t=2, 3


def test_money_spent_and_cache_served_cost_are_separate():
    records = [rec("T1", "baseline", 1, 1, final=True, hidden=True, stop="single_sample"),
               rec("T2", "baseline", 1, 1, final=True, hidden=True, stop="single_sample")]
    records[1] = msgspec.structs.replace(records[1], cost_usd=None, cached_cost_usd=0.25, cached_calls=1)
    b = build_summary(header(strategies=["baseline"]), records)["strategies"]["baseline"]
    assert b["cost_usd"] == pytest.approx(records[0].cost_usd)
    assert b["cached_cost_usd"] == pytest.approx(0.25) and b["cached_calls"] == 1
    nothing_cached = build_summary(header(strategies=["baseline"]), records[:1])["strategies"]["baseline"]
    assert nothing_cached["cached_cost_usd"] is None


def test_no_records_gives_nulls_and_zeros_in_strict_json():
    s = build_summary(header(), [])
    assert s["tasks"] == len(TASKS)
    for entry in s["strategies"].values():
        assert entry["pass@1"] is None and entry["pass@1_ci95"] == [None, None]
        assert (entry["model_calls"], entry["attempts"], entry["tasks_scored"], entry["errors"]) == (0, 0, 0, 0)
        assert entry["cost_usd"] is None
    json.dumps(s, allow_nan=False)
    assert format_summary(s).splitlines()[0].startswith("run synthetic-run: 5 tasks")


def test_all_passing_gives_one_with_an_interval_over_tasks_that_keeps_its_width():
    records = [rec(t, "baseline", a, 1, final=True, hidden=True, stop="single_sample") for t in TASKS for a in (1, 2)]
    b = build_summary(header(strategies=["baseline"]), records)["strategies"]["baseline"]
    assert (b["pass@1"], b["pass@2"], b["pass@1_by_trial"]) == (1.0, 1.0, [1.0])
    # 5 tasks, 10 attempts, all passing: Wilson's interval for 5 of 5 tasks, not a point
    assert b["pass@1_ci95"] == [pytest.approx(0.5655, abs=1e-4), 1.0]
    assert (b["attempts"], b["tasks_scored"], b["incomplete_attempts"]) == (10, 5, 0)


def test_lines_written_twice_by_a_resume_count_once():
    records = synthetic_records()
    twice = records + records[:7] + [records[-1]]  # a resumed run re-appended some trials
    assert build_summary(header(), twice) == build_summary(header(), records)


def test_the_table_says_what_its_error_columns_count_and_shows_model_errors_apart():
    errors = [{"kind": "model_error", "task_id": "T9", "strategy": "reflexion", "attempt": 1, "trial": 1,
               "role": "actor", "error": "HTTP 404: no such model", "at": "2026-12-01T00:00:00+00:00"},
              {"kind": "model_error", "task_id": "T8", "strategy": "reflexion", "attempt": 1, "trial": 2,
               "role": "reflection", "error": "HTTP 503", "at": "2026-12-01T00:00:00+00:00"},
              {"kind": "unit_exception", "task_id": "T7", "strategy": "baseline", "attempt": 1, "trial": 1,
               "error": "RuntimeError: x", "at": "2026-12-01T00:00:00+00:00"}]
    summary = build_summary(header(), synthetic_records(), errors)
    assert summary["strategies"]["reflexion"]["model_errors"] == 2
    assert summary["strategies"]["baseline"]["unit_errors"] == 1 and summary["strategies"]["baseline"]["model_errors"] == 0
    lines = format_summary(summary).splitlines()
    table = _text_table(lines, "strategy")
    assert (table["reflexion"]["unusable answers"], table["reflexion"]["model errors"]) == ("1", "2")
    assert table["baseline"]["model errors"] == "0"
    assert any(line.startswith("unusable answers = trials whose answer held no usable code") and
               "model errors = attempts a model error stopped" in line for line in lines)
    texts = {c["key"]: c["text"] for c in summary["caveats"]}
    assert "whose answer held no usable code" in texts["unusable_answers"] and "model error" not in texts["unusable_answers"]


def test_a_sandbox_fault_a_control_job_met_too_names_its_task():
    errors = [{"kind": "sandbox_error", "task_id": "T9", "strategy": "reflexion", "attempt": 1, "trial": 1,
               "error": "task T9, hidden tests: the sandbox could not grade ...; a known-good control job failed too",
               "at": "2026-12-01T00:00:00+00:00"}]
    summary = build_summary(header(), synthetic_records(), errors)
    assert summary["sandbox_faults"] == ["T9"] and summary["strategies"]["reflexion"]["sandbox_errors"] == 1
    texts = {c["key"]: c["text"] for c in summary["caveats"]}
    assert "T9" in texts["sandbox_faults"] and "control job" in texts["sandbox_faults"]
    assert "sandbox_faults" not in build_summary(header(), synthetic_records())
