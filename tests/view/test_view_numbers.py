"""The view's numbers are the run data's numbers, and the vectorised metrics agree with
plain reference computations over the records (loops, exact fractions)."""
from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from harness.rundata import SCHEMA_VERSION, TrialRecord, folder, frames, metrics, numbers
from harness.view.catalog import Catalog
from harness.view.index import TrialIndex
from viewruns import header, trial, write_run

STATUS_FREE = ("status", "caveats", "session", "self_checked")  # the view alone knows a run is live


def random_records(seed: int) -> list[dict]:
    """A messy run: 3 strategies, 3 samples, incomplete attempts, model errors, a duplicate line."""
    rng = random.Random(seed)
    out = []
    for task in range(25):
        skill = rng.random()
        for attempt in range(1, 4):
            for strategy in ("reflexion", "feedback", "baseline"):
                budget = 1 if strategy == "baseline" else 3
                complete = rng.random() > 0.08
                n = rng.randint(1, budget)
                for t in range(1, n + 1):
                    last = t == n and complete
                    internal = None if strategy == "baseline" else rng.random() < 0.5
                    rec = trial(f"R/{task}", strategy, t, final=last, internal=internal,
                                hidden=rng.random() < skill, attempt=attempt,
                                stop=("single_sample" if strategy == "baseline" else "budget"),
                                model_calls=rng.randint(1, 3), input_tokens=rng.randint(50, 500),
                                error="model error" if rng.random() < 0.03 else None)
                    out.append(rec)
    out.append(dict(out[5]))  # a duplicated line (a resumed run): the last one wins
    return out


def _records(rows: list[dict]) -> list[TrialRecord]:
    return [TrialRecord.from_dict({**r, "schema": SCHEMA_VERSION}) for r in rows]


def _view_numbers(run: Path) -> dict:
    return Catalog(run.parent).get(run.name).numbers()


def _report_numbers(run: Path) -> dict:
    return numbers.of_folder(folder.load(run))


def _agree(run: Path) -> dict:
    """The view's numbers for a run folder are the report's, key by key."""
    view, report = _view_numbers(run), _report_numbers(run)
    for key in report:
        if key not in STATUS_FREE:
            assert view[key] == report[key], key
    return view


def _reference_by_trial(records: list[TrialRecord], strategy: str, top: int, shared: set[str]) -> list[float]:
    """pass@1 at trial t with the min(t, last) rule, by loops over the records."""
    by_attempt: dict[tuple[str, int], dict[int, TrialRecord]] = {}
    for r in records:
        if r.strategy == strategy and r.task_id in shared:
            by_attempt.setdefault((r.task_id, r.attempt), {})[r.trial] = r
    out = []
    for t in range(1, top + 1):
        per_task: dict[str, list[bool]] = {}
        for (task, _), trials in by_attempt.items():
            final = [n for n, r in trials.items() if r.final]
            if not final:
                continue
            last = min(final)
            upto = max(n for n in trials if n <= min(t, last))
            per_task.setdefault(task, []).append(trials[upto].hidden_passed)
        out.append(float(np.mean([np.mean(v) for v in per_task.values()])) if per_task else math.nan)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_view_numbers_are_the_report_numbers_and_match_references(tmp_path: Path, seed: int):
    rows = random_records(seed)
    task_ids = [f"R/{i}" for i in range(25)]
    run = write_run(tmp_path / "runs" / "run", header(strategies=["reflexion", "feedback", "baseline"], samples=3,
                                                      tasks=task_ids), rows)
    doc = _agree(run)
    records = _records(rows)
    shared = set(t for t in task_ids) - set(doc["excluded_tasks"])
    assert 0 < len(shared) < 25  # incomplete attempts leave some tasks out of every figure
    for s in ("reflexion", "feedback", "baseline"):
        top = 1 if s == "baseline" else 3
        want = _reference_by_trial(records, s, top, shared)
        np.testing.assert_allclose(doc["strategies"][s]["pass@1_by_trial"], want, atol=1e-12)
    # attempt pairs counted by hand from the records, McNemar against exact fractions
    final: dict[tuple[str, str, int], bool] = {}
    for r in records:
        if r.final:
            final[(r.task_id, r.strategy, r.attempt)] = r.hidden_passed
    for pair in doc["paired"]:
        fixed = broken = n = 0
        for (task, strategy, attempt), passed in final.items():
            other = final.get((task, pair["b"], attempt))
            if strategy != pair["a"] or other is None or task not in shared:
                continue
            n += 1
            fixed += passed and not other
            broken += other and not passed
        assert (pair["fixed"], pair["broken"], pair["pairs"]) == (fixed, broken, n)
        m = fixed + broken
        exact = min(Fraction(1), 2 * Fraction(sum(math.comb(m, i) for i in range(min(fixed, broken) + 1)), 2 ** m))
        assert pair["p_value"] == float(exact)


def test_mcnemar_is_exact_at_large_counts():
    for b, c in [(0, 0), (3, 9), (10, 2), (40, 41), (900, 1100), (2000, 2100)]:
        n = b + c
        exact = min(Fraction(1), 2 * Fraction(sum(math.comb(n, i) for i in range(min(b, c) + 1)), 2 ** n)) \
            if n else Fraction(1)
        assert metrics.mcnemar_exact(b, c) == float(exact)


def test_bootstrap_count_matrix_draws_the_gathered_resamples():
    rng = np.random.default_rng(7)
    values = rng.random(37)
    idx = np.random.default_rng(metrics.BOOTSTRAP_SEED).integers(0, 37, size=(metrics.BOOTSTRAP_RESAMPLES, 37))
    lo, hi = np.quantile(values[idx].mean(axis=1), [0.025, 0.975])
    got = metrics.bootstrap_ci(values)
    assert got == pytest.approx((lo, hi), abs=1e-12)


def _b(task: str, hidden: bool, attempt: int = 1) -> dict:
    return trial(task, "baseline", 1, final=True, internal=None, hidden=hidden, stop="single_sample",
                 attempt=attempt)


def _r(task: str, verdicts: list[bool], *, complete: bool = True, attempt: int = 1) -> list[dict]:
    """A reflexion attempt: one trial per verdict (2 calls each), final unless `complete` is False."""
    return [trial(task, "reflexion", t, final=complete and t == len(verdicts), internal=False, hidden=h,
                  stop="budget", attempt=attempt) for t, h in enumerate(verdicts, 1)]


def test_spend_ratios_cover_the_shared_tasks_only(tmp_path: Path):
    # T/0: both complete, reflexion 1 trial (2 calls) against baseline's 1 call.
    # T/1: reflexion spent 3 trials (6 calls), the baseline never ran: T/1 is left out,
    # and so are its calls: 2.0x, not (2 + 6) / 2 / 1 = 4.0x.
    rows = _r("T/0", [True]) + [_b("T/0", True)] + _r("T/1", [False, False, False])
    run = write_run(tmp_path / "runs" / "run-a", header(tasks=["T/0", "T/1"]), rows)
    doc = _agree(run)
    assert doc["paired"][0]["calls_ratio"] == 2.0 and doc["paired"][0]["tokens_ratio"] == 1.0  # 130 tokens each
    # a run of reflexion and baseline alone: its answer says what the difference includes
    assert "; 2.0\u00d7 the calls; this difference includes the effect of everything feedback does too" in doc["answer"][0]
    refl = doc["strategies"]["reflexion"]
    # pass@1 and calls per attempt on T/0; attempts and spend on both tasks (T/1's 3 trials too)
    assert (refl["tasks_scored"], refl["calls_per_attempt"]) == (1, 2.0)
    assert (refl["tasks_completed"], refl["attempts"], refl["model_calls"], refl["tokens"]) == (2, 2, 8, 4 * 130)


def test_no_shared_task_has_no_ratio(tmp_path: Path):
    rows = _r("T/0", [True]) + [_b("T/1", True)]
    run = write_run(tmp_path / "runs" / "run-a", header(tasks=["T/0", "T/1"]), rows)
    doc = _agree(run)
    p = doc["paired"][0]
    assert (p["tasks"], p["excluded"], p["calls_ratio"], p["tokens_ratio"]) == (0, 2, None, None)
    assert doc["answer"][0] == ("Total, against baseline (plain sampling): "
                                "reflexion \u2212 baseline: no task completed by both (2 left out)")


def test_task_missing_from_run_json_is_in_no_figure(tmp_path: Path):
    rows = _r("T/0", [True]) + [_b("T/0", False)] + _r("T/9", [True]) + [_b("T/9", True)]
    run = write_run(tmp_path / "runs" / "run-a", header(tasks=["T/0"]), rows)
    doc = _agree(run)
    assert (doc["tasks_compared"], doc["excluded_tasks"]) == (1, [])
    assert [(k, v["pass@1"]) for k, v in doc["strategies"].items()] == [("reflexion", 1.0), ("baseline", 0.0)]
    assert "T/9" in {t["task_id"] for t in doc["per_task"]}  # the task table still lists what was recorded


def test_without_a_task_list_the_recorded_tasks_are_the_run(tmp_path: Path):
    rows = _r("T/0", [True]) + [_b("T/0", False)] + _r("T/1", [False], complete=False) + [_b("T/1", True)]
    head = header(tasks=["T/0", "T/1"])
    del head["tasks"]["task_ids"]
    run = write_run(tmp_path / "runs" / "run-a", head, rows)
    doc = _agree(run)
    assert (doc["tasks_compared"], doc["excluded_tasks"]) == (1, ["T/1"])


def test_index_reads_only_what_was_appended(tmp_path: Path):
    rows = random_records(4)
    run = write_run(tmp_path / "run", header(), rows[:10])
    index = TrialIndex(run / "trials.jsonl")
    assert index.refresh() and len(index.rows) == 10
    assert not index.refresh()  # nothing new
    with (run / "trials.jsonl").open("a") as fh:
        fh.write(json.dumps(rows[10]) + "\n" + "not json\n" + json.dumps(rows[11])[:30])
    assert index.refresh() and len(index.rows) == 11 and index.bad_lines == 1
    (run / "trials.jsonl").write_text(json.dumps(rows[0]) + "\n")  # replaced (shorter): read again
    assert index.refresh() and len(index.rows) == 1


def test_what_unfinished_trials_spent_counts_in_the_whole_run_spend(tmp_path: Path):
    rows = _r("T/0", [True]) + [_b("T/0", True)] + _r("T/0", [False], complete=False, attempt=2)
    run = write_run(tmp_path / "runs" / "run-a", header(tasks=["T/0"]), rows)
    spent = {"model_calls": 2, "cached_calls": 0, "input_tokens": 40, "output_tokens": 7, "cost_usd": None,
             "cached_cost_usd": None}
    (run / "errors.jsonl").write_text(json.dumps(
        {"schema": 1, "kind": "model_error", "task_id": "T/0", "strategy": "reflexion", "attempt": 2, "trial": 2,
         "role": "actor", "error": "backend down", "at": "2026-12-01T00:00:00", "spent": spent}) + "\n",
        encoding="utf-8")
    refl = _agree(run)["strategies"]["reflexion"]
    assert (refl["model_calls"], refl["tokens"]) == (2 + 2 + 2, 2 * 130 + 40 + 7), refl
