"""Task files in the project's JSONL schema: `jsonl:<path>`, a bare path, `builtin`.

The schema is documented in tasks/README.md. Every problem found is reported with
its file, line and field, all at once; a file with any problem loads nothing.
"""
from __future__ import annotations

import ast
import dataclasses
import json
import keyword
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.text.parsing import UNPARSEABLE, parse
from harness.tasks.adapters import with_check_call
from harness.tasks.base import (
    COMPARE_RULES, IoTest, JsonError, Task, TaskError, TaskSet, decode_line, parse_json, text_problems,
)
from harness.tasks.rows import default_limits, size_text

REQUIRED_FIELDS = ("task_id", "prompt", "entry_point", "tests")
OPTIONAL_FIELDS = ("canonical_solution", "tags", "timeout_s", "meta", "kind", "compare", "public_tests", "language")
IO_REQUIRED_FIELDS = ("task_id", "prompt", "tests")  # an io task has no entry point
SCHEMA_DOC = "tasks/README.md"
WITH_EXAMPLE = "with-example"
BUILTIN_FILE = Path(__file__).resolve().parents[2] / "tasks" / "builtin.jsonl"
# The builtin tasks of other languages: tasks/builtin-<language>.jsonl, `builtin:<language>`.


def row_kinds() -> tuple[str, ...]:
    """The task kinds a task file's row may name (those whose tests are data in the row)."""
    from harness.kinds import kind_names, kind_of

    return tuple(name for name in kind_names() if kind_of(name).in_task_files)


def builtin_languages() -> tuple[str, ...]:
    """The languages besides Python the project's own set has a file of (builtin-<language>.jsonl)."""
    from harness.kinds.languages import other_languages

    return tuple(name for name in other_languages() if BUILTIN_FILE.with_name(f"builtin-{name}.jsonl").is_file())
POLYGLOT = "polyglot"  # builtin:polyglot: all of them
_MAX_LISTED = 20  # problems quoted in one error; the count says how many more


@dataclass(frozen=True)
class _Problem:
    path: Path
    line: int
    field: str | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}"
        return f"{where}: field {self.field!r}: {self.message}" if self.field else f"{where}: {self.message}"


def _parses(code: str) -> str | None:
    """None if `code` compiles (compile() of the text only; nothing runs), else why not.
    Compiling finds what parsing alone does not (`return` outside a function)."""
    try:
        compile(code, "<task file>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"not valid Python ({exc.msg}, at its line {exc.lineno})"
    except (RecursionError, MemoryError):
        return "not valid Python (nested too deeply to parse)"
    except ValueError as exc:  # a NUL byte; a lone surrogate (UnicodeEncodeError)
        why = "a lone surrogate" if isinstance(exc, UnicodeError) else str(exc)
        return f"not valid Python ({why})"
    return None


def _top_level_names(code: str) -> set[str]:
    names: set[str] = set()
    for node in parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


class _LineChecker:
    """Turns one JSON line into a Task, recording every problem it finds."""

    def __init__(self, path: Path, line: int, problems: list[_Problem]) -> None:
        self.path, self.line, self.problems = path, line, problems

    def fail(self, field: str | None, message: str) -> None:
        self.problems.append(_Problem(self.path, self.line, field, message))

    def text(self, record: dict[str, Any], field: str) -> str | None:
        value = record.get(field)
        if not isinstance(value, str) or not value.strip():
            self.fail(field, f"expected a non-empty string, got {json.dumps(value)[:60]}")
            return None
        return value

    def task(self, record: Any) -> Task | None:
        if not isinstance(record, dict):
            self.fail(None, f"expected a JSON object (one task per line), got {type(record).__name__}")
            return None
        before = len(self.problems)
        kind = record.get("kind", "function")
        if kind not in row_kinds():
            self.fail("kind", f"expected one of {', '.join(row_kinds())}, got {json.dumps(kind)[:60]}")
            return None
        required = IO_REQUIRED_FIELDS if kind == "io" else REQUIRED_FIELDS
        for field in required:
            if field not in record:
                self.fail(field, "missing (required: " + ", ".join(required) + ")")
        for field in record:
            if field not in REQUIRED_FIELDS + OPTIONAL_FIELDS:
                self.fail(field, "unknown field (allowed: " + ", ".join(REQUIRED_FIELDS + OPTIONAL_FIELDS) + ")")
        if len(self.problems) > before:
            return None
        language = self.language(record.get("language", "python"))
        if language is None:
            return None
        if kind == "io":
            task = self.io_task(record, before, language)
            return dataclasses.replace(task, language=language) if task is not None else None
        if language != "python":
            return self.language_task(record, before, language)
        task_id = self.text(record, "task_id")
        prompt = self.text(record, "prompt")
        entry_point = self.text(record, "entry_point")
        if entry_point is not None and (not entry_point.isidentifier() or keyword.iskeyword(entry_point)):
            self.fail("entry_point", f"{entry_point!r} is not a Python name")
            entry_point = None
        tests = self.tests(record["tests"], entry_point)
        public: tuple[str, ...] = ()
        if "public_tests" in record:
            public = self.tests(record["public_tests"], entry_point, field="public_tests")
        solution = self.solution(record.get("canonical_solution"), entry_point)
        tags = self.tags(record.get("tags", []))
        timeout_s = self.timeout(record.get("timeout_s"))
        meta = record.get("meta", {})
        if not isinstance(meta, dict):
            self.fail("meta", "expected a JSON object")
        if len(self.problems) > before or task_id is None or prompt is None or entry_point is None:
            return None
        return Task(
            task_id=task_id,
            prompt=prompt,
            entry_point=entry_point,
            hidden_tests=tests,
            canonical_solution=solution,
            tags=tags,
            timeout_s=timeout_s,
            meta={"source": str(self.path), "line": self.line, **meta},
            public_tests=public,
        )

    def language(self, value: Any) -> str | None:
        from harness.kinds.languages import canonical

        if not isinstance(value, str):
            self.fail("language", f"expected a language name, got {json.dumps(value)[:60]}")
            return None
        try:
            return canonical(value)
        except ValueError as exc:
            self.fail("language", str(exc))
            return None

    def language_task(self, record: dict[str, Any], before: int, language: str) -> Task | None:
        """A function task in another language: its tests are calls with expected values
        (`{"calls": [{"args": [...], "expected": ...}]}`) or test lines in the language
        (`assert_eq!(add(1, 2), 3);`), each read as data (kinds/languages/literals.py)."""
        task_id = self.text(record, "task_id")
        prompt = self.text(record, "prompt")
        entry_point = self.text(record, "entry_point")
        if entry_point is not None and not entry_point.isidentifier():
            self.fail("entry_point", f"{entry_point!r} is not a name")
            entry_point = None
        tests = self.call_tests(record["tests"], entry_point, "tests", required=True)
        public = self.call_tests(record.get("public_tests", []), entry_point, "public_tests", required=False)
        solution = record.get("canonical_solution")
        if solution is not None and (not isinstance(solution, str) or not solution.strip()):
            self.fail("canonical_solution", "expected a non-empty string (a complete program)")
        tags = self.tags(record.get("tags", []))
        timeout_s = self.timeout(record.get("timeout_s"))
        meta = record.get("meta", {})
        if not isinstance(meta, dict):
            self.fail("meta", "expected a JSON object")
        if len(self.problems) > before or task_id is None or prompt is None or entry_point is None:
            return None
        return Task(task_id=task_id, prompt=prompt, entry_point=entry_point, hidden_tests=tests, language=language,
                    canonical_solution=solution, tags=tags, timeout_s=timeout_s,
                    meta={"source": str(self.path), "line": self.line, **meta}, public_tests=public)

    def call_tests(self, value: Any, entry_point: str | None, field: str, *, required: bool) -> tuple:
        from harness.kinds.languages.base import CallSpec, CallTest
        from harness.kinds.languages.literals import LiteralError, parse_assert

        if not isinstance(value, list) or (required and not value):
            self.fail(field, "expected a non-empty list of tests (test lines, or {\"calls\": [{\"args\": [...], \"expected\": ...}]})")
            return ()
        out = []
        for i, item in enumerate(value):
            name = f"{field}[{i}]"
            if isinstance(item, str):
                try:
                    parsed = parse_assert(item, entry_point or "")
                except (LiteralError, RecursionError) as exc:
                    self.fail(name, f"not a test line the harness can read as data ({exc})")
                    continue
                out.append(CallTest((CallSpec(tuple(parsed.args), parsed.expected, parsed.label),)))
                continue
            calls = item.get("calls") if isinstance(item, dict) else None
            if not isinstance(calls, list) or not calls or set(item) - {"calls", "label", "tolerance"}:
                self.fail(name, 'expected a test line or {"calls": [{"args": [...], "expected": ...}, ...]}')
                continue
            specs = []
            for k, call in enumerate(calls):
                if not (isinstance(call, dict) and isinstance(call.get("args"), list) and "expected" in call
                        and set(call) <= {"args", "expected", "label"}):
                    self.fail(f"{name}.calls[{k}]", 'expected {"args": [...], "expected": <value>}')
                    break
                specs.append(CallSpec(tuple(call["args"]), call["expected"], str(call.get("label", ""))))
            else:
                tolerance = item.get("tolerance")
                if tolerance is not None and (isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or tolerance < 0):
                    self.fail(f"{name}.tolerance", "expected a non-negative number")
                    continue
                out.append(CallTest(tuple(specs), str(item.get("label", "")), tolerance))
        return tuple(out)

    def io_task(self, record: dict[str, Any], before: int, language: str = "python") -> Task | None:
        task_id = self.text(record, "task_id")
        prompt = self.text(record, "prompt")
        if record.get("entry_point") not in (None, ""):
            self.fail("entry_point", "an io task is a whole program: leave entry_point out")
        compare = record.get("compare", "lcb")
        if compare not in COMPARE_RULES:
            self.fail("compare", f"expected one of {', '.join(COMPARE_RULES)}, got {json.dumps(compare)[:60]}")
        tests = self.io_tests(record["tests"], "tests", required=True)
        public = self.io_tests(record.get("public_tests", []), "public_tests", required=False)
        solution = record.get("canonical_solution")
        if solution is not None:
            if not isinstance(solution, str) or not solution.strip():
                self.fail("canonical_solution", "expected a non-empty string (a complete program)")
            elif language == "python" and (why := _parses(solution)) is not None:
                self.fail("canonical_solution", why)
        tags = self.tags(record.get("tags", []))
        timeout_s = self.timeout(record.get("timeout_s"))
        meta = record.get("meta", {})
        if not isinstance(meta, dict):
            self.fail("meta", "expected a JSON object")
        if len(self.problems) > before or task_id is None or prompt is None:
            return None
        return Task(
            task_id=task_id, prompt=prompt, entry_point="", hidden_tests=tests,
            canonical_solution=solution, tags=tags, timeout_s=timeout_s,
            meta={"source": str(self.path), "line": self.line, **meta},
            kind="io", compare=compare, public_tests=public,
        )

    def io_tests(self, value: Any, field: str, *, required: bool) -> tuple[IoTest, ...]:
        if not isinstance(value, list) or (required and not value):
            self.fail(field, 'expected a non-empty list of {"input": "...", "output": "..."}' if required
                      else 'expected a list of {"input": "...", "output": "..."}')
            return ()
        out: list[IoTest] = []
        for i, item in enumerate(value):
            if (not isinstance(item, dict) or set(item) != {"input", "output"}
                    or not all(isinstance(v, str) for v in item.values())):
                self.fail(f"{field}[{i}]", 'expected {"input": "<stdin>", "output": "<expected stdout>"} (two strings)')
            elif not item["output"].strip():
                self.fail(f"{field}[{i}]", "empty expected output: a program printing nothing would pass")
            else:
                out.append(IoTest(item["input"], item["output"]))
        return tuple(out)

    def tests(self, value: Any, entry_point: str | None, field: str = "tests") -> tuple[str, ...]:
        if isinstance(value, str):
            items, names = [value], [field]
        elif isinstance(value, list) and value:
            items, names = value, [f"{field}[{i}]" for i in range(len(value))]
        else:
            self.fail(field, "expected a string of test code or a non-empty list of asserts")
            return ()
        out: list[str] = []
        for item, name in zip(items, names):
            if not isinstance(item, str) or not item.strip():
                self.fail(name, "expected a non-empty string of Python")
            elif (why := _parses(item)) is not None:
                self.fail(name, why)
            else:
                out.append(item)
        if isinstance(value, str) and out and entry_point:
            out = [with_check_call(out[0], entry_point)]
        return tuple(out)

    def solution(self, value: Any, entry_point: str | None) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            self.fail("canonical_solution", "expected a non-empty string (a complete program)")
            return None
        if (why := _parses(value)) is not None:
            self.fail("canonical_solution", why)
            return None
        try:
            names = _top_level_names(value)
        except UNPARSEABLE:  # compiles, but too deep for the ast module's own objects
            self.fail("canonical_solution", "not valid Python (nested too deeply to parse)")
            return None
        if entry_point and entry_point not in names:
            self.fail("canonical_solution", f"does not define the entry point {entry_point!r} at top level")
        return value

    def tags(self, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(t, str) and t.strip() for t in value):
            self.fail("tags", "expected a list of non-empty strings")
            return ()
        return tuple(value)

    def timeout(self, value: Any) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            self.fail("timeout_s", f"expected a positive number of seconds, got {json.dumps(value)}")
            return None
        return float(value)


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.glob("*.jsonl") if p.is_file())
        if not files:
            raise TaskError(f"{path}: folder holds no .jsonl task files")
        return files
    if path.is_file():
        return [path]
    raise TaskError(f"{path}: no such file or folder (expected a .jsonl task file or a folder of them)")


def _lines(file: Path, budget: list[int]):
    """(number, text) of each line of a task file, read one line at a time: a line longer
    than a row may be, or a file past what the task set has left, is a TaskError."""
    limits = default_limits()
    try:
        with file.open("rb") as handle:
            number = 0
            while raw := handle.readline(limits.per_row + 1):
                number += 1
                if len(raw) > limits.per_row:
                    raise TaskError(f"{file}:{number}: the line is longer than {size_text(limits.per_row)}, "
                                    "the limit per row (one task a line)")
                budget[0] -= len(raw)
                if budget[0] < 0:
                    raise TaskError(f"{file}:{number}: the task files pass {size_text(limits.per_set)}, the limit "
                                    "per task set; the harness holds every task in memory")
                line = decode_line(raw, file, number)
                yield number, line[:-1] if line.endswith("\r") else line
    except OSError as exc:
        raise TaskError(f"{file}: cannot read ({exc})") from None


def read_task_files(path: Path) -> tuple[Task, ...]:
    """All tasks of a .jsonl file or of every .jsonl file in a folder (sorted by name).

    Raises one TaskError listing every problem (file, line, field); returns nothing
    unless everything is valid.
    """
    problems: list[_Problem] = []
    tasks: list[Task] = []
    first_seen: dict[str, str] = {}
    budget = [default_limits().per_set]  # bytes the task set may still read
    for file in _files(path):
        for number, line in _lines(file, budget):
            if not line.strip():
                continue
            checker = _LineChecker(file, number, problems)
            try:
                record = parse_json(line, unique_keys=True)
            except JsonError as exc:
                checker.fail(None, f"{exc}; see {SCHEMA_DOC}")
                continue
            task = checker.task(record)
            if task is None:
                continue
            if found := text_problems(task):
                for field, why in found:
                    checker.fail(field, why)
                continue
            if task.task_id in first_seen:
                checker.fail("task_id", f"duplicate {task.task_id!r}, first defined at {first_seen[task.task_id]}")
                continue
            first_seen[task.task_id] = f"{file}:{number}"
            tasks.append(task)
    if problems:
        listed = "\n  ".join(str(p) for p in problems[:_MAX_LISTED])
        more = f"\n  ... and {len(problems) - _MAX_LISTED} more" if len(problems) > _MAX_LISTED else ""
        head = "" if len(problems) == 1 else f"{len(problems)} problems in task files (schema: {SCHEMA_DOC}):\n  "
        raise TaskError(head + listed + more)
    if not tasks:
        raise TaskError(f"{path}: holds no tasks (schema: {SCHEMA_DOC})")
    return tuple(tasks)


class JsonlSource:
    """`jsonl:<path>` or a bare path: one .jsonl file or a folder of them."""

    prefix = "jsonl"
    usage = "jsonl:<path>  (or a path to a .jsonl file or a folder of them)"

    def load(self, arg: str) -> TaskSet:
        if not arg.strip():
            raise TaskError("jsonl: needs a path, e.g. jsonl:tasks/mine.jsonl or jsonl:tasks/my-folder")
        path = Path(arg).expanduser()
        return TaskSet(spec=f"jsonl:{arg}", name=f"jsonl:{path}", tasks=read_task_files(path))


class BuiltinSource:
    """`builtin` (the project's own problems in tasks/builtin.jsonl) or `builtin:<tag>`."""

    prefix = "builtin"
    usage = "builtin[:{languages}|polyglot][:<tag>]"

    def load(self, arg: str) -> TaskSet:
        if not BUILTIN_FILE.is_file():
            raise TaskError(
                f"the builtin task file {BUILTIN_FILE} is missing; "
                "run from a checkout of the project, or use jsonl:<path> to a copy of it"
            )
        parts = [p for p in arg.split(":") if p]
        # builtin:rust (tasks/builtin-rust.jsonl), builtin:polyglot (every other language's)
        languages = [p for p in parts if p in builtin_languages() or p == POLYGLOT]
        parts = [p for p in parts if p not in languages]
        if languages:
            chosen_languages = builtin_languages() if POLYGLOT in languages else tuple(dict.fromkeys(languages))
            tasks = tuple(task for language in chosen_languages
                          for task in read_task_files(BUILTIN_FILE.with_name(f"builtin-{language}.jsonl")))
        else:
            tasks = read_task_files(BUILTIN_FILE)
        with_example = WITH_EXAMPLE in parts
        tags = [p for p in parts if p != WITH_EXAMPLE]
        if len(tags) > 1:
            raise TaskError(f"builtin:{arg}: expected builtin[:<tag>][:{WITH_EXAMPLE}]")
        chosen = tasks
        if tags:
            chosen = tuple(t for t in tasks if tags[0] in t.tags)
            if not chosen:
                known = sorted({tag for t in tasks for tag in t.tags})
                raise TaskError(f"no builtin task has the tag {tags[0]!r}; tags: {', '.join(known)}")
        name = "builtin" + (f":{arg}" if arg else "")
        if not with_example:
            return TaskSet(spec=name, name=name, tasks=chosen)
        missing = [t.task_id for t in chosen if not t.public_tests]
        if missing:
            raise TaskError(
                f"builtin:{arg}: {WITH_EXAMPLE} uses each task's public examples as its internal tests; "
                f"{len(missing)} task(s) have none (e.g. {missing[0]}): pick a tag whose tasks all have them, such as io"
            )
        chosen = tuple(dataclasses.replace(t, examples_as_internal=True) for t in chosen)
        return TaskSet(spec=name, name=name, tasks=chosen,
                       prompt_form="as published; the public examples are the internal tests")
