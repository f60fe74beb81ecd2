"""Run records: the header (run.json) and one JSON line per finished trial.

trials.jsonl is the source of truth; every summary and report is derived from it.
errors.jsonl holds one line per attempt the harness could not finish (a model error
that outlived the backend's retries, an unexpected exception): such an attempt has no
final trial record and is incomplete; `--resume` continues it.
Each line is written with one `write` call and flushed at once, so a run killed at
any moment leaves complete lines, plus at most one torn last line, which readers
drop and `TrialLog.open_for_append` cuts off before appending.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Iterator

# 2: a trial's record holds the lesson written at its start about the previous trial
# (and that call's cost); model errors write no record (see errors.jsonl);
# oracle_feedback and temperature_used added.
SCHEMA_VERSION = 2
READABLE_SCHEMAS = (1, 2)
ERRORS_SCHEMA = 1
# Text that is not valid UTF-8 (a lone surrogate from a task file or an exception
# message) is written as its \udXXX escape instead of stopping the run: inside a JSON
# string that escape reads back as the same character.
_TEXT_ERRORS = "backslashreplace"
STRATEGIES = ("reflexion", "reflexion+recall", "feedback", "resample", "baseline")

TrialKey = tuple[str, str, int, int]  # (task_id, strategy, attempt, trial)


@dataclass(frozen=True)
class TestRecord:
    test: str
    status: str  # passed | failed | error | timeout
    detail: str = ""


@dataclass(frozen=True)
class TrialRecord:
    """One finished trial: Actor -> Evaluator (-> Self-Reflection), plus its scoring.

    attempt and trial count from 1. `final` marks the attempt's submitted
    implementation (its last trial); pass@k and pass@1 use final trials only.
    """

    run_id: str
    task_id: str
    strategy: str
    attempt: int
    trial: int
    final: bool
    stop_reason: str | None  # internal_pass | budget | no_internal_tests | single_sample; None if not final
    code: str  # the implementation extracted from the Actor's answer
    raw_output: str  # the Actor's answer as the model wrote it
    internal_tests: list[str] = field(default_factory=list)  # the attempt's own tests
    internal_results: list[TestRecord] = field(default_factory=list)
    internal_passed: bool | None = None  # None when the strategy writes no tests
    hidden_results: list[TestRecord] = field(default_factory=list)
    hidden_passed: bool = False  # measurement only: never reaches a prompt or a decision
    feedback: str = ""  # this trial's internal-test feedback (the Actor sees it next trial)
    # The lesson written at the start of this trial about the previous trial's failure
    # (None at trial 1); its call counts in this trial's tokens, calls and cost.
    lesson: str | None = None
    memory_shown: list[str] = field(default_factory=list)  # lessons in this trial's prompt
    # reflexion+recall: lessons from other tasks in this trial's prompt, best first:
    # {lesson, source_task, source_run, score (BM25), rank, id (in the run's recall pool)}
    recalled: list[dict[str, Any]] = field(default_factory=list)
    testgen: dict[str, Any] | None = None  # trial 1: {"raw_output", "kept", "dropped"}
    error: str | None = None  # why the Actor's answer held no usable code
    oracle_feedback: bool = False  # the ablation: internal tests were the hidden tests
    temperature_used: float | None = None  # the Actor's sampling temperature; None = the model's own default
    model_calls: int = 0  # calls the strategy made (cache hits included: compute asked for)
    # of which served from the response cache (no model ran)
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None  # money spent on this trial's model calls
    cached_cost_usd: float | None = None  # cost of the answers the response cache served
    model_s: float = 0.0
    sandbox_s: float = 0.0
    wall_s: float = 0.0
    finished_at: str = ""
    schema: int = SCHEMA_VERSION

    @property
    def key(self) -> TrialKey:
        return (self.task_id, self.strategy, self.attempt, self.trial)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> "TrialRecord":
        if row.get("schema") not in READABLE_SCHEMAS:
            raise ValueError(f"unsupported trial record schema {row.get('schema')!r}")
        known = {f.name for f in fields(cls)}
        row = {k: v for k, v in row.items() if k in known}
        for name in ("internal_results", "hidden_results"):
            row[name] = [TestRecord(**r) for r in row.get(name, [])]
        return cls(**row)


def read_trials(path: Path) -> list[TrialRecord]:
    """Every complete record in a trials.jsonl; a torn last line is ignored."""
    return [rec for rec, _ in _scan(path)]


def _scan(path: Path) -> Iterator[tuple[TrialRecord, int]]:
    """Yields (record, byte offset just after its line)."""
    if not path.exists():
        return
    offset = 0
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            end = offset + len(raw)
            if not raw.endswith(b"\n"):
                break  # torn write from a killed run
            if raw.strip():
                try:
                    row = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{lineno}: not JSON ({exc})") from None
                yield TrialRecord.from_dict(row), end
            offset = end


class TrialLog:
    """Append-only writer for trials.jsonl; one line per finished trial, flushed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh = None

    def open_for_append(self) -> list[TrialRecord]:
        """Reads what is there, cuts a torn last line off, opens for appending."""
        records: list[TrialRecord] = []
        good_end = 0
        for rec, end in _scan(self.path):
            records.append(rec)
            good_end = end
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists() and self.path.stat().st_size != good_end:
            with self.path.open("r+b") as fh:
                fh.truncate(good_end)
        self._fh = self.path.open("a", encoding="utf-8", errors=_TEXT_ERRORS)
        return records

    def append(self, record: TrialRecord) -> None:
        assert self._fh is not None, "open_for_append first"
        self._fh.write(record.to_json() + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def append_error(path: Path, row: dict[str, Any]) -> None:
    """One line of errors.jsonl (schema in the contract: kind, task_id, strategy,
    attempt, trial, role, error, at), flushed at once."""
    line = json.dumps({"schema": ERRORS_SCHEMA, **row}, ensure_ascii=False, sort_keys=True)
    with path.open("a", encoding="utf-8", errors=_TEXT_ERRORS) as fh:
        fh.write(line + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_errors(path: Path) -> list[dict[str, Any]]:
    """The lines of an errors.jsonl (none if absent); a torn last line is ignored."""
    if not path.exists():
        return []
    rows = []
    for raw in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if raw.endswith("\n") and raw.strip():
            try:
                rows.append(json.loads(raw))
            except json.JSONDecodeError:
                continue
    return rows


def write_json(path: Path, data: Any) -> None:
    """Writes a JSON file atomically (temp file + rename)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8",
                   errors=_TEXT_ERRORS)
    os.replace(tmp, path)


def read_run_header(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "run.json"
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir}: no run.json here; is this a run folder?")
    return json.loads(path.read_text(encoding="utf-8"))
