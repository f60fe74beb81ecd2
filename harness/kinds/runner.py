"""A runner task: an exercise in its own layout (Exercism's, as Aider's polyglot benchmark
uses it), graded by its own test file run with the language's test runner.

The answer is the solution file; the hidden tests are the exercise's tests, by name; the
test writer writes a test file of the same form (the runner's), whose tests are the
attempt's internal tests, run the same way in the agent domain, built with none of the
exercise's test files or data (Suite.with_tests). Each test is one process of the test
binary, told which test to run; its verdict is the runner's, taken in the program's
process (docs/tasks.md, "Exercism"): the records say so by this kind's name. A hidden
test's verdict is checked against its twin's (harness/kinds/runner_twins.py).
"""
from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Sequence

from harness.kinds.base import Evaluation, TaskKind, WrittenTests, feedback_line

if TYPE_CHECKING:
    from harness.text.prompting import Prompts
    from harness.rundata.events import TestsWritten
    from harness.tasks.base import Task, Test

VERDICT = "in-process runner verdict"  # how records, task sets and docs name where the verdict is taken
_GOT = re.compile(r"^(.*?)  # got (\".*)$", re.DOTALL)


def _language(task: "Task"):
    from harness.kinds.languages import get_language

    return get_language(task.language)


class RunnerKind(TaskKind):
    name = "runner"
    in_task_files = False  # an exercise's tests are its own files (exercism:<folder>)
    block = "runner"
    description = "an exercise graded by its own test file, run with the language's test runner"
    answer_form = "file"
    any_language = True  # the kind itself knows every language (harness/kinds/languages/runner.py)

    def extract(self, text: str, task: "Task") -> str:
        from harness.text.extract import UnparseableOutput

        blocks = [block for block in _language(task).blocks(text) if block.strip()]
        if not text.strip() or not blocks:
            raise UnparseableOutput(f"no {_language(task).display} code block in the answer")
        return max(blocks, key=len).strip("\n") + "\n"  # the solution file, whole

    def graded_program(self, task: "Task", code: str) -> str:
        return code

    def parse_tests(self, text: str, task: "Task", max_tests: int) -> WrittenTests:
        from harness.kinds.languages.runner import RunnerTest, runner_test_names

        blocks = [block for block in _language(task).blocks(text) if block.strip()]
        if not blocks:
            return WrittenTests([], text, {"unparseable": 1})
        body = max(blocks, key=len).strip("\n") + "\n"
        names = runner_test_names(task.language, body)
        suite = task.hidden_tests[0].suite.with_tests(body)  # type: ignore[union-attr]
        kept = [RunnerTest(name, suite) for name in names[:max_tests]]
        return WrittenTests(kept, text, {"unparseable": 0 if names else 1, "over_limit": max(0, len(names) - max_tests)})

    def label(self, test: "Test") -> str:
        return test.name()  # type: ignore[union-attr]

    def test_data(self, tests: Sequence["Test"]) -> list[dict[str, str]]:
        # The agent's test file once (with the first test), so a resumed attempt runs the same file.
        return [{"test": t.test, **({"file": t.suite.file(t.suite.test_path)} if i == 0 else {})}  # type: ignore[union-attr]
                for i, t in enumerate(tests)]

    def tests_from_event(self, event: "TestsWritten", task: "Task") -> list["Test"]:
        from harness.kinds.languages.runner import RunnerTest

        if not event.io_tests:
            return []
        suite = task.hidden_tests[0].suite.with_tests(event.io_tests[0].get("file", ""))  # type: ignore[union-attr]
        return [RunnerTest(item["test"], suite) for item in event.io_tests]

    def run(self, evaluator: Any, program: str, tests: Sequence["Test"], task: "Task",
            timeout_s: float | None, domain: str) -> Evaluation:
        return evaluator.run_runner(program, tests, task, timeout_s, domain)

    def feedback(self, prompts: "Prompts", evaluation: Evaluation | None, error: str | None) -> str:
        compiled = getattr(evaluation, "compiled", None)
        if error is None and compiled is not None and not compiled.ok:
            error = f"it did not compile ({compiled.status}):\n{compiled.message}"
        if error is not None or evaluation is None:
            return prompts.render("feedback:function", error=error or "no evaluation", passed=[], failed=[])
        passed = [r.test for r in evaluation.records if r.status == "passed"]
        failed = [feedback_line(_readable(r)) for r in evaluation.records if r.status != "passed"]
        return prompts.render("feedback:function", error=None, passed=passed, failed=failed)

    def stub(self, task: "Task") -> tuple[str, str] | None:
        stub = task.meta.get("stub")
        return (str(stub), "the exercise's stub solution") if stub else None

    def validate(self, task: "Task", where: str) -> None:
        from harness.kinds.languages.runner import RunnerTest
        from harness.tasks.base import TaskError

        if not all(isinstance(t, RunnerTest) for t in task.hidden_tests):
            raise TaskError(f"{where}: task {task.task_id!r} (a runner task) has hidden tests that are not "
                            "tests of its test file")

    def template_values(self, task: "Task") -> dict:
        language = _language(task)
        return {"language": language.display, "language_name": language.name, "fence": language.fence,
                "exercise": dict(task.meta.get("exercise") or {}), "stub": str(task.meta.get("stub") or "")}

    def summary(self, task: "Task") -> str:
        return (f"{_language(task).display}: the exercise's own test file, run with the test runner; "
                f"{VERDICT} (the test's asserts run in the program's process; hidden tests checked against twins)")


def _readable(record):
    """A failed test's record with the runner's message as text (it comes as a JSON string)."""
    from msgspec.structs import replace

    found = _GOT.match(record.detail)
    if found is None:
        return record
    try:
        message = json.loads(found.group(2))
    except ValueError:
        message = found.group(2)
    return replace(record, detail=f"{found.group(1)}  # {message}")
