"""Intervals that hold at 0%, 100% and small n (harness.rundata.metrics.INTERVALS):
Wilson's score interval over tasks for rates, Newcombe's paired score interval for
differences, pinned to published values."""
from __future__ import annotations

import pytest

from harness.rundata import frames as fr, metrics
from synthrun import rec


def _attempts(outcomes: dict[str, dict[str, list[bool]]]):
    records = [rec(task, s, attempt, 1, hidden=passed, final=True)
               for s, by_task in outcomes.items() for task, xs in by_task.items()
               for attempt, passed in enumerate(xs, start=1)]
    return fr.attempts_frame(fr.trials_frame(records))


def test_ten_of_ten_is_wilsons_interval_not_a_point():
    est = metrics.estimate([1.0] * 10)
    assert est.value == 1.0
    assert (est.ci_low, est.ci_high) == (pytest.approx(0.7225, abs=1e-4), 1.0)


def test_zero_of_three_has_a_nonzero_upper_bound():
    est = metrics.estimate([0.0] * 3)
    assert est.ci_low == 0.0 and est.ci_high == pytest.approx(0.5615, abs=1e-4)
    assert metrics.estimate([0.0] * 10).ci_high == pytest.approx(0.2775, abs=1e-4)


def test_several_samples_per_task_where_every_task_agrees_still_has_width():
    # 5 tasks x 4 samples, every one passing: the interval is over tasks, not samples
    est = metrics.estimate(metrics.per_task_pass_at_k(_attempts({"baseline": {f"T{i}": [True] * 4 for i in range(5)}}),
                                                      "baseline", 1))
    assert est.value == 1.0 and est.ci_low == pytest.approx(metrics.wilson_ci(5, 5)[0]) and est.ci_low < 0.7


def test_newcombe_matches_the_published_example():
    # Cavo et al. 2012 as worked in Fagerland, Lydersen and Laake (2017), ch. 8:
    # -0.0621 (95% CI -0.1186 to -0.0046)
    lo, hi = metrics.newcombe_paired_ci(59, 6, 16, 80)
    assert (round(lo, 4), round(hi, 4)) == (-0.1186, -0.0046)


def test_plus_100_on_three_tasks_is_wide():
    a = _attempts({"reflexion": {f"T{i}": [True] for i in range(3)},
                   "baseline": {f"T{i}": [False] for i in range(3)}})
    p = metrics.paired_comparison(a, "reflexion", "baseline")
    assert p.diff == 1.0 and p.ci_high == 1.0
    assert p.ci_low < 0.25  # far from the point: three tasks say little
    assert p.p_value == pytest.approx(0.25)  # McNemar's exact test beside it


def test_no_difference_on_agreeing_tasks_is_not_a_point():
    a = _attempts({"reflexion": {f"T{i}": [True] for i in range(4)},
                   "baseline": {f"T{i}": [True] for i in range(4)}})
    p = metrics.paired_comparison(a, "reflexion", "baseline")
    assert p.diff == 0.0 and p.ci_low < -0.3 and p.ci_high > 0.3


def test_summary_says_which_interval_it_used():
    assert set(metrics.INTERVALS) == {"rate", "paired", "mean"}
    assert "Wilson" in metrics.INTERVALS["rate"] and "Newcombe" in metrics.INTERVALS["paired"]
