"""Long-term memory: verbal lessons, one JSON line each, a file per task.

Layout: <memory_dir>/<namespace>/<task-id>.jsonl. A run writes under its own
namespace (its run id) unless the user names a shared one, in which case the Actor
also sees lessons earlier runs left there, from trial 1 on (continual learning across
runs). Each lesson records the run, model and strategy that wrote it and whether
oracle feedback (the hidden tests) produced it; a run without oracle feedback never
recalls a lesson that oracle feedback produced.
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from pathlib import Path


@dataclass(frozen=True)
class Lesson:
    run_id: str
    task_id: str
    strategy: str
    attempt: int
    trial: int  # the trial whose failure the lesson is about
    text: str
    time: str = ""
    model: str = ""  # the model spec of the run that wrote it ("" in older files)
    oracle_feedback: bool = False  # written from hidden-test feedback (the ablation)
    task_set: str = ""  # the task-set spec of the run that wrote it: recall finds the task's prompt and tests by it

    @property
    def key(self) -> tuple[str, str, int, int]:
        return (self.run_id, self.strategy, self.attempt, self.trial)


def _file_name(task_id: str) -> str:
    # Task ids such as "HumanEval/0" hold characters that cannot be in a file name.
    return re.sub(r"[^A-Za-z0-9._-]", "_", task_id) + ".jsonl"


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, 2)
        return fh.read(1) == b"\n"


class MemoryStore:
    def __init__(self, root: Path, namespace: str) -> None:
        self.root = root
        self.namespace = namespace
        self.folder = root / namespace
        self._lock = threading.Lock()

    def _path(self, task_id: str) -> Path:
        return self.folder / _file_name(task_id)

    def lessons(self, task_id: str) -> list[Lesson]:
        path = self._path(task_id)
        if not path.exists():
            return []
        out = []
        known = {f.name for f in fields(Lesson)}
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.strip():
                try:
                    row = json.loads(line)
                    out.append(Lesson(**{k: v for k, v in row.items() if k in known}))
                except (json.JSONDecodeError, TypeError, AttributeError):
                    continue  # a torn line from a killed run
        return [lesson for lesson in out if lesson.task_id == task_id]

    def add(self, lesson: Lesson) -> None:
        """Idempotent by (run, strategy, attempt, trial): resuming never duplicates."""
        with self._lock:
            if any(existing.key == lesson.key for existing in self.lessons(lesson.task_id)):
                return
            if not lesson.time:
                lesson = Lesson(**{**asdict(lesson), "time": datetime.now(timezone.utc).isoformat(timespec="seconds")})
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self._path(lesson.task_id)
            # A killed run may have left a torn last line: end it, or this lesson would
            # be glued onto it and lost.
            torn = path.exists() and path.stat().st_size > 0 and not _ends_with_newline(path)
            with path.open("a", encoding="utf-8", errors="backslashreplace") as fh:
                fh.write(("\n" if torn else "") + json.dumps(asdict(lesson), ensure_ascii=False) + "\n")
                fh.flush()

    def recall(
        self, task_id: str, *, run_id: str, strategy: str, attempt: int, window: int, oracle_feedback: bool = False
    ) -> list[str]:
        """The last `window` lessons the Actor may see for this attempt.

        Within a run, attempts are independent samples, so an attempt sees its own
        lessons only; lessons left by earlier runs in a shared namespace are visible
        to every attempt. Lessons produced by oracle feedback are seen only by runs
        that use oracle feedback themselves.
        """
        if window <= 0:
            return []
        seen = [
            lesson.text
            for lesson in self.lessons(task_id)
            if (lesson.run_id != run_id or (lesson.strategy == strategy and lesson.attempt == attempt))
            and (oracle_feedback or not lesson.oracle_feedback)
        ]
        return seen[-window:]

    def earlier_runs(self, run_id: str) -> dict[str, int]:
        """Lessons in this namespace left by other runs: {"lessons", "runs", "oracle_feedback"}."""
        rows: list[dict] = []
        if self.folder.is_dir():
            for path in sorted(self.folder.glob("*.jsonl")):
                for line in path.read_text(encoding="utf-8").split("\n"):
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError:
                        continue  # a torn line from a killed run
                    if isinstance(row, dict) and row.get("run_id") != run_id and "text" in row:
                        rows.append(row)
        return {
            "lessons": len(rows),
            "runs": len({r.get("run_id") for r in rows}),
            "oracle_feedback": sum(1 for r in rows if r.get("oracle_feedback")),
        }
