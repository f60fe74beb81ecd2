"""The typed events a strategy appends to a trial's record.

A trial record holds a fixed core (identity, code, verdicts, cost, tokens, timing, stop
reason: harness/rundata/records.py) and `events`, the strategy-owned part: what the
trial did, in order. Every model call is an event holding the exact messages sent, so
what the model saw is read from the record, never rebuilt. The report and the view
render each event type with one renderer, whatever strategy appended it; a plug-in's
own kind of event is a `Note` (a name and plain data).

Events are msgspec Structs, one tagged union on the field "type". A type added later
gets a new tag; fields added to a type get defaults, so older lines still decode.
"""
from __future__ import annotations

from typing import Any, Union

import msgspec


class _Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=True):
    pass


class ModelCall(_Event, tag="model_call"):
    """One model call: what was sent (system, messages, tools offered) and what came back."""

    role: str  # test_writer | actor | reflection | agent | compaction | value | ... (the strategy's word)
    system: str | None = None
    # Each message: {"role", "content"} plus, where present, "tool_calls" (assistant) or
    # "tool_call_id" (a tool result): the messages exactly as the backend was given them.
    messages: list[dict[str, Any]] = []
    tools: list[str] = []  # names of the tools offered
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    text: str = ""  # the reply's text
    tool_calls: list[dict[str, Any]] = []  # {"id", "name", "arguments"} (arguments as the model wrote them)
    model: str = ""  # the model id the backend reported
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False  # served by the response cache
    latency_s: float = 0.0
    stop_reason: str = ""
    turn: int | None = None  # an agent's turn number
    retries: list[dict[str, Any]] = []  # {"status", "waited_s"} per retry the backend made
    error: str | None = None  # the call failed after the backend's retries
    # Speculative decoding (the local engine): tokens drafted for this answer and how many
    # the model accepted; None where no drafter ran (or the answer came from the cache).
    draft_tokens: int | None = None
    draft_accepted: int | None = None


class TestsWritten(_Event, tag="tests_written"):
    """The attempt's own (internal) tests: who wrote them and what was kept."""

    source: str = "model"  # model | public_examples | oracle (the hidden tests, an ablation)
    tests: list[str] = []  # labels, as results name them
    io_tests: list[dict[str, str]] = []  # io tasks: the tests themselves, {"input", "output"}
    raw_output: str = ""
    kept: int = 0
    dropped: dict[str, int] = {}  # reason -> count (unparseable, no_call, over_limit, ...)


class TestRun(_Event, tag="test_run"):
    """A run of code on the agent's own tests (agent domain: never hidden tests)."""

    label: str = ""  # what was run, e.g. "internal tests", "node 3"
    passed: bool = False
    results: list[dict[str, Any]] = []  # {"test", "status", "detail"}
    seconds: float = 0.0
    node: int | None = None


class LessonWritten(_Event, tag="lesson"):
    """A Self-Reflection lesson, stored in long-term memory."""

    text: str
    about_trial: int  # the trial (or episode) whose failure it is about
    node: int | None = None


class MemoryShown(_Event, tag="memory"):
    """The lessons from long-term memory in this trial's prompt."""

    lessons: list[str] = []


class Recalled(_Event, tag="recall"):
    """Lessons recalled from other tasks for this trial's prompt, best first:
    {lesson, source_task, source_run, score, rank, id}."""

    items: list[dict[str, Any]] = []


class ToolCallRun(_Event, tag="tool_call"):
    """A tool call the model made and the result given back to it."""

    id: str = ""
    name: str = ""
    arguments: str = ""  # as the model wrote them
    status: str = "ok"  # ok | error | refused | timeout | killed
    result: str = ""  # the text given back
    seconds: float = 0.0
    turn: int | None = None
    exit_code: int | None = None


class Compaction(_Event, tag="compaction"):
    """The conversation was shortened to fit the model's context."""

    rule: str = ""
    tokens_before: int = 0
    tokens_after: int = 0
    dropped: int = 0
    summary: str | None = None


class Node(_Event, tag="node"):
    """A node of a search tree over implementations."""

    id: int
    parent: int | None = None
    depth: int = 0
    code: str = ""
    value: float = 0.0
    passed_internal: bool = False
    chosen: bool = False
    lesson: str | None = None
    visits: int = 0


class Compile(_Event, tag="compile"):
    """A program was compiled (languages that compile)."""

    language: str = ""
    status: str = "ok"  # ok | error | timeout | memory
    seconds: float = 0.0
    message: str = ""


class Note(_Event, tag="note"):
    """A plug-in's own event: a name and plain data, rendered as it is."""

    name: str
    data: dict[str, Any] = {}


Event = Union[ModelCall, TestsWritten, TestRun, LessonWritten, MemoryShown, Recalled, ToolCallRun, Compaction, Node,
              Compile, Note]
EVENT_TYPES: dict[str, type] = {cls.__struct_config__.tag: cls for cls in Event.__args__}  # type: ignore[attr-defined]


def of_type(events: list[Any], kind: type) -> list[Any]:
    """The events of one type, in order."""
    return [e for e in events if isinstance(e, kind)]


def first(events: list[Any], kind: type) -> Any | None:
    for e in events:
        if isinstance(e, kind):
            return e
    return None


def as_dicts(events: list[Any]) -> list[dict[str, Any]]:
    """Events as plain data, every field present (defaults included), "type" first:
    for templates, which may then read any field of the event's type."""
    return [{"type": e.__struct_config__.tag, **msgspec.to_builtins(msgspec.structs.asdict(e))} for e in events]
