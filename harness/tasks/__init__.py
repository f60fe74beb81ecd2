"""Task sets: HumanEval, MBPP, Hugging Face datasets, JSONL files, the builtin set,
LiveCodeBench, CodeContests and APPS.

`load_tasks(spec)` returns a `TaskSet`; the JSONL schema is in tasks/README.md.
"""
from harness.tasks.base import IoTest, Task, TaskError, TaskSet, TaskSource
from harness.tasks.registry import DEFAULT_TASKS, known_forms, load_tasks

__all__ = ["DEFAULT_TASKS", "known_forms", "IoTest", "Task", "TaskError", "TaskSet", "TaskSource", "load_tasks"]
