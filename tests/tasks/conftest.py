"""Fixtures for the task set tests."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

import pytest

from harness.core.actor import graded_program
from harness.tasks.base import IoTest, Task
from sandbox import IoCase, RunRequest


def stub_program(task: Task) -> str:
    """The prompt's own signature with a body that returns None; for an io task, a
    program that reads its input and prints 0; for a `class Solution`, its method
    returning None."""
    if task.kind == "io":
        return "import sys\nsys.stdin.read()\nprint(0)\n"
    if task.entry_point == "Solution":
        return task.prompt + "        return None\n"
    return task.prompt + "    return None\n"


def request(task: Task, program: str) -> RunRequest:
    """How the harness grades `program` on the task's hidden tests (evaluator.py)."""
    if task.kind == "io":
        cases = [IoCase(t.input, t.output) for t in task.hidden_tests if isinstance(t, IoTest)]
        return RunRequest(graded_program(task, program), cases, task.timeout_s, compare=task.compare)
    return RunRequest(program, task.hidden_tests, task.timeout_s)


@pytest.fixture
def canonical_passes_stub_fails(docker_sandbox) -> Callable[[Sequence[Task]], None]:
    """`check(tasks)`: grades every task's canonical solution and a stub on its hidden
    tests in the Docker sandbox; each canonical solution must pass every hidden test,
    each stub must fail one, and the stubs must fail by a test's verdict somewhere
    (a failed assertion), not only by crashing."""

    def check(tasks: Sequence[Task]) -> None:
        assert tasks, "no tasks to grade"

        def grade(task: Task):
            good = docker_sandbox.run(request(task, task.canonical_solution))
            bad = docker_sandbox.run(request(task, stub_program(task)))
            return task, good, bad

        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(grade, tasks))
        failing = {task.task_id: [(o.status, o.detail) for o in good if not o.passed]
                   for task, good, _ in results if not good or not all(o.passed for o in good)}
        assert failing == {}
        stub_passing = [task.task_id for task, _, bad in results if not bad or all(o.passed for o in bad)]
        assert stub_passing == []
        assert any(o.status == "failed" for _, _, bad in results for o in bad)

    return check
