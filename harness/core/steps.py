"""The public steps every strategy composes. Each takes the trial's scope, appends its
events there, and returns plain values; none knows which strategy called it.

Hidden tests are run on an implementation for measurement only (`grade_hidden`): their
results go into the record's core and nowhere else, except under the oracle-feedback
ablation, which uses them as the internal tests, openly (`write_tests`).
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Sequence

from harness.core.actor import Draft, Previous
from harness.core.actor import write_code as _write_code
from harness.core.calls import CallSettings
from harness.core.evaluator import AGENT, HIDDEN, Evaluation
from harness.kinds.languages.kind import kind_for
from harness.core.memory import Lesson
from harness.core.reflection import reflect as _reflect
from harness.rundata import TrialRecord
from harness.rundata.events import Compile, LessonWritten, MemoryShown, Recalled, TestRun, TestsWritten
from harness.core.testgen import write_tests as _write_tests

if TYPE_CHECKING:
    from sandbox import ScriptRun

    from harness.core.context import AttemptContext, TrialScope
    from harness.tasks.base import Task, Test

__all__ = ["Draft", "Previous", "write_tests", "write_code", "evaluate", "grade_hidden", "reflect", "run_script",
           "memory_lessons", "recall_lessons", "tests_of", "store_lessons", "lessons_of", "verdicts"]


def write_tests(scope: "TrialScope", attempt: int) -> list["Test"]:
    """The attempt's own tests: written by the model from the prompt alone; under the
    `:with-example` variant the task's public examples; under the oracle-feedback
    ablation the hidden tests. Appends a TestsWritten event."""
    ctx, task, s = scope.ctx, scope.task, scope.ctx.settings
    kind = kind_for(task)
    if s.oracle_feedback:
        tests, source, raw, dropped = list(task.hidden_tests), "oracle", "", {}
    elif task.examples_as_internal:
        tests, source, raw, dropped = list(task.public_tests), "public_examples", "", {}
    else:
        written = scope.model_call("test_writer", lambda: _write_tests(
            ctx.model, ctx.prompts, scope.meter, task,
            max_tests=s.max_internal_tests, max_tokens=s.max_tokens_tests, settings=s.first_call(attempt),
        ))
        tests, source, raw, dropped = written.tests, "model", written.raw_output, written.dropped
    scope.event(TestsWritten(source=source, tests=[kind.label(t) for t in tests], io_tests=kind.test_data(tests),
                             raw_output=raw, kept=len(tests), dropped=dropped))
    return tests


def tests_of(task: "Task", records: Sequence[TrialRecord]) -> list["Test"]:
    """The attempt's own tests as its records keep them (a resumed attempt reads them back)."""
    for rec in records:
        if rec.tests_written is not None:
            return kind_for(task).tests_from_event(rec.tests_written, task)
    return []


def write_code(scope: "TrialScope", *, previous: Previous | None, lessons: Sequence[str] = (),
               recalled: Sequence[str] = (), settings: CallSettings) -> Draft:
    """The Actor's implementation (an unusable answer is a Draft with `error`)."""
    ctx = scope.ctx
    return scope.model_call("actor", lambda: _write_code(
        ctx.model, ctx.prompts, scope.meter, scope.task, previous=previous, lessons=lessons, recalled=recalled,
        max_tokens=ctx.settings.max_tokens, settings=settings,
    ))


def evaluate(scope: "TrialScope", draft: Draft, tests: Sequence["Test"], *, label: str = "",
             node: int | None = None) -> tuple[Evaluation | None, str]:
    """`draft` on the agent's own tests, in the agent's containers: (evaluation, the
    feedback text the agent reads). The oracle-feedback ablation's hidden tests run
    here too: their feedback reaches a prompt, so they must not run where scoring runs.
    With a `label`, the run is also recorded as a TestRun event (for strategies that
    run several candidates in one trial)."""
    ctx, task = scope.ctx, scope.task
    if draft.error:
        return None, ctx.evaluator.feedback(None, error=draft.error, kind=task.kind, task=task)
    evaluation = ctx.evaluator.run(draft.program, list(tests), task=task, domain=AGENT)
    scope.sandbox_s += evaluation.seconds
    _compile_event(scope, evaluation)
    if label:
        scope.event(TestRun(label=label, passed=evaluation.passed, seconds=round(evaluation.seconds, 4), node=node,
                            results=[{"test": r.test, "status": r.status, "detail": r.detail}
                                     for r in evaluation.records]))
    return evaluation, ctx.evaluator.feedback(evaluation, kind=task.kind, task=task)


def run_script(scope: "TrialScope", code: str, stdin: str = "", *, timeout_s: float | None = None,
               language: str = "python") -> "ScriptRun":
    """An agent's own script (or whole program of another `language`) run on `stdin`, in
    the agent's containers (never where hidden tests run): its stdout, stderr, exit status
    and time. Thread safe; adds nothing to `scope.sandbox_s` (the caller adds the runs it
    waited for: several may run at once)."""
    return scope.ctx.evaluator.run_script(code, stdin, timeout_s=timeout_s, language=language)


def grade_hidden(scope: "TrialScope", draft: Draft) -> Evaluation | None:
    """Scoring on the hidden tests, in containers of its own (measurement only). Sets
    the trial's compile status (the record's `compile_status`) to how this program
    compiled: None where nothing was compiled."""
    scope.compile_status = None
    if draft.error:
        return None
    task = scope.task
    evaluation = scope.ctx.evaluator.run(draft.program, task.hidden_tests, task=task, domain=HIDDEN,
                                         timeout_s=task.timeout_s)
    scope.sandbox_s += evaluation.seconds
    _compile_event(scope, evaluation)  # a strategy without internal tests compiles here first
    if evaluation.compiled is not None and compiles(task.language):
        scope.compile_status = evaluation.compiled.status
    return evaluation


@functools.lru_cache(maxsize=None)
def compiles(language: str) -> bool:
    """Whether the sandbox compiles a program of `language`, as its toolchain declares
    (Python, the worker's own, has none; a language run from its source compiles nothing)."""
    from sandbox.toolchains import toolchain

    try:
        return toolchain(language).compiles
    except ValueError:  # no toolchain: Python, or a language the sandbox does not know
        return False


def _compile_event(scope: "TrialScope", evaluation: Evaluation) -> None:
    """Another language's program was compiled for this grading (not reused): a Compile
    event with the compiler's status, time and message (the agent's feedback, if any)."""
    compiled = evaluation.compiled
    if compiled is not None and not compiled.cached:
        scope.event(Compile(language=scope.task.language, status=compiled.status.replace("compile_", ""),
                            seconds=round(compiled.seconds, 4), message=compiled.message))


def reflect(scope: "TrialScope", attempt: int, *, code: str, feedback: str, about_trial: int,
            node: int | None = None) -> str:
    """Self-Reflection: a short lesson about a failed implementation; appends a
    LessonWritten event (stored in long-term memory once the record is: store_lessons)."""
    ctx = scope.ctx
    lesson = scope.model_call("reflection", lambda: _reflect(
        ctx.model, ctx.prompts, scope.meter, scope.task, code=code, feedback=feedback,
        max_tokens=ctx.settings.max_tokens_lesson, settings=ctx.settings.first_call(attempt),
    ))
    if lesson:
        scope.event(LessonWritten(text=lesson, about_trial=about_trial, node=node))
    return lesson


def memory_lessons(scope: "TrialScope", *, new: Sequence[str] = ()) -> list[str]:
    """The last `memory_window` lessons of long-term memory for this task (and the ones
    just written, not stored yet); appends a MemoryShown event."""
    ctx, s = scope.ctx, scope.ctx.settings
    stored = ctx.memory.recall(scope.task.task_id, run_id=ctx.run_id, strategy=scope.strategy,
                               attempt=scope.attempt, window=s.memory_window, oracle_feedback=s.oracle_feedback)
    fresh = [x for x in new if x]
    shown = [*stored, *fresh][-s.memory_window:] if fresh and s.memory_window > 0 else list(stored)
    scope.event(MemoryShown(lessons=list(shown)))
    return shown


def recall_lessons(scope: "TrialScope", feedback: str | None) -> list[Any]:
    """Lessons from other tasks, from the run's frozen pool (harness/core/recall.py's Recalled,
    each with its `.lesson`); appends a Recalled event."""
    if scope.ctx.recall is None:
        raise ValueError(f"strategy {scope.strategy!r} recalls lessons but the run has no frozen recall pool "
                         "(--recall-from)")
    found = scope.ctx.recall.for_trial(scope.task, feedback)
    scope.event(Recalled(items=[r.as_record() for r in found]))
    return found


def lessons_of(record: TrialRecord, model: str, task_set: str = "") -> list[Lesson]:
    """The memory entries for the lessons a record holds."""
    return [
        Lesson(record.run_id, record.task_id, record.strategy, record.attempt, ev.about_trial, ev.text,
               model=model, oracle_feedback=record.oracle_feedback, task_set=task_set)
        for ev in record.lessons
    ]


def store_lessons(ctx: "AttemptContext", record: TrialRecord) -> None:
    """Puts a stored record's lessons into long-term memory (idempotent)."""
    for lesson in lessons_of(record, ctx.settings.model, ctx.settings.tasks):
        ctx.memory.add(lesson)


def verdicts(internal: Evaluation | None, hidden: Evaluation | None, tests: Sequence["Test"],
             task: "Task") -> dict[str, Any]:
    """The record's core verdict fields for an implementation graded on both sides."""
    kind = kind_for(task)
    return {
        "internal_tests": [kind.label(t) for t in tests],
        "internal_results": internal.records if internal else [],
        "internal_passed": None if not tests else bool(internal and internal.passed),
        "hidden_results": hidden.records if hidden else [],
        "hidden_passed": bool(hidden and hidden.passed),
    }
