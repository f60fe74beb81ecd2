"""`codecontests[:<folder or .parquet file>][:<split>][:difficulty=..][:platform=..][:with-example]`

DeepMind's CodeContests as its Parquet files (`deepmind/code_contests`: `test-*.parquet`,
`valid-*.parquet`, `train-*.parquet`, in a folder or its `data/` subfolder, or a Hugging
Face cache entry). Split `test` by default. Hidden tests are the public, private and
generated tests together (AlphaCode's and RLEF's grading); the public ones are the
statement's examples. Python 3 solutions are the references (the first is the
canonical solution); outputs are compared by CodeContests' rule (io_compare `codecontests`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.tasks.base import Task, TaskError, TaskSet
from harness.tasks.contest import SourceOptions, bad_row, collect, contest_task_set, dataset_folder, io_tests
from harness.tasks.rows import Budget, FieldError, RowReader, as_list, build_row, kind, size_text, strings_size

DATASET_DIR = "datasets--deepmind--code_contests"
SPLITS = ("test", "valid", "train")
OPTIONS = ("difficulty", "platform")
# The dataset's enums (its README): Problem.Source, Solution.Language, Problem.Difficulty.
SOURCES = {0: "unknown", 1: "codechef", 2: "codeforces", 3: "hackerearth", 4: "codejam", 5: "atcoder", 6: "aizu"}
PYTHON3 = 3
DIFFICULTIES = {
    0: "unknown", 1: "easy", 2: "medium", 3: "hard", 4: "harder", 5: "hardest", 6: "external",
    **{k: chr(ord("a") + k - 7) for k in range(7, 29)},  # A .. V: Codeforces' problem letters
}
FORM = "the problem description as published"


def _folder(folder: str) -> Path:
    path = dataset_folder(folder, DATASET_DIR)
    if path.is_dir() and (path / "data").is_dir():
        path = path / "data"
    if not path.exists():
        raise TaskError(f"codecontests: {path}: no such file or folder; pass the folder of the dataset's .parquet files")
    return path


def parquet_files(path: Path, split: str) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(p for p in path.glob(f"{split}-*.parquet") if p.is_file())
    if not files:
        raise TaskError(f"codecontests: {path} holds no {split}-*.parquet file (splits: {', '.join(SPLITS)})")
    return files


# The columns a task is made of (the dataset's others, incorrect_solutions above all,
# are large and never read).
COLUMNS = ("name", "description", "public_tests", "private_tests", "generated_tests", "solutions", "source",
           "difficulty", "cf_rating", "time_limit")


def _tests(reader: RowReader, column: str) -> list[tuple[str, str]]:
    value = reader.get(column)
    if value is None:
        return []
    if not isinstance(value, dict):
        raise FieldError(column, f"expected a struct of input and output lists, got {kind(value)}")
    reader.budget.spend(column, strings_size(value))
    inputs = as_list(value.get("input") or [], f"{column}.input", of=(str,), what="strings")
    outputs = as_list(value.get("output") or [], f"{column}.output", of=(str,), what="strings")
    if len(inputs) != len(outputs):
        raise FieldError(column, f"{len(inputs)} inputs but {len(outputs)} outputs")
    return list(zip(inputs, outputs))


def _int(reader: RowReader, name: str, value: Any = None) -> int | None:
    value = reader.get(name) if value is None else value
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise FieldError(name, f"expected an integer, got {kind(value)}")
    return value


def _seconds(reader: RowReader) -> float | None:
    limit = reader.get("time_limit")
    if limit is None:
        return None
    if not isinstance(limit, dict):
        raise FieldError("time_limit", f"expected a struct of seconds and nanos, got {kind(limit)}")
    seconds = _int(reader, "time_limit.seconds", limit.get("seconds")) or 0
    nanos = _int(reader, "time_limit.nanos", limit.get("nanos")) or 0
    if seconds < 0 or nanos < 0:
        raise FieldError("time_limit", "a negative time limit")
    total = seconds + nanos / 1e9
    return float(total) if total else None


def codecontests_task(row: dict[str, Any], file: Path, number: int, budget: Budget | None = None) -> Task:
    """One CodeContests row -> a Task; raises BadRow naming file, row and field."""
    return build_row(_codecontests_task, row, budget or Budget(), lambda reason: bad_row(file, number, reason))


def _codecontests_task(reader: RowReader) -> Task:
    name = reader.text("name", required=True, nonempty=True) or ""
    description = reader.text("description", required=True, nonempty=True) or ""
    public = _tests(reader, "public_tests")
    hidden = public + _tests(reader, "private_tests") + _tests(reader, "generated_tests")
    if not hidden:
        raise FieldError("private_tests", "no tests (public_tests, private_tests and generated_tests are empty)")
    solutions = reader.get("solutions") or {}
    if not isinstance(solutions, dict):
        raise FieldError("solutions", f"expected a struct of language and solution lists, got {kind(solutions)}")
    languages = as_list(solutions.get("language") or [], "solutions.language", of=(int,), what="integers")
    programs = as_list(solutions.get("solution") or [], "solutions.solution", of=(str,), what="strings")
    python = [p for lang, p in zip(languages, programs) if lang == PYTHON3]
    seconds = _seconds(reader)
    source, difficulty = _int(reader, "source"), _int(reader, "difficulty")
    reader.current = "public_tests"
    shown = io_tests(public, "public_tests")
    reader.current = "tests"
    return Task(
        task_id=f"codecontests/{name.split('.')[0].strip()}",
        prompt=description.strip() + "\n",
        entry_point="",
        hidden_tests=io_tests(hidden, "tests"),
        public_tests=shown,
        canonical_solution=python[0] if python else None,
        timeout_s=seconds,
        kind="io",
        compare="codecontests",
        meta={
            "source": "codecontests", "name": name,
            "platform": SOURCES.get(source, str(source)),
            "difficulty": DIFFICULTIES.get(difficulty, str(difficulty)),
            "cf_rating": _int(reader, "cf_rating"), "python_solutions": len(python),
            "references": python[1:4],
        },
    )


def read_parquet(file: Path, budget: Budget | None = None):
    """(row number, row) of a Parquet file, one row group at a time and only the columns
    a task needs; a row group whose data would not fit in what the budget has left is
    refused before it is read (Parquet records each column chunk's size uncompressed)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise TaskError("codecontests needs pyarrow: pip install pyarrow (it comes with datasets)") from None
    budget = budget or Budget()
    try:
        parquet = pq.ParquetFile(file)
        names = set(parquet.schema_arrow.names)
        columns = [c for c in COLUMNS if c in names]
        meta = parquet.metadata
    except Exception as exc:  # pyarrow raises several kinds for a bad file
        raise TaskError(f"{file}: not a readable Parquet file ({type(exc).__name__}: {exc})") from None
    number = 0
    for group in range(meta.num_row_groups):
        info = meta.row_group(group)
        size = sum(info.column(i).total_uncompressed_size for i in range(info.num_columns)
                   if info.column(i).path_in_schema.split(".")[0] in columns)
        room = budget.limits.per_set - budget.set_used
        if size > room:
            raise TaskError(f"{file}: row group {group} holds {size_text(size)} uncompressed, more than the "
                            f"{size_text(room)} the task set has left of its limit ({budget.limits.describe()}); "
                            "the harness holds every hidden test in memory")
        try:
            table = parquet.read_row_group(group, columns=columns)
        except Exception as exc:  # noqa: BLE001 - pyarrow's errors for corrupt data
            raise TaskError(f"{file}: row group {group} is not readable ({type(exc).__name__}: {exc})") from None
        for start in range(table.num_rows):
            number += 1
            yield number, table.slice(start, 1).to_pylist()[0]


class CodeContestsSource:
    prefix = "codecontests"
    usage = "codecontests[:<folder>][:test|valid|train][:difficulty=..][:platform=..][:with-example]"

    def load(self, arg: str) -> TaskSet:
        options = SourceOptions.parse("codecontests", arg, allowed=OPTIONS, is_word=lambda w: w in SPLITS)
        split = options.split("codecontests", arg, SPLITS)
        def keeps(file: Path, number: int, row: dict[str, Any]) -> bool:
            return options.keeps(day=None, difficulty=DIFFICULTIES.get(row.get("difficulty"), ""),
                                 platform=SOURCES.get(row.get("source"), ""))

        files = parquet_files(_folder(options.folder), split)
        budget = Budget()
        rows = ((file, number, row) for file in files for number, row in read_parquet(file, budget))
        tasks = collect(rows, keeps, lambda row, file, number: codecontests_task(row, file, number, budget),
                        "problem name")
        if not tasks:
            raise TaskError(f"codecontests:{arg}: no problem passes the filters")
        return contest_task_set(f"codecontests:{arg}", f"codecontests:{split}", tasks, options, FORM)
