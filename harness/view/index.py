"""A compact, incremental index of one run's trials.jsonl.

The index keeps, per trial line, the few fields every page needs (keys, verdicts,
spend, timing) and the line's byte range, so a detail page reads only its own lines.
trials.jsonl is append-only: a refresh parses only the bytes added since the last one
(a live run costs a few lines per poll). A file that shrank or was replaced (a
resumed run cuts a torn last line) is read again from the start.

Records are read defensively: schema 1 and 2, fields that are absent, and lines that
are not JSON objects (counted in `bad_lines`, never fatal: the view must open the runs
that the report refuses).
"""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pandas as pd

# Columns kept per trial line, in order. Text fields that pages filter on are kept
# short (error: first 200 characters).
COLUMNS = (
    "task_id", "strategy", "attempt", "trial", "final", "stop_reason", "hidden_passed",
    "internal_passed", "error", "model_calls", "cached_calls", "input_tokens", "output_tokens",
    "cost_usd", "wall_s", "model_s", "sandbox_s", "finished_at", "schema", "has_lesson",
    "n_internal", "n_hidden", "hidden_ok", "wrong_tests", "oracle_feedback", "offset", "length",
)


def _int(x: Any) -> int:
    try:
        return int(x or 0)
    except (TypeError, ValueError):
        return 0


def _float(x: Any) -> float:
    try:
        return float(x or 0.0)
    except (TypeError, ValueError):
        return 0.0


def _wrong_tests(row: dict[str, Any]) -> int:
    """Self-tests the reference solution contradicts, when the record says so.

    Read from `internal_reference` (a list of {test, status}: the internal tests run
    against the task's reference solution); a test that fails there is wrong. Runs
    that do not record it count 0 here and the task table says it is not recorded.
    """
    ref = row.get("internal_reference")
    if not isinstance(ref, list):
        return -1
    return sum(1 for r in ref if isinstance(r, dict) and r.get("status") != "passed")


class _Result(msgspec.Struct):
    status: Any = None


class _Fast(msgspec.Struct):
    """The fields the index keeps; msgspec skips the rest of a line without building it."""

    task_id: str
    strategy: str = ""
    attempt: int = 0
    trial: int = 0
    final: bool = False
    stop_reason: str | None = None
    hidden_passed: bool = False
    internal_passed: bool | None = None
    error: str | None = None
    model_calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    wall_s: float = 0.0
    model_s: float = 0.0
    sandbox_s: float = 0.0
    finished_at: str = ""
    schema: int = 0
    lesson: str | None = None
    internal_tests: list[Any] = []
    hidden_results: list[_Result] = []
    internal_reference: list[_Result] | None = None
    oracle_feedback: bool | None = None
    testgen: dict[str, Any] | None = None


_DECODER = msgspec.json.Decoder(_Fast)


def _fast_row(r: _Fast, offset: int, length: int) -> tuple:
    ref = r.internal_reference
    oracle = r.oracle_feedback
    if oracle is None:
        oracle = bool((r.testgen or {}).get("oracle_feedback", False))
    return (
        r.task_id, r.strategy, r.attempt, r.trial, r.final, r.stop_reason, r.hidden_passed,
        r.internal_passed, (r.error[:200] if r.error else None), r.model_calls, r.cached_calls,
        r.input_tokens, r.output_tokens, r.cost_usd, r.wall_s, r.model_s, r.sandbox_s,
        r.finished_at, r.schema, bool(r.lesson), len(r.internal_tests), len(r.hidden_results),
        sum(1 for h in r.hidden_results if h.status == "passed"),
        -1 if ref is None else sum(1 for h in ref if h.status != "passed"),
        bool(oracle), offset, length,
    )


def _row(rec: dict[str, Any], offset: int, length: int) -> tuple:
    hidden = rec.get("hidden_results") if isinstance(rec.get("hidden_results"), list) else []
    internal = rec.get("internal_tests") if isinstance(rec.get("internal_tests"), list) else []
    err = rec.get("error")
    testgen = rec.get("testgen") if isinstance(rec.get("testgen"), dict) else {}
    oracle = rec.get("oracle_feedback")
    if oracle is None:
        oracle = bool(testgen.get("oracle_feedback", False))
    cost = rec.get("cost_usd")
    return (
        str(rec.get("task_id", "")), str(rec.get("strategy", "")), _int(rec.get("attempt")),
        _int(rec.get("trial")), bool(rec.get("final", False)), rec.get("stop_reason"),
        bool(rec.get("hidden_passed", False)), rec.get("internal_passed"),
        (str(err)[:200] if err else None),
        _int(rec.get("model_calls")), _int(rec.get("cached_calls")), _int(rec.get("input_tokens")),
        _int(rec.get("output_tokens")), (None if cost is None else _float(cost)),
        _float(rec.get("wall_s")), _float(rec.get("model_s")), _float(rec.get("sandbox_s")),
        str(rec.get("finished_at") or ""), _int(rec.get("schema")), bool(rec.get("lesson")),
        len(internal), len(hidden),
        sum(1 for h in hidden if isinstance(h, dict) and h.get("status") == "passed"),
        _wrong_tests(rec), bool(oracle), offset, length,
    )


def _parse(raw: bytes, offset: int, length: int) -> tuple | None:
    """A line's index row: msgspec's typed decoder first, plain json for odd lines."""
    try:
        return _fast_row(_DECODER.decode(raw), offset, length)
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass
    try:
        rec = json.loads(raw)
    except ValueError:
        return None
    if isinstance(rec, dict) and "task_id" in rec:
        return _row(rec, offset, length)
    return None


@dataclass
class TrialIndex:
    """The indexed lines of one trials.jsonl; `version` changes whenever rows change."""

    path: Path
    rows: list[tuple] = field(default_factory=list)
    read_to: int = 0  # bytes of the file consumed (complete lines only)
    bad_lines: int = 0
    identity: tuple[int, int] | None = None  # (device, inode) of the file read
    size: int = 0
    mtime: float = 0.0
    version: int = 0
    _frame: pd.DataFrame | None = None
    _frame_version: int = -1
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def refresh(self) -> bool:
        """Reads what was appended since the last call; True when rows changed."""
        with self._lock:
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                changed = bool(self.rows)
                self.rows, self.read_to, self.size, self.identity = [], 0, 0, None
                if changed:
                    self.version += 1
                return changed
            identity = (st.st_dev, st.st_ino)
            if identity != self.identity or st.st_size < self.read_to:
                self.rows, self.read_to, self.bad_lines = [], 0, 0
                self.identity = identity
                self.version += 1
            self.size, self.mtime = st.st_size, st.st_mtime
            if st.st_size == self.read_to:
                return False
            added = self._read_from(self.read_to)
            if added:
                self.version += 1
            return added > 0

    def _read_from(self, start: int) -> int:
        with open(self.path, "rb") as fh:
            fh.seek(start)
            data = fh.read()
        end = data.rfind(b"\n") + 1  # a torn last line waits for its newline
        if end == 0:
            return 0
        offset = start
        added = 0
        for raw in data[:end].split(b"\n")[:-1]:
            length = len(raw) + 1
            if raw.strip():
                row = _parse(raw, offset, length)
                if row is not None:
                    self.rows.append(row)
                    added += 1
                else:
                    self.bad_lines += 1
            offset += length
        self.read_to = start + end
        return added

    def frame(self) -> pd.DataFrame:
        """Every indexed row as a DataFrame (rebuilt only when rows changed)."""
        with self._lock:
            if self._frame is None or self._frame_version != self.version:
                df = pd.DataFrame.from_records(self.rows, columns=list(COLUMNS)) if self.rows else \
                    pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS})
                self._frame = df
                self._frame_version = self.version
            return self._frame

    def read_records(self, positions: list[tuple[int, int]]) -> list[dict[str, Any]]:
        """The full JSON records at the given (offset, length) positions."""
        out = []
        with open(self.path, "rb") as fh:
            for offset, length in positions:
                fh.seek(offset)
                try:
                    rec = json.loads(fh.read(length))
                except ValueError:
                    continue
                if isinstance(rec, dict):
                    out.append(rec)
        return out


def trials_for_metrics(df: pd.DataFrame) -> pd.DataFrame:
    """The index frame shaped like `harness.metrics.trials_frame`'s output.

    Same rules: the last line of a duplicated (task, strategy, attempt, trial) wins; an
    attempt is complete when it has a final record; lines past the final one drop.
    """
    keys = ["task_id", "strategy", "attempt"]
    if df.empty:
        out = df.copy()
        out["complete"] = pd.Series(dtype=bool)
        out["last_trial"] = pd.Series(dtype=float)
        return out
    df = df.drop_duplicates(subset=keys + ["trial"], keep="last")
    last = df[df["final"]].groupby(keys)["trial"].max().rename("last_trial")
    df = df.join(last, on=keys)
    df["complete"] = df["last_trial"].notna()
    df = df[~(df["complete"] & (df["trial"] > df["last_trial"]))]
    df = df.assign(hidden_passed=df["hidden_passed"].astype(bool))
    return df.sort_values(keys + ["trial"], kind="stable").reset_index(drop=True)
