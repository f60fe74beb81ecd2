"""The test writer: internal unit tests from the prompt alone, once per attempt."""
from __future__ import annotations

from dataclasses import dataclass

from harness.calls import CallSettings, Meter, call
from harness.extract import END_OF_CODE_BLOCK, extract_tests
from harness.models.base import ChatModel, Message
from harness.prompting import Prompts
from harness.tasks.base import Task


@dataclass(frozen=True)
class InternalTests:
    tests: list[str]
    raw_output: str
    unparseable: int
    over_limit: int

    def as_record(self) -> dict:
        return {
            "raw_output": self.raw_output,
            "kept": len(self.tests),
            "dropped_unparseable": self.unparseable,
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
        stop=END_OF_CODE_BLOCK,
    )
    found = extract_tests(completion.text, task.entry_point, max_tests)
    return InternalTests(found.kept, completion.text, found.unparseable, found.over_limit)
