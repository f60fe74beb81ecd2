"""Loading run folders for reports, with one-line errors for bad input."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.cli import UsageError
from harness import results
from harness.rundata import TrialRecord, read_run_header, read_trials


@dataclass(frozen=True)
class Run:
    """One run folder, read whole: run.json header and every complete trial line."""

    run_dir: Path
    header: dict[str, Any]
    records: list[TrialRecord]
    label: str  # how tables and plots name the run (its run_id, made unique)
    errors: tuple[dict[str, Any], ...] = field(default=())  # errors.jsonl lines

    @property
    def config(self) -> dict[str, Any]:
        return self.header.get("config") or {}

    @property
    def samples(self) -> int:
        return int(self.config.get("samples") or 1)

    @property
    def task_ids(self) -> list[str]:
        """The run's task list from run.json; the tasks seen in its records if absent."""
        listed = (self.header.get("tasks") or {}).get("task_ids")
        if listed:
            return [str(t) for t in listed]
        return sorted({r.task_id for r in self.records})

    @property
    def error_keys(self) -> list[tuple[str, str, int]]:
        """(task_id, strategy, attempt) of each errors.jsonl line."""
        return [key for key in map(error_key, self.errors) if key is not None]

    @property
    def oracle_feedback(self) -> bool:
        return bool(self.config.get("oracle_feedback", False))


def load_run(run_dir: Path, label: str | None = None) -> Run:
    """Reads a run folder; raises UsageError (one line) when it is not usable."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: no such run folder")
    try:
        header = read_run_header(run_dir)
    except FileNotFoundError:
        raise UsageError(f"{run_dir}: no run.json here; give a folder written by `python -m harness run`") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{run_dir / 'run.json'}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(header, dict):
        raise UsageError(f"{run_dir / 'run.json'}: expected a JSON object")
    trials_path = run_dir / "trials.jsonl"
    try:
        records = read_trials(trials_path)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{trials_path}: {exc}".replace("\n", " ")) from None
    if not records:
        raise UsageError(f"{trials_path}: no finished trials recorded yet; nothing to report")
    return Run(run_dir, header, records, label or str(header.get("run_id") or run_dir.name),
               tuple(read_errors(run_dir)))


def read_errors(run_dir: Path) -> list[dict[str, Any]]:
    """errors.jsonl: one line per attempt a harness error left incomplete (a model
    error that outlived the retries, or an exception in the unit). A torn last
    line, or a line without task_id/strategy/attempt, is skipped: this file
    explains records, it never decides a score."""
    return [row for row in results.read_errors(Path(run_dir) / "errors.jsonl") if error_key(row) is not None]


def error_key(row: Any) -> tuple[str, str, int] | None:
    """(task_id, strategy, attempt) of an errors.jsonl line; None if it lacks one."""
    try:
        return (str(row["task_id"]), str(row["strategy"]), int(row["attempt"]))
    except (KeyError, TypeError, ValueError):
        return None


def load_runs(run_dirs: list[Path], labels: dict[str, str] | None = None) -> list[Run]:
    """Several runs, labelled by run_id, or by `labels` (run folder name -> label); a
    repeated label gets a #n suffix."""
    runs: list[Run] = []
    seen: dict[str, int] = {}
    for path in run_dirs:
        run = load_run(path, (labels or {}).get(Path(path).name))
        n = seen.get(run.label, 0) + 1
        seen[run.label] = n
        if n > 1:
            run = Run(run.run_dir, run.header, run.records, f"{run.label}#{n}", run.errors)
        runs.append(run)
    return runs
