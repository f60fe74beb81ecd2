"""One attempt/trial model: a task's attempts as timelines of trials, as the Actor lived them.

Used by the report's trial details and the view's task page. Records of schema 1 and 2
are both shown as the Actor lived them:

* the feedback a trial's Actor saw is the previous trial's `feedback`;
* the lessons it saw are its `memory_shown`, and those recalled from other tasks
  (reflexion+recall) its `recalled`, each with its BM25 score and source task;
* the lesson *written*: schema 2 stores in trial t+1 the lesson written at its start
  about trial t; schema 1 stored it in trial t itself (written after trial t failed).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from harness.rundata.agents import EPISODE, arguments_text, conversation
from harness.rundata.events import as_dicts
from harness.rundata.roles import sees_previous
from harness.rundata.records import TestRecord, TrialRecord


@dataclass(frozen=True)
class TestLine:
    test: str
    status: str  # passed | failed | error | timeout | not run
    detail: str
    wrong: bool = False  # the reference solution fails this self-test


@dataclass(frozen=True)
class DiffLine:
    kind: str  # add | del | ctx | hunk
    text: str


@dataclass(frozen=True)
class Step:
    """One trial of an attempt."""

    trial: int
    final: bool
    stop_reason: str | None
    hidden_passed: bool
    internal_passed: bool | None
    error: str | None
    code: str
    raw_output: str
    diff: list[DiffLine]  # against the previous trial's code (empty at trial 1)
    unchanged: bool
    internal: list[TestLine]
    hidden: list[TestLine]
    feedback_seen: str  # the feedback in this trial's prompt (the previous trial's)
    lessons_seen: list[str]
    lesson_written: str | None
    lesson_about: int | None  # the trial the written lesson is about
    lesson_label: str
    testgen: dict[str, Any] | None
    spend: dict[str, Any]
    finished_at: str
    schema: int
    oracle_feedback: bool
    temperature_used: float | None
    # lessons recalled from other tasks: [{lesson, source_task, source_run, score, rank, id}], best first
    recalled: list[dict[str, Any]] = field(default_factory=list)
    # every model call of the trial as recorded: role, system, messages sent, the reply
    calls: list[dict[str, Any]] = field(default_factory=list)
    # the trial's other events (tool calls, tree nodes, compactions, compiles, test runs,
    # plug-ins' notes), as plain data in the order they happened; rendered by type
    events: list[dict[str, Any]] = field(default_factory=list)
    # a tool-using agent's episode as the conversation it had (harness/rundata/agents.py
    # conversation: its turns, each call with its result); None for other trials
    conversation: dict[str, Any] | None = None

    @property
    def hidden_summary(self) -> str:
        ok = sum(1 for t in self.hidden if t.status == "passed")
        return f"{ok}/{len(self.hidden)} hidden tests passed" if self.hidden else ""

    @property
    def testgen_summary(self) -> str:
        """Whatever counts the loop recorded (kept, dropped_unparseable, ...), as they are."""
        if not self.testgen:
            return ""
        if self.testgen.get("from_public_examples"):
            return (f"internal tests: the task's public examples ({self.testgen.get('kept', 0)}); "
                    "the test writer was not called")
        counts = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(self.testgen.items()) if k != "raw_output")
        return f"test writer: {counts}" if counts else "test writer"


@dataclass
class Attempt:
    strategy: str
    attempt: int
    complete: bool
    passed: bool | None  # the final trial's hidden verdict; None when incomplete
    stop_reason: str | None
    trials: list[Step] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)  # errors.jsonl lines of this attempt

    @property
    def anchor(self) -> str:
        return f"{self.strategy}-{self.attempt}"

    @property
    def verdict(self) -> str:
        if self.complete:
            last = self.trials[-1].trial if self.trials else "?"
            return f"final trial {last}: hidden {'PASS' if self.passed else 'FAIL'}"
        if not self.trials:
            return "incomplete (no trial recorded; see errors.jsonl): not scored"
        return "incomplete (no final trial): not scored"


def _tests(results: Sequence[TestRecord], reference: dict[str, str] | None = None) -> list[TestLine]:
    return [TestLine(r.test, r.status, r.detail or "",
                     reference is not None and reference.get(r.test, "passed") != "passed") for r in results]


def _internal(rec: TrialRecord, checked: dict[str, str] | None) -> list[TestLine]:
    """Each internal test with its verdict; tests that did not run say so. A test is
    wrong when the reference solution fails it (the record's `internal_reference`, or
    the view's self-test check)."""
    reference = checked
    if rec.internal_reference is not None:
        reference = {r.test: r.status for r in rec.internal_reference}
    results: dict[str, TestLine] = {}
    for line in _tests(rec.internal_results, reference):
        results.setdefault(line.test, line)
    out = [results.get(t) or TestLine(t, "not run", "", bool(reference and reference.get(t, "passed") != "passed"))
           for t in rec.internal_tests]
    listed = set(rec.internal_tests)
    return out + [r for name, r in results.items() if name not in listed]


def _diff(before: str, after: str) -> list[DiffLine]:
    out = []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), "previous trial", "this trial",
                                     lineterm="", n=3):
        if line.startswith(("---", "+++")):
            continue
        kind = "hunk" if line.startswith("@@") else "add" if line.startswith("+") else \
            "del" if line.startswith("-") else "ctx"
        out.append(DiffLine(kind, line))
    return out


_SPEND = ("model_calls", "cached_calls", "input_tokens", "output_tokens", "cache_read_tokens",
          "cache_write_tokens", "cost_usd", "model_s", "sandbox_s", "wall_s")


# Events the timeline already shows through its own fields.
_SHOWN = ("model_call", "tests_written", "lesson", "memory", "recall")
# ...and those an agent's conversation shows (harness/rundata/agents.py).
_IN_CONVERSATION = ("tool_call", "compaction")


def _other_events(rec: TrialRecord, talk: dict[str, Any] | None) -> list[dict[str, Any]]:
    out = [e if e.get("type") != "tool_call" else {**e, "arguments_shown": arguments_text(e.get("arguments", ""))}
           for e in as_dicts(rec.events) if e.get("type") not in _SHOWN]
    if talk is None:
        return out
    return [e for e in out if e.get("type") not in _IN_CONVERSATION
            and not (e.get("type") == "note" and e.get("name") == EPISODE)]


def _step(rec: TrialRecord, prev: TrialRecord | None, checked: dict[str, str] | None) -> Step:
    schema = int(rec.schema or 1)
    talk = conversation(rec.events)
    before = prev.code if prev is not None else None
    lesson = rec.lesson or None
    written = rec.lessons[-1] if rec.lessons else None
    if lesson and schema >= 2:
        about = written.about_trial if written is not None else (rec.trial - 1 if rec.trial > 1 else None)
        label = f"Lesson written at the start of this trial, about trial {about}:"
    else:
        about = rec.trial if lesson else None
        label = "Lesson written after this trial:"
    return Step(
        trial=rec.trial, final=rec.final, stop_reason=rec.stop_reason, hidden_passed=bool(rec.hidden_passed),
        internal_passed=rec.internal_passed, error=rec.error, code=rec.code, raw_output=rec.raw_output,
        diff=_diff(before, rec.code) if before is not None else [],
        unchanged=before is not None and before.strip() == rec.code.strip(),
        internal=_internal(rec, checked), hidden=_tests(rec.hidden_results),
        feedback_seen=prev.feedback if prev is not None and sees_previous(rec.strategy) else "",
        lessons_seen=list(rec.memory_shown),
        lesson_written=lesson, lesson_about=about, lesson_label=label, testgen=rec.testgen,
        spend={k: getattr(rec, k) for k in _SPEND}, finished_at=rec.finished_at, schema=schema,
        oracle_feedback=rec.oracle_feedback or bool((rec.testgen or {}).get("oracle_feedback", False)),
        temperature_used=rec.temperature_used,
        recalled=[x for x in rec.recalled if isinstance(x, dict)],
        calls=[e for e in as_dicts(rec.events) if e.get("type") == "model_call"],
        events=_other_events(rec, talk), conversation=talk,
    )


def attempts(records: Iterable[TrialRecord], errors: Sequence[dict[str, Any]] = (), strategies: Sequence[str] = (),
             checks: dict[tuple[str, str, int], dict[str, str]] | None = None) -> dict[str, list[Attempt]]:
    """task id -> its attempts, strategies in run order, each a timeline of its trials
    (the last line of a repeated trial wins; lines past the final trial are dropped).
    An attempt that errors.jsonl names but that has no record is listed empty."""
    by_attempt: dict[tuple[str, str, int], dict[int, TrialRecord]] = {}
    for rec in records:
        by_attempt.setdefault((rec.task_id, rec.strategy, rec.attempt), {})[rec.trial] = rec
    errs: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for e in errors:
        try:
            key = (str(e["task_id"]), str(e["strategy"]), int(e["attempt"]))
        except (KeyError, TypeError, ValueError):
            continue
        errs.setdefault(key, []).append(e)
        by_attempt.setdefault(key, {})
    order = {s: i for i, s in enumerate(strategies)}
    out: dict[str, list[Attempt]] = {}
    for (task, strategy, attempt), trials in sorted(by_attempt.items(),
                                                   key=lambda kv: (kv[0][0], order.get(kv[0][1], 99), kv[0][1],
                                                                   kv[0][2])):
        recs = [trials[t] for t in sorted(trials)]
        final_at = next((i for i, r in enumerate(recs) if r.final), None)
        if final_at is not None:
            recs = recs[:final_at + 1]
        checked = (checks or {}).get((task, strategy, attempt))
        steps, prev = [], None
        for rec in recs:
            steps.append(_step(rec, prev, checked))
            prev = rec
        final = recs[final_at] if final_at is not None else None
        out.setdefault(task, []).append(Attempt(
            strategy, attempt, final is not None, bool(final.hidden_passed) if final is not None else None,
            final.stop_reason if final is not None else None, steps, errs.get((task, strategy, attempt), [])))
    return out
