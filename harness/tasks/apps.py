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
from harness.tasks.rows import Budget, FieldError, RowReader, as_list, build_row, compiled, each, kind, method_name

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


def _json_field(reader: RowReader, name: str) -> Any:
    """A field APPS stores as JSON text (or, in some copies, as the value itself)."""
    value = reader.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        return value
    reader.budget.spend(name, len(value))
    try:
        return parse_json(value)
    except JsonError as exc:
        raise FieldError(name, str(exc)) from None


def apps_task(row: dict[str, Any], file: Path, number: int, budget: Budget | None = None) -> Task:
    """One APPS row -> a Task; raises BadRow naming file, row and field."""
    return build_row(lambda reader: _apps_task(reader, number), row, budget or Budget(),
                     lambda reason: bad_row(file, number, reason))


def _apps_task(reader: RowReader, number: int) -> Task:
    question = reader.text("question", required=True, nonempty=True) or ""
    tests = _json_field(reader, "input_output")
    if tests is None:
        raise FieldError("input_output", "no hidden tests (input_output is empty)")
    if not isinstance(tests, dict):
        raise FieldError("input_output", f"expected an object with inputs and outputs, got {kind(tests)}")
    inputs = as_list(tests.get("inputs"), "input_output.inputs", what="test inputs")
    outputs = as_list(tests.get("outputs"), "input_output.outputs", what="expected outputs")
    if not inputs:
        raise FieldError("input_output.inputs", "no hidden tests (the list is empty)")
    if len(inputs) != len(outputs):
        raise FieldError("input_output", f"{len(inputs)} inputs but {len(outputs)} outputs")
    solutions = _json_field(reader, "solutions") or []
    solutions = as_list(solutions, "solutions", of=(str,), what="programs as strings")
    starter = (reader.text("starter_code") or "").rstrip()
    prompt = question.strip() + "\n" + (f"\nStarter code:\n```python\n{starter}\n```\n" if starter else "")
    ident = reader.get("problem_id") if "problem_id" in reader.row else reader.get("id", number)
    common = dict(
        task_id=f"apps/{row_id(ident, 'problem_id')}",
        prompt=prompt,
        canonical_solution=solutions[0] if solutions else None,
        meta={"source": "apps", "difficulty": reader.scalar("difficulty"), "url": reader.scalar("url"),
              "solutions": len(solutions)},
    )
    fn_name = tests.get("fn_name")
    if fn_name is not None and fn_name != "":
        fn_name = method_name(fn_name, "input_output.fn_name")
        for field, args in each(inputs, "input_output.inputs", reader):
            if not isinstance(args, list):
                raise FieldError(field, f"a call-based input must be a list of arguments, got {kind(args)}")
        # LeetCode-style APPS problems put the function in `class Solution`.
        call = f"Solution().{fn_name}" if "class Solution" in starter else fn_name
        hidden: list[str] = []
        source: list[str] = []  # APPS's own check (io_compare = "source")
        for (field, args), expected, stored in zip(each(inputs, "input_output.inputs", reader),
                                                   unwrapped_outputs(outputs), outputs):
            try:
                made = call_asserts(call, [(args, expected)])
                own = call_asserts(call, [(args, stored)], first_item_too=True)
            except ValueError as exc:  # a NaN or an infinity: no Python literal writes it
                raise FieldError(field, str(exc)) from None
            hidden.extend(compiled(made, field))
            source.extend(compiled(own, field))
        entry = "Solution" if call.startswith("Solution()") else fn_name
        return Task(entry_point=entry, hidden_tests=tuple(hidden), source_tests=tuple(source), **common)
    reader.current = "input_output"
    return Task(entry_point="", hidden_tests=io_tests(zip(inputs, outputs), "input_output.inputs"),
                kind="io", compare="apps", **common)


class AppsSource:
    prefix = "apps"
    usage = "apps[:<folder>][:test|train][:difficulty=..]"

    def load(self, arg: str) -> TaskSet:
        options = SourceOptions.parse("apps", arg, allowed=OPTIONS, is_word=lambda w: w in SPLITS)
        split = options.split("apps", arg, SPLITS)
        if options.with_example:
            raise TaskError(f"apps:{arg}: APPS marks no test as the statement's example; with-example is not available")
        file = _file(options.folder, split)
        budget = Budget()
        rows = ((file, number, row) for number, row in jsonl_rows(file))
        tasks = collect(rows, lambda f, n, row: options.keeps(day=None, difficulty=row.get("difficulty")),
                        lambda row, f, n: apps_task(row, f, n, budget), "problem id")
        if not tasks:
            raise TaskError(f"apps:{arg}: no problem passes the filters")
        return contest_task_set(f"apps:{arg}", f"apps:{split}", tasks, options, FORM)
