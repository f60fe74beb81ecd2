"""react: a tool-using agent. One episode per attempt (harness/agent/episode.py): the
model runs its own scripts in the agent's sandbox (`python`) and reads what they did,
until it answers (`submit`) or a guard stops it; the submitted code is graded on the
hidden tests. No tests of its own (unless the setting `tools` adds run_tests, which
has the test writer write them first), no lessons."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

from harness.agent import OPTIONS, EpisodeSettings, run_episode, unanswered
from harness.core import grade_hidden, verdicts, write_tests
from harness.strategies.base import Strategy, Traits

if TYPE_CHECKING:
    from harness.core import AttemptContext, TrialScope
    from harness.rundata import TrialRecord
    from harness.tasks.base import Task

_STUB = 'def add(a: int, b: int) -> int:\n    """Return the sum of a and b."""\n'
_TRANSCRIPT = [
    {"role": "assistant", "name": "", "text": "Let me try it.",
     "calls": [{"name": "python", "arguments": '{"code": "def add(a, b):\\n    return a - b\\nprint(add(1, 2))"}'}]},
    {"role": "tool", "name": "python", "text": "The script ended normally (exit status 0) in 0.02 s.\nstdout:\n-1",
     "calls": []},
    {"role": "note", "name": "", "text": "Your reply called no tool.", "calls": []},
]
# What the agent's templates say of a task (harness/agent/episode.py, prompt_values): a
# Python function here; `answer` is "program" for an io task and "file" for an exercise,
# whose templates also take `exercise` and `stub`.
_ABOUT = {"io": False, "answer": "function", "entry_point": "add", "language": "Python", "fence": "python",
          "exercise": {"solution_path": "add.py", "merged": []}, "stub": _STUB}
_TOOL_VALUES = {**_ABOUT, "timeout_s": "5", "output_chars": 2000}
# Every template of the agents (react and react+reflexion) with sample values: `harness
# run` renders each with them before a run starts.
TEMPLATES: dict[str, Mapping[str, Any]] = {
    "react_system": {**_ABOUT, "tools": ["python", "submit"], "max_turns": 10},
    "react_task": {**_ABOUT, "prompt": _STUB, "lessons": ["Return a + b, not a - b."],
                   "recalled": ["Check the empty input first."]},
    "react_tool_python": _TOOL_VALUES,
    "react_tool_run": _TOOL_VALUES,
    "react_tool_submit": _TOOL_VALUES,
    "react_tool_run_tests": _TOOL_VALUES,
    "react_result_python": {"status": "error", "exit_code": 1, "seconds": 0.02,
                            "detail": "the program exited with status 1",
                            "stdout": {"head": "3", "cut": 0, "tail": ""},
                            "stderr": {"head": "Traceback (most recent call last):", "cut": 120,
                                       "tail": "ZeroDivisionError: division by zero"}},
    "react_result_run": {"status": "compile_error", "exit_code": None, "seconds": 0.0,
                         "detail": "error[E0308]: mismatched types --> main.rs:3:9",
                         "stdout": {"head": "", "cut": 0, "tail": ""}, "stderr": {"head": "", "cut": 0, "tail": ""}},
    "react_result_submit": {},
    "react_result_run_tests": {"feedback": "Tests failed:\nassert add(1, 2) == 3  # got -1", "passed": False},
    "react_tool_error": {"problem": "too_many_calls", "detail": "", "limit": 8, "size": 0},
    "react_nudge": {"tools": ["python", "submit"], "parse_error": None, "left": 1, "language": "Python"},
    "react_cut": {"chars": 5000, "head": "Traceback (most recent call last):"},
    "react_summarise_system": {},
    "react_summarise": {"summary": "Tried a - b; it printed -1.", "transcript": _TRANSCRIPT},
    "react_summary": {"summary": "Tried a - b; it printed -1 for add(1, 2)."},
    "react_transcript": {"transcript": _TRANSCRIPT},
}


class ReAct(Strategy):
    traits = Traits(
        name="react",
        description="a tool-using agent: runs its own scripts in the sandbox until it submits",
        writes_tests=False, iterates=False, writes_lessons=False, uses_tools=True,
        groups=("agents",), order=40, plot_style=(":", "D"), calls_per_trial=(5.0, 0.0),
    )
    options = OPTIONS
    templates = TEMPLATES

    @classmethod
    def check_options(cls, given: Mapping[str, Any]) -> None:
        from harness.agent.compaction import RULES
        from harness.agent.tools import AUTO, tools_of

        if "tools" in given and str(given["tools"]).strip() != AUTO:
            tools_of([t.strip() for t in str(given["tools"]).split(",") if t.strip()])
        if "compaction" in given and given["compaction"] not in RULES:
            raise ValueError(f"compaction must be one of {', '.join(RULES)}, got {given['compaction']!r}")
        for key in ("max_turns", "max_no_call", "output_chars", "parallel", "max_calls_per_turn", "max_python_runs",
                    "max_code_chars", "summary_tokens", "reflection_chars"):
            if key in given and int(given[key]) < 1:
                raise ValueError(f"{key} must be >= 1, got {given[key]!r}")
        for key in ("token_budget", "keep_turns", "context_tokens", "python_timeout_s"):
            if key in given and float(given[key]) < 0:
                raise ValueError(f"{key} must be >= 0, got {given[key]!r}")

    def episode_settings(self, ctx: "AttemptContext", scope: "TrialScope") -> EpisodeSettings:
        return EpisodeSettings.of(lambda key: self.option(ctx, key), scope, ctx.settings.first_call(scope.attempt))

    def run_attempt(self, ctx: "AttemptContext", task: "Task", attempt: int,
                    done: Sequence["TrialRecord"]) -> Iterator["TrialRecord"]:
        scope = ctx.trial(task, self.traits.name, attempt, 1)
        settings = self.episode_settings(ctx, scope)
        tests = write_tests(scope, attempt) if "run_tests" in settings.tools else []
        end = run_episode(scope, settings, tests=tests)
        draft = end.draft or unanswered(end)
        hidden = grade_hidden(scope, draft)
        scope.event(end.note(settings))
        yield scope.record(final=True, stop_reason=end.stop_reason, code=draft.code, raw_output=draft.raw_output,
                           error=draft.error, temperature_used=settings.temperature_used,
                           **verdicts(None, hidden, [], task))
