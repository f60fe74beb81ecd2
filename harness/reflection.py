"""Self-Reflection: turns a failed implementation and its feedback into a short lesson."""
from __future__ import annotations

from harness.calls import CallSettings, Meter, call
from harness.models.base import ChatModel, Message
from harness.prompting import Prompts, for_kind
from harness.tasks.base import Task

MAX_LESSON_CHARS = 800


def clean_lesson(text: str) -> str:
    """Keeps the prose: a lesson is words, not a code listing."""
    text = text.strip()
    prose = text.split("```", 1)[0].strip()
    lesson = " ".join((prose or text).split())
    return lesson[:MAX_LESSON_CHARS]


def reflect(
    model: ChatModel,
    prompts: Prompts,
    meter: Meter,
    task: Task,
    *,
    code: str,
    feedback: str,
    max_tokens: int,
    settings: CallSettings,
) -> str:
    completion = call(
        model,
        meter,
        [Message("user", prompts.render(for_kind("reflection", task.kind), prompt=task.prompt, code=code, feedback=feedback))],
        system=prompts.render(for_kind("reflection_system", task.kind)),
        max_tokens=max_tokens,
        settings=settings,
    )
    return clean_lesson(completion.text)
