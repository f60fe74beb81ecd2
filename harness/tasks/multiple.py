"""MultiPL-E's translated benchmarks from files: `multipl-e:<folder>:<dataset>`, e.g.
`multipl-e:data:humaneval-rs` reads `data/humaneval-rs.jsonl` (rows as in its Hugging Face
dataset: `name`, `language`, `prompt`, `tests` (or `test`), `stop_tokens`; one JSON object a
line, or one JSON list).

A row's tests are code in the language (`assert_eq!(candidate(...), ...);`); they are
read as data here (harness/kinds/languages/literals.py): each assert becomes a call with
its arguments and expected value, and all of a row's calls are one hidden test, run by the
sandbox's driver with the comparison in its worker. Running MultiPL-E's test code as it
is would put the expected values in the graded process, where a program can redefine
`assert_eq!`, exit before the first assert, or read them. A row whose tests cannot all be
read as calls is left out, and the task set says how many were (`prompt_form`).

Rows are data from anywhere: the file is read with the limits every loader keeps (per row,
per task set; harness/tasks/rows.py), parsing is linear in its size, and every field is
type-checked before use: the entry point is pasted into a driver's source, so it is an
identifier or the row is refused, with one error naming the file, the row and the field.

The prompt ends where the body begins (HumanEval's convention): a completion is the body,
`prompt + completion` the program; a chat model's whole function is graded as it is.
"""
from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import Any, Iterator

from harness.kinds.languages import canonical, other_languages
from harness.kinds.languages.base import CallSpec, CallTest
from harness.kinds.languages.literals import LiteralError, parse_assert
from harness.tasks.base import JsonError, Task, TaskError, TaskSet, parse_json
from harness.tasks.contest import bad_row
from harness.tasks.rows import default_limits, kind, size_text, strings_size

_CANDIDATE = re.compile(r"\bcandidate\s*:?=\s*([A-Za-z_][A-Za-z0-9_]*)")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")
_QUOTE = re.compile(r'(?<!\\)"')


def _entry_point(row: dict) -> str:
    """The function the tests call: an ASCII identifier (it is pasted into the driver's
    source), else ValueError naming the field it came from."""
    found = _CANDIDATE.search(row["tests"])
    if found:
        return found.group(1)
    if row.get("entry_point") is not None:
        value, field = row["entry_point"], "entry_point"
    else:
        parts = row["name"].split("_", 2)  # HumanEval_0_has_close_elements, mbpp_3_is_not_prime
        value, field = (parts[2] if len(parts) == 3 else parts[-1]), "name"
    if not isinstance(value, str) or not _IDENTIFIER.fullmatch(value):
        shown = value[:60] if isinstance(value, str) else kind(value)
        raise ValueError(f"field {field!r}: the function's name {shown!r} is not an identifier")
    return value


def _calls(tests: str, entry_point: str) -> tuple[CallSpec, ...]:
    calls = []
    for line in _statements(tests):
        stripped = line.strip()
        if not re.search(r"\bcandidate\s*\(", stripped) or _CANDIDATE.search(stripped):
            continue
        parsed = parse_assert(stripped, entry_point)
        calls.append(CallSpec(tuple(parsed.args), parsed.expected, parsed.label.replace("candidate(", f"{entry_point}(", 1)))
    if not calls:
        raise LiteralError("no assert that calls candidate")
    return tuple(calls)


def _statements(tests: str) -> list[str]:
    """The test's lines, a line break inside a string literal kept in its line; linear:
    each line's quotes are counted once (an unclosed quote makes one long statement)."""
    out, pending, quotes = [], [], 0
    for line in tests.split("\n"):
        pending.append(line)
        quotes += len(_QUOTE.findall(line.replace("\\\\", "")))
        if quotes % 2 == 0:
            out.append("\n".join(pending))
            pending, quotes = [], 0
    return out + (["\n".join(pending)] if pending else [])


def _prompt(prompt: str, language: str) -> str:
    if language == "go":  # the test's own import: the graded program has no tests in it
        prompt = re.sub(r'^\s*"testing"\s*\n', "", prompt, flags=re.MULTILINE)
    return prompt


def _rows(path: Path) -> Iterator[tuple[int, Any]]:
    """(row number, row) of a JSON-lines file or of one JSON list, within the limits per
    row and per task set; a TaskError naming the file and the row otherwise."""
    limits = default_limits()
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise TaskError(f"{path}: not a regular file")
        handle = path.open("rb")
    except OSError as exc:
        raise TaskError(f"{path}: cannot be read ({exc.strerror})") from None
    with handle:
        head = handle.read(1 << 16)
        while head.strip() == b"" and (more := handle.read(1 << 16)):
            head = more  # only blank so far
        handle.seek(0)
        if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"["):
            yield from _list_rows(path, handle.read(limits.per_set + 1))
        else:
            yield from _line_rows(path, handle)


def _decode(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TaskError(f"{where}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1})") from None


def _list_rows(path: Path, data: bytes) -> Iterator[tuple[int, Any]]:
    limits = default_limits()
    if len(data) > limits.per_set:
        raise TaskError(f"{path}: larger than {size_text(limits.per_set)}, the limit per task set")
    try:
        rows = parse_json(_decode(data, str(path)))
    except JsonError as exc:
        raise TaskError(f"{path}: {exc}") from None
    if not isinstance(rows, list):
        raise TaskError(f"{path}: expected a JSON list of rows")
    for number, row in enumerate(rows, start=1):
        if strings_size(row) > limits.per_row:
            raise bad_row(path, number, f"larger than {size_text(limits.per_row)}, the limit per row")
        yield number, row


def _line_rows(path: Path, handle: Any) -> Iterator[tuple[int, Any]]:
    limits = default_limits()
    number, used = 0, 0
    while raw := handle.readline(limits.per_row + 1):
        number += 1
        used += len(raw)
        if len(raw) > limits.per_row:
            raise bad_row(path, number, f"the line is longer than {size_text(limits.per_row)}, the limit per row")
        if used > limits.per_set:
            raise bad_row(path, number, f"the file passes {size_text(limits.per_set)}, the limit per task set")
        line = _decode(raw, f"{path}: row {number}")
        if line.strip():
            try:
                yield number, parse_json(line)
            except JsonError as exc:
                raise bad_row(path, number, str(exc)) from None


def _checked(row: Any, path: Path, number: int, dataset: str) -> tuple[dict, str, str, list[str]]:
    """(row with `tests`, language, entry point, stop tokens), every field type-checked."""
    if not isinstance(row, dict):
        raise bad_row(path, number, f"expected an object with name, language, prompt and tests, got {kind(row)}")
    for field in ("name", "prompt"):
        if not isinstance(row.get(field), str) or not row[field]:
            raise bad_row(path, number, f"field {field!r}: expected a non-empty string, got {kind(row.get(field))}")
    row = dict(row)
    row["tests"] = row.get("tests", row.get("test"))
    if not isinstance(row["tests"], str):
        raise bad_row(path, number, f"field 'tests': expected the test code as a string, got {kind(row['tests'])}")
    stop = row.get("stop_tokens")
    if stop is not None and (not isinstance(stop, list) or not all(isinstance(t, str) for t in stop)):
        raise bad_row(path, number, f"field 'stop_tokens': expected a list of strings, got {kind(stop)}")
    given = row.get("language")
    if given is not None and not isinstance(given, str):
        raise bad_row(path, number, f"field 'language': expected a string, got {kind(given)}")
    try:
        language = canonical(given or dataset.rsplit("-", 1)[-1])
    except ValueError as exc:
        raise bad_row(path, number, f"field 'language': {exc}") from None
    if language not in other_languages():
        raise bad_row(path, number, f"MultiPL-E rows in {language} are not supported; the harness runs "
                      f"{', '.join(other_languages())} from MultiPL-E (and Python from humaneval)")
    try:
        entry_point = _entry_point(row)
    except ValueError as exc:
        raise bad_row(path, number, str(exc)) from None
    return row, language, entry_point, list(stop or [])


class MultiplESource:
    """`multipl-e:<folder>:<dataset>` (the folder holds `<dataset>.jsonl`)."""

    prefix = "multipl-e"
    usage = "multipl-e:<folder>:<dataset>  (e.g. multipl-e:data:humaneval-rs)"

    def load(self, arg: str) -> TaskSet:
        folder, _, dataset = arg.rpartition(":")
        if not folder or not dataset:
            raise TaskError("multipl-e: expected multipl-e:<folder>:<dataset>, e.g. multipl-e:data:humaneval-rs "
                            "(the folder holds humaneval-rs.jsonl, rows as in MultiPL-E's Hugging Face dataset)")
        path = Path(folder).expanduser() / f"{dataset}.jsonl"
        if not path.exists():
            alternative = path.with_suffix(".json")
            if not alternative.exists():
                raise TaskError(f"multipl-e: {path} does not exist (export the dataset's rows to it as JSON lines)")
            path = alternative
        tasks, left_out = [], []
        for number, raw in _rows(path):
            row, language, entry_point, stop_tokens = _checked(raw, path, number, dataset)
            try:
                calls = _calls(row["tests"], entry_point)
            except (LiteralError, RecursionError) as exc:
                left_out.append(f"{row['name']} ({exc})")
                continue
            # The row as MultiPL-E's evaluator reads it (export --format multipl-e writes it back
            # with the completions); meta is not part of the task set's digest.
            original = {"name": row["name"], "language": str(row.get("language") or dataset.rsplit("-", 1)[-1]),
                        "prompt": row["prompt"], "tests": row["tests"], "stop_tokens": stop_tokens}
            tasks.append(Task(task_id=f"multipl-e/{dataset}/{row['name']}", prompt=_prompt(row["prompt"], language),
                              entry_point=entry_point, hidden_tests=(CallTest(calls),), language=language,
                              meta={"source": str(path), "line": number, "stop_tokens": stop_tokens,
                                    "multipl_e": original}))
        if not tasks:
            raise TaskError(f"multipl-e: no row of {path} has tests the harness can read as calls"
                            + (f" (first: {left_out[0]})" if left_out else ""))
        form = "as published; tests read as calls and expected values"
        if left_out:
            form += f"; {len(left_out)} row(s) left out, their tests not readable as data (first: {left_out[0][:200]})"
        name = f"multipl-e:{dataset}"
        return TaskSet(spec=f"multipl-e:{arg}", name=name, tasks=tuple(tasks), prompt_form=form)
