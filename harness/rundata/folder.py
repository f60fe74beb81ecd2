"""Every read and write of a run folder.

    <run>/run.json       the header: config, versions, model identity, task and prompt digests
    <run>/trials.jsonl   one TrialRecord a line, appended and flushed as each trial ends
    <run>/errors.jsonl   one ErrorRecord a line: an attempt the harness could not finish
    <run>/summary.json   the run's numbers (harness.rundata.numbers), written once per session
    <run>/session.lock   locked (flock) by the process writing the run, while it runs; removed as it ends

trials.jsonl is the source of truth; everything else is derived from it and run.json.
Each line is written with one `write` call and flushed at once, so a run killed at
any moment leaves complete lines plus at most one torn last line, which readers drop
and `TrialLog.open_for_append` cuts off before appending.
"""
from __future__ import annotations

import fcntl
import json
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from harness.rundata.records import (
    ERRORS_SCHEMA, ErrorRecord, RecordError, RunHeader, TrialRecord, decode_error, decode_trial, encode_line,
    header_of,
)

HEADER = "run.json"
TRIALS = "trials.jsonl"
ERRORS = "errors.jsonl"
SUMMARY = "summary.json"
ERROR_LOG = "error.log"
SESSION_LOCK = "session.lock"
# Text that is not valid UTF-8 (a lone surrogate) is written as its \udXXX escape
# instead of stopping the run: inside a JSON string that escape reads back as the same character.
_TEXT_ERRORS = "backslashreplace"


class FolderError(Exception):
    """A run folder that cannot be read as one; the message says which file and why."""


# ------------------------------------------------------------------ the session lock

class SessionLock:
    """Held by the one process that writes a run, for as long as it runs.

    An exclusive flock on <run>/session.lock: the kernel drops it when that process
    ends, however it ends (kill -9 included), so "is a session writing this run?" has
    an exact answer on this host instead of a guess from file times. A second session
    on the same run (two resumes at once) is refused. A session that ends removes the
    file while it still holds the lock (a finished run folder keeps no lock file); one
    that locked a file removed meanwhile locks the new one instead.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / SESSION_LOCK
        self._fh: Any = None

    def acquire(self) -> "SessionLock":
        for _ in range(100):  # a lost race with an ending session: lock the new file
            fh = self._locked()
            try:
                if os.fstat(fh.fileno()).st_ino == os.stat(self.path).st_ino:
                    break
            except FileNotFoundError:
                pass
            fh.close()
        else:
            raise FolderError(f"{self.path}: cannot take the session lock (the file keeps being replaced)")
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        fh.flush()
        self._fh = fh
        return self

    def _locked(self) -> Any:
        fh = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise FolderError(f"{self.path.parent}: another session is writing this run ({holder}); "
                              "wait for it to end, or stop it, before resuming") from None
        return fh

    def release(self) -> None:
        if self._fh is not None:
            try:
                self.path.unlink()  # still locked: no other session holds this file
            except FileNotFoundError:
                pass
            self._fh.close()  # closing the descriptor drops the flock
            self._fh = None


def session_live(run_dir: Path) -> bool | None:
    """True: a process holds the run's session lock now; False: the lock is free (its
    session was killed); None: no lock file (a session that ended removes it; a run
    from before the lock, or another host's view of a shared folder: the caller falls
    back to file times and summary.json)."""
    path = Path(run_dir) / SESSION_LOCK
    try:
        fh = path.open("r", encoding="utf-8")
    except OSError:
        return None
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return None
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        return False


# ------------------------------------------------------------------ JSON files

def write_json(path: Path, data: Any) -> None:
    """Writes a JSON file atomically (temp file + rename)."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8",
                   errors=_TEXT_ERRORS)
    os.replace(tmp, path)


def read_json(path: Path) -> Any:
    """A JSON file's content, or None when it is absent or not JSON."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_run_header(run_dir: Path) -> dict[str, Any]:
    """run.json as written; FileNotFoundError when absent, ValueError when not JSON."""
    path = Path(run_dir) / HEADER
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir}: no run.json here; is this a run folder?")
    return json.loads(path.read_text(encoding="utf-8"))


def write_run_header(run_dir: Path, header: dict[str, Any]) -> None:
    write_json(Path(run_dir) / HEADER, header)


def read_summary(run_dir: Path) -> dict[str, Any] | None:
    data = read_json(Path(run_dir) / SUMMARY)
    return data if isinstance(data, dict) else None


def write_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    write_json(Path(run_dir) / SUMMARY, summary)


def mtime(path: Path) -> float | None:
    try:
        return Path(path).stat().st_mtime
    except OSError:
        return None


# ------------------------------------------------------------------ trials.jsonl

def scan_trials(path: Path, start: int = 0) -> Iterator[tuple[TrialRecord | None, int, int]]:
    """Yields (record, offset, length) for each complete line from byte `start`; a
    line that is not a readable record yields None (the caller decides: the report
    refuses it, the view counts it). A torn last line (no newline yet) is not read."""
    path = Path(path)
    if not path.exists():
        return
    with path.open("rb") as fh:
        fh.seek(start)
        offset = start
        for raw in fh:
            if not raw.endswith(b"\n"):
                break  # torn write from a killed run, or a line still being written
            if raw.strip():
                try:
                    rec: TrialRecord | None = decode_trial(raw)
                except RecordError:
                    rec = None
                yield rec, offset, len(raw)
            offset += len(raw)


def read_trials(path: Path) -> list[TrialRecord]:
    """Every complete record of a trials.jsonl (a torn last line is ignored); a line
    that is not a readable record raises ValueError naming its line number."""
    path = Path(path)
    out: list[TrialRecord] = []
    if not path.exists():
        return out
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.endswith(b"\n"):
                break
            if raw.strip():
                try:
                    out.append(decode_trial(raw))
                except RecordError as exc:
                    raise ValueError(f"{path}:{lineno}: {exc}") from None
    return out


def read_records_at(path: Path, positions: list[tuple[int, int]]) -> list[TrialRecord]:
    """The records at the given (offset, length) byte ranges of a trials.jsonl."""
    out = []
    with Path(path).open("rb") as fh:
        for offset, length in positions:
            fh.seek(offset)
            try:
                out.append(decode_trial(fh.read(length)))
            except RecordError:
                continue
    return out


class TrialLog:
    """Append-only writer for trials.jsonl; one line per finished trial, flushed."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fh = None

    def open_for_append(self) -> list[TrialRecord]:
        """Reads what is there, cuts a torn last line off, opens for appending."""
        records: list[TrialRecord] = []
        good_end = 0
        for rec, offset, length in scan_trials(self.path):
            if rec is None:
                raise ValueError(f"{self.path}: byte {offset}: not a trial record this harness can read")
            records.append(rec)
            good_end = offset + length
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


# ------------------------------------------------------------------ errors.jsonl

def append_error(path: Path, row: dict[str, Any] | ErrorRecord) -> None:
    """One line of errors.jsonl (kind, task_id, strategy, attempt, trial, role, error,
    at, spent), flushed at once."""
    if isinstance(row, ErrorRecord):
        line = encode_line(row)
    else:
        line = json.dumps({"schema": ERRORS_SCHEMA, **row}, ensure_ascii=False, sort_keys=True)
    with Path(path).open("a", encoding="utf-8", errors=_TEXT_ERRORS) as fh:
        fh.write(line + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_errors(path: Path) -> list[dict[str, Any]]:
    """The lines of an errors.jsonl as written (none if absent); a torn last line, or a
    line that is not a JSON object, is skipped: this file explains, it never scores."""
    path = Path(path)
    if path.is_dir():
        path = path / ERRORS
    if not path.exists():
        return []
    rows = []
    for raw in path.read_bytes().splitlines(keepends=True):
        if raw.endswith(b"\n") and raw.strip():
            try:
                row = json.loads(raw)
            except ValueError:
                continue
            if isinstance(row, dict):
                rows.append(row)
    return rows


def error_records(rows: list[dict[str, Any]]) -> list[ErrorRecord]:
    """The lines of errors.jsonl that name their attempt, typed."""
    out = []
    for row in rows:
        try:
            out.append(decode_error(json.dumps(row)))
        except RecordError:
            continue
    return out


# ------------------------------------------------------------------ a whole folder

@dataclass(frozen=True)
class RunFolder:
    """One run folder, read whole: the header, every complete trial and errors.jsonl."""

    run_dir: Path
    header: dict[str, Any]
    records: list[TrialRecord]
    errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def info(self) -> RunHeader:
        return header_of(self.header)

    @property
    def error_keys(self) -> list[tuple[str, str, int]]:
        """(task_id, strategy, attempt) of each errors.jsonl line that names one."""
        return [e.attempt_key for e in error_records(self.errors)]


def load(run_dir: Path, *, need_trials: bool = True) -> RunFolder:
    """Reads a run folder; FolderError (one line, naming the file) when it is not usable."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FolderError(f"{run_dir}: no such run folder")
    try:
        header = read_run_header(run_dir)
    except FileNotFoundError:
        raise FolderError(f"{run_dir}: no run.json here; give a folder written by `python -m harness run`") from None
    except json.JSONDecodeError as exc:
        raise FolderError(f"{run_dir / HEADER}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(header, dict):
        raise FolderError(f"{run_dir / HEADER}: expected a JSON object")
    trials_path = run_dir / TRIALS
    try:
        records = read_trials(trials_path)
    except (ValueError, TypeError) as exc:
        raise FolderError(str(exc).replace("\n", " ")) from None
    if need_trials and not records:
        raise FolderError(f"{trials_path}: no finished trials recorded yet; nothing to report")
    return RunFolder(run_dir, header, records, read_errors(run_dir / ERRORS))


def read_error_log(run_dir: Path) -> str | None:
    try:
        return (Path(run_dir) / ERROR_LOG).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def run_stopped(log: str | None) -> bool:
    """error.log says the whole run stopped (not only one unit's traceback: units that
    fail are logged there too, as "--- <time> <task> ..." sections, and the run goes on)."""
    if not log:
        return False
    return "--- the run stopped" in log or not log.startswith("--- ")


def error_log_kind(run_dir: Path) -> str | None:
    """None (no error.log), "stopped" (the run stopped on an error) or "units"."""
    log = read_error_log(run_dir)
    if log is None:
        return None
    return "stopped" if run_stopped(log) else "units"
