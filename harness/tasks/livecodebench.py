"""`livecodebench[:<folder>][:<release>][:after=..][:before=..][:difficulty=..][:platform=..][:with-example]`

Reads LiveCodeBench's `code_generation_lite` files as its dataset repository lays them
out (`test.jsonl`, `test2.jsonl`, ... one file per release increment), from a local
folder, a Hugging Face cache folder (`datasets--livecodebench--code_generation_lite`,
its newest snapshot) or, with no folder, the default Hugging Face cache.

A release selects files as the dataset's loading script does: `release_v5` is
`test.jsonl` .. `test5.jsonl`; `v5` is `test5.jsonl` alone; `v2_v4` is test2..test4;
`release_latest` (the default) every `test*.jsonl` present.

stdin problems (AtCoder, Codeforces) become io tasks graded by LiveCodeBench's rule;
LeetCode's functional problems become function tasks: `Solution().<func_name>(...)`
asserts, arguments one JSON value per line, the expected value JSON. Hidden tests are
the public and the private test cases together, as LiveCodeBench grades.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from harness.tasks.base import JsonError, Task, TaskError, TaskSet, parse_json
from harness.tasks.contest import (
    LCB_PREAMBLE, SourceOptions, bad_row, call_asserts, collect, contest_task_set, dataset_folder, io_tests,
    json_lines, jsonl_rows, parse_date, row_id,
)
from harness.tasks.safe_pickle import UnsafePickle, decode_compressed

DATASET_DIR = "datasets--livecodebench--code_generation_lite"
OPTIONS = ("after", "before", "difficulty", "platform")
_FILE = re.compile(r"^test(\d*)\.jsonl$")
_RELEASE = re.compile(r"^release_v(\d+)$")
_VERSION = re.compile(r"^v(\d+)(?:_v(\d+))?$")
FORM = "question, starter code and the public examples, as LiveCodeBench prompts them"


def _data_folder(folder: str) -> Path:
    """The folder holding test*.jsonl: given, inside a cache entry, or in the HF cache."""
    path = dataset_folder(folder, DATASET_DIR)
    if not path.is_dir():
        hint = "" if folder else " (no folder given: looked in the Hugging Face cache)"
        raise TaskError(
            f"livecodebench: {path}: no such folder{hint}; pass the folder holding code_generation_lite's "
            "test*.jsonl, e.g. livecodebench:~/data/code_generation_lite"
        )
    return path


def _number(name: str) -> int:
    digits = _FILE.match(name).group(1)
    return int(digits) if digits else 1


def release_files(folder: Path, release: str) -> list[Path]:
    present = {_number(p.name): p for p in folder.iterdir() if _FILE.match(p.name)}
    if not present:
        raise TaskError(f"livecodebench: {folder} holds no test*.jsonl (code_generation_lite's files)")
    if release == "release_latest":
        wanted = sorted(present)
    elif m := _RELEASE.match(release):
        wanted = list(range(1, int(m.group(1)) + 1))
    elif m := _VERSION.match(release):
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        wanted = list(range(first, last + 1))
    else:
        raise TaskError(
            f"livecodebench: unknown release {release!r}; use release_latest, release_vN (files 1..N), "
            "vN (file N alone) or vA_vB"
        )
    missing = [n for n in wanted if n not in present]
    if missing:
        names = ", ".join("test.jsonl" if n == 1 else f"test{n}.jsonl" for n in missing)
        raise TaskError(f"livecodebench: {release} needs {names}, missing from {folder}")
    return [present[n] for n in wanted]


def decode_tests(value: Any, what: str) -> list[dict[str, Any]]:
    """A test-case field: a JSON list as text, or (private tests) base64-zlib-pickle of one."""
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        raise ValueError(f"{what}: expected a JSON string, got {type(value).__name__}")
    text = value.strip()
    if not text.startswith("["):
        try:
            text = decode_compressed(text)
        except UnsafePickle as exc:
            raise ValueError(f"{what}: neither JSON nor LiveCodeBench's compressed form: {exc}") from None
    try:
        cases = parse_json(text)
    except JsonError as exc:
        raise ValueError(f"{what}: {exc}") from None
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        raise ValueError(f"{what}: expected a list of test cases")
    return cases


def _prompt(row: dict[str, Any]) -> str:
    title = str(row.get("question_title") or "").strip()
    body = str(row.get("question_content") or "").strip()
    starter = str(row.get("starter_code") or "").rstrip()
    parts = [f"{title}\n\n{body}" if title else body]
    if starter:
        parts.append(f"Starter code:\n```python\n{starter}\n```")
    return "\n\n".join(parts) + "\n"


def lcb_task(row: dict[str, Any], file: Path, number: int) -> Task:
    """One row of code_generation_lite -> a Task; raises BadRow naming file and row."""
    try:
        return _lcb_task(row)
    except (KeyError, ValueError, TypeError) as exc:
        reason = f"field {exc.args[0]!r} missing" if isinstance(exc, KeyError) else str(exc)
        raise bad_row(file, number, reason) from None


def _lcb_task(row: dict[str, Any]) -> Task:
    question_id = row_id(row["question_id"], "question_id")
    public = decode_tests(row.get("public_test_cases", "[]"), "public_test_cases")
    private = decode_tests(row.get("private_test_cases", "[]"), "private_test_cases")
    cases = public + private
    if not cases:
        raise ValueError("no test cases (public_test_cases and private_test_cases are empty)")
    kinds = {c.get("testtype") for c in cases}
    if len(kinds) != 1 or not kinds <= {"stdin", "functional"}:
        raise ValueError(f"testtype {sorted(map(str, kinds))}: expected all stdin or all functional")
    meta_field = row.get("metadata") or "{}"
    try:
        metadata = parse_json(meta_field) if isinstance(meta_field, str) else meta_field
    except JsonError as exc:
        raise ValueError(f"metadata: {exc}") from None
    if not isinstance(metadata, dict):
        raise ValueError(f"metadata: expected a JSON object, got {type(metadata).__name__}")
    meta = {
        "source": "livecodebench",
        "platform": row.get("platform"),
        "difficulty": row.get("difficulty"),
        "contest_id": row.get("contest_id"),
        "contest_date": str(row.get("contest_date") or "")[:10] or None,
        "question_title": row.get("question_title"),
    }
    common = dict(task_id=f"lcb/{question_id}", prompt=_prompt(row), preamble=LCB_PREAMBLE)
    if kinds == {"stdin"}:
        hidden = io_tests(((c["input"], c["output"]) for c in cases), "test_cases")
        shown = io_tests(((c["input"], c["output"]) for c in public), "public_test_cases")
        return Task(entry_point="", hidden_tests=hidden, kind="io", compare="lcb", public_tests=shown, meta=meta, **common)
    func_name = metadata.get("func_name")
    if not isinstance(func_name, str) or not func_name.isidentifier():
        raise ValueError("functional tests but metadata has no func_name naming the Solution method")
    call = f"Solution().{func_name}"

    def asserts(items: list[dict[str, Any]], what: str) -> tuple[str, ...]:
        return call_asserts(call, [
            (json_lines(c["input"], f"{what} input"), _json(c["output"], f"{what} output")) for c in items
        ])

    return Task(
        entry_point="Solution", hidden_tests=asserts(cases, "test_cases"),
        public_tests=asserts(public, "public_test_cases"), meta={**meta, "func_name": func_name}, **common,
    )


def _json(text: Any, what: str) -> Any:
    if not isinstance(text, str):
        raise ValueError(f"{what}: expected JSON text, got {type(text).__name__}")
    try:
        return parse_json(text)
    except JsonError as exc:
        raise ValueError(f"{what}: {exc}") from None


class LiveCodeBenchSource:
    def load(self, arg: str) -> TaskSet:
        options = SourceOptions.parse(
            "livecodebench", arg, allowed=OPTIONS,
            is_word=lambda w: bool(w == "release_latest" or _RELEASE.match(w) or _VERSION.match(w)),
        )
        if len(options.words) > 1:
            raise TaskError(f"livecodebench:{arg}: one release at most, got {', '.join(options.words)}")
        release = options.words[0] if options.words else "release_latest"
        folder = _data_folder(options.folder)
        def keeps(file: Path, number: int, row: dict[str, Any]) -> bool:
            day = row.get("contest_date")
            try:
                when = parse_date(str(day), "contest_date") if day else None
            except TaskError:
                raise bad_row(file, number, f"contest_date {day!r} is not a date") from None
            return options.keeps(day=when, difficulty=row.get("difficulty"), platform=row.get("platform"))

        rows = ((file, number, row) for file in release_files(folder, release) for number, row in jsonl_rows(file))
        tasks = collect(rows, keeps, lcb_task, "question_id")
        if not tasks:
            raise TaskError(f"livecodebench:{arg}: no problem in {folder} ({release}) passes the filters")
        return contest_task_set(f"livecodebench:{arg}", f"livecodebench:{release}", tasks, options, FORM)

