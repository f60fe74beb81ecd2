"""An io task: a whole program, stdin in, stdout compared outside the program's process."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from harness.kinds.base import Evaluation, TaskKind, WrittenTests, cut

if TYPE_CHECKING:
    from harness.text.prompting import Prompts
    from harness.rundata.events import TestsWritten
    from harness.tasks.base import Task, Test


class IoKind(TaskKind):
    name = "io"
    block = "io"
    description = "a whole program: stdin in, stdout compared"
    whole_program = True
    answer_form = "program"

    def extract(self, text: str, task: "Task") -> str:
        from harness.text.extract import extract_program

        return extract_program(text)

    def graded_program(self, task: "Task", code: str) -> str:
        return code

    def parse_tests(self, text: str, task: "Task", max_tests: int) -> WrittenTests:
        from harness.text.extract import extract_io_tests
        from harness.tasks.base import IoTest

        pairs = extract_io_tests(text, max_tests)
        # An input without its output (or the reverse) counts as unparseable; an empty
        # expected output as a test that checks nothing (as `assert True` would).
        return WrittenTests([IoTest(i, o) for i, o in pairs.kept], text, {
            "unparseable": pairs.unpaired, "no_call": pairs.empty_output, "over_limit": pairs.over_limit,
        })

    def label(self, test: "Test") -> str:
        return test.label()  # type: ignore[union-attr]

    def stub(self, task: "Task") -> tuple[str, str]:
        return "pass\n", "a program that prints nothing"

    def test_data(self, tests: Sequence["Test"]) -> list[dict[str, str]]:
        return [t.as_dict() for t in tests]  # type: ignore[union-attr]

    def tests_from_event(self, event: "TestsWritten", task: "Task") -> list["Test"]:
        from harness.tasks.base import IoTest

        return [IoTest.from_dict(t) for t in event.io_tests]

    def run(self, evaluator: Any, program: str, tests: Sequence["Test"], task: "Task",
            timeout_s: float | None, domain: str) -> Evaluation:
        return evaluator.run_io(program, tests, task, timeout_s, domain)  # type: ignore[arg-type]

    def feedback(self, prompts: "Prompts", evaluation: Evaluation | None, error: str | None) -> str:
        if error is not None or evaluation is None:
            return prompts.render("feedback:io", error=error or "no evaluation", passed=0, failed=[])
        failed = [
            {
                "input": cut(f.input),
                "expected": cut(f.expected),
                "printed": cut(f.printed) if f.printed.strip() else "",
                "status": f.status,
                "detail": f.detail if f.status != "error" else "",
                "error": cut(f.detail, lines=8, chars=900) if f.status == "error" else "",
            }
            for f in evaluation.io_failures
        ]
        passed = sum(r.status == "passed" for r in evaluation.records)
        return prompts.render("feedback:io", error=None, passed=passed, failed=failed)

    def validate(self, task: "Task", where: str) -> None:
        from harness.tasks.base import IoTest, TaskError

        if not all(isinstance(t, IoTest) for t in task.hidden_tests):
            raise TaskError(
                f"{where}: task {task.task_id!r} (an io task) has no hidden tests as (input, output) pairs; "
                "fix the data or leave the task out"
            )

    def summary(self, task: "Task") -> str:
        return f"io: a whole program, stdin -> stdout, compared by the {task.compare!r} rule"
