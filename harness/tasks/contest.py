"""What the competitive-programming sources share: spec options, filters, and the
conversion of their test cases into tasks (io tests as data; call-based tests as
asserts on the function path).

Spec options follow the source's folder, separated by colons:
`<source>:<folder>[:<word>|:<name>=<value>]...`, for example
`livecodebench:~/lcb:release_v5:after=2024-08-01:platform=atcoder,codeforces`.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Iterable, Sequence

from harness.tasks.base import IoTest, JsonError, Task, TaskError, TaskSet, parse_json, text_problems
from harness.tasks.rows import FieldError, Limits, default_limits, kind, size_text

WITH_EXAMPLE = "with-example"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def parse_date(value: str, where: str) -> date:
    match = _DATE.match(value.strip())
    if not match:
        raise TaskError(f"{where}: expected a date as YYYY-MM-DD, got {value!r}")
    try:
        return date.fromisoformat(match.group(0))
    except ValueError as exc:
        raise TaskError(f"{where}: {value!r} is not a date ({exc})") from None


@dataclass(frozen=True)
class SourceOptions:
    """A source's spec after its prefix: the folder, plain words, name=value options."""

    folder: str
    words: tuple[str, ...] = ()
    after: date | None = None  # keep problems dated strictly after this day
    before: date | None = None  # keep problems dated strictly before this day
    difficulty: frozenset[str] = frozenset()
    platform: frozenset[str] = frozenset()
    with_example: bool = False
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, source: str, arg: str, *, allowed: Iterable[str], is_word=lambda part: False) -> "SourceOptions":
        allowed = set(allowed)
        parts = arg.split(":") if arg else []
        # The folder is the first part, unless it is an option or one of the source's
        # words (a release, a split) that names no existing path.
        first = parts[0] if parts else ""
        is_option = "=" in first or first == WITH_EXAMPLE or (is_word(first) and not Path(first).expanduser().exists())
        folder = "" if not parts or is_option else parts.pop(0)
        values: dict[str, Any] = {"words": [], "extra": {}}
        for part in parts:
            if not part:
                continue
            if part == WITH_EXAMPLE:
                values["with_example"] = True
                continue
            if "=" not in part:
                values["words"].append(part)
                continue
            name, _, value = part.partition("=")
            where = f"{source}:{arg}: option {name!r}"
            if name not in allowed:
                raise TaskError(f"{where}: unknown; {source} takes: {', '.join(sorted(allowed)) or 'none'}")
            if name in ("after", "before"):
                values[name] = parse_date(value, where)
            elif name in ("difficulty", "platform"):
                values[name] = frozenset(v.strip().lower() for v in value.split(",") if v.strip())
            else:
                values["extra"][name] = value
        values["words"] = tuple(values["words"])
        return cls(folder=folder, **values)

    def split(self, source: str, arg: str, splits: Sequence[str], default: str = "test") -> str:
        """The one split the spec names (words among `splits`), or `default`."""
        split = self.words[0] if self.words else default
        if split not in splits or len(self.words) > 1:
            raise TaskError(f"{source}:{arg}: expected one split of {', '.join(splits)}, got {', '.join(self.words)}")
        return split

    def keeps(self, *, day: date | None, difficulty: Any = None, platform: Any = None) -> bool:
        """Does a problem pass the filters? `difficulty` and `platform` as the row holds
        them (a value that is no string matches no filter)."""
        difficulty = difficulty if isinstance(difficulty, str) else None
        platform = platform if isinstance(platform, str) else None
        if (self.after or self.before) and day is None:
            return False  # an undated problem cannot be shown to be after a cutoff
        if self.after and not day > self.after:
            return False
        if self.before and not day < self.before:
            return False
        if self.difficulty and (difficulty or "").lower() not in self.difficulty:
            return False
        if self.platform and (platform or "").lower() not in self.platform:
            return False
        return True

    def describe(self) -> str:
        """The filters as a phrase for the task set's prompt_form."""
        bits = []
        if self.after:
            bits.append(f"dated after {self.after}")
        if self.before:
            bits.append(f"dated before {self.before}")
        if self.difficulty:
            bits.append("difficulty " + "/".join(sorted(self.difficulty)))
        if self.platform:
            bits.append("platform " + "/".join(sorted(self.platform)))
        return ", ".join(bits)


def hf_cache() -> Path:
    """The Hugging Face hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    return Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface")) / "hub"


def dataset_folder(folder: str, cache_entry: str) -> Path:
    """The folder a user named, or the dataset's entry in the HF cache; a cache entry
    (or the hub folder holding it) resolves to its newest snapshot."""
    path = Path(folder).expanduser() if folder else hf_cache() / cache_entry
    if path.is_dir() and (path / cache_entry).is_dir():
        path = path / cache_entry  # the hub cache itself was named
    if (path / "snapshots").is_dir():
        snapshots = sorted((p for p in (path / "snapshots").iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
        path = snapshots[-1] if snapshots else path
    return path


def jsonl_rows(file: Path, limits: Limits | None = None):
    """(line number, object) for each non-blank line; BadRow for a line that is not one,
    or longer than a row may be (a line is read whole before it is parsed)."""
    limits = limits or default_limits()
    with file.open("rb") as handle:
        number = 0
        while raw := handle.readline(limits.per_row + 1):
            number += 1
            if len(raw) > limits.per_row:
                raise bad_row(file, number, f"the line is longer than {size_text(limits.per_row)}, the limit per row")
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise bad_row(file, number, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1})") from None
            if not line.strip():
                continue
            try:
                row = parse_json(line)
            except JsonError as exc:
                raise bad_row(file, number, str(exc)) from None
            if not isinstance(row, dict):
                raise bad_row(file, number, "expected a JSON object")
            yield number, row


def collect(rows, keeps, make, key_name: str) -> list[Task]:
    """Tasks of the (file, number, row) triples that `keeps(row)`, made by `make(row,
    file, number)`; a repeated task id is a bad row."""
    tasks: list[Task] = []
    seen: set[str] = set()
    for file, number, row in rows:
        try:
            kept = keeps(file, number, row)
        except BadRow:
            raise
        except Exception as exc:  # noqa: BLE001 - a filter reading a field of the wrong type
            raise bad_row(file, number, f"a field the filters read is unreadable ({type(exc).__name__}: {exc})") from None
        if not kept:
            continue
        task = make(row, file, number)
        if found := text_problems(task):
            raise bad_row(file, number, "; ".join(f"field {field!r}: {why}" for field, why in found))
        if task.task_id in seen:
            raise bad_row(file, number, f"duplicate {key_name} {task.task_id!r}")
        seen.add(task.task_id)
        tasks.append(task)
    return tasks


class BadRow(TaskError):
    """One row the harness cannot grade; the message names file, row and reason."""


def bad_row(file: Any, row: int, reason: str) -> BadRow:
    return BadRow(f"{file}: row {row}: {reason}; fix the data or leave the problem out (e.g. with a filter)")


def row_id(value: Any, field: str) -> str:
    """A row's own id as text: a non-empty string or an integer (str(None) would name a
    task "None", str of a list "['x']")."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        shown = "missing" if value is None else f"a {type(value).__name__}"
        raise FieldError(field, f"expected a non-empty string or an integer, got {shown}")
    return value


def io_tests(pairs: Iterable[tuple[Any, Any]], what: str) -> tuple[IoTest, ...]:
    """(input, output) pairs -> IoTests; a list of lines is joined with newlines (APPS).
    FieldError naming `what[i]` for anything else."""
    out = []
    for i, (given, expected) in enumerate(pairs):
        given, expected = _joined(given), _joined(expected)
        for side, value in (("input", given), ("output", expected)):
            if not isinstance(value, str):
                raise FieldError(f"{what}[{i}]", f"the {side} must be a string (or a list of lines), got {kind(value)}")
        if not expected.strip():
            raise FieldError(f"{what}[{i}]", "empty expected output (a program printing nothing would pass)")
        out.append(IoTest(given, expected))
    return tuple(out)


def _joined(value: Any) -> Any:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return value


def _finite(value: Any) -> bool:
    """No NaN or infinity anywhere in a JSON value (iteratively: data may nest deeply)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return True


def _literal(value: Any) -> str:
    """A JSON value as Python source that evaluates to it."""
    if not _finite(value):  # repr writes nan / inf, which are names, not literals
        raise ValueError(f"a value Python cannot write as a literal: {repr(value)[:60]}")
    return repr(value)


def call_asserts(call: str, cases: Iterable[tuple[list[Any], Any]], *, first_item_too: bool = False) -> tuple[str, ...]:
    """Hidden tests for call-based cases: `call` (e.g. "Solution().maxSum") applied to each
    case's arguments, its result compared as LiveCodeBench and APPS do: a tuple counts as
    the list it holds. `first_item_too`: APPS's own check, which also accepts the expected
    list's first item (so `min(xs)` passes for a sort); never a hidden test of its own,
    only a task's `source_tests`, graded in the run setting io_compare = "source"."""
    tests = []
    for args, expected in cases:
        arguments = ", ".join(_literal(a) for a in args)
        want = _literal(expected)
        lines = [
            f"result = {call}({arguments})",
            "result = list(result) if type(result) is tuple else result",
        ]
        if first_item_too and isinstance(expected, list) and expected:
            lines.append(f"assert result == {want} or result == {_literal(expected[0])}")
        else:
            lines.append(f"assert result == {want}")
        tests.append("\n".join(lines))
    return tuple(tests)


def unwrapped_outputs(outputs: Sequence[Any]) -> list[Any]:
    """APPS's call-based outputs as the values the function must return. APPS stores each
    return value wrapped in a list of one (`[6]` for 6, `[[1, 2]]` for [1, 2]); its own
    check accepts the list or its first item, whatever the function is. Here one reading
    holds for a whole problem: when every output is a list of one item, each test expects
    that item; otherwise each expects the output as stored."""
    if outputs and all(isinstance(out, list) and len(out) == 1 for out in outputs):
        return [out[0] for out in outputs]
    return list(outputs)


# The imports LiveCodeBench's grader puts before every program (testing_util's
# import_string), so a program that uses `List` or `deque` unimported runs as there.
_STAR_MODULES = (
    "string re datetime collections heapq bisect copy math random statistics itertools "
    "functools operator io sys json builtins typing"
).split()
LCB_PREAMBLE = (
    "".join(f"from {m} import *\n" for m in _STAR_MODULES)
    + "".join(f"import {m}\n" for m in _STAR_MODULES if m not in ("builtins", "typing"))
    + "sys.setrecursionlimit(50000)\n"
)


def contest_task_set(spec: str, name: str, tasks: list[Task], options: SourceOptions, form: str) -> TaskSet:
    filters = options.describe()
    if options.with_example:
        form += "; the public examples are the internal tests"
        name += ":with-example"
    if filters:
        form += f"; {filters}"
    if options.with_example:
        missing = [t.task_id for t in tasks if not t.public_tests]
        if missing:
            raise TaskError(f"{spec}: with-example needs public examples; none in {', '.join(missing[:5])}")
        tasks = [dataclasses.replace(t, examples_as_internal=True) for t in tasks]
    return TaskSet(spec=spec, name=name, tasks=tuple(tasks), prompt_form=form)
