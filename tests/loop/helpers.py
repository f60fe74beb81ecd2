"""Builders shared by the loop and runner tests."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from harness.config import RunConfig
from harness.models.base import Message
from harness.models.scripted import ScriptedModel
from harness.run.runner import RunResult, Runner, prepare_run_dir
from harness.tasks.base import Task, TaskSet
from sandbox import Sandbox

ADD = Task(
    task_id="demo/add",
    prompt='def add(a: int, b: int) -> int:\n    """Return the sum of a and b."""\n',
    entry_point="add",
    hidden_tests=("assert add(2, 3) == 5", "assert add(-7, 7) == 0", "assert add(10, 32) == 42"),
)
NEG = Task(
    task_id="demo/negate",
    prompt='def negate(x: int) -> int:\n    """Return -x."""\n',
    entry_point="negate",
    hidden_tests=("assert negate(3) == -3", "assert negate(-8) == 8"),
)

WRONG_ADD = "```python\ndef add(a, b):\n    return a - b\n```"
RIGHT_ADD = "```python\ndef add(a, b):\n    return a + b\n```"
ADD_TESTS = "```python\nassert add(1, 2) == 3\nassert add(0, 0) == 0\nthis is not a test\nassert add(1,\n```"
LESSON = "The function subtracts instead of adding. It should return a + b."


def kind(system: str | None) -> str:
    """Which agent step a call comes from, told by its system prompt."""
    s = system or ""
    if "writes unit tests" in s:
        return "testgen"
    if "why the implementation is wrong" in s or "transcript of an attempt" in s:
        return "reflection"
    if "with tools" in s:
        return "agent"
    if "You summarise the work" in s:
        return "summary"
    return "actor"


def responder(
    table: dict[str, Callable[[Sequence[Message]], str]]
) -> Callable[[str | None, Sequence[Message]], str | None]:
    def respond(system: str | None, messages: Sequence[Message]) -> str | None:
        return table[kind(system)](messages)

    return respond


def add_model() -> ScriptedModel:
    """Wrong code at trial 1, right code once the Actor has seen feedback."""
    return ScriptedModel(
        responder=responder(
            {
                "testgen": lambda m: ADD_TESTS,
                "reflection": lambda m: LESSON,
                "actor": lambda m: WRONG_ADD if len(m) == 1 else RIGHT_ADD,
            }
        )
    )


def run(
    tmp_path: Path,
    model: ScriptedModel,
    sandbox: Sandbox,
    tasks: Sequence[Task] = (ADD,),
    **config: object,
) -> RunResult:
    cfg = RunConfig(
        tasks="test", model=model.spec, out=tmp_path / "results", memory_dir=tmp_path / "reflections",
        cache=False, report=False, workers=4, **config,  # type: ignore[arg-type]
    ).validate()
    task_set = TaskSet("test", "test", tuple(tasks))
    run_dir, header = prepare_run_dir(cfg, task_set, "test")
    return Runner(cfg, run_dir, header, task_set, model, sandbox, show_progress=False).execute()


def resume(result: RunResult, model: ScriptedModel, sandbox: Sandbox, tasks: Sequence[Task] = (ADD,)) -> RunResult:
    """Runs the same run folder again, as `--resume` does."""
    cfg = RunConfig.from_dict(result.header["config"]).validate()
    task_set = TaskSet("test", "test", tuple(tasks))
    return Runner(cfg, result.run_dir, result.header, task_set, model, sandbox, show_progress=False).execute()
