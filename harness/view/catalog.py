"""The run folders under a results folder, each with its index, status and numbers.

A run folder is any folder holding a run.json. Folders are listed again when the
results folder changes (a new run appears while the view is open). Each run keeps
one TrialIndex; its numbers are recomputed only when the index version moves.
"""
from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import metrics
from harness.view import plots, selfcheck, stats
from harness.view.index import TrialIndex

# A run whose trials.jsonl (or run.json) changed this recently, and which has no
# summary written after its last trial, is taken to be running.
RUNNING_WINDOW_S = 600.0


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


@dataclass
class Status:
    state: str  # running | complete | interrupted | empty
    resumed: bool
    crashed: bool  # error.log says the run stopped on an error
    errors: dict[str, int]  # errors.jsonl lines per kind
    incomplete: int

    @property
    def label(self) -> str:
        words = [self.state]
        if self.resumed:
            words.append("resumed")
        return ", ".join(words)


@dataclass
class RunEntry:
    run_id: str
    path: Path
    label: str
    header: dict[str, Any] = field(default_factory=dict)
    header_error: str | None = None
    index: TrialIndex = field(init=False)
    _numbers: stats.RunNumbers | None = None
    _numbers_version: int = -1
    _stamp: tuple[float | None, ...] = (None, None, None)
    _plots: tuple[int, str, str] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.index = TrialIndex(self.path / "trials.jsonl")
        self.reload_header()

    def reload_header(self) -> None:
        data = _read_json(self.path / "run.json")
        if isinstance(data, dict):
            self.header, self.header_error = data, None
        else:
            self.header, self.header_error = {}, "run.json is missing or not a JSON object"

    @property
    def config(self) -> dict[str, Any]:
        cfg = self.header.get("config")
        return cfg if isinstance(cfg, dict) else {}

    @property
    def created_at(self) -> str:
        return str(self.header.get("created_at") or "")

    @property
    def oracle_feedback(self) -> bool:
        return bool(self.config.get("oracle_feedback", False))

    def summary(self) -> dict[str, Any] | None:
        data = _read_json(self.path / "summary.json")
        return data if isinstance(data, dict) else None

    def errors(self) -> list[dict[str, Any]]:
        """errors.jsonl lines (model errors and unit exceptions), torn lines skipped."""
        out = []
        try:
            text = (self.path / "errors.jsonl").read_text(encoding="utf-8")
        except OSError:
            return out
        for line in text.splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                out.append(row)
        return out

    def error_log(self) -> str | None:
        try:
            return (self.path / "error.log").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def resumes(self) -> list[dict[str, Any]]:
        """Sessions that resumed this run: run.json's `resumes` list ({"at", ...} each)."""
        value = self.header.get("resumes")
        if isinstance(value, list):
            return [r if isinstance(r, dict) else {"at": str(r)} for r in value]
        return [{"at": ""}] if self.header.get("resumed") else []

    def self_checks(self) -> dict[tuple[str, str, int], dict[str, str]] | None:
        """Reference-solution verdicts of the self-tests (self_tests.jsonl), if checked."""
        return selfcheck.read_checks(self.path)

    def refresh(self) -> bool:
        changed = self.index.refresh()
        stamp = (_mtime(self.path / "errors.jsonl"), _mtime(self.path / "run.json"),
                 _mtime(self.path / selfcheck.FILE))
        if stamp != self._stamp:  # a new errors.jsonl line or a rewritten header changes the numbers
            self._stamp = stamp
            self.reload_header()
            self.index.version += 1
            changed = True
        return changed

    def numbers(self) -> stats.RunNumbers:
        """The run's numbers, recomputed only when trials.jsonl gained lines."""
        self.refresh()
        with self._lock:
            version = self.index.version
            if self._numbers is None or self._numbers_version != version:
                ids = (self.header.get("tasks") or {}).get("task_ids") if isinstance(self.header.get("tasks"), dict) else None
                error_keys = [(str(e.get("task_id")), str(e.get("strategy")), int(e.get("attempt") or 0))
                              for e in self.errors() if e.get("task_id") is not None]
                self._numbers = stats.compute(self.index.frame(), self.config,
                                              [str(t) for t in ids] if isinstance(ids, list) else [], error_keys,
                                              metrics.unfinished_spend(self.errors()))
                checks = self.self_checks()
                if checks is not None:
                    tasks = self._numbers.tasks
                    tasks["wrong_tests"] = tasks["wrong_tests"] | tasks["task_id"].isin(selfcheck.wrong_task_ids(checks))
                    self._numbers.extra["self_checked"] = True
                self._numbers_version = version
            return self._numbers

    @property
    def ready(self) -> bool:
        """Indexed, its numbers and plots made for what was indexed (a torn last line waits)."""
        return self._numbers is not None and self._numbers_version == self.index.version \
            and self._plots is not None and self._plots[0] == self._numbers_version

    @property
    def indexed(self) -> bool:
        """Read at least once (a refresh then only reads what was appended)."""
        return self._numbers is not None

    def plots(self) -> tuple[str, str]:
        """The run page's two SVG plots (pass@1 by trial; pass rate against compute),
        drawn once per index version."""
        numbers = self.numbers()
        with self._lock:
            if self._plots is None or self._plots[0] != self._numbers_version:
                if numbers.trials.empty:
                    svgs = ("", "")
                else:
                    salt = self.run_id.encode().hex()[:12]
                    svgs = (plots.by_trial_svg(numbers.by_trial, salt), plots.compute_svg(numbers.compute, salt))
                self._plots = (self._numbers_version, *svgs)
            return self._plots[1], self._plots[2]

    def status(self, now: float | None = None) -> Status:
        now = time.time() if now is None else now
        trials_m = _mtime(self.path / "trials.jsonl")
        header_m = _mtime(self.path / "run.json")
        summary_m = _mtime(self.path / "summary.json")
        last = max(m for m in (trials_m, header_m) if m is not None) if (trials_m or header_m) else 0.0
        errors: dict[str, int] = {}
        for row in self.errors():
            kind = str(row.get("kind") or "error")
            errors[kind] = errors.get(kind, 0) + 1
        crashed = run_stopped(self.error_log())
        resumed = bool(self.resumes())
        summarised = summary_m is not None and (trials_m is None or summary_m >= trials_m - 1.0)
        numbers = self._numbers if self._numbers is not None else None
        incomplete = sum(s.incomplete for s in numbers.lines) if numbers else 0
        if summarised:
            state = "complete"
        elif now - last < RUNNING_WINDOW_S and not (crashed and crashed_after(self.path, trials_m)):
            state = "running"
        elif trials_m is None:
            state = "empty"
        else:
            state = "interrupted"
        return Status(state, resumed, crashed, errors, incomplete)


def run_stopped(log: str | None) -> bool:
    """error.log says the whole run stopped (not only one unit's traceback: units that
    fail are logged there too, as "--- <time> <task> ..." sections, and the run goes on)."""
    if not log:
        return False
    return "--- the run stopped" in log or not log.startswith("--- ")


def crashed_after(path: Path, trials_m: float | None) -> bool:
    """error.log written after the last trial: the run stopped on that error."""
    log_m = _mtime(path / "error.log")
    return log_m is not None and (trials_m is None or log_m >= trials_m)


class Catalog:
    """Run folders directly under `root` (or `root` itself when it is a run folder)."""

    def __init__(self, root: Path, labels: dict[str, str] | None = None) -> None:
        self.root = Path(root)
        self.labels = dict(labels or {})
        self._runs: dict[str, RunEntry] = {}
        self._listed_at: tuple[float | None, float] = (None, 0.0)
        self._lock = threading.Lock()

    def _folders(self) -> list[Path]:
        if (self.root / "run.json").is_file():
            return [self.root]
        try:
            return sorted(p for p in self.root.iterdir() if p.is_dir() and (p / "run.json").is_file())
        except OSError:
            return []

    def _scan(self) -> None:
        stamp = _mtime(self.root)
        with self._lock:
            # list again when the folder changed, and at least every 2 s (a run.json can
            # appear inside an existing folder without touching the parent)
            if stamp == self._listed_at[0] and time.time() - self._listed_at[1] < 2.0 and self._runs:
                return
            found = {p.name: p for p in self._folders()}
            for name in list(self._runs):
                if name not in found:
                    del self._runs[name]
            for name, path in found.items():
                if name not in self._runs:
                    self._runs[name] = RunEntry(name, path, self.labels.get(name, name))
                elif not self._runs[name].header:
                    self._runs[name].reload_header()
            self._listed_at = (stamp, time.time())

    def runs(self) -> list[RunEntry]:
        """Every run, newest first (by created_at, then folder name)."""
        self._scan()
        return sorted(self._runs.values(), key=lambda r: (r.created_at or "", r.run_id), reverse=True)

    def get(self, run_id: str) -> RunEntry | None:
        self._scan()
        return self._runs.get(run_id)

    def warm(self) -> None:
        """Indexes every run and computes its numbers and plots, newest first (a background
        thread calls this at start-up so that the first page of a large run is ready sooner)."""
        for entry in self.runs():
            try:
                entry.numbers()
                entry.plots()
            except Exception:  # noqa: BLE001 - a broken run must not stop the others; its page says why
                continue


def fmt_minutes(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "–"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
