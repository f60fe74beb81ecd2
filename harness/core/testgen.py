"""The test writer: internal tests from the prompt alone, once per attempt, in the form
the task's kind takes (asserts for a function task, input/output pairs for an io task)."""
from __future__ import annotations

from harness.core.calls import CallSettings, Meter, call
from harness.kinds import WrittenTests
from harness.kinds.languages.kind import kind_for, template_values
from harness.models.base import ChatModel, Message
from harness.text.prompting import Prompts
from harness.tasks.base import Task


def write_tests(
    model: ChatModel,
    prompts: Prompts,
    meter: Meter,
    task: Task,
    *,
    max_tests: int,
    max_tokens: int,
    settings: CallSettings,
) -> WrittenTests:
    kind = kind_for(task)
    completion = call(
        model,
        meter,
        [Message("user", prompts.render(kind.template("testgen"), prompt=task.prompt, entry_point=task.entry_point,
                                        max_tests=max_tests, **template_values(task)))],
        system=prompts.render(kind.template("testgen_system"), **template_values(task)),
        max_tokens=max_tokens,
        settings=settings, role="test_writer",
        # No stop sequence, as for the Actor: a stop can cut an answer before its code.
    )
    return kind.parse_tests(completion.text, task, max_tests)
