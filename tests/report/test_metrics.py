"""Metric unit tests with hand-checked values."""
from __future__ import annotations

import msgspec
import math
from fractions import Fraction

import numpy as np
import pytest

from harness.rundata import frames as fr, metrics
from synthrun import rec


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def test_pass_at_k_matches_combinatorial_formula_everywhere():
    checked = 0
    for n in range(1, 31):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert metrics.pass_at_k(n, c, k) == pytest.approx(float(exact_pass_at_k(n, c, k)), abs=1e-12)
                checked += 1
    assert checked == sum(n * (n + 1) for n in range(1, 31))


@pytest.mark.parametrize("n,c,k", [(200, 1, 1), (200, 3, 100), (500, 7, 250), (1000, 2, 10)])
def test_pass_at_k_is_stable_for_large_n(n, c, k):
    assert metrics.pass_at_k(n, c, k) == pytest.approx(float(exact_pass_at_k(n, c, k)), rel=1e-9)


def test_pass_at_k_hand_values():
    assert metrics.pass_at_k(5, 1, 1) == pytest.approx(0.2)
    assert metrics.pass_at_k(10, 3, 2) == pytest.approx(1 - 21 / 45)  # 1 - C(7,2)/C(10,2)
    assert metrics.pass_at_k(5, 0, 3) == 0.0
    assert metrics.pass_at_k(5, 3, 3) == 1.0  # fewer than k failures: some draw must pass
    assert metrics.pass_at_k(1, 1, 1) == 1.0


@pytest.mark.parametrize("n,c,k", [(2, 1, 3), (1, 0, 2)])
def test_pass_at_k_with_k_above_n_is_an_error(n, c, k):
    with pytest.raises(ValueError, match="at least"):
        metrics.pass_at_k(n, c, k)


@pytest.mark.parametrize("n,c,k", [(3, 4, 1), (3, -1, 1), (3, 1, 0)])
def test_pass_at_k_rejects_nonsense(n, c, k):
    with pytest.raises(ValueError):
        metrics.pass_at_k(n, c, k)


@pytest.mark.parametrize("b,c,p", [
    (1, 9, 0.021484375),              # 2 * (1 + 10) / 2^10; the textbook example
    (9, 1, 0.021484375),              # symmetric
    (5, 15, 0.04138946533203125),     # 2 * 21700 / 2^20
    (0, 5, 0.0625),                   # 2 / 2^5
    (0, 10, 2 / 1024),
    (3, 3, 1.0),                      # capped at 1
    (0, 0, 1.0),                      # no discordant pair: no evidence
    (2, 3, 1.0),
    # scipy.stats.binomtest(b, b + c, 0.5).pvalue, computed once by hand with scipy 1.x:
    (10, 25, 0.016673847800120715),
    (7, 20, 0.0191572904586792),
])
def test_mcnemar_exact_known_values(b, c, p):
    assert metrics.mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


@pytest.mark.parametrize("b,c", [(600, 700), (5000, 5100), (0, 2000)])
def test_mcnemar_exact_with_many_discordant_pairs(b, c):
    n = b + c
    logs = [math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1) - n * math.log(2)
            for x in range(min(b, c) + 1)]
    top = max(logs)
    expected = min(1.0, 2 * math.exp(top) * sum(math.exp(v - top) for v in logs))
    assert metrics.mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_mcnemar_exact_equals_brute_force_two_sided_binomial():
    for n in range(1, 25):
        for b in range(n + 1):
            probs = [math.comb(n, x) / 2**n for x in range(n + 1)]
            # two-sided: all outcomes at most as likely as the observed one
            brute = sum(q for q in probs if q <= probs[b] * (1 + 1e-12))
            assert metrics.mcnemar_exact(b, n - b) == pytest.approx(min(1.0, brute), abs=1e-12)


def frames(records):
    trials = fr.trials_frame(records)
    return trials, fr.attempts_frame(trials)


def plan(strategy, task, attempt, verdicts, internal=None, complete=True, calls=1):
    """Records for one attempt; verdicts = hidden pass per trial; last one final."""
    out = []
    for i, hidden in enumerate(verdicts, 1):
        inner = internal[i - 1] if internal else None
        final = complete and i == len(verdicts)
        out.append(rec(task, strategy, attempt, i, final=final, hidden=hidden, internal=inner,
                       stop=("internal_pass" if inner else "budget"), calls=calls))
    return out


def test_final_trial_only_rule():
    # trial 2 passed the hidden tests, but the submitted trial 3 fails: a failure
    records = plan("reflexion", "T1", 1, [False, True, False], internal=[False, False, False])
    trials, attempts = frames(records)
    assert metrics.per_task_pass_at_k(attempts, "reflexion", 1).to_dict() == {"T1": 0.0}
    assert metrics.pass1_by_trial(trials, "reflexion", 3) == [0.0, 1.0, 0.0]


def test_pass1_by_trial_with_attempts_that_stop_early():
    records = (
        plan("reflexion", "T1", 1, [True], internal=[True])                           # stops at 1, passes
        + plan("reflexion", "T1", 2, [False, True], internal=[False, True])           # passes at 2
        + plan("reflexion", "T2", 1, [False, False, True], internal=[False, False, True])
        + plan("reflexion", "T2", 2, [False], internal=[True])                        # false positive at 1
    )
    trials, attempts = frames(records)
    # t=1: T1 (1+0)/2=.5, T2 0 -> .25; t=2: T1 1, T2 0 -> .5; t=3: T1 1, T2 .5 -> .75
    assert metrics.pass1_by_trial(trials, "reflexion", 3) == [0.25, 0.5, 0.75]
    # a budget longer than any attempt repeats the final value
    assert metrics.pass1_by_trial(trials, "reflexion", 5)[-2:] == [0.75, 0.75]
    assert metrics.per_task_pass_at_k(attempts, "reflexion", 1).mean() == 0.75
    assert metrics.max_trials(trials, "reflexion", 5) == 5
    assert metrics.max_trials(trials, "reflexion", None) == 3


def test_incomplete_attempts_are_left_out_and_counted():
    records = (plan("reflexion", "T1", 1, [True], internal=[True])
               + plan("reflexion", "T1", 2, [True, True], internal=[False, False], complete=False)
               + plan("reflexion", "T2", 1, [False, False], internal=[False, False], complete=False))
    trials, attempts = frames(records)
    assert fr.incomplete_attempts(trials) == {"reflexion": 2}
    assert list(attempts["task_id"]) == ["T1"]  # T2 has no complete attempt: not scored
    assert metrics.pass1_by_trial(trials, "reflexion", 2) == [1.0, 1.0]
    res = metrics.resources(trials, ["reflexion"]).iloc[0]
    assert (res["attempts"], res["incomplete_attempts"], res["trials"]) == (1, 2, 5)


def test_pass_at_k_table_leaves_out_tasks_with_fewer_than_k_attempts():
    records = [rec("T1", "baseline", a, 1, final=True, hidden=h) for a, h in enumerate([True, False, False], 1)]
    records += [rec("T2", "baseline", 1, 1, final=True, hidden=True)]
    _, attempts = frames(records)
    table = metrics.pass_at_k_table(attempts, ["baseline"], [1, 2]).set_index("k")
    assert table.loc[1, "pass"] == pytest.approx((1 / 3 + 1) / 2)
    assert table.loc[1, "tasks"] == 2
    assert table.loc[2, "pass"] == pytest.approx(1 - 1 / 3)  # T1 only: 1 - C(2,2)/C(3,2)
    assert table.loc[2, "tasks"] == 1


def test_bootstrap_ci_is_seeded_and_sensible():
    values = np.array([0, 1] * 20, dtype=float)
    lo, hi = metrics.bootstrap_ci(values)
    assert (lo, hi) == metrics.bootstrap_ci(values)  # reproducible
    assert 0.3 < lo < 0.5 < hi < 0.7
    # normal approximation: half-width ~ 1.96 * 0.5 / sqrt(40) = 0.155
    assert (hi - lo) / 2 == pytest.approx(0.155, abs=0.03)
    assert metrics.bootstrap_ci([0.7, 0.7, 0.7]) == (pytest.approx(0.7), pytest.approx(0.7))
    assert all(math.isnan(x) for x in metrics.bootstrap_ci([]))
    smooth = np.linspace(0, 1, 37) ** 2  # continuous values: a different seed must move the bounds
    assert metrics.bootstrap_ci(smooth, seed=1) != metrics.bootstrap_ci(smooth)
    assert metrics.bootstrap_ci(smooth, seed=1) == metrics.bootstrap_ci(smooth, seed=1)


def both(task, a_passes, b_passes, a="reflexion", b="baseline"):
    return ([rec(task, a, i, 1, final=True, hidden=h) for i, h in enumerate(a_passes, 1)]
            + [rec(task, b, i, 1, final=True, hidden=h) for i, h in enumerate(b_passes, 1)])


def test_paired_comparison_pairs_every_attempt_not_a_majority_vote():
    records = (both("T1", [True, True], [False, False])      # fixed 2
               + both("T2", [True, False], [True, True])     # both 1, broken 1
               + both("T3", [True, True], [True, False])     # both 1, fixed 1
               + both("T4", [True, True], [True, True])      # both 2
               + both("T5", [False, False], [False, True])   # neither 1, broken 1
               + [rec("T6", "reflexion", 1, 1, final=True, hidden=True)])  # unpaired: left out
    _, attempts = frames(records)
    p = metrics.paired_comparison(attempts, "reflexion", "baseline")
    assert (p.fixed, p.broken, p.both, p.neither) == (3, 2, 4, 1)
    assert (p.pairs, p.tasks, p.excluded) == (10, 5, 1)
    # pass@1 per task: a (1, .5, 1, 1, 0) = .7, b (0, 1, .5, 1, .5) = .6
    assert p.diff == pytest.approx(0.1)
    assert p.p_value == pytest.approx(metrics.mcnemar_exact(3, 2))
    # a majority vote per task would have said: only_a T1 T3, only_b T2 (counts 2, 1)
    assert (p.fixed, p.broken) != (2, 1)


def test_paired_comparison_pairs_attempt_i_with_attempt_i():
    # same pass counts, crossed: attempt 1 a passes b fails, attempt 2 the reverse
    _, attempts = frames(both("T1", [True, False], [False, True]))
    p = metrics.paired_comparison(attempts, "reflexion", "baseline")
    assert (p.fixed, p.broken, p.both, p.neither, p.diff) == (1, 1, 0, 0, 0.0)


def test_paired_ci_is_newcombes_score_interval_over_tasks():
    # 40 tasks; a passes wherever b does, plus 8 more: diff = 0.2
    b_pass = [True] * 20 + [False] * 20
    a_pass = [True] * 28 + [False] * 12
    records = []
    for i, (x, y) in enumerate(zip(a_pass, b_pass)):
        records += both(f"T{i:02d}", [x], [y])
    _, attempts = frames(records)
    p = metrics.paired_comparison(attempts, "reflexion", "baseline")
    assert p.diff == pytest.approx(0.2) and (p.fixed, p.broken) == (8, 0)
    lo, hi = metrics.newcombe_paired_ci(20, 8, 0, 12)  # both, only a, only b, neither
    assert (p.ci_low, p.ci_high) == (pytest.approx(lo), pytest.approx(hi))
    assert 0.0 < p.ci_low < 0.2 < p.ci_high
    # pairing removes what the tasks share: narrower than two independent CIs would give
    a_lo, a_hi = metrics.wilson_ci(28, 40)
    b_lo, b_hi = metrics.wilson_ci(20, 40)
    assert (p.ci_high - p.ci_low) < math.hypot(a_hi - a_lo, b_hi - b_lo)
    assert metrics.mcnemar_exact(8, 0) == p.p_value == pytest.approx(2 / 256)


def test_paired_comparison_on_given_tasks_counts_the_excluded():
    records = both("T1", [True], [False]) + both("T2", [False], [False]) + both("T3", [True], [True])
    _, attempts = frames(records)
    p = metrics.paired_comparison(attempts, "reflexion", "baseline", tasks=["T1", "T2"],
                                  all_tasks=["T1", "T2", "T3", "T4"])
    assert (p.tasks, p.excluded, p.pairs, p.fixed, p.neither) == (2, 2, 2, 1, 1)
    assert p.diff == pytest.approx(0.5)
    empty = metrics.paired_comparison(attempts, "reflexion", "baseline", tasks=[], all_tasks=["T1"])
    assert empty.tasks == 0 and math.isnan(empty.diff) and empty.p_value == 1.0


def test_equal_footing_keeps_tasks_every_strategy_completed():
    records = (both("T1", [True, True], [True, True])
               + both("T2", [True], [True, False])          # reflexion has 1 of 2 samples
               + both("T3", [False, False], [True, True], b="feedback"))
    records += [rec("T3", "baseline", a, 1, final=True, hidden=False) for a in (1, 2)]
    _, attempts = frames(records)
    footing = fr.equal_footing(attempts, ["reflexion", "baseline"], samples=2,
                                    all_tasks=["T1", "T2", "T3", "T4"])
    assert footing.shared == ("T1", "T3") and footing.excluded == ("T2", "T4")
    footing = fr.equal_footing(attempts, ["reflexion", "feedback", "baseline"], samples=2,
                                    all_tasks=["T1", "T2", "T3"])
    assert footing.shared == ("T3",)
    assert fr.complete_tasks(attempts, "reflexion", 1) == {"T1", "T2", "T3"}


def test_incomplete_attempts_count_errors_jsonl_and_resumed_attempts():
    records = (plan("reflexion", "T1", 1, [False, True], internal=[False, True])
               + plan("reflexion", "T2", 1, [False], internal=[False], complete=False))
    trials, _ = frames(records)
    errors = [("T2", "reflexion", 1),   # its trial 1 is kept, no final: one incomplete attempt
              ("T3", "reflexion", 1),   # stopped before any trial record
              ("T1", "reflexion", 1),   # resumed and finished since: complete
              ("T3", "baseline", 2)]
    assert fr.incomplete_attempts(trials, errors) == {"baseline": 1, "reflexion": 2}
    assert fr.incomplete_attempts(trials) == {"reflexion": 1}


def test_default_pairs_include_resample():
    assert metrics.default_pairs(["reflexion", "feedback", "resample", "baseline"]) == [
        ("reflexion", "baseline"), ("feedback", "baseline"), ("resample", "baseline"),
        ("reflexion", "feedback"), ("reflexion", "resample")]
    assert metrics.default_pairs(["reflexion", "feedback", "baseline"]) == [
        ("reflexion", "baseline"), ("feedback", "baseline"), ("reflexion", "feedback")]


def test_compute_matched_uses_baseline_pass_at_k_when_samples_allow():
    records = []
    for task, base in (("T1", [True, False, False, False]), ("T2", [False, False, False, False])):
        records += plan("reflexion", task, 1, [False, True], internal=[False, True], calls=2)  # 4 calls
        records += [rec(task, "baseline", a, 1, final=True, hidden=h) for a, h in enumerate(base, 1)]
    trials, attempts = frames(records)
    row = metrics.compute_matched(attempts, ["reflexion", "baseline"]).iloc[0]
    assert row["calls"] == 4 and row["baseline_calls_per_sample"] == 1
    assert row["k_calls"] == 4
    # baseline pass@4: T1 1.0, T2 0.0
    assert row["oracle_best_of_k_calls"] == pytest.approx(0.5)
    assert row["pass@1"] == 1.0
    curve = metrics.compute_curve(trials, attempts, "reflexion", 2)
    assert list(curve["calls"]) == [2.0, 4.0] and list(curve["pass"]) == [0.0, 1.0]
    base = metrics.compute_curve(trials, attempts, "baseline", 2)
    assert list(base["budget"]) == ["k=1", "k=2", "k=3", "k=4"]
    # one sample is what an agent can do; best of k by the hidden tests is an oracle
    assert list(base["kind"]) == ["agent", "oracle", "oracle", "oracle"]
    assert base["pass"].iloc[0] == pytest.approx(0.125) and base["pass"].iloc[-1] == pytest.approx(0.5)


def test_compute_matched_leaves_k_beyond_samples_empty():
    records = plan("reflexion", "T1", 1, [False, True], internal=[False, True], calls=3)
    records += [rec("T1", "baseline", 1, 1, final=True, hidden=True)]
    _, attempts = frames(records)
    row = metrics.compute_matched(attempts, ["reflexion", "baseline"]).iloc[0]
    assert row["k_calls"] == 6 and row["oracle_best_of_k_calls"] is None


def test_self_test_quality_and_false_positive_stops():
    # T1: internal pass + hidden fail at trial 1, and it stops there: a false-positive stop
    records = [rec("T1", "reflexion", 1, 1, final=True, hidden=False, internal=True, stop="internal_pass")]
    # T2: internal fail + hidden pass at 1 (false negative), then both pass at 2
    records += plan("reflexion", "T2", 1, [True, True], internal=[False, True])
    # T3: both fail, then budget
    records += plan("reflexion", "T3", 1, [False, False], internal=[False, False])
    # an error trial has no internal verdict and is left out
    records += [rec("T4", "reflexion", 1, 1, final=True, hidden=False, internal=None, stop="error", error="x")]
    trials, attempts = frames(records)
    q = metrics.self_test_quality(trials, ["reflexion"]).set_index("trial")
    assert q.loc[1, ["trials", "both_pass", "false_positive", "false_negative", "both_fail"]].tolist() == [3, 0, 1, 1, 1]
    assert q.loc[1, "fp_rate"] == pytest.approx(1 / 3)
    assert q.loc[2, ["trials", "both_pass", "false_positive", "false_negative", "both_fail"]].tolist() == [2, 1, 0, 0, 1]
    stops = metrics.stopped_on_false_positive(attempts, ["reflexion"]).iloc[0]
    assert (stops["attempts"], stops["stopped_on_internal_pass"], stops["stopped_on_false_positive"]) == (4, 2, 1)
    res = metrics.resources(trials, ["reflexion"]).iloc[0]
    assert res["errors"] == 1


def test_resources_cost_is_none_without_prices():
    records = [rec("T1", "baseline", 1, 1, final=True, hidden=True)]
    records = [msgspec.structs.replace(r, cost_usd=None) for r in records]
    trials, _ = frames(records)
    assert metrics.resources(trials, ["baseline"]).iloc[0]["cost_usd"] is None
