"""The Task record and the TaskSource contract."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Protocol


@dataclass(frozen=True)
class Task:
    """One problem. The agent sees `prompt` only; `hidden_tests` are for scoring.

    `hidden_tests` are Python snippets; each runs after the implementation in the
    same namespace (e.g. an `assert`, or HumanEval's `def check(candidate): ...`
    followed by `check(<entry_point>)`). The task passes when all of them pass.
    `canonical_solution`, when known, is a complete program that passes them.
    """

    task_id: str
    prompt: str
    entry_point: str
    hidden_tests: tuple[str, ...]
    language: str = "python"
    canonical_solution: str | None = None
    tags: tuple[str, ...] = ()
    timeout_s: float | None = None  # per hidden test; None = the run's default
    meta: Mapping[str, Any] = field(default_factory=dict)

    def digest_fields(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "prompt": self.prompt,
            "entry_point": self.entry_point,
            "hidden_tests": list(self.hidden_tests),
        }


@dataclass(frozen=True)
class TaskSet:
    spec: str  # as the user gave it
    name: str  # e.g. "humaneval", "builtin", "jsonl:/path/x.jsonl"
    tasks: tuple[Task, ...]
    prompt_form: str = "as published"  # how prompts were built, e.g. MBPP with its example assert

    @property
    def digest(self) -> str:
        """sha256 over every task's prompt, entry point and hidden tests, in order."""
        h = hashlib.sha256()
        for task in self.tasks:
            h.update(json.dumps(task.digest_fields(), sort_keys=True).encode())
            h.update(b"\n")
        return "sha256:" + h.hexdigest()

    def select(self, *, task_ids: Iterable[str] | None = None, limit: int | None = None) -> "TaskSet":
        tasks = list(self.tasks)
        if task_ids is not None:
            wanted = list(task_ids)
            by_id = {t.task_id: t for t in tasks}
            missing = [t for t in wanted if t not in by_id]
            if missing:
                raise TaskError(f"task ids not in {self.name}: {', '.join(missing)}")
            tasks = [by_id[t] for t in wanted]
        if limit is not None:
            tasks = tasks[:limit]
        return TaskSet(self.spec, self.name, tuple(tasks), self.prompt_form)


class TaskError(ValueError):
    """A task spec or task file is wrong; the message names file, line and field."""


def require_hidden_tests(task: Task, where: str) -> Task:
    """A task without hidden tests would pass whatever the answer: no loader lets one in."""
    if not task.hidden_tests or not all(t.strip() for t in task.hidden_tests):
        raise TaskError(
            f"{where}: task {task.task_id!r} has no hidden tests (an empty test would pass any answer); "
            "fix the data or leave the task out"
        )
    return task


class TaskSource(Protocol):
    def load(self, arg: str) -> TaskSet:
        """`arg` is the spec after its prefix (e.g. the path for `jsonl:<path>`)."""
        ...
