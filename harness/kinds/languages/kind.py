"""The task kinds (harness/kinds/) of a task in another language than Python: the same
roles and records, with the language's templates, code extraction, test lines and
sandbox job. `kind_for(task)` is what the harness asks for a task's kind: Python's kinds
as they are, else one of these, wrapping them."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from harness.kinds import kind_of
from harness.kinds.base import Evaluation, TaskKind, WrittenTests
from harness.kinds.function import FunctionKind
from harness.kinds.io import IoKind
from harness.kinds.languages import get_language
from harness.kinds.languages.base import CallTest, Language, UnusableAnswer

if TYPE_CHECKING:
    from harness.text.prompting import Prompts
    from harness.rundata.events import TestsWritten
    from harness.tasks.base import Task, Test


def _compile_error(evaluation: Evaluation | None) -> str | None:
    """The compiler's message for the agent when the program did not compile."""
    compiled = getattr(evaluation, "compiled", None)
    if compiled is None or compiled.ok:
        return None
    return f"it did not compile ({compiled.status}):\n{compiled.message}"


def _unusable(exc: UnusableAnswer):
    from harness.text.extract import UnparseableOutput

    return UnparseableOutput(str(exc))


class LanguageFunctionKind(FunctionKind):
    """A function task in `language`: calls and expected values, run by the sandbox's driver."""

    def __init__(self, language: Language) -> None:
        self.language = language

    def template(self, role: str) -> str:
        return self.language.template(role, "function")

    def extract(self, text: str, task: "Task") -> str:
        try:
            return self.language.extract_code(text, task.entry_point)
        except UnusableAnswer as exc:
            raise _unusable(exc) from None

    def graded_program(self, task: "Task", code: str) -> str:
        return self.language.graded_program(task.prompt, code, task.entry_point)

    def parse_tests(self, text: str, task: "Task", max_tests: int) -> WrittenTests:
        calls, unparseable, no_call, over = self.language.parse_test_lines(text, task.entry_point, max_tests)
        return WrittenTests([CallTest((call,)) for call in calls], text,
                            {"unparseable": unparseable, "no_call": no_call, "over_limit": over})

    def label(self, test: "Test") -> str:
        return test.name() if isinstance(test, CallTest) else str(test)

    def stub(self, task: "Task") -> None:
        return None  # Python's stub is no answer in another language: a task brings its own (meta.stub)

    def tests_from_event(self, event: "TestsWritten", task: "Task") -> list["Test"]:
        # The labels are the test writer's own lines: read again, as when they were written.
        return [CallTest((call,)) for line in event.tests for call in self._calls(line)]

    def _calls(self, line: str):
        from harness.kinds.languages.base import CallSpec
        from harness.kinds.languages.literals import LiteralError, parse_assert

        try:
            parsed = parse_assert(line, _entry_of(line))
        except (LiteralError, RecursionError):
            return []
        return [CallSpec(tuple(parsed.args), parsed.expected, parsed.label)]

    def run(self, evaluator: Any, program: str, tests: Sequence["Test"], task: "Task",
            timeout_s: float | None, domain: str) -> Evaluation:
        return evaluator.run_language(program, tests, task, timeout_s, domain, io=False)

    def feedback(self, prompts: "Prompts", evaluation: Evaluation | None, error: str | None) -> str:
        return super().feedback(prompts, evaluation, error or _compile_error(evaluation))

    def summary(self, task: "Task") -> str:
        return f"a {self.language.display} function, called by the sandbox's driver and compared outside it"


class LanguageIoKind(IoKind):
    """An io task answered in `language`: compiled once, run on each input."""

    def __init__(self, language: Language) -> None:
        self.language = language

    def template(self, role: str) -> str:
        return self.language.template(role, "io")

    def extract(self, text: str, task: "Task") -> str:
        try:
            return self.language.extract_program(text)
        except UnusableAnswer as exc:
            raise _unusable(exc) from None

    def stub(self, task: "Task") -> None:
        return None  # a task brings its own (meta.stub)

    def run(self, evaluator: Any, program: str, tests: Sequence["Test"], task: "Task",
            timeout_s: float | None, domain: str) -> Evaluation:
        return evaluator.run_language(program, tests, task, timeout_s, domain, io=True)

    def feedback(self, prompts: "Prompts", evaluation: Evaluation | None, error: str | None) -> str:
        return super().feedback(prompts, evaluation, error or _compile_error(evaluation))

    def summary(self, task: "Task") -> str:
        return f"io: a whole {self.language.display} program, stdin -> stdout, compared by the {task.compare!r} rule"


def _entry_of(line: str) -> str:
    """The called name of a test line (a resumed record keeps lines, not entry points)."""
    import re

    found = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", line.split("(", 1)[1] if "!(" in line or "assert(" in line
                      or "Equal(" in line else line)
    return found.group(1) if found else ""


_WRAPPED: dict[tuple[str, str], TaskKind] = {}


def kind_for(task: "Task") -> TaskKind:
    """The task's kind as the harness uses it: Python's kinds, or their language's twins."""
    if task.language == "python" or kind_of(task.kind).any_language:
        return kind_of(task.kind)
    key = (task.language, task.kind)
    if key not in _WRAPPED:
        language = get_language(task.language)
        _WRAPPED[key] = LanguageIoKind(language) if task.kind == "io" else LanguageFunctionKind(language)
    return _WRAPPED[key]


def template_values(task: "Task") -> dict:
    """The variables a language's templates take besides their Python twins' ({} for Python)."""
    own = kind_for(task).template_values(task)
    if task.language == "python" or own:
        return own
    return get_language(task.language).template_values(task.entry_point)


def code_fence(task: "Task") -> str:
    return "python" if task.language == "python" else get_language(task.language).fence
