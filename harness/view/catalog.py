"""The run folders under a results folder, each with its index, status and numbers.

A run folder is any folder holding a run.json. Folders are listed again when the
results folder changes (a new run appears while the view is open). Each run keeps
one TrialIndex; its numbers (harness.rundata.numbers, the report's own) are
recomputed only when the index version or the run's liveness moves.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from harness.report import plots
from harness.rundata import folder, frames, numbers
from harness.view import selfcheck
from harness.view.index import TrialIndex

STUDY_FILE = "study.json"  # a study's folder (harness/run/study.py): its cells are run folders
CELL_SEPARATOR = "~"  # a study's cell seen from a results folder: /runs/<study>~<cell>

run_stopped = folder.run_stopped

# A run whose trials.jsonl (or run.json) changed this recently, and whose last session
# has not ended after its last trial, is taken to be running.
RUNNING_WINDOW_S = 600.0


@dataclass
class Status:
    """The view's badge for a run: the run data's status (numbers["status"]) and what
    the folder adds (error.log)."""

    state: str  # running | complete | incomplete | interrupted
    text: str  # the status sentence, as the report and the CLI print it
    resumed: bool
    crashed: bool  # error.log says the run stopped on an error
    errors: dict[str, int]  # errors.jsonl lines that left attempts unfinished, per kind
    incomplete: int

    @property
    def label(self) -> str:
        return self.state + (", resumed" if self.resumed else "")


@dataclass
class RunEntry:
    run_id: str
    path: Path
    label: str
    header: dict[str, Any] = field(default_factory=dict)
    header_error: str | None = None
    index: TrialIndex = field(init=False)
    prepared: frames.Frames | None = None
    _numbers: dict[str, Any] | None = None
    _numbers_key: tuple[int, bool] = (-1, False)
    _stamp: tuple[float | None, ...] = (None, None, None, None)
    _plots: tuple[tuple[int, bool], str, str, str] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.index = TrialIndex(self.path / folder.TRIALS)
        self.reload_header()

    def reload_header(self) -> None:
        data = folder.read_json(self.path / folder.HEADER)
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

    def summary(self) -> dict[str, Any] | None:
        return folder.read_summary(self.path)

    def errors(self) -> list[dict[str, Any]]:
        """errors.jsonl lines (model errors and unit exceptions), torn lines skipped."""
        return folder.read_errors(self.path / folder.ERRORS)

    def error_log(self) -> str | None:
        return folder.read_error_log(self.path)

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
        stamp = (folder.mtime(self.path / folder.ERRORS), folder.mtime(self.path / folder.HEADER),
                 folder.mtime(self.path / selfcheck.FILE), folder.mtime(self.path / folder.SUMMARY))
        if stamp != self._stamp:  # a new errors.jsonl line, a rewritten header or an ended session
            self._stamp = stamp
            self.reload_header()
            self.index.version += 1
            changed = True
        return changed

    def live(self, now: float | None = None) -> bool:
        """A session is writing this run: it holds the run's session lock. A run from
        before the lock (no lock file): trials.jsonl or run.json changed within
        RUNNING_WINDOW_S and error.log does not say the run stopped after that."""
        held = folder.session_live(self.path)
        if held is not None:
            return held
        now = time.time() if now is None else now
        trials_m = folder.mtime(self.path / folder.TRIALS)
        marks = [m for m in (trials_m, folder.mtime(self.path / folder.HEADER)) if m is not None]
        if not marks or now - max(marks) >= RUNNING_WINDOW_S:
            return False
        ended = folder.mtime(self.path / folder.SUMMARY)  # a session writes summary.json as it ends
        if ended is not None and ended >= max(marks):
            return False
        return not (run_stopped(self.error_log()) and crashed_after(self.path, trials_m))

    def numbers(self) -> dict[str, Any]:
        """The run's numbers (harness.rundata.numbers), recomputed only when the index
        or the run's liveness changed."""
        self.refresh()
        live = self.live()
        with self._lock:
            key = (self.index.version, live)
            if self._numbers is None or self._numbers_key != key:
                trials = self.index.frame()
                errors = self.errors()
                summary = self.summary() or {}
                session = summary.get("session") if isinstance(summary.get("session"), dict) else None
                if session is None and summary and int(summary.get("schema") or 1) < numbers.SUMMARY_SCHEMA \
                        and _after(self.path / folder.SUMMARY, self.path / folder.TRIALS):
                    # summary.json of a harness that did not record its sessions, written
                    # after the last trial: that session ended
                    session = {"trials": len(trials)}
                checks = self.self_checks()
                self.prepared = frames.prepare(self.header, trials, errors)
                self._numbers = numbers.compute(
                    self.header, trials, errors, run_dir=self.path, live=live,
                    session=session,
                    timings=summary.get("timings") if isinstance(summary.get("timings"), dict) else None,
                    bad_lines=self.index.bad_lines, error_log=folder.error_log_kind(self.path),
                    wrong_tasks=selfcheck.wrong_task_ids(checks) if checks else (), prepared=self.prepared)
                self._numbers["self_checked"] = checks is not None
                self._numbers_key = key
            return self._numbers

    @property
    def ready(self) -> bool:
        """Indexed, its numbers and plots made for what was indexed (a torn last line waits)."""
        return self._numbers is not None and self._numbers_key[0] == self.index.version \
            and self._plots is not None and self._plots[0] == self._numbers_key

    @property
    def indexed(self) -> bool:
        """Read at least once (a refresh then only reads what was appended)."""
        return self._numbers is not None

    def plots(self) -> tuple[str, str]:
        """The run page's SVG plots of pass@1 by trial and against compute, the report's own
        figures, drawn once per numbers."""
        return self._all_plots()[:2]

    def cost_plot(self) -> str:
        """The run page's accuracy-against-cost plot (the report's own figure)."""
        return self._all_plots()[2]

    def _all_plots(self) -> tuple[str, str, str]:
        doc = self.numbers()
        with self._lock:
            if self._plots is None or self._plots[0] != self._numbers_key:
                if not doc["by_trial"] and not doc["compute_curve"]:
                    svgs = ("", "", "")
                else:
                    salt = "-" + self.run_id.encode().hex()[:12]
                    points = pd.DataFrame(doc.get("cost_points") or [])
                    svgs = (plots.inline(plots.pass1_by_trial_svg(pd.DataFrame(doc["by_trial"]), salt)),
                            plots.inline(plots.compute_svg(pd.DataFrame(doc["compute_curve"]), salt)),
                            plots.inline(plots.cost_svg([("", points, str(doc.get("cost_axis") or "tokens"))], salt))
                            if not points.empty else "")
                self._plots = (self._numbers_key, *svgs)
            return self._plots[1], self._plots[2], self._plots[3]

    def status(self) -> Status:
        doc = self.numbers()
        st = doc["status"]
        return Status(st["state"], st["text"], bool(st["resumes"]), run_stopped(self.error_log()),
                      dict(st["errors_open"]),
                      sum(s["incomplete_attempts"] for s in doc["strategies"].values()))


def _after(a: Path, b: Path) -> bool:
    ma, mb = folder.mtime(a), folder.mtime(b)
    return ma is not None and (mb is None or ma >= mb - 1.0)


def crashed_after(path: Path, trials_m: float | None) -> bool:
    """error.log written after the last trial: the run stopped on that error."""
    log_m = folder.mtime(path / folder.ERROR_LOG)
    return log_m is not None and (trials_m is None or log_m >= trials_m)


class Catalog:
    """Run folders directly under `root` (or `root` itself when it is a run folder)."""

    def __init__(self, root: Path, labels: dict[str, str] | None = None) -> None:
        self.root = Path(root)
        self.labels = dict(labels or {})
        self._runs: dict[str, RunEntry] = {}
        self._listed_at: tuple[float | None, float] = (None, 0.0)
        self._lock = threading.Lock()

    def _folders(self) -> dict[str, Path]:
        """Run folders by id: the root itself, or its children; a study folder's cells
        (children of a child holding study.json) as "<study>~<cell>"."""
        if (self.root / "run.json").is_file():
            return {self.root.name: self.root}
        found: dict[str, Path] = {}
        try:
            children = sorted(p for p in self.root.iterdir() if p.is_dir())
        except OSError:
            return {}
        for p in children:
            if (p / "run.json").is_file():
                found[p.name] = p
            elif (p / STUDY_FILE).is_file():
                for cell in self._cells(p):
                    found[f"{p.name}{CELL_SEPARATOR}{cell.name}"] = cell
        return found

    @staticmethod
    def _cells(study: Path) -> list[Path]:
        try:
            return sorted(c for c in study.iterdir() if c.is_dir() and (c / "run.json").is_file())
        except OSError:
            return []

    def studies(self) -> dict[str, Path]:
        """Study folders: the root itself ("" for its name), or children holding study.json."""
        if (self.root / STUDY_FILE).is_file():
            return {"": self.root}
        try:
            return {p.name: p for p in sorted(self.root.iterdir()) if p.is_dir() and (p / STUDY_FILE).is_file()}
        except OSError:
            return {}

    def entry_for(self, path: Path) -> RunEntry | None:
        """The run entry of a run folder, by its path."""
        self._scan()
        target = Path(path).resolve()
        return next((e for e in self._runs.values() if e.path.resolve() == target), None)

    def _scan(self) -> None:
        stamp = folder.mtime(self.root)
        with self._lock:
            # list again when the folder changed, and at least every 2 s (a run.json can
            # appear inside an existing folder without touching the parent)
            if stamp == self._listed_at[0] and time.time() - self._listed_at[1] < 2.0 and self._runs:
                return
            found = self._folders()
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


