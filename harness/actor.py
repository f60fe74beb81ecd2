"""The Actor: writes (and rewrites) the implementation."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from harness.calls import CallSettings, Meter, call
from harness.extract import END_OF_CODE_BLOCK, UnparseableOutput, assemble_program, extract_code
from harness.models.base import ChatModel, Message
from harness.prompting import Prompts
from harness.tasks.base import Task


@dataclass(frozen=True)
class Previous:
    """What the Actor sees of its last trial."""

    code: str
    feedback: str


@dataclass(frozen=True)
class Draft:
    raw_output: str
    code: str  # "" when unparseable
    program: str  # code with the prompt's imports, ready to run
    error: str | None  # why the answer holds no usable code


def messages_for(prompts: Prompts, task: Task, previous: Previous | None, lessons: Sequence[str]) -> list[Message]:
    # The first message (system + task) is the same at every trial: backends with prompt
    # caching reuse it.
    messages = [Message("user", prompts.render("actor_task", prompt=task.prompt, entry_point=task.entry_point), cache_prefix=True)]
    if previous is not None:
        messages.append(Message("assistant", f"```python\n{previous.code.rstrip()}\n```"))
        messages.append(
            Message(
                "user",
                prompts.render("actor_retry", feedback=previous.feedback, lessons=list(lessons), entry_point=task.entry_point),
            )
        )
    return messages


def write_code(
    model: ChatModel,
    prompts: Prompts,
    meter: Meter,
    task: Task,
    *,
    previous: Previous | None,
    lessons: Sequence[str],
    max_tokens: int,
    settings: CallSettings,
) -> Draft:
    """Raises ModelError when the model call fails; unusable answers come back as a Draft with error."""
    completion = call(
        model,
        meter,
        messages_for(prompts, task, previous, lessons),
        system=prompts.render("actor_system"),
        max_tokens=max_tokens,
        settings=settings,
        stop=END_OF_CODE_BLOCK,
    )
    try:
        code = extract_code(completion.text, task.entry_point)
    except UnparseableOutput as exc:
        return Draft(completion.text, "", "", f"unparseable answer: {exc}")
    return Draft(completion.text, code, assemble_program(task.prompt, code), None)
