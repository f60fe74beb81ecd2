"""The Task record and the TaskSource contract."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Protocol, Union

# How an io test's output is compared (sandbox/worker/io_compare.py has each rule): the
# rule names the source, whose float tolerance the strict comparison uses, and whose own
# grader's rule the run setting io_compare = "source" applies.
COMPARE_RULES = ("lcb", "codecontests", "apps", "exact")
_LABEL_MAX = 200  # characters of an io test's input kept as its label in records
# A task id names files (reflections/<ns>/<id>.jsonl), URL paths of the view and lines
# on the terminal: at most this many characters, printable, no "." or ".." path part.
TASK_ID_MAX = 200


@dataclass(frozen=True)
class IoTest:
    """One test of an io task: what the program reads on stdin, what it must print."""

    input: str
    output: str

    def as_dict(self) -> dict[str, str]:
        return {"input": self.input, "output": self.output}

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> "IoTest":
        return cls(str(value["input"]), str(value["output"]))

    def label(self, limit: int = _LABEL_MAX) -> str:
        """The test as records and reports name it: its input, cut to `limit`."""
        text = self.input if len(self.input) <= limit else self.input[: limit - 3] + "..."
        return "stdin: " + (text.rstrip("\n") or "(empty)")


# A function task in another language than Python: calls and expected values as data
# (harness/kinds/languages/base.py), run by the sandbox's driver in that language.
from harness.kinds.languages.base import CallSpec, CallTest  # noqa: E402
from harness.kinds.languages.runner import RunnerTest  # noqa: E402

Test = Union[str, IoTest, CallTest, RunnerTest]


@dataclass(frozen=True)
class Task:
    """One problem. The agent sees `prompt` only; `hidden_tests` are for scoring.

    A `function` task's `hidden_tests` are Python snippets; each runs after the
    implementation in the same namespace (e.g. an `assert`, or HumanEval's
    `def check(candidate): ...` followed by `check(<entry_point>)`). An `io` task's
    are `IoTest`s: the program is a whole script, fed each input on stdin, and its
    stdout is compared with the output by `compare`'s rule, outside the program's
    process. The task passes when all of them pass. `canonical_solution`, when known,
    is a complete program that passes them. `public_tests` are the examples the
    problem statement shows (the prompt holds them already); a `:with-example` task set
    uses them as internal tests.
    """

    task_id: str
    prompt: str
    entry_point: str  # the function under test; for an io task, "" (the program is run whole)
    hidden_tests: tuple[Test, ...]
    language: str = "python"
    canonical_solution: str | None = None
    tags: tuple[str, ...] = ()
    timeout_s: float | None = None  # per hidden test; None = the run's default
    meta: Mapping[str, Any] = field(default_factory=dict)
    kind: str = "function"  # function | io
    compare: str = "lcb"  # io tasks: the output comparison rule (COMPARE_RULES)
    public_tests: tuple[Test, ...] = ()  # the statement's examples, same form as hidden_tests
    # Code the graded program starts with, before the answer, as the source's own grader
    # does (LiveCodeBench puts its imports before every program).
    preamble: str = ""
    # The `:with-example` variant: the public examples are the internal tests (the test
    # writer is not called); records and reports say so.
    examples_as_internal: bool = False
    # Function tasks of a source whose own grader is more lenient than the hidden tests
    # (APPS's call-based check also accepts the expected list's first item): that
    # grader's form of each hidden test, in the same order. Graded beside the hidden
    # tests only in the run setting io_compare = "source"; empty: none differs.
    source_tests: tuple[str, ...] = ()

    def digest_fields(self) -> dict[str, Any]:
        fields_ = {
            "task_id": self.task_id,
            "prompt": self.prompt,
            "entry_point": self.entry_point,
            "hidden_tests": [t if isinstance(t, str) else t.as_dict() for t in self.hidden_tests],
        }
        if self.language != "python":  # only where it says something: Python task sets keep their digest
            fields_["language"] = self.language
        # Only where they say something: a task of the default kind keeps the digest it had.
        if self.kind != _DEFAULT_KIND:
            fields_["kind"] = self.kind
            fields_["compare"] = self.compare
        if self.preamble:
            fields_["preamble"] = self.preamble
        if self.examples_as_internal:
            fields_["examples_as_internal"] = True
        if self.source_tests:
            fields_["source_tests"] = list(self.source_tests)
        if self.public_tests:
            fields_["public_tests"] = [t if isinstance(t, str) else t.as_dict() for t in self.public_tests]
        return fields_


_DEFAULT_KIND = Task.__dataclass_fields__["kind"].default


@dataclass(frozen=True)
class TaskSet:
    spec: str  # as the user gave it
    name: str  # e.g. "humaneval", "builtin", "jsonl:/path/x.jsonl"
    tasks: tuple[Task, ...]
    prompt_form: str = "as published"  # how prompts were built, e.g. MBPP with its example assert

    @property
    def digest(self) -> str:
        """sha256 over every task's prompt, entry point and hidden tests, in order."""
        h = hashlib.sha256()
        for task in self.tasks:
            h.update(json.dumps(task.digest_fields(), sort_keys=True).encode())
            h.update(b"\n")
        return "sha256:" + h.hexdigest()

    def select(self, *, task_ids: Iterable[str] | None = None, limit: int | None = None,
               after: str | None = None, before: str | None = None) -> "TaskSet":
        """The chosen tasks: by id, then by contest date (strictly after / before a
        YYYY-MM-DD day; a task without a date is left out), then the first `limit`."""
        tasks = list(self.tasks)
        if after is not None or before is not None:
            if not any(t.meta.get("contest_date") for t in tasks):
                raise TaskError(f"--after/--before: the tasks of {self.name} have no contest date "
                                "(livecodebench's have; others name it in meta.contest_date)")
            tasks = [t for t in tasks if t.meta.get("contest_date")
                     and (after is None or str(t.meta["contest_date"])[:10] > after)
                     and (before is None or str(t.meta["contest_date"])[:10] < before)]
        if task_ids is not None:
            wanted = list(task_ids)
            by_id = {t.task_id: t for t in tasks}
            missing = [t for t in wanted if t not in by_id]
            if missing:
                raise TaskError(f"task ids not in {self.name}: {', '.join(missing)}")
            tasks = [by_id[t] for t in wanted]
        if limit is not None:
            tasks = tasks[:limit]
        return TaskSet(self.spec, self.name, tuple(tasks), self.prompt_form)


class JsonError(ValueError):
    """Text a task source cannot read as JSON; the message says why in a few words."""


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JsonError(f"the key {key!r} appears twice in one object (which one counts would be a guess)")
        out[key] = value
    return out


def parse_json(text: str, *, unique_keys: bool = False) -> Any:
    """`json.loads`, but every way it can fail on data is a JsonError: bad syntax, nesting
    deep enough to exhaust the recursion limit, a number too long to convert, and (with
    `unique_keys`) a key repeated in one object."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys if unique_keys else None)
    except JsonError:
        raise
    except json.JSONDecodeError as exc:
        raise JsonError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise JsonError("not readable JSON: arrays or objects nested too deeply") from None
    except ValueError as exc:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        raise JsonError(f"not readable JSON ({str(exc).split(':')[0]})") from None


def decode_line(raw: bytes, file: Any, number: int) -> str:
    """Line `number` of a task file as text: UTF-8, a leading byte-order mark dropped from
    the first line (editors on Windows write one), its LF or CRLF ending cut. Bytes that
    are not UTF-8 are a TaskError naming the line and the byte."""
    try:
        text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start + (3 if number == 1 and raw.startswith(b"\xef\xbb\xbf") else 0)
        raise TaskError(f"{file}:{number}: not UTF-8 text (byte 0x{raw[start]:02x} at byte {start + 1} of the line)") from None
    return text[:-1] if text.endswith("\n") else text


def _unencodable(text: str) -> bool:
    """True when `text` holds a lone surrogate (JSON's "\\ud800"): not Unicode text, so
    no file, page or terminal the harness writes could hold it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def task_id_problem(task_id: str) -> str | None:
    """Why `task_id` cannot name a task, or None."""
    if len(task_id) > TASK_ID_MAX:
        return f"{len(task_id)} characters long; at most {TASK_ID_MAX}"
    if not task_id.isprintable():
        bad = next(ch for ch in task_id if not ch.isprintable())
        return (f"holds the unprintable character {ascii(bad)} (control characters, escape sequences, "
                "line breaks and lone surrogates are not allowed in a task id)")
    if task_id != task_id.strip():
        return "starts or ends with white space"
    if any(part in (".", "..") for part in task_id.split("/")):
        return "has a '.' or '..' path part (it would name another place in a file path or URL)"
    if "" in task_id.split("/"):
        return "has an empty path part (a leading, trailing or double slash: its view URL would not reach it)"
    return None


def text_problems(task: "Task") -> list[tuple[str, str]]:
    """(field, reason) for each text of `task` the harness could not show or store:
    a bad task id, a lone surrogate in any text, a NUL in the prompt."""
    found: list[tuple[str, str]] = []
    if (why := task_id_problem(task.task_id)) is not None:
        found.append(("task_id", why))
    if "\0" in task.prompt:
        found.append(("prompt", "holds a NUL character"))
    for i, tag in enumerate(task.tags):  # listed on the terminal and in reports, like the id
        if not tag.isprintable():
            found.append((f"tags[{i}]", f"holds the unprintable character {ascii(next(c for c in tag if not c.isprintable()))}"))
    texts: list[tuple[str, Any]] = [
        ("prompt", task.prompt), ("entry_point", task.entry_point), ("canonical_solution", task.canonical_solution),
        ("preamble", task.preamble), ("compare", task.compare),
    ]
    for name, tests in (("tests", task.hidden_tests), ("public_tests", task.public_tests)):
        for i, test in enumerate(tests):
            if isinstance(test, IoTest):
                texts += [(f"{name}[{i}].input", test.input), (f"{name}[{i}].output", test.output)]
            elif isinstance(test, CallTest):
                texts.append((f"{name}[{i}]", json.dumps(test.as_dict(), ensure_ascii=False)))
            else:
                texts.append((f"{name}[{i}]", test))
    try:
        texts.append(("meta", json.dumps(dict(task.meta), ensure_ascii=False, default=str)))
    except (RecursionError, ValueError):  # nested about as deep as json.loads allows
        found.append(("meta", "nested too deeply to write back as JSON"))
    for name, value in texts:
        if isinstance(value, str) and _unencodable(value):
            found.append((name, "holds a lone surrogate (an escape like \\ud800 that is not a character)"))
    return found


def require_clean_text(task: "Task", where: str) -> "Task":
    """`task`, or one TaskError naming `where` and every field the harness could not show."""
    problems = text_problems(task)
    if problems:
        raise TaskError(f"{where}: " + "; ".join(f"field {field!r}: {why}" for field, why in problems))
    return task


class TaskError(ValueError):
    """A task spec or task file is wrong; the message names file, line and field."""


def require_hidden_tests(task: Task, where: str) -> Task:
    """A task without hidden tests would pass whatever the answer: no loader lets one in.
    Whether the tests have the form the task's kind grades is its kind's check
    (harness/kinds/, TaskKind.validate), made by `load_tasks` for every source."""
    if not task.hidden_tests or not all(_has_content(t) for t in task.hidden_tests):
        raise TaskError(
            f"{where}: task {task.task_id!r} has no hidden tests (an empty test would pass any answer); "
            "fix the data or leave the task out"
        )
    return task


def _has_content(test: Any) -> bool:
    if isinstance(test, IoTest):
        return True
    if isinstance(test, CallTest):  # another language's function task: calls with expected values
        return bool(test.calls)
    if isinstance(test, RunnerTest):  # an exercise's own test, by name
        return bool(test.test)
    return isinstance(test, str) and bool(test.strip())


class TaskSource(Protocol):
    def load(self, arg: str) -> TaskSet:
        """`arg` is the spec after its prefix (e.g. the path for `jsonl:<path>`)."""
        ...
