"""A compact, incremental index of one run's trials.jsonl.

The index keeps, per trial line, the row harness.rundata.frames makes of a record
(keys, verdicts, spend, timing) and the line's byte range, so a detail page reads only
its own lines. trials.jsonl is append-only: a refresh reads only the bytes added since
the last one (a live run costs a few lines per poll). A file that shrank or was
replaced (a resumed run cuts a torn last line) is read again from the start. Lines are
decoded by the run data's one typed decoder; a line it refuses is counted in
`bad_lines`, never fatal (the view opens the runs the report refuses).
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from harness.rundata import folder, frames
from harness.rundata.records import TrialRecord

COLUMNS = (*frames.TRIAL_COLUMNS, "offset", "length")


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
            added = 0
            for rec, offset, length in folder.scan_trials(self.path, self.read_to):
                if rec is None:
                    self.bad_lines += 1
                else:
                    self.rows.append((*frames.trial_row(rec), offset, length))
                    added += 1
                self.read_to = offset + length
            if added:
                self.version += 1
            return added > 0

    def frame(self) -> pd.DataFrame:
        """The trial frame of every indexed row (rebuilt only when rows changed)."""
        with self._lock:
            if self._frame is None or self._frame_version != self.version:
                self._frame = frames.trials_frame(rows=self.rows, columns=COLUMNS)
                self._frame_version = self.version
            return self._frame

    def read_records(self, positions: list[tuple[int, int]]) -> list[TrialRecord]:
        """The records at the given (offset, length) positions."""
        return folder.read_records_at(self.path, positions)
