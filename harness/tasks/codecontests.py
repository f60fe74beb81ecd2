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


def _tests(row: dict[str, Any], column: str) -> list[tuple[Any, Any]]:
    value = row.get(column) or {}
    if not isinstance(value, dict):
        raise ValueError(f"{column}: expected a struct of input and output lists")
    inputs, outputs = list(value.get("input") or []), list(value.get("output") or [])
    if len(inputs) != len(outputs):
        raise ValueError(f"{column}: {len(inputs)} inputs but {len(outputs)} outputs")
    return list(zip(inputs, outputs))


def codecontests_task(row: dict[str, Any], file: Path, number: int) -> Task:
    try:
        name = row["name"]
        description = row["description"]
        if not isinstance(name, str) or not isinstance(description, str) or not description.strip():
            raise ValueError("name and description must be non-empty strings")
        public = _tests(row, "public_tests")
        hidden = public + _tests(row, "private_tests") + _tests(row, "generated_tests")
        if not hidden:
            raise ValueError("no tests (public_tests, private_tests and generated_tests are empty)")
        solutions = row.get("solutions") or {}
        python = [s for lang, s in zip(solutions.get("language") or [], solutions.get("solution") or []) if lang == PYTHON3]
        limit = row.get("time_limit") or {}
        seconds = (limit.get("seconds") or 0) + (limit.get("nanos") or 0) / 1e9 if isinstance(limit, dict) else 0
        task = Task(
            task_id=f"codecontests/{name.split('.')[0].strip()}",
            prompt=description.strip() + "\n",
            entry_point="",
            hidden_tests=io_tests(hidden, "tests"),
            public_tests=io_tests(public, "public_tests"),
            canonical_solution=python[0] if python else None,
            timeout_s=float(seconds) if seconds else None,
            kind="io",
            compare="codecontests",
            meta={
                "source": "codecontests", "name": name,
                "platform": SOURCES.get(row.get("source"), str(row.get("source"))),
                "difficulty": DIFFICULTIES.get(row.get("difficulty"), str(row.get("difficulty"))),
                "cf_rating": row.get("cf_rating"), "python_solutions": len(python),
                "references": python[1:4],
            },
        )
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        reason = f"field {exc.args[0]!r} missing" if isinstance(exc, KeyError) else str(exc)
        raise bad_row(file, number, reason) from None
    return task


def read_parquet(file: Path):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise TaskError("codecontests needs pyarrow: pip install pyarrow (it comes with datasets)") from None
    try:
        table = pq.read_table(file)
    except Exception as exc:  # pyarrow raises several kinds for a bad file
        raise TaskError(f"{file}: not a readable Parquet file ({type(exc).__name__}: {exc})") from None
    for number, row in enumerate(table.to_pylist(), start=1):
        yield number, row


class CodeContestsSource:
    def load(self, arg: str) -> TaskSet:
        options = SourceOptions.parse("codecontests", arg, allowed=OPTIONS, is_word=lambda w: w in SPLITS)
        split = options.split("codecontests", arg, SPLITS)
        def keeps(file: Path, number: int, row: dict[str, Any]) -> bool:
            return options.keeps(day=None, difficulty=DIFFICULTIES.get(row.get("difficulty"), ""),
                                 platform=SOURCES.get(row.get("source"), ""))

        files = parquet_files(_folder(options.folder), split)
        rows = ((file, number, row) for file in files for number, row in read_parquet(file))
        tasks = collect(rows, keeps, codecontests_task, "problem name")
        if not tasks:
            raise TaskError(f"codecontests:{arg}: no problem passes the filters")
        return contest_task_set(f"codecontests:{arg}", f"codecontests:{split}", tasks, options, FORM)
