"""The test writer: internal unit tests from the prompt alone, once per attempt."""
from __future__ import annotations

from dataclasses import dataclass

from harness.calls import CallSettings, Meter, call
from harness.extract import entry_point_takes_arguments, extract_tests
from harness.models.base import ChatModel, Message
from harness.prompting import Prompts
from harness.tasks.base import Task


@dataclass(frozen=True)
class InternalTests:
    tests: list[str]
    raw_output: str
    unparseable: int
    no_call: int
    over_limit: int

    def as_record(self) -> dict:
        return {
            "raw_output": self.raw_output,
            "kept": len(self.tests),
            "dropped_unparseable": self.unparseable,
            "dropped_no_call": self.no_call,  # e.g. `assert callable(f)`, `assert True`
            "dropped_over_limit": self.over_limit,
        }


def write_tests(
    model: ChatModel,
    prompts: Prompts,
    meter: Meter,
    task: Task,
    *,
    max_tests: int,
    max_tokens: int,
    settings: CallSettings,
) -> InternalTests:
    completion = call(
        model,
        meter,
        [Message("user", prompts.render("testgen", prompt=task.prompt, entry_point=task.entry_point, max_tests=max_tests))],
        system=prompts.render("testgen_system"),
        max_tokens=max_tokens,
        settings=settings,
        # No stop sequence, as for the Actor: a stop can cut an answer before its code.
    )
    takes_arguments = entry_point_takes_arguments(task.prompt, task.entry_point)
    found = extract_tests(completion.text, task.entry_point, max_tests, takes_arguments=takes_arguments)
    return InternalTests(found.kept, completion.text, found.unparseable, found.no_call, found.over_limit)
