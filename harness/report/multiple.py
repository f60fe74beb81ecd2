"""Final programs as MultiPL-E's completion files, for its own evaluator
(`evaluation/src/main.py --dir FOLDER --output-dir OUT` in nuprl/MultiPL-E).

One file per problem, `<name>.json.gz` (gzipped JSON, as MultiPL-E's completions.py writes
them): `name`, `language`, `prompt`, `tests` and `stop_tokens` as the dataset's row gave
them (a task from `multipl-e:<folder>:<dataset>` keeps its row in meta), `temperature` and
`max_tokens` as the run's settings, `top_p` null (the harness sets none), `completions`:
one per complete attempt, in attempt order, and `harness` (run, strategy, attempt, trial
and the harness's verdict of each completion; the evaluator copies it into its results).

MultiPL-E runs `prompt + completion + "\\n" + tests`. A completion is what follows the
prompt in the program the harness graded, so that this is that program followed by the
row's tests, with two adjustments its format asks for: where the row's tests open with
the `}` that closes the prompt's function (Rust, C++), the completion ends before the
program's last `}`; and Go's prompt keeps its `"testing"` import, which the harness
leaves out of the program it grades (the tests that use it are not in that program).
A program that is a whole function written anew (a chat model's answer: it does not
continue the prompt) has no completion of the prompt: its file's `prompt` is "" and
each completion is a whole program, the program as graded, after the lines of the row's
prompt before the function (includes, package clause and imports, `use` lines) it does
not have itself (none for a Go program with its own package clause).
"""
from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any, Sequence

from harness.core.actor import graded_program
from harness.tasks.base import Task

ROW = "multipl_e"  # the task meta key the multipl-e source keeps its row under
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class MultiplEError(ValueError):
    """The files cannot be written as asked (export turns it into its ExportError)."""


def no_form_reason(task: Task) -> str | None:
    """Why `task` has no MultiPL-E form (None: it has one)."""
    if isinstance(task.meta.get(ROW), dict):
        return None
    if task.language == "python":
        return (f"task {task.task_id!r} is a Python task, not one of MultiPL-E's translated rows: its Python "
                "problems are HumanEval's and MBPP's own; export it with --format humaneval")
    return (f"task {task.task_id!r} ({task.language}) was not loaded from MultiPL-E's rows "
            "(multipl-e:<folder>:<dataset>), so there are no MultiPL-E tests to grade it with")


def _header(prompt: str, entry_point: str) -> str:
    """The lines of a row's prompt before its function: includes, package and imports, `use`."""
    out = []
    for line in prompt.splitlines(keepends=True):
        text = line.strip()
        if text.startswith(("//", "/*", "*", "#[")) or re.search(r"\b" + re.escape(entry_point) + r"\s*[(<]", line):
            break
        out.append(line)
    return "".join(out)


def _whole(program: str, row: dict[str, Any], task: Task) -> str:
    """A whole program after the row's header lines it lacks."""
    if task.language == "go" and re.search(r"^\s*package\s", program, re.MULTILINE):
        return program  # a second package clause or import block would not build
    own = {line.strip() for line in program.splitlines()}
    header = "".join(line for line in _header(row["prompt"], task.entry_point).splitlines(keepends=True)
                     if not line.strip() or line.strip() not in own)
    return header + program if header.strip() else program


def _closed_by_tests(completion: str, tests: str) -> str:
    """The completion without its last `}` when the tests open with the one that closes
    the prompt's function (Rust, C++)."""
    body = completion.rstrip()
    if tests.lstrip().startswith("}") and body.endswith("}"):
        return body[:-1]
    return completion


def problem(task: Task, records: Sequence[Any], header: dict[str, Any]) -> dict[str, Any]:
    """One problem's completion file, from its complete attempts' final records."""
    row = task.meta[ROW]
    programs = [graded_program(task, r.code) for r in records]
    continues = all(p.startswith(task.prompt) for p in programs)
    if continues:
        prompt, completions = row["prompt"], [p[len(task.prompt):] for p in programs]
    else:
        prompt, completions = "", [_whole(p, row, task) for p in programs]
    config = header.get("config") if isinstance(header.get("config"), dict) else {}
    return {
        "name": row["name"], "language": row["language"], "temperature": config.get("temperature"),
        "top_p": None, "max_tokens": config.get("max_tokens"), "prompt": prompt, "tests": row["tests"],
        "completions": [_closed_by_tests(c, row["tests"]) for c in completions],
        "stop_tokens": list(row.get("stop_tokens") or []),
        "harness": {"run_id": header.get("run_id"), "strategy": records[0].strategy if records else None,
                    "attempts": [r.attempt for r in records], "trials": [r.trial for r in records],
                    "hidden_passed": [bool(r.hidden_passed) for r in records],
                    "prompt_continued": continues},
    }


def file_name(name: str) -> str:
    return (_SAFE.sub("_", name).strip(".") or "problem") + ".json.gz"


def write_completions(folder: Path, finals: Sequence[Any], tasks: dict[str, Task], header: dict[str, Any]) -> int:
    """Writes one `<name>.json.gz` per problem into `folder`; returns the completions
    written. MultiplEError, before anything is written, for a task without a MultiPL-E
    form or a folder that holds other completion files (the evaluator reads them all)."""
    by_task: dict[str, list[Any]] = {}
    for r in sorted(finals, key=lambda r: (r.task_id, r.attempt)):
        by_task.setdefault(r.task_id, []).append(r)
    missing = sorted(set(by_task) - set(tasks))
    if missing:
        raise MultiplEError(f"task {missing[0]!r} of the run is not in its task set as loaded now")
    for task_id in by_task:
        reason = no_form_reason(tasks[task_id])
        if reason is not None:
            raise MultiplEError(f"--format multipl-e: {reason}")
    files = {file_name(tasks[t].meta[ROW]["name"]): problem(tasks[t], records, header) for t, records in by_task.items()}
    if folder.is_dir():
        others = sorted(p.name for p in folder.iterdir() if p.name.endswith((".json", ".json.gz"))
                        and p.name not in files and not p.name.endswith((".results.json", ".results.json.gz")))
        if others:
            raise MultiplEError(f"{folder} already holds {len(others)} other completion file(s) ({others[0]}, ...), "
                              "which MultiPL-E's evaluator would grade too: name an empty folder with --out")
    folder.mkdir(parents=True, exist_ok=True)
    for name, doc in files.items():
        with gzip.open(folder / name, "wt", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(json.dumps(doc, ensure_ascii=False))
    return sum(len(doc["completions"]) for doc in files.values())
