"""`apps[:<folder or .jsonl file>][:<split>][:difficulty=..][:with-example]`

APPS (Hendrycks et al.) as the JSONL its Hugging Face repository (`codeparrot/apps`)
holds: `test.jsonl` / `train.jsonl`, one problem a line with `question`, `solutions`
(a JSON list of programs), `input_output` (JSON: `inputs`, `outputs`, and `fn_name` for
call-based problems), `difficulty` (introductory / interview / competition),
`starter_code`. Standard-input problems are io tasks (rule `apps`: strict, with APPS's
float tolerance, unless the run asks for APPS's own rule with io_compare = "source");
call-based ones are function tasks (`fn_name` called with each input's arguments, its
result compared with the output, unwrapped as `contest.unwrapped_outputs` says; APPS's
own check, which also accepts an expected list's first item, is each task's
`source_tests`).
APPS's test cases are all hidden tests: its statements show the examples already.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.tasks.base import JsonError, Task, TaskError, TaskSet, parse_json
from harness.tasks.contest import (
    SourceOptions, bad_row, call_asserts, collect, contest_task_set, dataset_folder, io_tests, jsonl_rows, row_id,
    unwrapped_outputs,
)

DATASET_DIR = "datasets--codeparrot--apps"
SPLITS = ("test", "train")
OPTIONS = ("difficulty",)
FORM = "the question (and starter code) as published"


def _file(folder: str, split: str) -> Path:
    path = dataset_folder(folder, DATASET_DIR)
    if path.is_dir():
        path = path / f"{split}.jsonl"
    if not path.is_file():
        raise TaskError(f"apps: {path}: no such file; pass APPS's folder (holding {split}.jsonl) or the file")
    return path


def _json_field(row: dict[str, Any], name: str) -> Any:
    value = row.get(name)
    if not value:
        return None
    if not isinstance(value, str):
        return value
    try:
        return parse_json(value)
    except JsonError as exc:
        raise ValueError(f"field {name!r}: {exc}") from None


def apps_task(row: dict[str, Any], file: Path, number: int) -> Task:
    try:
        question = row["question"]
        if not isinstance(question, str) or not question.strip():
            raise ValueError("field 'question': empty")
        tests = _json_field(row, "input_output")
        if not isinstance(tests, dict) or not tests.get("inputs"):
            raise ValueError("no hidden tests (input_output has no inputs)")
        inputs, outputs = tests["inputs"], tests.get("outputs") or []
        if len(inputs) != len(outputs):
            raise ValueError(f"input_output: {len(inputs)} inputs but {len(outputs)} outputs")
        solutions = _json_field(row, "solutions") or []
        starter = str(row.get("starter_code") or "").rstrip()
        prompt = question.strip() + "\n" + (f"\nStarter code:\n```python\n{starter}\n```\n" if starter else "")
        common = dict(
            task_id=f"apps/{row_id(row['problem_id'] if 'problem_id' in row else row.get('id', number), 'problem_id')}",
            prompt=prompt,
            canonical_solution=solutions[0] if solutions and isinstance(solutions[0], str) else None,
            meta={"source": "apps", "difficulty": row.get("difficulty"), "url": row.get("url"),
                  "solutions": len(solutions)},
        )
        fn_name = tests.get("fn_name")
        if fn_name:
            if not isinstance(fn_name, str) or not fn_name.isidentifier():
                raise ValueError(f"input_output: fn_name {fn_name!r} is not a Python name")
            if not all(isinstance(args, list) for args in inputs):
                raise ValueError("input_output: a call-based input must be a list of arguments")
            # LeetCode-style APPS problems put the function in `class Solution`.
            call = f"Solution().{fn_name}" if "class Solution" in starter else fn_name
            hidden = call_asserts(call, zip(inputs, unwrapped_outputs(outputs)))
            source = call_asserts(call, zip(inputs, outputs), first_item_too=True)  # APPS's own check
            entry = "Solution" if call.startswith("Solution()") else fn_name
            return Task(entry_point=entry, hidden_tests=hidden, source_tests=source, **common)
        return Task(entry_point="", hidden_tests=io_tests(zip(inputs, outputs), "input_output"),
                    kind="io", compare="apps", **common)
    except (KeyError, ValueError, TypeError) as exc:
        reason = f"field {exc.args[0]!r} missing" if isinstance(exc, KeyError) else str(exc)
        raise bad_row(file, number, reason) from None


class AppsSource:
    def load(self, arg: str) -> TaskSet:
        options = SourceOptions.parse("apps", arg, allowed=OPTIONS, is_word=lambda w: w in SPLITS)
        split = options.split("apps", arg, SPLITS)
        if options.with_example:
            raise TaskError(f"apps:{arg}: APPS marks no test as the statement's example; with-example is not available")
        file = _file(options.folder, split)
        rows = ((file, number, row) for number, row in jsonl_rows(file))
        tasks = collect(rows, lambda f, n, row: options.keeps(day=None, difficulty=row.get("difficulty")),
                        apps_task, "problem id")
        if not tasks:
            raise TaskError(f"apps:{arg}: no problem passes the filters")
        return contest_task_set(f"apps:{arg}", f"apps:{split}", tasks, options, FORM)
