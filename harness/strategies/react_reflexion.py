"""react+reflexion: Reflexion over the episodes of a tool-using agent (Shinn et al. 2023,
the ReAct setting, for code).

The test writer writes the attempt's own tests once. Each trial is one episode of the
react agent (harness/agent/episode.py), started fresh: its context holds the task and
the last `memory_window` lessons of long-term memory, no earlier transcript or code.
The episode's submission is run on the attempt's own tests (agent domain); when it
fails them (or the episode ended without one), Self-Reflection reads the episode's
transcript, the submission and its test feedback (react_reflection.j2) at the start of
the next trial and writes a lesson, which goes to long-term memory; up to `--trials`
episodes. It stops on internal_pass, budget, or no_internal_tests; each episode's own
end (submitted, max_turns, ...) is its `episode` note.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

from harness.agent import OPTIONS, EpisodeSettings, run_episode, unanswered
from harness.agent.episode import prompt_values
from harness.agent.transcript import of_events, within
from harness.core.calls import call
from harness.core import evaluate, grade_hidden, memory_lessons, store_lessons, tests_of, verdicts, write_tests
from harness.models.base import Message
from harness.core.reflection import clean_lesson
from harness.rundata.events import LessonWritten, Note
from harness.strategies.base import Traits
from harness.strategies.react import _ABOUT, _STUB, _TRANSCRIPT, ReAct

if TYPE_CHECKING:
    from harness.core import AttemptContext, TrialScope
    from harness.rundata import TrialRecord
    from harness.tasks.base import Task


def _episode_stop(record: "TrialRecord") -> str:
    for e in record.events:
        if isinstance(e, Note) and e.name == "episode":
            return str(e.data.get("stop", ""))
    return ""


class ReActReflexion(ReAct):
    traits = Traits(
        name="react+reflexion",
        description="the react agent over episodes, with a lesson from Self-Reflection on each failed one",
        writes_tests=True, iterates=True, writes_lessons=True, uses_tools=True,
        isolates="react", rival="reflexion",
        groups=("agents",), order=45, plot_style=(":", "X"), calls_per_trial=(6.0, 6.0),
    )
    options: Mapping[str, Any] = {**OPTIONS, "reflection_chars": 6000}
    templates: Mapping[str, Mapping[str, Any]] = {
        "react_reflection_system": _ABOUT,
        "react_reflection": {**_ABOUT, "prompt": _STUB, "transcript": _TRANSCRIPT, "cut": 2,
                             "submitted": "def add(a, b):\n    return a - b\n",
                             "feedback": "Tests failed:\nassert add(1, 2) == 3  # got -1", "stop_reason": "submitted"},
    }

    def reflect(self, ctx: "AttemptContext", scope: "TrialScope", previous: "TrialRecord") -> str:
        """A lesson about the previous episode, from its recorded transcript; appends a
        LessonWritten event."""
        task = scope.task
        entries, cut = within(of_events(previous.events), int(self.option(ctx, "reflection_chars")))
        about = prompt_values(task)
        text = ctx.prompts.render(
            "react_reflection", prompt=task.prompt, transcript=entries, cut=cut, submitted=previous.code,
            feedback=previous.feedback, stop_reason=_episode_stop(previous) or "unknown", **about)
        reply = scope.model_call("reflection", lambda: call(
            ctx.model, scope.meter, [Message("user", text)],
            system=ctx.prompts.render("react_reflection_system", **about),
            max_tokens=ctx.settings.max_tokens_lesson, settings=ctx.settings.first_call(scope.attempt),
            role="reflection"))
        lesson = clean_lesson(reply.text)
        if lesson:
            scope.event(LessonWritten(text=lesson, about_trial=previous.trial))
        return lesson

    def run_attempt(self, ctx: "AttemptContext", task: "Task", attempt: int,
                    done: Sequence["TrialRecord"]) -> Iterator["TrialRecord"]:
        s = ctx.settings
        previous = done[-1] if done else None
        tests = tests_of(task, done) if done else []
        for trial in range((previous.trial + 1) if previous else 1, s.trials + 1):
            scope = ctx.trial(task, self.traits.name, attempt, trial)
            settings = self.episode_settings(ctx, scope)
            if trial == 1:
                tests = write_tests(scope, attempt)
            lesson = self.reflect(ctx, scope, previous) if previous is not None else ""
            lessons = memory_lessons(scope, new=[lesson] if lesson else [])
            end = run_episode(scope, settings, lessons=lessons, tests=tests)
            draft = end.draft or unanswered(end)
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
            scope.event(end.note(settings))
            record = scope.record(final=stop is not None, stop_reason=stop, code=draft.code,
                                  raw_output=draft.raw_output, feedback=feedback, error=draft.error,
                                  temperature_used=settings.temperature_used, **found)
            yield record  # the caller has stored it when we resume here
            store_lessons(ctx, record)
            if record.final:
                return
            previous = record
