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

The prompt ends where the body begins (HumanEval's convention): a completion is the body,
`prompt + completion` the program; a chat model's whole function is graded as it is.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from harness.kinds.languages import canonical, other_languages
from harness.kinds.languages.base import CallSpec, CallTest
from harness.kinds.languages.literals import LiteralError, parse_assert
from harness.tasks.base import JsonError, Task, TaskError, TaskSet, decode_line, parse_json

_CANDIDATE = re.compile(r"\bcandidate\s*:?=\s*([A-Za-z_][A-Za-z0-9_]*)")


def _entry_point(row: dict) -> str:
    found = _CANDIDATE.search(row["tests"])
    if found:
        return found.group(1)
    if row.get("entry_point"):
        return str(row["entry_point"])
    parts = str(row["name"]).split("_", 2)  # HumanEval_0_has_close_elements, mbpp_3_is_not_prime
    return parts[2] if len(parts) == 3 else parts[-1]


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
    """The test's lines, a line break inside a string literal kept in its line."""
    out, pending = [], ""
    for line in tests.split("\n"):
        pending = f"{pending}\n{line}" if pending else line
        if len(re.findall(r'(?<!\\)"', pending.replace("\\\\", ""))) % 2 == 0:
            out.append(pending)
            pending = ""
    return out + ([pending] if pending else [])


def _prompt(prompt: str, language: str) -> str:
    if language == "go":  # the test's own import: the graded program has no tests in it
        prompt = re.sub(r'^\s*"testing"\s*\n', "", prompt, flags=re.MULTILINE)
    return prompt


def _rows(path: Path) -> list[dict]:
    data = path.read_bytes()
    lines = [decode_line(raw, path, number) for number, raw in enumerate(data.splitlines(keepends=True), start=1)]
    text = "\n".join(lines)
    if text.lstrip().startswith("["):
        rows = parse_json(text)
        if not isinstance(rows, list):
            raise TaskError(f"{path}: expected a JSON list of rows")
        return rows
    rows = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                rows.append(parse_json(line))
            except JsonError as exc:
                raise TaskError(f"{path}:{number}: {exc}") from None
    return rows


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
        if not path.is_file():
            alternative = path.with_suffix(".json")
            if not alternative.is_file():
                raise TaskError(f"multipl-e: {path} does not exist (export the dataset's rows to it as JSON lines)")
            path = alternative
        tasks, left_out = [], []
        for number, row in enumerate(_rows(path), start=1):
            where = f"{path}:{number}"
            if not isinstance(row, dict) or not isinstance(row.get("prompt"), str) or not isinstance(row.get("name"), str):
                raise TaskError(f"{where}: expected a row with name, language, prompt and tests")
            row = dict(row)
            row["tests"] = row.get("tests", row.get("test"))
            if not isinstance(row["tests"], str):
                raise TaskError(f"{where}: field 'tests': expected the test code as a string")
            try:
                language = canonical(str(row.get("language") or dataset.rsplit("-", 1)[-1]))
            except ValueError as exc:
                raise TaskError(f"{where}: field 'language': {exc}") from None
            if language not in other_languages():
                raise TaskError(f"{where}: MultiPL-E rows in {language} are not supported; "
                                f"the harness runs {', '.join(other_languages())} from MultiPL-E (and Python from humaneval)")
            entry_point = _entry_point(row)
            try:
                calls = _calls(row["tests"], entry_point)
            except (LiteralError, RecursionError) as exc:
                left_out.append(f"{row['name']} ({exc})")
                continue
            stop_tokens = [str(t) for t in row.get("stop_tokens") or []]
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
