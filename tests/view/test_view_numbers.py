"""The view's vectorised numbers agree with harness.metrics on the same records."""
from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from harness import metrics
from harness.results import SCHEMA_VERSION, TrialRecord
from harness.view import stats
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
    run = write_run(tmp_path / "run", header(strategies=["reflexion", "feedback", "baseline"], samples=3), rows)
    index = TrialIndex(run / "trials.jsonl")
    index.refresh()
    config = json.loads((run / "run.json").read_text())["config"]
    numbers = stats.compute(index.frame(), config)

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
