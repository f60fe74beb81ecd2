"""Self-Reflection: turns a failed implementation and its feedback into a short lesson."""
from __future__ import annotations

from harness.core.calls import CallSettings, Meter, call
from harness.models.base import ChatModel, Message
from harness.kinds.languages.kind import kind_for, template_values
from harness.text.prompting import Prompts
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
        [Message("user", prompts.render(kind_for(task).template("reflection"), prompt=task.prompt, code=code, feedback=feedback,
                                        **template_values(task)))],
        system=prompts.render(kind_for(task).template("reflection_system"), **template_values(task)),
        max_tokens=max_tokens,
        settings=settings, role="reflection",
    )
    return clean_lesson(completion.text)
