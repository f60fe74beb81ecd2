"""The view's vectorised numbers agree with harness.metrics on the same records."""
from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from harness import metrics
from harness.report.runs import load_run
from harness.rundata import SCHEMA_VERSION, TrialRecord
from harness.summary import build_summary
from harness.view import stats
from harness.view.catalog import Catalog
from harness.view.index import TrialIndex
from viewruns import trial, write_run, header


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


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_numbers_agree_with_metrics(tmp_path: Path, seed: int):
    rows = random_records(seed)
    task_ids = [f"R/{i}" for i in range(25)]
    run = write_run(tmp_path / "run", header(strategies=["reflexion", "feedback", "baseline"], samples=3,
                                             tasks=task_ids), rows)
    index = TrialIndex(run / "trials.jsonl")
    index.refresh()
    config = json.loads((run / "run.json").read_text())["config"]
    numbers = stats.compute(index.frame(), config, task_ids)
    summary = _summary(run)

    trials = metrics.trials_frame(_records(rows))
    attempts = metrics.attempts_frame(trials)
    strategies = ["reflexion", "feedback", "baseline"]

    shared = numbers.extra["shared"]
    assert 0 < len(shared) < 25  # incomplete attempts leave some tasks out of every figure
    s_trials = trials[trials["task_id"].isin(shared)]
    s_attempts = attempts[attempts["task_id"].isin(shared)]
    expected = metrics.pass1_by_trial_table(s_trials, strategies, 3)
    got = numbers.by_trial
    assert list(got["strategy"]) == list(expected["strategy"]) and list(got["trial"]) == list(expected["trial"])
    for col in ("pass", "ci_low", "ci_high"):
        np.testing.assert_allclose(got[col].to_numpy(float), expected[col].to_numpy(float), atol=1e-9)

    for line in numbers.lines:
        est = metrics.estimate(metrics.per_task_pass_at_k(s_attempts, line.name, 1))
        assert math.isclose(line.pass1, est.value, abs_tol=1e-12)
        assert math.isclose(line.ci_low, est.ci_low, abs_tol=1e-9) and math.isclose(line.ci_high, est.ci_high, abs_tol=1e-9)
        assert line.incomplete == metrics.incomplete_attempts(trials).get(line.name, 0)

    for s in strategies:
        expected_curve = metrics.compute_curve(s_trials, s_attempts, s, 3)
        got_curve = numbers.compute[numbers.compute["strategy"] == s]
        assert list(got_curve["budget"]) == list(expected_curve["budget"])
        for col in ("calls", "tokens", "pass"):
            np.testing.assert_allclose(got_curve[col].to_numpy(float), expected_curve[col].to_numpy(float), atol=1e-9)

    for pair in numbers.pairs:
        if hasattr(metrics.Paired, "__dataclass_fields__") and "diff" in metrics.Paired.__dataclass_fields__:
            p = metrics.paired_comparison(attempts, pair.a, pair.b, tasks=shared)
            assert (pair.fixed, pair.broken, pair.tasks, pair.pairs) == (p.fixed, p.broken, p.tasks, p.pairs)
            assert math.isclose(pair.diff, p.diff, abs_tol=1e-12)
            assert math.isclose(pair.ci_low, p.ci_low, abs_tol=1e-9) and math.isclose(pair.ci_high, p.ci_high, abs_tol=1e-9)
            assert math.isclose(pair.p_value, p.p_value, rel_tol=1e-9)
        # attempt pairs counted by hand from the records
        final = {(r.task_id, r.strategy, r.attempt): r.hidden_passed for r in _records(rows) if r.final}
        fixed = broken = n = 0
        for (task, strategy, attempt), passed in final.items():
            other = final.get((task, pair.b, attempt))
            if strategy != pair.a or other is None or task not in shared:
                continue
            n += 1
            fixed += passed and not other
            broken += other and not passed
        assert (pair.fixed, pair.broken, pair.pairs) == (fixed, broken, n)
        assert math.isclose(pair.p_value, metrics.mcnemar_exact(fixed, broken), rel_tol=1e-9)
    _assert_pairs_agree(numbers, summary)


def _summary(run: Path) -> dict:
    """summary.json's document for a run folder, read as `harness report` reads it."""
    loaded = load_run(run)
    return build_summary(loaded.header, loaded.records, loaded.errors)


def _close(got: float | None, want: float | None) -> bool:
    if got is None or want is None:
        return got is None and want is None
    return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)


def _assert_pairs_agree(numbers: stats.RunNumbers, summary: dict) -> None:
    """The view's paired lines are summary.json's `paired`, field by field, spend ratios included."""
    assert [(p.a, p.b) for p in numbers.pairs] == [(q["a"], q["b"]) for q in summary["paired"]]
    for p, q in zip(numbers.pairs, summary["paired"]):
        where = f"{p.a} vs {p.b}"
        assert (p.tasks, p.excluded, p.pairs, p.fixed, p.broken) == \
            (q["tasks"], q["excluded"], q["pairs"], q["fixed"], q["broken"]), where
        assert _close(None if math.isnan(p.diff) else p.diff, q["diff"]), where
        assert _close(p.p_value, q["p_value"]), where
        assert _close(p.calls_ratio, q["calls_ratio"]), (where, p.calls_ratio, q["calls_ratio"])
        assert _close(p.tokens_ratio, q["tokens_ratio"]), (where, p.tokens_ratio, q["tokens_ratio"])


def _assert_agrees_with_summary(run: Path) -> stats.RunNumbers:
    """The view's numbers for a run folder (as `harness view` reads it) against summary.json's."""
    numbers = Catalog(run.parent).get(run.name).numbers()
    summary = _summary(run)
    assert len(numbers.extra["shared"]) == summary["tasks_compared"]
    assert len(numbers.extra["excluded"]) == summary["tasks_excluded"]
    for line in numbers.lines:
        s = summary["strategies"][line.name]
        assert _close(None if math.isnan(line.pass1) else line.pass1, s["pass@1"]), line.name
        assert line.tasks == s["tasks_scored"], line.name
        # counts and spend over the whole run, as summary.json's
        assert (line.attempts, line.incomplete, line.completed_tasks, line.calls, line.cached_calls,
                line.tokens, line.errors) == (s["attempts"], s["incomplete_attempts"], s["tasks_completed"],
                                              s["model_calls"], s["cached_calls"],
                                              s["input_tokens"] + s["output_tokens"], s["errors"]), line.name
    _assert_pairs_agree(numbers, summary)
    return numbers


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
    numbers = _assert_agrees_with_summary(run)
    assert numbers.pairs[0].calls_ratio == 2.0 and numbers.pairs[0].tokens_ratio == 1.0  # 130 tokens each
    assert numbers.headline.endswith("; 2.0× the calls")
    refl = numbers.lines[0]
    # pass@1 and calls per attempt on T/0; attempts and spend on both tasks (T/1's 3 trials too)
    assert (refl.tasks, refl.calls_per_attempt) == (1, 2.0)
    assert (refl.completed_tasks, refl.attempts, refl.calls, refl.tokens) == (2, 2, 8, 4 * 130)


def test_no_shared_task_has_no_ratio(tmp_path: Path):
    # each strategy completed a task the other did not: nothing is compared, nor is spend
    rows = _r("T/0", [True]) + [_b("T/1", True)]
    run = write_run(tmp_path / "runs" / "run-a", header(tasks=["T/0", "T/1"]), rows)
    numbers = _assert_agrees_with_summary(run)
    p = numbers.pairs[0]
    assert (p.tasks, p.excluded, p.calls_ratio, p.tokens_ratio) == (0, 2, None, None)
    assert numbers.headline == "reflexion − baseline: no task completed by both (2 left out)"


def test_task_missing_from_run_json_is_in_no_figure(tmp_path: Path):
    # T/9 has complete records but run.json's task list does not name it: summary.json
    # leaves it out (neither compared nor excluded), so does the view
    rows = _r("T/0", [True]) + [_b("T/0", False)] + _r("T/9", [True]) + [_b("T/9", True)]
    run = write_run(tmp_path / "runs" / "run-a", header(tasks=["T/0"]), rows)
    numbers = _assert_agrees_with_summary(run)
    assert numbers.extra["shared"] == ["T/0"] and numbers.extra["excluded"] == []
    assert [(x.name, x.pass1) for x in numbers.lines] == [("reflexion", 1.0), ("baseline", 0.0)]
    assert "T/9" in set(numbers.tasks["task_id"])  # the task table still lists what was recorded


def test_without_a_task_list_the_recorded_tasks_are_the_run(tmp_path: Path):
    # run.json without task_ids: every task with a trial record counts, an incomplete one too
    rows = _r("T/0", [True]) + [_b("T/0", False)] + _r("T/1", [False], complete=False) + [_b("T/1", True)]
    head = header(tasks=["T/0", "T/1"])
    del head["tasks"]["task_ids"]
    run = write_run(tmp_path / "runs" / "run-a", head, rows)
    numbers = _assert_agrees_with_summary(run)
    assert (numbers.extra["shared"], numbers.extra["excluded"]) == (["T/0"], ["T/1"])


def test_mcnemar_matches_and_survives_large_counts():
    for b, c in [(0, 0), (3, 9), (10, 2), (40, 41)]:
        assert math.isclose(stats.mcnemar(b, c), metrics.mcnemar_exact(b, c), rel_tol=1e-9)
    assert stats.mcnemar(900, 1100) < 1e-5  # metrics.mcnemar_exact overflows here


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
    # reflexion's second attempt on T/0 stopped at trial 2 on a model error, after a
    # lesson call and the failed Actor call: errors.jsonl's `spent` carries them
    rows = _r("T/0", [True]) + [_b("T/0", True)] + _r("T/0", [False], complete=False, attempt=2)
    run = write_run(tmp_path / "runs" / "run-a", header(tasks=["T/0"]), rows)
    spent = {"model_calls": 2, "cached_calls": 0, "input_tokens": 40, "output_tokens": 7, "cost_usd": None,
             "cached_cost_usd": None}
    (run / "errors.jsonl").write_text(json.dumps(
        {"schema": 1, "kind": "model_error", "task_id": "T/0", "strategy": "reflexion", "attempt": 2, "trial": 2,
         "role": "actor", "error": "backend down", "at": "2026-12-01T00:00:00", "spent": spent}) + "\n",
        encoding="utf-8")
    numbers = _assert_agrees_with_summary(run)
    refl = numbers.lines[0]
    assert (refl.calls, refl.tokens) == (2 + 2 + 2, 2 * 130 + 40 + 7), refl  # two recorded trials + spent
