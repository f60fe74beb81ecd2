"""The compare page's paired lines are `harness compare`'s (harness.report.tables
cross-run rows): same tasks, same direction (first run minus the later one), same
counts, spend ratios and excluded tasks."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from harness.report.runs import load_runs
from harness.report.tables import build_tables
from harness.view import compare
from harness.view.catalog import Catalog
from test_view_numbers import random_records
from viewruns import header, trial, write_run


def _b(task: str, hidden: bool, attempt: int, run_id: str) -> dict:
    return trial(task, "baseline", 1, final=True, internal=None, hidden=hidden, stop="single_sample",
                 attempt=attempt, run_id=run_id)


def _r(task: str, hidden: bool, attempt: int, run_id: str, *, complete: bool = True) -> dict:
    return trial(task, "reflexion", 1, final=complete, internal=False, hidden=hidden, stop="budget",
                 attempt=attempt, run_id=run_id)


def _close(got: float | None, want: float | None) -> bool:
    if got is None or want is None or (isinstance(want, float) and math.isnan(want)):
        return (got is None or math.isnan(got)) and (want is None or math.isnan(want))
    return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)


def _assert_view_is_report(root: Path, first: str, other: str) -> compare.Comparison:
    result = compare.compare(Catalog(root), [first, other])
    tables, _ = build_tables(load_runs([root / first, root / other]))
    rows = tables.paired[tables.paired["run"] == f"{first} vs {other}"].to_dict("records")
    assert [(p.a, p.b) for p in result.pairs] == [(r["a"], r["b"]) for r in rows]
    for p, r in zip(result.pairs, rows):
        assert (p.tasks, p.pairs, p.fixed, p.broken, p.excluded) == \
            (r["tasks"], r["pairs"], r["fixed"], r["broken"], r["excluded"]), p.a
        for got, want in ((p.diff, r["diff"]), (p.ci_low, r["ci_low"]), (p.ci_high, r["ci_high"]),
                          (p.p_value, r["p_value"]), (p.calls_ratio, r["calls_ratio"]),
                          (p.tokens_ratio, r["tokens_ratio"])):
            assert _close(got, want), (p.a, got, want)
    return result


def test_unfinished_tasks_are_not_paired_and_first_minus_later(tmp_path: Path):
    # samples 2. RA: reflexion passes both attempts of T/0 and attempt 1 of T/1, whose
    # attempt 2 never finished; RB fails everything. Only T/0 is complete in both runs:
    # +100 points for RA, 2 attempt pairs fixed, T/1 excluded.
    root = tmp_path / "results"
    ra = [_r("T/0", True, a, "RA") for a in (1, 2)] + [_r("T/1", True, 1, "RA"), _r("T/1", False, 2, "RA", complete=False)]
    ra += [_b(t, False, a, "RA") for t in ("T/0", "T/1") for a in (1, 2)]
    rb = [_r(t, False, a, "RB") for t in ("T/0", "T/1") for a in (1, 2)]
    rb += [_b(t, False, a, "RB") for t in ("T/0", "T/1") for a in (1, 2)]
    write_run(root / "RA", header("RA", tasks=["T/0", "T/1"], samples=2), ra)
    write_run(root / "RB", header("RB", tasks=["T/0", "T/1"], samples=2), rb)
    result = _assert_view_is_report(root, "RA", "RB")
    p = result.pairs[0]
    assert (p.a, p.b, p.diff, p.tasks, p.pairs, p.fixed, p.broken, p.excluded) == \
        ("reflexion (RA)", "reflexion (RB)", 1.0, 1, 2, 2, 0, 1)
    assert p.sentence().startswith("reflexion (RA) − reflexion (RB): +100.0 points")


def test_a_strategy_unfinished_in_one_run_leaves_the_task_out(tmp_path: Path):
    # T/1: reflexion finished in both runs, but RB's baseline did not: T/1 is not on RB's
    # equal footing, so the reflexion pair leaves it out too (as the report does)
    root = tmp_path / "results"
    ra = [_r(t, True, 1, "RA") for t in ("T/0", "T/1")] + [_b(t, True, 1, "RA") for t in ("T/0", "T/1")]
    rb = [_r(t, False, 1, "RB") for t in ("T/0", "T/1")] + [_b("T/0", True, 1, "RB")]
    write_run(root / "RA", header("RA", tasks=["T/0", "T/1"]), ra)
    write_run(root / "RB", header("RB", tasks=["T/0", "T/1"]), rb)
    result = _assert_view_is_report(root, "RA", "RB")
    assert [(p.a, p.tasks, p.excluded) for p in result.pairs] == [("reflexion (RA)", 1, 1), ("baseline (RA)", 1, 1)]


@pytest.mark.parametrize("seeds", [(1, 2), (3, 5)])
def test_random_runs_agree_with_harness_compare(tmp_path: Path, seeds: tuple[int, int]):
    # messy runs (incomplete attempts, model errors, 3 samples), and the second run's
    # task list lacks R/0..R/4: those are excluded from every cross-run pair
    root = tmp_path / "results"
    strategies = ["reflexion", "feedback", "baseline"]
    tasks = [f"R/{i}" for i in range(25)]
    write_run(root / "run-a", header("run-a", strategies=strategies, samples=3, tasks=tasks),
              [dict(r, run_id="run-a") for r in random_records(seeds[0])])
    write_run(root / "run-b", header("run-b", strategies=strategies, samples=3, tasks=tasks[5:]),
              [dict(r, run_id="run-b") for r in random_records(seeds[1])])
    result = _assert_view_is_report(root, "run-a", "run-b")
    assert len(result.pairs) == 3 and all(p.excluded >= 5 for p in result.pairs)
