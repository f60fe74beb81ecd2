"""Checks a task set's own references before it scores anything.

A task whose reference solution fails its hidden tests, or whose hidden tests a stub
passes, counts against every strategy alike and says nothing about any of them (even
SWE-bench Verified once shipped gold patches that failed). Each task is graded twice
in the sandbox, in the hidden-test domain, as the run grades its answers:

* its reference solution (`canonical_solution`, a complete program) must pass every
  hidden test;
* a stub must fail at least one: an answer that does nothing, as the task's kind says
  (harness/kinds/: an entry point that returns None, a program that prints nothing).

A task with no hidden tests is broken (every answer would pass); a task without a
reference solution cannot be checked and is said to be so (not broken).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Sequence

from harness.core.actor import graded_program
from harness.core.evaluator import HIDDEN, Evaluation, Evaluator
from harness.kinds.languages.kind import kind_for
from harness.text.prompting import Prompts
from harness.tasks.base import Task

OK, BROKEN, UNCHECKED = "ok", "broken", "unchecked"
_DETAIL = 160


@dataclass(frozen=True)
class TaskVerdict:
    task_id: str
    status: str  # ok | broken | unchecked
    reason: str = ""  # why broken or unchecked, in one line

    def as_dict(self) -> dict[str, str]:
        return {"task_id": self.task_id, "status": self.status, "reason": self.reason}


def stub_program(task: Task) -> tuple[str, str] | None:
    """The program of an answer that does nothing, and its name in words: the task's own
    stub (a task file's `meta.stub`, a whole program, as the builtin sets of other
    languages have), else its kind's (an entry point that returns None, a program that
    prints nothing) as the run would grade it; None when there is neither."""
    given = task.meta.get("stub")
    if isinstance(given, str) and given.strip():
        return given, "the task's own stub"
    stub = kind_for(task).stub(task)
    return None if stub is None else (graded_program(task, stub[0]), stub[1])


def _first_failure(evaluation: Evaluation) -> str:
    bad = [r for r in evaluation.records if r.status != "passed"]
    if not bad:
        return ""
    r = bad[0]
    detail = " ".join(f"{r.status}: {r.detail}".split()) if r.detail else r.status
    text = f"{len(bad)} of {len(evaluation.records)} hidden tests; first: {' '.join(r.test.split())} ({detail})"
    return text if len(text) <= _DETAIL * 2 else text[: _DETAIL * 2 - 3] + "..."


def check_task(task: Task, evaluator: Evaluator) -> TaskVerdict:
    if not task.hidden_tests:
        return TaskVerdict(task.task_id, BROKEN, "no hidden tests: every answer would pass")
    if not task.canonical_solution:
        return TaskVerdict(task.task_id, UNCHECKED, "no reference solution to check its hidden tests with")
    timeout = task.timeout_s
    reference = evaluator.run(task.preamble + task.canonical_solution, task.hidden_tests, task=task, domain=HIDDEN,
                              timeout_s=timeout)
    if not reference.passed:
        return TaskVerdict(task.task_id, BROKEN, f"the reference solution fails {_first_failure(reference)}")
    stub = stub_program(task)
    if stub is None:
        return TaskVerdict(task.task_id, OK, "its kind has no stub: only the reference solution was checked")
    program, what = stub
    if evaluator.run(program, task.hidden_tests, task=task, domain=HIDDEN, timeout_s=timeout).passed:
        return TaskVerdict(task.task_id, BROKEN, f"{what} passes every hidden test: they check nothing it lacks")
    return TaskVerdict(task.task_id, OK)


def check_tasks(tasks: Sequence[Task], sandbox: Any, *, timeout_s: float, workers: int = 2,
                compare_mode: str = "strict") -> list[TaskVerdict]:
    """Every task's verdict, in the tasks' order (graded `workers` at a time), judged as
    the run judges its answers (`compare_mode`: its io_compare)."""
    evaluator = Evaluator(sandbox, Prompts(), timeout_s=timeout_s, compare_mode=compare_mode)
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="taskcheck") as pool:
        return list(pool.map(lambda t: check_task(t, evaluator), tasks))


def summary_line(verdicts: Sequence[TaskVerdict]) -> str:
    n = {s: sum(1 for v in verdicts if v.status == s) for s in (OK, BROKEN, UNCHECKED)}
    text = f"{len(verdicts)} task(s) checked: {n[OK]} ok, {n[BROKEN]} broken"
    if n[UNCHECKED]:
        text += f", {n[UNCHECKED]} without a reference solution (not checked)"
    return text


def header_record(verdicts: Sequence[TaskVerdict]) -> dict[str, Any]:
    """run.json's "task_check": what was checked and which tasks were left out, why."""
    return {"checked": len(verdicts),
            "ok": sum(1 for v in verdicts if v.status == OK),
            "unchecked": [v.as_dict() for v in verdicts if v.status == UNCHECKED],
            "left_out": [v.as_dict() for v in verdicts if v.status == BROKEN]}
