"""The record types of a run folder, as msgspec Structs with one typed decoder each.

Written by the runner, read by everyone (report, view, export, memory). Every field
added later gets a default, so that older lines still decode; a line of a schema this
module cannot read is refused by `decode_trial` with the reason.

Schemas of trials.jsonl lines (`TrialRecord.schema`):

1. the first format: a trial's lesson sat on the trial it was about.
2. a trial's record holds the lesson written at its start about the previous trial
   (and that call's cost); model errors write no record (see errors.jsonl);
   oracle_feedback and temperature_used added.

   Fields added later with defaults: `recalled` (lessons recalled from other tasks),
   `task_kind` (function | io).
3. a fixed core plus `events`, the strategy-owned part (harness/rundata/events.py):
   every model call with the exact messages sent, the tests written, test runs,
   lessons, recalls, tool calls, tree nodes. The fields of schema 2 that belonged to
   one strategy or one task kind (`lesson`, `memory_shown`, `recalled`, `testgen`,
   `internal_io_tests`) are events now; lines of schemas 1 and 2 are read into
   records whose events are made from those fields, and keep their schema number.
   Fields added since with defaults: a test result's `seconds`; `compile_status` (how the
   record's program compiled: ok | compile_error | compile_timeout | compile_memory; None
   where nothing was compiled: Python, JavaScript, an answer without code, older lines).
"""
from __future__ import annotations

import json
from typing import Any

import msgspec

from harness.rundata.events import Event, LessonWritten, MemoryShown, ModelCall, Recalled, TestsWritten, first, of_type

SCHEMA_VERSION = 3
READABLE_SCHEMAS = (1, 2, 3)
ERRORS_SCHEMA = 1

TrialKey = tuple[str, str, int, int]  # (task_id, strategy, attempt, trial)
AttemptKey = tuple[str, str, int]  # (task_id, strategy, attempt)


class RecordError(ValueError):
    """A line of a run folder that is not a record this harness can read."""


class TestRecord(msgspec.Struct, frozen=True):
    test: str
    status: str  # passed | failed | error | timeout
    detail: str = ""
    # Graded with io_compare "source" (a source's own, possibly lenient, rule): the
    # verdict of the strict rule (None: `status` is the strict verdict).
    strict_status: str | None = None
    seconds: float | None = None  # the test's own time in the sandbox; None: not recorded


class TrialRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One finished trial of an attempt: its fixed core, and the events its strategy appended.

    attempt and trial count from 1. `final` marks the attempt's submitted
    implementation (its last trial); pass@k and pass@1 use final trials only.
    """

    run_id: str
    task_id: str
    strategy: str
    attempt: int
    trial: int
    final: bool
    # internal_pass | budget | no_internal_tests | single_sample | submitted | max_turns | ...
    # (a strategy may add its own); None if not final
    stop_reason: str | None
    code: str  # the implementation submitted at this trial (extracted from the answer)
    raw_output: str  # the answer the code was taken from, as the model wrote it
    internal_tests: list[str] = []  # labels of the attempt's own tests (the events hold the tests)
    internal_results: list[TestRecord] = []
    internal_passed: bool | None = None  # None when the strategy writes no tests
    hidden_results: list[TestRecord] = []
    hidden_passed: bool = False  # measurement only: never reaches a prompt or a decision
    feedback: str = ""  # this trial's internal-test feedback, as a prompt would show it
    error: str | None = None  # why the answer held no usable code
    oracle_feedback: bool = False  # the ablation: internal tests were the hidden tests
    temperature_used: float | None = None  # the code's sampling temperature; None = the model's own default
    model_calls: int = 0  # calls the strategy made (cache hits included: compute asked for)
    cached_calls: int = 0  # of which served from the response cache (no model ran)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None  # money spent on this trial's model calls
    cached_cost_usd: float | None = None  # cost of the answers the response cache served
    model_s: float = 0.0
    sandbox_s: float = 0.0
    wall_s: float = 0.0
    finished_at: str = ""
    # the internal tests run against the task's reference solution, when checked
    internal_reference: list[TestRecord] | None = None
    task_kind: str = "function"  # function | io
    language: str = "python"
    # How the record's program compiled (ok | compile_error | compile_timeout | compile_memory),
    # as graded on the hidden tests; None: nothing compiled (Python, JavaScript, no code)
    compile_status: str | None = None
    events: list[Event] = []  # the strategy-owned part, in the order things happened
    schema: int = SCHEMA_VERSION

    @property
    def key(self) -> TrialKey:
        return (self.task_id, self.strategy, self.attempt, self.trial)

    # --- what the events say, for readers that want one thing -------------------------
    @property
    def lessons(self) -> list[LessonWritten]:
        return of_type(self.events, LessonWritten)

    @property
    def lesson(self) -> str | None:
        """The lesson this trial wrote (the last, if several), or None."""
        found = self.lessons
        return found[-1].text if found else None

    @property
    def memory_shown(self) -> list[str]:
        shown = first(self.events, MemoryShown)
        return list(shown.lessons) if shown else []

    @property
    def recalled(self) -> list[dict[str, Any]]:
        found = first(self.events, Recalled)
        return list(found.items) if found else []

    @property
    def tests_written(self) -> TestsWritten | None:
        return first(self.events, TestsWritten)

    @property
    def testgen(self) -> dict[str, Any] | None:
        """The test writer's summary as the report shows it (None: no tests written here)."""
        written = self.tests_written
        if written is None:
            return None
        if written.source == "oracle":
            return {"oracle_feedback": True, "kept": written.kept}
        if written.source == "public_examples":
            return {"from_public_examples": True, "kept": written.kept}
        return {"raw_output": written.raw_output, "kept": written.kept,
                **{f"dropped_{k}": v for k, v in written.dropped.items()}}

    @property
    def internal_io_tests(self) -> list[dict[str, str]]:
        written = self.tests_written
        return list(written.io_tests) if written else []

    @property
    def model_call_events(self) -> list[ModelCall]:
        return of_type(self.events, ModelCall)

    def to_json(self) -> str:
        return encode_line(self)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> "TrialRecord":
        """A record from a decoded line (unknown keys ignored); RecordError if unreadable."""
        return decode_trial(json.dumps(row, ensure_ascii=False))


class _LegacyFields(msgspec.Struct, kw_only=True):
    """The fields of schemas 1 and 2 that are events in schema 3."""

    lesson: str | None = None
    memory_shown: list[str] = []
    recalled: list[dict[str, Any]] = []
    testgen: dict[str, Any] | None = None
    internal_io_tests: list[dict[str, str]] = []


def _legacy_events(rec: TrialRecord, old: _LegacyFields) -> list[Any]:
    events: list[Any] = []
    if old.testgen is not None:
        tg = old.testgen
        source = "oracle" if tg.get("oracle_feedback") else "public_examples" if tg.get("from_public_examples") else "model"
        dropped = {k[len("dropped_"):]: int(v) for k, v in tg.items() if k.startswith("dropped_") and isinstance(v, int)}
        events.append(TestsWritten(source=source, tests=list(rec.internal_tests), io_tests=list(old.internal_io_tests),
                                   raw_output=str(tg.get("raw_output") or ""), kept=int(tg.get("kept") or 0),
                                   dropped=dropped))
    elif old.internal_io_tests:
        events.append(TestsWritten(tests=list(rec.internal_tests), io_tests=list(old.internal_io_tests),
                                   kept=len(old.internal_io_tests)))
    if old.recalled:
        events.append(Recalled(items=[x for x in old.recalled if isinstance(x, dict)]))
    if old.lesson:
        # schema 1 kept a lesson on the trial it was about; schema 2 on the next trial
        events.append(LessonWritten(text=old.lesson, about_trial=rec.trial if rec.schema < 2 else rec.trial - 1))
    if old.memory_shown:
        events.append(MemoryShown(lessons=list(old.memory_shown)))
    return events


class ErrorRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One line of errors.jsonl: an attempt the harness could not finish (a model error
    that outlived the retries, an exception in the unit). `spent`: what the unfinished
    trial had spent (the usage fields of a trial record), when known."""

    kind: str = "error"  # model_error | sandbox_error | unit_exception | budget (cut by the run's budget: no error)
    task_id: str
    strategy: str
    attempt: int
    trial: int | None = None
    role: str | None = None
    error: str = ""
    at: str = ""
    spent: dict[str, Any] | None = None
    schema: int = ERRORS_SCHEMA

    @property
    def attempt_key(self) -> AttemptKey:
        return (self.task_id, self.strategy, self.attempt)


class TaskSetInfo(msgspec.Struct, frozen=True, kw_only=True):
    spec: str | None = None
    name: str | None = None
    digest: str | None = None
    count: int | None = None
    task_ids: list[str] | None = None


class RunHeader(msgspec.Struct, frozen=True, kw_only=True):
    """What readers take from run.json. The runner writes run.json as a whole dict
    (config, versions, git, model identity, host, ...); this typed view holds the
    fields the run data needs and ignores the rest, which stays in the file."""

    schema: int | None = None
    run_id: str | None = None
    created_at: str = ""
    model: str | None = None
    config: dict[str, Any] = {}
    tasks: TaskSetInfo = TaskSetInfo()
    resumes: list[dict[str, Any]] = []
    resumed: bool = False

    @property
    def strategies(self) -> list[str]:
        return [str(s) for s in self.config.get("strategies") or []]

    @property
    def samples(self) -> int:
        return int(self.config.get("samples") or 1)

    @property
    def oracle_feedback(self) -> bool:
        return bool(self.config.get("oracle_feedback", False))


_ENCODER = msgspec.json.Encoder(order="sorted")
_TRIAL = msgspec.json.Decoder(TrialRecord)
_LEGACY = msgspec.json.Decoder(_LegacyFields)
_ERROR = msgspec.json.Decoder(ErrorRecord)


def encode_line(record: msgspec.Struct) -> str:
    """One record as a JSON line (without its newline), keys sorted.

    Text that is not valid UTF-8 (a lone surrogate from a task file or an exception
    message) stays in the returned str; the folder's writers write it as its \\udXXX
    escape, which inside a JSON string reads back as the same character."""
    try:
        return _ENCODER.encode(record).decode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(msgspec.to_builtins(record), ensure_ascii=False, sort_keys=True)


def _check_schema(rec: TrialRecord, raw: bytes | str | None = None, row: dict[str, Any] | None = None) -> TrialRecord:
    if rec.schema not in READABLE_SCHEMAS:
        raise RecordError(f"unsupported trial record schema {rec.schema!r}")
    if rec.schema < 3 and not rec.events:
        try:
            old = _LEGACY.decode(raw) if row is None else msgspec.convert(row, _LegacyFields, strict=False)
        except (msgspec.ValidationError, msgspec.DecodeError, TypeError):
            old = _LegacyFields()
        events = _legacy_events(rec, old)
        if events:
            rec = msgspec.structs.replace(rec, events=events)
    return rec


def decode_trial(raw: bytes | str) -> TrialRecord:
    """A trials.jsonl line as a TrialRecord; RecordError (with the reason) otherwise.

    The typed decoder reads every line a harness wrote; a line it refuses (a lone
    surrogate's escape, a null count, an older or looser type) is read by the json
    module and converted leniently before it is refused."""
    try:
        return _check_schema(_TRIAL.decode(raw), raw)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        first = exc
    try:
        row = json.loads(raw)
    except ValueError as exc:
        raise RecordError(f"not JSON ({exc})") from None
    if not isinstance(row, dict):
        raise RecordError("not a JSON object")
    if row.get("schema") not in READABLE_SCHEMAS:
        raise RecordError(f"unsupported trial record schema {row.get('schema')!r}")
    row = {k: v for k, v in row.items() if v is not None or k in _NULLABLE}
    try:
        return _check_schema(msgspec.convert(row, TrialRecord, strict=False), row=row)
    except (msgspec.ValidationError, TypeError) as exc:
        raise RecordError(str(exc if isinstance(first, msgspec.DecodeError) else first)) from None


_NULLABLE = frozenset(("stop_reason", "internal_passed", "error", "temperature_used",
                       "cost_usd", "cached_cost_usd", "internal_reference", "compile_status"))


def decode_error(raw: bytes | str) -> ErrorRecord:
    """An errors.jsonl line; RecordError when it lacks its attempt's key."""
    try:
        return _ERROR.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        try:
            return msgspec.convert(msgspec.json.decode(raw), ErrorRecord, strict=False)
        except (msgspec.ValidationError, msgspec.DecodeError, TypeError):
            raise RecordError(str(exc)) from None


def header_of(data: dict[str, Any]) -> RunHeader:
    """The typed view of a run.json dict (fields of other types are left at their defaults)."""
    try:
        return msgspec.convert(data, RunHeader, strict=False)
    except msgspec.ValidationError:
        keep = {k: v for k, v in data.items() if k in ("schema", "run_id", "created_at", "model")
                and isinstance(v, (str, int))}
        for key, kind in (("config", dict), ("resumes", list)):
            if isinstance(data.get(key), kind):
                keep[key] = data[key]
        try:
            keep["tasks"] = msgspec.convert(data.get("tasks") or {}, TaskSetInfo, strict=False)
        except (msgspec.ValidationError, TypeError):
            pass
        return msgspec.convert(keep, RunHeader, strict=False)
