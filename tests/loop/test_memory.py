"""Long-term memory: what an attempt may recall, shared namespaces, resume, torn lines."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.core.memory import Lesson, MemoryStore

TASK = "HumanEval/7"


def lesson(run_id: str, strategy: str, attempt: int, trial: int, text: str, task_id: str = TASK) -> Lesson:
    return Lesson(run_id=run_id, task_id=task_id, strategy=strategy, attempt=attempt, trial=trial, text=text)


def recall(store: MemoryStore, run_id: str = "run-a", strategy: str = "reflexion", attempt: int = 1,
           window: int = 10) -> list[str]:
    return store.recall(TASK, run_id=run_id, strategy=strategy, attempt=attempt, window=window)


def test_an_attempt_recalls_only_its_own_lessons_within_a_run(tmp_path: Path):
    store = MemoryStore(tmp_path, "run-a")
    store.add(lesson("run-a", "reflexion", 1, 1, "mine 1"))
    store.add(lesson("run-a", "reflexion", 2, 1, "another attempt's"))
    store.add(lesson("run-a", "feedback", 1, 1, "another strategy's"))
    store.add(lesson("run-a", "reflexion", 1, 2, "mine 2"))
    store.add(lesson("run-a", "reflexion", 1, 3, "other task", task_id="HumanEval/8"))
    assert recall(store) == ["mine 1", "mine 2"]
    assert recall(store, attempt=2) == ["another attempt's"]
    assert recall(store, strategy="feedback") == ["another strategy's"]


def test_a_shared_namespace_shows_earlier_runs_lessons_to_every_attempt(tmp_path: Path):
    earlier = MemoryStore(tmp_path, "shared")
    earlier.add(lesson("run-a", "reflexion", 1, 1, "from run a"))
    earlier.add(lesson("run-a", "reflexion", 3, 1, "from run a, attempt 3"))
    later = MemoryStore(tmp_path, "shared")  # a later run, same namespace
    later.add(lesson("run-b", "reflexion", 2, 1, "run b attempt 2"))
    assert recall(later, run_id="run-b", attempt=1) == ["from run a", "from run a, attempt 3"]
    assert recall(later, run_id="run-b", attempt=2) == ["from run a", "from run a, attempt 3", "run b attempt 2"]
    # A run under its own namespace sees nothing of the shared one.
    assert recall(MemoryStore(tmp_path, "run-c"), run_id="run-c") == []


@pytest.mark.parametrize("window, expected", [(0, []), (1, ["t3"]), (2, ["t2", "t3"]), (5, ["t1", "t2", "t3"])])
def test_the_window_keeps_the_latest_lessons(tmp_path: Path, window: int, expected: list[str]):
    store = MemoryStore(tmp_path, "run-a")
    for trial in (1, 2, 3):
        store.add(lesson("run-a", "reflexion", 1, trial, f"t{trial}"))
    assert recall(store, window=window) == expected


def test_adding_the_same_lesson_again_on_resume_writes_it_once(tmp_path: Path):
    store = MemoryStore(tmp_path, "run-a")
    store.add(lesson("run-a", "reflexion", 1, 1, "first wording"))
    resumed = MemoryStore(tmp_path, "run-a")  # a resumed run opens the store afresh
    resumed.add(lesson("run-a", "reflexion", 1, 1, "written again after the restart"))
    assert recall(resumed) == ["first wording"]
    path = next((tmp_path / "run-a").glob("*.jsonl"))
    assert len(path.read_text().splitlines()) == 1


def test_a_torn_line_is_skipped_and_the_next_lesson_is_kept(tmp_path: Path):
    store = MemoryStore(tmp_path, "run-a")
    store.add(lesson("run-a", "reflexion", 1, 1, "before the kill"))
    path = next((tmp_path / "run-a").glob("*.jsonl"))
    with path.open("a") as fh:
        fh.write('{"run_id": "run-a", "task_id": "Huma')  # killed mid-write
    assert recall(store) == ["before the kill"]
    store.add(lesson("run-a", "reflexion", 1, 2, "after the resume"))
    assert recall(store) == ["before the kill", "after the resume"]
    rows = path.read_text().splitlines()
    assert json.loads(rows[-1])["text"] == "after the resume"


def test_task_ids_that_are_not_file_names_do_not_collide(tmp_path: Path):
    store = MemoryStore(tmp_path, "run-a")
    store.add(lesson("run-a", "reflexion", 1, 1, "slash", task_id="a/b"))
    store.add(lesson("run-a", "reflexion", 1, 1, "underscore", task_id="a_b"))
    assert [x.text for x in store.lessons("a/b")] == ["slash"]
    assert [x.text for x in store.lessons("a_b")] == ["underscore"]
