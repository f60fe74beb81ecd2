"""The trial loop for one attempt of one task under one strategy: pure orchestration.

reflexion: tests once -> [Actor -> Evaluator -> stop? -> Self-Reflection -> memory] x trials
feedback:  the same without Self-Reflection (the Actor sees feedback, no lessons)
baseline:  one Actor call, no tests, no feedback, no memory

Hidden tests are run on every implementation for measurement only: their results go
into the record and nowhere else (not into a prompt, not into a stop decision), except
under the oracle-feedback ablation, which uses them as the internal tests, openly.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Iterator, Sequence

from harness.actor import Draft, Previous, write_code
from harness.calls import CallSettings, Meter
from harness.evaluator import Evaluation, Evaluator
from harness.memory import Lesson, MemoryStore
from harness.models.base import ChatModel, ModelError
from harness.prompting import Prompts
from harness.reflection import reflect
from harness.results import TrialRecord
from harness.tasks.base import Task
from harness.testgen import InternalTests, write_tests

if TYPE_CHECKING:
    from harness.config import RunConfig


@dataclass(frozen=True)
class LoopSettings:
    """The part of RunConfig the loop reads (defaults live in RunConfig only)."""

    trials: int
    max_internal_tests: int
    memory_window: int
    max_tokens: int
    max_tokens_tests: int
    max_tokens_lesson: int
    test_timeout_s: float
    temperature: float
    seed: int
    oracle_feedback: bool

    @classmethod
    def from_config(cls, config: "RunConfig") -> "LoopSettings":
        return cls(**{f.name: getattr(config, f.name) for f in fields(cls)})


@dataclass
class LoopContext:
    run_id: str
    model: ChatModel
    prompts: Prompts
    evaluator: Evaluator
    memory: MemoryStore
    settings: LoopSettings
    stop: threading.Event = field(default_factory=threading.Event)


class Stopped(Exception):
    """The run is being interrupted; the unfinished trial is not recorded."""


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


def run_attempt(
    ctx: LoopContext, task: Task, strategy: str, attempt: int, done: Sequence[TrialRecord] = ()
) -> Iterator[TrialRecord]:
    """Yields each finished trial's record; the caller stores it before asking for the next.

    `done` holds this attempt's records from an interrupted run: the loop picks up
    after them, rebuilding its state (tests, last code, last feedback) from them.
    """
    done = sorted(done, key=lambda r: r.trial)
    if done and done[-1].final:
        return
    s = ctx.settings
    calls = CallSettings(temperature=s.temperature, seed=s.seed + attempt - 1)
    if strategy == "baseline":
        yield from _baseline(ctx, task, attempt, calls)
        return
    if strategy not in ("reflexion", "feedback"):
        raise ValueError(f"unknown strategy {strategy!r}")

    first_trial = len(done) + 1
    previous = Previous(done[-1].code or done[-1].raw_output, done[-1].feedback) if done else None
    internal_tests: list[str] = list(done[0].internal_tests) if done else []
    testgen_record: dict | None = None

    for trial in range(first_trial, s.trials + 1):
        if ctx.stop.is_set():
            raise Stopped()
        started = time.perf_counter()
        meter = Meter()
        sandbox_s = 0.0
        if trial == 1:
            if s.oracle_feedback:
                internal_tests = list(task.hidden_tests)
                testgen_record = {"oracle_feedback": True, "kept": len(internal_tests)}
            else:
                try:
                    written: InternalTests = write_tests(
                        ctx.model, ctx.prompts, meter, task,
                        max_tests=s.max_internal_tests, max_tokens=s.max_tokens_tests, settings=calls,
                    )
                except ModelError as exc:
                    yield _error_record(ctx, task, strategy, attempt, trial, meter, started, f"test writer: {exc}")
                    return
                internal_tests = written.tests
                testgen_record = written.as_record()
        lessons = (
            ctx.memory.recall(task.task_id, run_id=ctx.run_id, strategy=strategy, attempt=attempt, window=s.memory_window)
            if strategy == "reflexion" and previous is not None
            else []
        )
        try:
            draft = write_code(
                ctx.model, ctx.prompts, meter, task,
                previous=previous, lessons=lessons, max_tokens=s.max_tokens, settings=calls,
            )
        except ModelError as exc:
            yield _error_record(
                ctx, task, strategy, attempt, trial, meter, started, f"actor: {exc}",
                internal_tests=internal_tests, testgen=testgen_record, memory_shown=lessons,
            )
            return

        internal, feedback = _evaluate_internal(ctx, task, draft, internal_tests)
        sandbox_s += internal.seconds if internal else 0.0
        hidden = _grade_hidden(ctx, task, draft)
        sandbox_s += hidden.seconds if hidden else 0.0

        no_tests = not internal_tests
        internal_passed = None if no_tests else bool(internal and internal.passed)
        if no_tests:
            stop_reason: str | None = "no_internal_tests"
        elif internal_passed:
            stop_reason = "internal_pass"
        elif trial == s.trials:
            stop_reason = "budget"
        else:
            stop_reason = None

        lesson: str | None = None
        error = draft.error
        if stop_reason is None and strategy == "reflexion":
            try:
                lesson = reflect(
                    ctx.model, ctx.prompts, meter, task,
                    code=draft.code or draft.raw_output, feedback=feedback,
                    max_tokens=s.max_tokens_lesson, settings=calls,
                )
            except ModelError as exc:
                error = f"self-reflection: {exc}"
                stop_reason = "error"

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
            internal_tests=internal_tests,
            internal_results=internal.records if internal else [],
            internal_passed=internal_passed,
            hidden_results=hidden.records if hidden else [],
            hidden_passed=bool(hidden and hidden.passed),
            feedback=feedback,
            lesson=lesson,
            memory_shown=list(lessons),
            testgen=testgen_record if trial == 1 else None,
            error=error,
            sandbox_s=round(sandbox_s, 4),
            wall_s=round(time.perf_counter() - started, 4),
            finished_at=_now(),
            **_usage_fields(meter),
        )
        yield record  # the caller has stored it when we resume here
        if lesson:
            ctx.memory.add(Lesson(ctx.run_id, task.task_id, strategy, attempt, trial, lesson))
        if record.final:
            return
        previous = Previous(draft.code or draft.raw_output, feedback)


def _evaluate_internal(ctx: LoopContext, task: Task, draft: Draft, tests: list[str]) -> tuple[Evaluation | None, str]:
    if draft.error:
        return None, ctx.evaluator.feedback(None, error=draft.error)
    evaluation = ctx.evaluator.run(draft.program, tests, task=task)
    return evaluation, ctx.evaluator.feedback(evaluation)


def _grade_hidden(ctx: LoopContext, task: Task, draft: Draft) -> Evaluation | None:
    if draft.error:
        return None
    return ctx.evaluator.run(draft.program, task.hidden_tests, task=task, timeout_s=task.timeout_s)


def _baseline(ctx: LoopContext, task: Task, attempt: int, calls: CallSettings) -> Iterator[TrialRecord]:
    if ctx.stop.is_set():
        raise Stopped()
    started = time.perf_counter()
    meter = Meter()
    try:
        draft = write_code(
            ctx.model, ctx.prompts, meter, task,
            previous=None, lessons=[], max_tokens=ctx.settings.max_tokens, settings=calls,
        )
    except ModelError as exc:
        yield _error_record(ctx, task, "baseline", attempt, 1, meter, started, f"actor: {exc}")
        return
    hidden = _grade_hidden(ctx, task, draft)
    yield TrialRecord(
        run_id=ctx.run_id,
        task_id=task.task_id,
        strategy="baseline",
        attempt=attempt,
        trial=1,
        final=True,
        stop_reason="single_sample",
        code=draft.code,
        raw_output=draft.raw_output,
        hidden_results=hidden.records if hidden else [],
        hidden_passed=bool(hidden and hidden.passed),
        error=draft.error,
        sandbox_s=round(hidden.seconds if hidden else 0.0, 4),
        wall_s=round(time.perf_counter() - started, 4),
        finished_at=_now(),
        **_usage_fields(meter),
    )


def _error_record(
    ctx: LoopContext,
    task: Task,
    strategy: str,
    attempt: int,
    trial: int,
    meter: Meter,
    started: float,
    error: str,
    *,
    internal_tests: list[str] | None = None,
    testgen: dict | None = None,
    memory_shown: Sequence[str] = (),
) -> TrialRecord:
    """A model failure that survived the backend's retries ends the attempt, recorded as failed."""
    return TrialRecord(
        run_id=ctx.run_id,
        task_id=task.task_id,
        strategy=strategy,
        attempt=attempt,
        trial=trial,
        final=True,
        stop_reason="error",
        code="",
        raw_output="",
        internal_tests=internal_tests or [],
        hidden_passed=False,
        memory_shown=list(memory_shown),
        testgen=testgen if trial == 1 else None,
        error=error,
        wall_s=round(time.perf_counter() - started, 4),
        finished_at=_now(),
        **_usage_fields(meter),
    )
