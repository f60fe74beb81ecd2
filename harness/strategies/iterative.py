"""The trial loop that reflexion, feedback, resample and reflexion+recall share:

    tests once -> [what the Actor sees -> Actor -> Evaluator -> stop?] x trials

A subclass says what the Actor sees at each trial (`prepare`: the previous trial's
code and feedback, lessons, recalled lessons) and with which sampling settings. Each
call is charged to the trial it serves: a lesson about trial t is written at the start
of trial t+1 and counts there. A trial's record is yielded as soon as its
implementation is evaluated and graded. Not a strategy itself (it declares no traits).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator, Sequence

from harness.core.calls import CallSettings
from harness.core import Previous, TrialScope, evaluate, grade_hidden, store_lessons, tests_of, verdicts, write_code, \
    write_tests
from harness.strategies.base import Strategy

if TYPE_CHECKING:
    from harness.core import AttemptContext
    from harness.rundata import TrialRecord
    from harness.tasks.base import Task


@dataclass
class Seen:
    """What the Actor is shown at one trial."""

    previous: Previous | None = None
    lessons: list[str] = field(default_factory=list)
    recalled: list[str] = field(default_factory=list)
    settings: CallSettings | None = None  # None: the attempt's first-call settings


class IterativeStrategy(Strategy):
    """Write tests once, then up to `trials` implementations until the tests pass."""

    def prepare(self, scope: TrialScope, previous: Previous | None) -> Seen:
        """What the Actor sees at this trial; the default: nothing of earlier trials."""
        return Seen()

    def run_attempt(self, ctx: "AttemptContext", task: "Task", attempt: int,
                    done: Sequence["TrialRecord"]) -> Iterator["TrialRecord"]:
        s = ctx.settings
        previous = Previous(done[-1].code or done[-1].raw_output, done[-1].feedback) if done else None
        tests = tests_of(task, done) if done else []
        for trial in range((done[-1].trial + 1) if done else 1, s.trials + 1):
            scope = ctx.trial(task, self.traits.name, attempt, trial)
            if trial == 1:
                tests = write_tests(scope, attempt)
            seen = self.prepare(scope, previous)
            draft = write_code(scope, previous=seen.previous, lessons=seen.lessons, recalled=seen.recalled,
                               settings=seen.settings or s.first_call(attempt))
            internal, feedback = evaluate(scope, draft, tests)
            hidden = grade_hidden(scope, draft)
            found = verdicts(internal, hidden, tests, task)
            if not tests:
                stop: str | None = "no_internal_tests"
            elif found["internal_passed"]:
                stop = "internal_pass"
            elif trial == s.trials:
                stop = "budget"
            else:
                stop = None
            record = scope.record(final=stop is not None, stop_reason=stop, code=draft.code,
                                  raw_output=draft.raw_output, feedback=feedback, error=draft.error,
                                  temperature_used=draft.temperature_used, **found)
            yield record  # the caller has stored it when we resume here
            store_lessons(ctx, record)  # after its record: a resumed run puts them back from the record
            if record.final:
                return
            previous = Previous(draft.code or draft.raw_output, feedback)
