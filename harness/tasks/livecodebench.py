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

from harness.tasks.base import IoTest, JsonError, Task, TaskError, TaskSet, parse_json
from harness.tasks.contest import (
    LCB_PREAMBLE, SourceOptions, bad_row, call_asserts, collect, contest_task_set, dataset_folder, jsonl_rows,
    parse_date, row_id,
)
from harness.tasks.rows import Budget, FieldError, RowReader, build_row, compiled, kind, method_name
from harness.tasks.safe_pickle import TooLarge, UnsafePickle, decode_compressed

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


def decode_tests(value: Any, what: str, budget: Budget | None = None) -> list[dict[str, Any]]:
    """A test-case field: a JSON list as text, or (private tests) base64-zlib-pickle of
    one; decoded within the budget's room. FieldError naming the field otherwise."""
    budget = budget or Budget()
    if isinstance(value, list):
        cases = value
    else:
        if not isinstance(value, str):
            raise FieldError(what, f"expected a JSON list of test cases as a string, got {kind(value)}")
        text = value.strip()
        if not text.startswith(("[", "{")):  # JSON as it stands; anything else is the compressed form
            try:
                text = decode_compressed(text, budget.room())
            except TooLarge:
                raise budget.over(what) from None
            except UnsafePickle as exc:
                raise FieldError(what, f"neither JSON nor LiveCodeBench's compressed form: {exc}") from None
        budget.spend(what, len(text))
        try:
            cases = parse_json(text)
        except JsonError as exc:
            raise FieldError(what, str(exc)) from None
    if not isinstance(cases, list):
        raise FieldError(what, f"expected a list of test cases, got {kind(cases)}")
    for i, case in enumerate(cases):
        if not isinstance(case, dict):
            raise FieldError(f"{what}[{i}]", f"expected a test case (an object with input, output and testtype), "
                             f"got {kind(case)}")
        for key in ("input", "output", "testtype"):
            if not isinstance(case.get(key), str):
                shown = "missing" if key not in case else kind(case[key])
                raise FieldError(f"{what}[{i}].{key}", f"expected a string, got {shown}")
    return cases


def _prompt(reader: RowReader) -> str:
    title = (reader.text("question_title") or "").strip()
    body = (reader.text("question_content", required=True, nonempty=True) or "").strip()
    starter = (reader.text("starter_code") or "").rstrip()
    parts = [f"{title}\n\n{body}" if title else body]
    if starter:
        parts.append(f"Starter code:\n```python\n{starter}\n```")
    return "\n\n".join(parts) + "\n"


def lcb_task(row: dict[str, Any], file: Path, number: int, budget: Budget | None = None) -> Task:
    """One row of code_generation_lite -> a Task; raises BadRow naming file, row and field."""
    return build_row(_lcb_task, row, budget or Budget(), lambda reason: bad_row(file, number, reason))


def _lcb_task(reader: RowReader) -> Task:
    question_id = row_id(reader.get("question_id"), "question_id")
    public = decode_tests(reader.get("public_test_cases", "[]"), "public_test_cases", reader.budget)
    private = decode_tests(reader.get("private_test_cases", "[]"), "private_test_cases", reader.budget)
    cases = [(f"public_test_cases[{i}]", c) for i, c in enumerate(public)]
    cases += [(f"private_test_cases[{i}]", c) for i, c in enumerate(private)]
    if not cases:
        raise FieldError("private_test_cases", "no test cases (public_test_cases and private_test_cases are empty)")
    kinds = {c["testtype"] for _, c in cases}
    if len(kinds) != 1 or not kinds <= {"stdin", "functional"}:
        raise FieldError("testtype", f"{sorted(kinds)}: expected all stdin or all functional")
    meta_field = reader.get("metadata") or "{}"
    if isinstance(meta_field, str):
        try:
            metadata = parse_json(meta_field)
        except JsonError as exc:
            raise FieldError("metadata", str(exc)) from None
    else:
        metadata = meta_field
    if not isinstance(metadata, dict):
        raise FieldError("metadata", f"expected a JSON object, got {kind(metadata)}")
    day = reader.get("contest_date")
    if day is not None and not isinstance(day, str):
        raise FieldError("contest_date", f"expected a date as a string, got {kind(day)}")
    meta = {
        "source": "livecodebench",
        "platform": reader.scalar("platform"),
        "difficulty": reader.scalar("difficulty"),
        "contest_id": reader.scalar("contest_id"),
        "contest_date": (day or "")[:10] or None,
        "question_title": reader.text("question_title"),
    }
    common = dict(task_id=f"lcb/{question_id}", prompt=_prompt(reader), preamble=LCB_PREAMBLE)
    if kinds == {"stdin"}:
        hidden = _io(cases, reader)
        shown = _io(cases[:len(public)], reader)
        return Task(entry_point="", hidden_tests=hidden, kind="io", compare="lcb", public_tests=shown, meta=meta, **common)
    func_name = method_name(metadata.get("func_name"), "metadata.func_name") if "func_name" in metadata else None
    if func_name is None:
        raise FieldError("metadata.func_name", "functional tests but metadata has no func_name naming the Solution method")
    call = f"Solution().{func_name}"

    def asserts(items: list[tuple[str, dict[str, Any]]]) -> tuple[str, ...]:
        made = []
        for name, case in items:
            reader.current = name
            args, expected = _json_lines(case["input"], f"{name}.input"), _json(case["output"], f"{name}.output")
            try:
                tests = call_asserts(call, [(args, expected)])
            except ValueError as exc:  # a NaN or an infinity: no Python literal writes it
                raise FieldError(name, str(exc)) from None
            made.extend(compiled(tests, name))
        return tuple(made)

    return Task(
        entry_point="Solution", hidden_tests=asserts(cases),
        public_tests=asserts(cases[:len(public)]), meta={**meta, "func_name": func_name}, **common,
    )


def _io(cases: list[tuple[str, dict[str, Any]]], reader: RowReader) -> tuple[IoTest, ...]:
    out = []
    for name, case in cases:
        reader.current = name
        if not case["output"].strip():
            raise FieldError(f"{name}.output", "empty expected output (a program printing nothing would pass)")
        out.append(IoTest(case["input"], case["output"]))
    return tuple(out)


def _json_lines(text: str, what: str) -> list[Any]:
    """LiveCodeBench's functional input: one JSON value per line, one per argument."""
    try:
        return [parse_json(line) for line in text.split("\n") if line.strip()]
    except JsonError as exc:
        raise FieldError(what, f"not JSON lines (one argument a line): {exc}") from None


def _json(text: str, what: str) -> Any:
    try:
        return parse_json(text)
    except JsonError as exc:
        raise FieldError(what, str(exc)) from None


class LiveCodeBenchSource:
    prefix = "livecodebench"
    usage = "livecodebench[:<folder>][:release_vN][:after=YYYY-MM-DD][:before=YYYY-MM-DD][:difficulty=..][:platform=..][:with-example]"

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
            if day is not None and not isinstance(day, str):
                raise bad_row(file, number, f"field 'contest_date': expected a date as a string, got {kind(day)}")
            try:
                when = parse_date(day, "contest_date") if day else None
            except TaskError:
                raise bad_row(file, number, f"contest_date {day!r} is not a date") from None
            return options.keeps(day=when, difficulty=row.get("difficulty"), platform=row.get("platform"))

        budget = Budget()
        rows = ((file, number, row) for file in release_files(folder, release) for number, row in jsonl_rows(file))
        tasks = collect(rows, keeps, lambda row, file, number: lcb_task(row, file, number, budget), "question_id")
        if not tasks:
            raise TaskError(f"livecodebench:{arg}: no problem in {folder} ({release}) passes the filters")
        return contest_task_set(f"livecodebench:{arg}", f"livecodebench:{release}", tasks, options, FORM)

