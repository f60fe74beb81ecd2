"""What a task kind is: the one place its differences live.

A kind (function: an entry point graded by asserts; io: a whole program, stdin in,
stdout compared) says which prompt templates its roles use, how code comes out of an
answer, what program is graded, how the test writer's answer becomes tests, how those
tests are kept in a record and read back, how the sandbox runs them, and how their
results read as feedback. Nothing outside harness/kinds/ branches on a kind's name.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Sequence

from harness.rundata import TestRecord

if TYPE_CHECKING:
    from harness.text.prompting import Prompts
    from harness.rundata.events import TestsWritten
    from harness.tasks.base import Task, Test


MAX_FEEDBACK_LINE = 300
# An io test's input, expected output and printed output in feedback: at most this many
# lines and characters each (the start, then how much more there was).
IO_FEEDBACK_LINES = 12
IO_FEEDBACK_CHARS = 600


@dataclass(frozen=True)
class IoFailure:
    """What feedback shows of an io test that did not pass."""

    input: str
    expected: str
    printed: str
    status: str
    detail: str


@dataclass(frozen=True)
class Evaluation:
    records: list[TestRecord]
    passed: bool  # every test passed (vacuously true for no tests)
    seconds: float
    io_failures: tuple[IoFailure, ...] = ()  # io tests only: in the order of the records
    # Another language's program: how it compiled (sandbox CompileOutcome; None for Python
    # and JavaScript); one that did not compile fails every test, its message the feedback.
    compiled: Any = None


def cut(text: str, lines: int = IO_FEEDBACK_LINES, chars: int = IO_FEEDBACK_CHARS) -> str:
    """The start of `text`, at most `lines` lines and `chars` characters, with a note of
    what was left out; trailing newlines kept out of the way of the note."""
    body = text.rstrip("\n")
    kept = body.split("\n")[:lines]
    short = "\n".join(kept)
    if len(short) > chars:
        short = short[:chars]
    left_lines = body.count("\n") + 1 - len(short.split("\n")) if body else 0
    left_chars = len(body) - len(short)
    if left_chars <= 0:
        return short
    more = f"{left_lines} more lines" if left_lines > 0 else f"{left_chars} more characters"
    return f"{short}\n... ({more})"


def feedback_line(rec: TestRecord) -> str:
    if rec.status == "timeout":
        line = f"{rec.test}  # timed out"
    elif rec.detail.startswith("assert") or (rec.test and rec.detail.startswith(rec.test)):
        line = rec.detail  # e.g. "assert add(1, 2) == 4  # got 3"
    elif rec.detail:
        line = f"{rec.test}  # {rec.detail}"
    else:
        line = f"{rec.test}  # failed"
    return line if len(line) <= MAX_FEEDBACK_LINE else line[: MAX_FEEDBACK_LINE - 3] + "..."



@dataclass(frozen=True)
class WrittenTests:
    """The test writer's answer as tests, and what was dropped from it (reason -> count)."""

    tests: list["Test"]
    raw_output: str
    dropped: dict[str, int] = field(default_factory=dict)


class TaskKind(ABC):
    name: ClassVar[str]
    block: ClassVar[str]  # its block in each role's template: `<role>:<block>` (actor_task -> actor_task:io)
    description: ClassVar[str]  # one line, for `harness tasks show`
    whole_program: ClassVar[bool] = False  # the answer is a whole program (stdin in, stdout out), not a function
    # What an answer is, as an agent's prompts say it: "function" (an entry point), "program"
    # (whole, stdin in, stdout out) or "file" (an exercise's solution file, whole)
    answer_form: ClassVar[str] = "function"
    any_language: ClassVar[bool] = False  # the kind handles every language itself (no language twin wraps it)
    in_task_files: ClassVar[bool] = True  # a task file's row may name it (its tests are data in the row)

    def template(self, role: str) -> str:
        """The template `role` renders for this kind, as `Prompts.render` names it."""
        return f"{role}:{self.block}"

    @abstractmethod
    def extract(self, text: str, task: "Task") -> str:
        """The code in a model's answer; UnparseableOutput when there is none."""

    @abstractmethod
    def graded_program(self, task: "Task", code: str) -> str:
        """What the sandbox runs for `code` (before the task's preamble)."""

    @abstractmethod
    def parse_tests(self, text: str, task: "Task", max_tests: int) -> WrittenTests:
        """The test writer's answer as tests."""

    @abstractmethod
    def label(self, test: "Test") -> str:
        """A test as its result names it."""

    def test_data(self, tests: Sequence["Test"]) -> list[dict[str, str]]:
        """Tests that are data (not their labels), as a TestsWritten event keeps them."""
        return []

    @abstractmethod
    def tests_from_event(self, event: "TestsWritten", task: "Task") -> list["Test"]:
        """The tests a TestsWritten event holds (a resumed attempt reads them back)."""

    @abstractmethod
    def run(self, evaluator: Any, program: str, tests: Sequence["Test"], task: "Task",
            timeout_s: float | None, domain: str) -> Evaluation:
        """The sandbox job (`evaluator`: harness/core/evaluator.py's Evaluator): `program` graded on `tests` in `domain`."""

    @abstractmethod
    def feedback(self, prompts: "Prompts", evaluation: Evaluation | None, error: str | None) -> str:
        """What the agent reads about its tests' results."""

    def stub(self, task: "Task") -> tuple[str, str] | None:
        """An answer that does nothing, and its name in words, for checking that a task's
        hidden tests fail it (harness/run/taskcheck.py); None when the kind has none."""
        return None

    def template_values(self, task: "Task") -> dict[str, Any]:
        """Variables the kind's templates take besides the roles' own ({}: none)."""
        return {}

    def validate(self, task: "Task", where: str) -> None:
        """Raises TaskError when the task's hidden tests are not of this kind's form."""

    def summary(self, task: "Task") -> str:
        """One line on how this task is graded (`harness tasks show`)."""
        return self.description

    def info(self) -> dict[str, Any]:
        return {"name": self.name}
