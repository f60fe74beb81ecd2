"""The task behind a run's records (prompt, hidden tests) and the prompts rebuilt from it.

Records do not hold the task's prompt or hidden tests; the view loads the run's task
set by its spec (run.json) and checks the content digest, so what it shows is what
the run used. Sources that need a network (hf:, mbpp) are not loaded: the page says
how to see the task instead.
"""
from __future__ import annotations

import stat
import threading
from pathlib import Path
from typing import Any

from harness.models.base import Message
from harness.tasks.base import Task

OFFLINE_PREFIXES = ("builtin", "humaneval", "jsonl")


class TaskCache:
    """Task sets by (spec, digest), loaded once per server."""

    def __init__(self) -> None:
        self._sets: dict[tuple[str, str], dict[str, Task] | str] = {}
        self._lock = threading.Lock()

    def get(self, header: dict[str, Any], task_id: str) -> tuple[Task | None, str]:
        """(task, note); task is None when it cannot be shown, and the note says why."""
        info = header.get("tasks") if isinstance(header.get("tasks"), dict) else {}
        config = header.get("config") if isinstance(header.get("config"), dict) else {}
        spec = str(info.get("spec") or config.get("tasks") or "")
        digest = str(info.get("digest") or "")
        if not spec:
            return None, "run.json names no task set"
        prefix = spec.partition(":")[0]
        if prefix not in OFFLINE_PREFIXES and not spec.endswith(".jsonl"):
            return None, (f"the task set {spec!r} is not loaded by the view (it may need a network); "
                          f"see it with: python -m harness tasks show {spec} {task_id}")
        refused = _path_refused(spec, prefix, digest)
        if refused:
            return None, refused
        with self._lock:
            key = (spec, digest)
            if key not in self._sets:
                self._sets[key] = _load(spec, digest, header)
            found = self._sets[key]
        if isinstance(found, str):
            return None, found
        task = found.get(task_id)
        return (task, "") if task else (None, f"task {task_id!r} is not in {spec!r} as loaded now")


def _path_refused(spec: str, prefix: str, digest: str) -> str:
    """Why a task file run.json names is not read ("" when it is): it is read only as the
    task set whose digest the run recorded, and only when it is a regular file (a FIFO
    or a device named by a shared run folder would stall or flood the view)."""
    if prefix in ("builtin", "humaneval"):
        return ""
    if not digest:
        return f"the run records no digest of its task set {spec[:200]!r}, so the view does not read that file"
    path = Path(spec.partition(":")[2] if prefix == "jsonl" else spec).expanduser()
    try:
        regular = stat.S_ISREG(path.stat().st_mode)
    except OSError as exc:
        return f"the task set {spec[:200]!r} could not be read: {exc.strerror}"
    return "" if regular else f"the task set {spec[:200]!r} is not a regular file; the view reads only files"


def _load(spec: str, digest: str, header: dict[str, Any]) -> dict[str, Task] | str:
    from harness.tasks import TaskError, load_tasks

    try:
        task_set = load_tasks(spec)
    except (TaskError, OSError, ValueError) as exc:
        return f"the task set {spec!r} could not be loaded: {exc}"
    info = header.get("tasks") if isinstance(header.get("tasks"), dict) else {}
    ids = info.get("task_ids")
    if isinstance(ids, list) and ids:
        try:
            task_set = task_set.select(task_ids=[str(i) for i in ids])
        except Exception:  # noqa: BLE001 - a changed task set is reported through the digest below
            pass
    if digest and task_set.digest != digest:
        return (f"the task set {spec!r} changed since this run (digest {task_set.digest[:19]}… is not "
                f"the run's {digest[:19]}…): not shown, it would not be what the agent saw")
    return {t.task_id: t for t in task_set.tasks}


def recorded_calls(attempt: Any, trial: int) -> list[dict[str, Any]] | None:
    """Every model call of one trial as its record holds it (messages exactly as sent),
    or None when the record holds none (written before calls were recorded)."""
    this = next((t for t in attempt.trials if t.trial == trial), None)
    if this is None or not this.calls:
        return None
    return this.calls


def prompts_for(task: Task, attempt: Any, trial: int, header: dict[str, Any] | None = None
                ) -> tuple[list[dict[str, str]] | None, str]:
    """For a record that holds no model calls (schemas 1 and 2): the Actor's messages at
    one trial, rebuilt with the harness's own prompt templates (never a folder run.json
    names: a shared run folder is data, and a template is code) in jinja2's sandbox,
    from what the strategy's traits say it shows, and a note on how faithful they are."""
    from harness.core.actor import Previous, messages_for
    from harness.kinds.languages.kind import kind_for, template_values
    from harness.text.prompting import Prompts
    from harness.rundata.roles import sees_previous, writes_lessons

    trials = {t.trial: t for t in attempt.trials}
    this = trials.get(trial)
    if this is None:
        return None, "no such trial"
    recorded = (header or {}).get("prompts") if isinstance((header or {}).get("prompts"), dict) else {}
    prompts = Prompts(sandboxed=True)
    note = ("This record predates recorded prompts: rebuilt from the task, the previous trial's code and "
            "feedback, and the lessons shown, with the harness's own prompt templates")
    folder, digest = recorded.get("folder"), recorded.get("digest")
    if folder:
        note += (f"; the run used templates from {str(folder)[:300]}, which the view does not read (a run "
                 "folder's templates are never rendered), so the wording may differ from what the model saw")
    elif digest and prompts.digest() != digest:
        note += ("; the prompt templates changed since the run (digest differs), so the wording may "
                 "differ from what the model saw")
    elif digest:
        note += "; the prompt set's digest matches the run's"
    else:
        note += "; the run recorded no prompt digest, so the wording is this checkout's"
    prev = trials.get(trial - 1)
    previous = None
    if prev is not None and sees_previous(attempt.strategy):
        previous = Previous(prev.code or prev.raw_output, this.feedback_seen)
    lessons = this.lessons_seen if writes_lessons(attempt.strategy) else []
    recalled = [str(x.get("lesson") or "") for x in this.recalled]
    try:
        messages: list[Message] = messages_for(prompts, task, previous, lessons, recalled)
        system = prompts.render(kind_for(task).template("actor_system"), **template_values(task))
    except Exception as exc:  # noqa: BLE001 - templates of another version may want other variables
        return None, f"could not rebuild the prompt: {exc}"
    return [{"role": "system", "text": system}, *({"role": m.role, "text": m.content} for m in messages)], note
