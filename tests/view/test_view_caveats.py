"""The run page's effect-size caveat: given when the report gives its few_tasks caveat,
and worded for what triggered it (few tasks, a wide CI, no shared task at all)."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.report.answer import FEW_TASKS, caveats as report_caveats
from harness.report.runs import load_run
from harness.report.tables import frames, run_pairs
from harness.view import stats
from harness.view.catalog import Catalog
from viewruns import header, trial, write_run


def _b(task: str, hidden: bool) -> dict:
    return trial(task, "baseline", 1, final=True, internal=None, hidden=hidden, stop="single_sample")


def _r(task: str, hidden: bool) -> dict:
    return trial(task, "reflexion", 1, final=True, internal=True, hidden=hidden, stop="internal_pass")


def _outcomes(tasks: int, pattern: list[tuple[bool, bool]]) -> list[dict]:
    """Task T/i gets (reflexion, baseline) verdicts pattern[i % len(pattern)]."""
    rows = []
    for i in range(tasks):
        r, b = pattern[i % len(pattern)]
        rows += [_r(f"T/{i}", r), _b(f"T/{i}", b)]
    return rows


CASES = {
    "single": ([_r("T/0", True), _b("T/0", False)], ["T/0"]),
    "all_pass": (_outcomes(5, [(True, True)]), None),
    "all_fail": (_outcomes(5, [(False, False)]), None),
    "no_shared": ([_r("T/0", True), _b("T/1", True)], ["T/0", "T/1"]),
    "few_mixed": (_outcomes(6, [(True, False), (False, True), (True, True)]), None),
    "wide_many": (_outcomes(40, [(True, False), (False, True), (True, True), (False, False), (True, False)]), None),
    "narrow_many": (_outcomes(40, [(True, True)]), None),
}


def _view_and_report(tmp_path: Path, name: str) -> tuple[stats.RunNumbers, list[stats.Caveat], set[str]]:
    rows, tasks = CASES[name]
    tasks = tasks or sorted({r["task_id"] for r in rows}, key=lambda t: int(t.split("/")[1]))
    run = write_run(tmp_path / "runs" / name, header(name, tasks=tasks), rows)
    numbers = Catalog(run.parent).get(name).numbers()
    view = stats.caveats(numbers, oracle=False, errors={}, resumed=False, crashed=False, bad_lines=0)
    rf = frames(load_run(run))
    report = {c.key for c in report_caveats(rf, [row for _, row in run_pairs(rf)])}
    return numbers, view, report


@pytest.mark.parametrize("name", sorted(CASES))
def test_effect_size_caveat_when_the_report_gives_one(tmp_path: Path, name: str):
    numbers, view, report = _view_and_report(tmp_path, name)
    effect = [c for c in view if c.key == "few_tasks"]
    assert bool(effect) == ("few_tasks" in report), (name, [c.text for c in view], report)
    for c in view:
        assert "±" not in c.text and "nan" not in c.text.lower(), c.text
    if not effect:
        return
    text, shared = effect[0].text, len(numbers.extra["shared"])
    if shared == 0:
        assert text == "No task was completed by every strategy: there is no difference to estimate."
    elif shared < FEW_TASKS:
        assert text.startswith(f"Few tasks for the effect size: {shared} shared task{'' if shared == 1 else 's'}")
    else:  # enough tasks: the CI's width set it off, and the caveat says so
        assert text.startswith(f"Wide 95% CI: on {shared} shared tasks, the 95% CI of reflexion − baseline spans ")
        assert "Few" not in text and "Only" not in text


def test_effect_size_wording_per_case(tmp_path: Path):
    texts = {}
    for name in ("single", "all_pass", "few_mixed", "wide_many", "narrow_many"):
        _, view, _ = _view_and_report(tmp_path, name)
        texts[name] = next((c.text for c in view if c.key == "few_tasks"), None)
    assert texts["narrow_many"] is None  # 40 tasks and a narrow CI: nothing to warn about
    assert texts["single"].startswith("Few tasks for the effect size: 1 shared task")
    assert "spans" in texts["few_mixed"] and "A smaller difference cannot be told from chance." in texts["few_mixed"]
    assert "spans" in texts["wide_many"]
    for name in ("single", "all_pass"):  # no "spans 0 points": say why the interval has no width, if it has none
        assert "spans 0 points" not in texts[name]
