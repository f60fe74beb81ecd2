"""Helpers for the Ray tests: a deterministic agent and readers of run folders."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from tests.doubles.ray_cluster import start_local_cluster as start_cluster  # noqa: F401
from tests.doubles.stub_server import StubRequest
from harness.tasks import load_tasks


ENTRY = re.compile(r"function `(\w+)`")
LESSON = "The implementation returns None for {name}; it should compute the documented value."


class Agent:
    """A deterministic agent for the builtin tasks, as a stub-server reply function.

    Tests: the task's first two hidden tests. Actor: a wrong body at first try for
    every other task, the canonical solution once it has seen feedback. Lesson: fixed
    text naming the function. The same prompt always gets the same answer.
    """

    def __init__(self) -> None:
        tasks = load_tasks("builtin").tasks
        self.solutions = {t.entry_point: t.canonical_solution for t in tasks}
        self.tests = {t.entry_point: t.hidden_tests[:2] for t in tasks}
        self.first_right = {t.entry_point for i, t in enumerate(tasks) if i % 2 == 0}

    def __call__(self, request: StubRequest) -> str:
        text = request.prompt_text
        found = ENTRY.search(text)
        name = found.group(1) if found else "f"
        if "writes unit tests" in text:
            return "```python\n" + "\n".join(self.tests.get(name, ())) + "\n```"
        if "why the implementation is wrong" in text:
            return LESSON.format(name=name)
        retry = "Your implementation was" in text
        if retry or name in self.first_right:
            return f"```python\n{self.solutions[name]}\n```"
        return f"```python\ndef {name}(*args, **kwargs):\n    return None\n```"


def read_trials(run_dir: Path) -> list[dict]:
    """Each line as written, plus what its events say of lessons ("lesson", "memory_shown")."""
    from harness.rundata.records import decode_trial

    path = run_dir / "trials.jsonl"
    rows = []
    for line in path.read_text().splitlines():
        if line.strip():
            record = decode_trial(line)
            rows.append({**json.loads(line), "lesson": record.lesson, "memory_shown": record.memory_shown})
    return rows


def trial_keys(records: list[dict]) -> Counter:
    return Counter((r["task_id"], r["strategy"], r["attempt"], r["trial"]) for r in records)


OUTCOME_FIELDS = (
    "final", "stop_reason", "code", "internal_tests", "internal_passed", "hidden_passed",
    "feedback", "lesson", "memory_shown", "model_calls", "error",
)


def outcomes(records: list[dict]) -> dict[tuple, dict]:
    """What a trial found, without run id, times or timings."""
    return {
        (r["task_id"], r["strategy"], r["attempt"], r["trial"]): {f: r.get(f) for f in OUTCOME_FIELDS}
        for r in records
    }


def stored_lessons(memory_dir: Path) -> Counter:
    found: Counter = Counter()
    for path in memory_dir.rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            if line.strip():
                lesson = json.loads(line)
                found[(lesson["task_id"], lesson["strategy"], lesson["attempt"], lesson["trial"], lesson["text"])] += 1
    return found


def only_run(out: Path) -> Path:
    (run_dir,) = list(out.iterdir())
    return run_dir
