"""The test writer: internal tests from the prompt alone, once per attempt: asserts for a
function task, input/output pairs for an io task."""
from __future__ import annotations

from dataclasses import dataclass

from harness.calls import CallSettings, Meter, call
from harness.extract import entry_point_takes_arguments, extract_io_tests, extract_tests
from harness.models.base import ChatModel, Message
from harness.prompting import Prompts, for_kind
from harness.tasks.base import IoTest, Task, Test


@dataclass(frozen=True)
class InternalTests:
    tests: list[Test]  # asserts (function tasks) or IoTests (io tasks)
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
        [Message("user", prompts.render(for_kind("testgen", task.kind), prompt=task.prompt, entry_point=task.entry_point, max_tests=max_tests))],
        system=prompts.render(for_kind("testgen_system", task.kind)),
        max_tokens=max_tokens,
        settings=settings,
        # No stop sequence, as for the Actor: a stop can cut an answer before its code.
    )
    if task.kind == "io":
        pairs = extract_io_tests(completion.text, max_tests)
        # An input without its output (or the reverse) counts as unparseable; an empty
        # expected output as a test that checks nothing (as `assert True` would).
        return InternalTests([IoTest(i, o) for i, o in pairs.kept], completion.text,
                             pairs.unpaired, pairs.empty_output, pairs.over_limit)
    # A class under test (LeetCode's Solution) is made without arguments: its method
    # calls carry them.
    takes_arguments = entry_point_takes_arguments(task.prompt, task.entry_point) and task.entry_point != "Solution"
    found = extract_tests(completion.text, task.entry_point, max_tests, takes_arguments=takes_arguments)
    return InternalTests(found.kept, completion.text, found.unparseable, found.no_call, found.over_limit)
