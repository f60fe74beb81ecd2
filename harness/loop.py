"""The trial loop for one attempt of one task under one strategy: pure orchestration.

reflexion: tests once -> [Self-Reflection on the last trial -> Actor -> Evaluator -> stop?] x trials
reflexion+recall: reflexion, with up to K lessons from other tasks recalled before each
           Actor call from the run's frozen pool (harness/recall.py), in their own section
feedback:  the same without Self-Reflection (the Actor sees feedback, no lessons)
resample:  tests once -> [a fresh Actor sample -> Evaluator -> stop?] x trials: no
           feedback, no lessons (the compute-matched rival of repair)
baseline:  one Actor call, no tests, no feedback, no memory

Each call is charged to the trial it serves: the lesson about trial t is written at
the start of trial t+1 and counts there. A trial's record is yielded as soon as its
implementation is evaluated and graded.

Hidden tests are run on every implementation for measurement only: their results go
into the record and nowhere else (not into a prompt, not into a stop decision), except
under the oracle-feedback ablation, which uses them as the internal tests, openly.

A model error that outlived the backend's retries raises AttemptIncomplete: the trial
it broke writes no record, the trials before it stay, and `--resume` continues there.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable, Iterator, Sequence, TypeVar

from harness.actor import Draft, Previous, write_code
from harness.calls import CallSettings, Meter
from harness.evaluator import AGENT, HIDDEN, Evaluation, Evaluator
from harness.memory import Lesson, MemoryStore
from harness.models.base import ChatModel, ModelError
from harness.prompting import Prompts
from harness.reflection import reflect
from harness.rundata import TrialRecord
from harness.tasks.base import IoTest, Task, Test
from harness.testgen import write_tests

if TYPE_CHECKING:
    from harness.config import RunConfig
    from harness.recall import Recall

ITERATING = ("reflexion", "reflexion+recall", "feedback", "resample")
REFLECTING = ("reflexion", "reflexion+recall")  # strategies that write and show lessons
T = TypeVar("T")


@dataclass(frozen=True)
class LoopSettings:
    """The part of RunConfig the loop reads (defaults live in RunConfig only)."""

    trials: int
    samples: int
    max_internal_tests: int
    memory_window: int
    max_tokens: int
    max_tokens_tests: int
    max_tokens_lesson: int
    test_timeout_s: float
    temperature: float
    resample_temperature: float
    seed: int
    oracle_feedback: bool
    model: str = ""  # the model spec, written into each lesson
    tasks: str = ""  # the task-set spec, written into each lesson (recall resolves its task by it)

    @classmethod
    def from_config(cls, config: "RunConfig") -> "LoopSettings":
        return cls(**{f.name: getattr(config, f.name) for f in fields(cls)})

    def first_call(self, attempt: int) -> CallSettings:
        """Every strategy's first calls: the run's temperature, one seed per attempt."""
        return CallSettings(temperature=self.temperature, seed=self.seed + attempt - 1)

    def resample_call(self, attempt: int, trial: int) -> CallSettings:
        """resample's Actor from trial 2 on: an independent sample needs its own seed and
        a temperature above 0; at a run temperature of 0, `resample_temperature`."""
        if trial == 1:
            return self.first_call(attempt)
        temperature = self.temperature if self.temperature > 0 else self.resample_temperature
        # Distinct for every (attempt, trial): attempt a's trial 1 uses seed + a - 1.
        return CallSettings(temperature=temperature, seed=self.seed + attempt - 1 + self.samples * (trial - 1))


@dataclass
class LoopContext:
    run_id: str
    model: ChatModel
    prompts: Prompts
    evaluator: Evaluator
    memory: MemoryStore
    settings: LoopSettings
    stop: threading.Event = field(default_factory=threading.Event)
    recall: "Recall | None" = None  # the run's frozen pool of lessons from other tasks (reflexion+recall)


class Stopped(Exception):
    """The run is being interrupted; the unfinished trial is not recorded."""


class AttemptIncomplete(Exception):
    """A model call failed after the backend's retries; the attempt stops unscored."""

    def __init__(self, role: str, trial: int, error: str, spent: dict | None = None) -> None:
        super().__init__(f"{role} at trial {trial}: {error}")
        self.role = role  # test_writer | actor | reflection
        self.trial = trial
        self.error = error
        # What the unfinished trial had spent, the failed call included (the usage
        # fields of a trial record): real spending that no record will carry.
        self.spent = spent


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _usage_fields(meter: Meter) -> dict:
    return {
        "model_calls": meter.calls,
        "cached_calls": meter.cached,
        "input_tokens": meter.usage.input_tokens,
        "output_tokens": meter.usage.output_tokens,
        "cache_read_tokens": meter.usage.cache_read_tokens,
        "cache_write_tokens": meter.usage.cache_write_tokens,
        "cost_usd": meter.cost_usd,
        "cached_cost_usd": meter.cached_cost_usd,
        "model_s": round(meter.seconds, 4),
    }


def _model_call(role: str, trial: int, meter: Meter, fn: Callable[[], T]) -> T:
    try:
        return fn()
    except ModelError as exc:
        raise AttemptIncomplete(role, trial, " ".join(str(exc).split()), _usage_fields(meter)) from exc


def run_attempt(
    ctx: LoopContext, task: Task, strategy: str, attempt: int, done: Sequence[TrialRecord] = ()
) -> Iterator[TrialRecord]:
    """Yields each finished trial's record; the caller stores it before asking for the next.

    `done` holds this attempt's records from an interrupted run: the loop picks up
    after the last of them, rebuilding its state (tests, last code, last feedback).
    """
    done = sorted(done, key=lambda r: r.trial)
    if done and done[-1].final:
        return
    if strategy == "baseline":
        yield from _baseline(ctx, task, attempt)
    elif strategy in ITERATING:
        yield from _iterate(ctx, task, strategy, attempt, done)
    else:
        raise ValueError(f"unknown strategy {strategy!r}")


def _iterate(
    ctx: LoopContext, task: Task, strategy: str, attempt: int, done: Sequence[TrialRecord]
) -> Iterator[TrialRecord]:
    s = ctx.settings
    previous = Previous(done[-1].code or done[-1].raw_output, done[-1].feedback) if done else None
    internal_tests: list[Test] = _recorded_tests(task, done[0]) if done else []

    for trial in range((done[-1].trial + 1) if done else 1, s.trials + 1):
        if ctx.stop.is_set():
            raise Stopped()
        started = time.perf_counter()
        meter = Meter()
        testgen_record: dict | None = None
        if trial == 1:
            if s.oracle_feedback:
                internal_tests = list(task.hidden_tests)
                testgen_record = {"oracle_feedback": True, "kept": len(internal_tests)}
            elif task.examples_as_internal:  # the `:with-example` variant: no test writer
                internal_tests = list(task.public_tests)
                testgen_record = {"from_public_examples": True, "kept": len(internal_tests)}
            else:
                written = _model_call("test_writer", trial, meter, lambda: write_tests(
                    ctx.model, ctx.prompts, meter, task,
                    max_tests=s.max_internal_tests, max_tokens=s.max_tokens_tests, settings=s.first_call(attempt),
                ))
                internal_tests = written.tests
                testgen_record = written.as_record()

        lesson: str | None = None
        shown: list[str] = []
        recalled = []
        if strategy == "reflexion+recall":
            if ctx.recall is None:
                raise ValueError("strategy 'reflexion+recall' needs the run's frozen recall pool")
            recalled = ctx.recall.for_trial(task, previous.feedback if previous is not None else None)
        if strategy in REFLECTING:
            if previous is not None:
                last = previous
                lesson = _model_call("reflection", trial, meter, lambda: reflect(
                    ctx.model, ctx.prompts, meter, task, code=last.code, feedback=last.feedback,
                    max_tokens=s.max_tokens_lesson, settings=s.first_call(attempt),
                ))
            stored = ctx.memory.recall(
                task.task_id, run_id=ctx.run_id, strategy=strategy, attempt=attempt,
                window=s.memory_window, oracle_feedback=s.oracle_feedback,
            )
            shown = [*stored, lesson][-s.memory_window:] if lesson and s.memory_window > 0 else stored

        calls = s.resample_call(attempt, trial) if strategy == "resample" else s.first_call(attempt)
        context = None if strategy == "resample" else previous
        draft = _model_call("actor", trial, meter, lambda: write_code(
            ctx.model, ctx.prompts, meter, task,
            previous=context, lessons=shown, recalled=[r.lesson for r in recalled],
            max_tokens=s.max_tokens, settings=calls,
        ))

        internal, feedback = _evaluate_internal(ctx, task, draft, internal_tests)
        hidden = _grade_hidden(ctx, task, draft)
        sandbox_s = (internal.seconds if internal else 0.0) + (hidden.seconds if hidden else 0.0)

        internal_passed = None if not internal_tests else bool(internal and internal.passed)
        if not internal_tests:
            stop_reason: str | None = "no_internal_tests"
        elif internal_passed:
            stop_reason = "internal_pass"
        elif trial == s.trials:
            stop_reason = "budget"
        else:
            stop_reason = None

        record = TrialRecord(
            run_id=ctx.run_id,
            task_id=task.task_id,
            strategy=strategy,
            attempt=attempt,
            trial=trial,
            final=stop_reason is not None,
            stop_reason=stop_reason,
            code=draft.code,
            raw_output=draft.raw_output,
            internal_tests=[_test_label(t) for t in internal_tests],
            internal_io_tests=[t.as_dict() for t in internal_tests if isinstance(t, IoTest)],
            task_kind=task.kind,
            internal_results=internal.records if internal else [],
            internal_passed=internal_passed,
            hidden_results=hidden.records if hidden else [],
            hidden_passed=bool(hidden and hidden.passed),
            feedback=feedback,
            lesson=lesson,
            memory_shown=list(shown),
            recalled=[r.as_record() for r in recalled],
            testgen=testgen_record,
            error=draft.error,
            oracle_feedback=s.oracle_feedback,
            temperature_used=draft.temperature_used,
            sandbox_s=round(sandbox_s, 4),
            wall_s=round(time.perf_counter() - started, 4),
            finished_at=_now(),
            **_usage_fields(meter),
        )
        yield record  # the caller has stored it when we resume here
        if lesson:  # stored once its record is: a resumed run puts it back from the record
            ctx.memory.add(lesson_of(record, s.model, s.tasks))
        if record.final:
            return
        previous = Previous(draft.code or draft.raw_output, feedback)


def lesson_of(record: TrialRecord, model: str, task_set: str = "") -> Lesson:
    """The memory entry for the lesson a (schema 2) record holds: about the trial before."""
    assert record.lesson
    return Lesson(
        record.run_id, record.task_id, record.strategy, record.attempt, record.trial - 1, record.lesson,
        model=model, oracle_feedback=record.oracle_feedback, task_set=task_set,
    )


def _test_label(test: Test) -> str:
    return test.label() if isinstance(test, IoTest) else test


def _recorded_tests(task: Task, record: TrialRecord) -> list[Test]:
    """The attempt's internal tests as its first record keeps them (for a resume)."""
    if task.kind == "io":
        return [IoTest.from_dict(t) for t in record.internal_io_tests]
    return list(record.internal_tests)


def _evaluate_internal(ctx: LoopContext, task: Task, draft: Draft, tests: list[Test]) -> tuple[Evaluation | None, str]:
    """The tests whose feedback the agent sees. In the agent's containers always, the
    oracle-feedback ablation's included: its feedback reaches the prompt, so it must not
    run where hidden-test scoring runs (it would carry out what another task's scoring
    left there), and scoring stays in containers that never ran a job whose result an
    agent saw, as in every other run."""
    if draft.error:
        return None, ctx.evaluator.feedback(None, error=draft.error, kind=task.kind)
    evaluation = ctx.evaluator.run(draft.program, tests, task=task, domain=AGENT)
    return evaluation, ctx.evaluator.feedback(evaluation, kind=task.kind)


def _grade_hidden(ctx: LoopContext, task: Task, draft: Draft) -> Evaluation | None:
    """Scoring, in containers of its own: none of them ever runs a job whose result
    reaches a prompt, nor a test the model wrote."""
    if draft.error:
        return None
    return ctx.evaluator.run(draft.program, task.hidden_tests, task=task, domain=HIDDEN, timeout_s=task.timeout_s)


def _baseline(ctx: LoopContext, task: Task, attempt: int) -> Iterator[TrialRecord]:
    if ctx.stop.is_set():
        raise Stopped()
    started = time.perf_counter()
    meter = Meter()
    draft = _model_call("actor", 1, meter, lambda: write_code(
        ctx.model, ctx.prompts, meter, task,
        previous=None, lessons=[], max_tokens=ctx.settings.max_tokens, settings=ctx.settings.first_call(attempt),
    ))
    hidden = _grade_hidden(ctx, task, draft)
    yield TrialRecord(
        run_id=ctx.run_id,
        task_id=task.task_id,
        strategy="baseline",
        attempt=attempt,
        trial=1,
        final=True,
        stop_reason="single_sample",
        task_kind=task.kind,
        code=draft.code,
        raw_output=draft.raw_output,
        hidden_results=hidden.records if hidden else [],
        hidden_passed=bool(hidden and hidden.passed),
        error=draft.error,
        temperature_used=draft.temperature_used,
        sandbox_s=round(hidden.seconds if hidden else 0.0, 4),
        wall_s=round(time.perf_counter() - started, 4),
        finished_at=_now(),
        **_usage_fields(meter),
    )
