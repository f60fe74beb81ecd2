"""The agent's tools, the policy that decides which calls run, and the running of one
turn's calls.

Default tools, by these exact names and arguments (agents and fakes are written
against them): `python` (`code`, optional `stdin`) runs the script whole in a sandbox
of the agent domain and gives back its stdout, stderr (start and end past a cap), exit
status and time; `submit` (`code`) ends the episode with that code as the answer (for
an io task the whole program; in the task's language). For a task in another language
than Python, also `run` (`code`, optional `stdin`): a whole program of that language,
compiled and run as `python` runs a script (a compile error is its result). Behind the
setting `tools`: `run_tests` (`code`) runs code against the attempt's own tests (agent
domain).

Whatever a call does, it becomes a short tool result the model reads next turn, never
an exception: an unknown tool, arguments that are not a JSON object or miss a field,
a call the policy refuses, a script that times out, floods its output, crashes or
kills its worker, a sandbox that fails under it. Each call is a ToolCallRun event.
"""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Sequence

from harness.core.actor import Draft, graded_program
from harness.core import evaluate, run_script
from harness.text.extract import UnparseableOutput
from harness.kinds.languages import DEFAULT as PYTHON_LANGUAGE
from harness.kinds.languages.kind import kind_for
from harness.models.base import Message
from harness.models.tools import ToolCall, ToolSpec, argument_problem, arguments_of
from harness.rundata.events import ToolCallRun

if TYPE_CHECKING:
    from harness.core import TrialScope
    from harness.tasks.base import Test

DEFAULT_TOOLS = ("python", "submit")
# `tools` = "auto": the default tools, and `run` for a task in another language.
AUTO = "auto"


def default_tools(task: Any) -> tuple[str, ...]:
    """The tools an agent gets by default for `task`."""
    return DEFAULT_TOOLS if task.language == PYTHON_LANGUAGE else ("python", "run", "submit")


@dataclass(frozen=True)
class ToolOutcome:
    """What one call gave back: its status (ok | error | refused | timeout | killed), the
    result text for the model, and for a submit the answer."""

    status: str
    result: str
    exit_code: int | None = None
    submitted: Draft | None = None
    sandbox_s: float = 0.0  # the host's round trip to the sandbox, for the trial's sandbox time


@dataclass
class ToolEnv:
    """What a tool call needs: the trial's scope, the episode's settings, the attempt's
    own tests (run_tests), and the counters the policy reads."""

    scope: "TrialScope"
    settings: Any  # harness.agent.episode.EpisodeSettings
    tests: Sequence["Test"] = ()
    python_runs: int = 0

    @property
    def task(self) -> Any:
        return self.scope.task

    def render(self, template: str, **values: Any) -> str:
        return self.scope.ctx.prompts.render(template, **values)

    def error(self, problem: str, **values: Any) -> str:
        values.setdefault("detail", "")
        return self.render("react_tool_error", problem=problem, **values)


class Tool(ABC):
    """One tool: its name, its arguments' schema, the template of its description."""

    name: ClassVar[str]
    parameters: ClassVar[Mapping[str, Any]]
    # Runs code in the sandbox: the policy counts it against the episode's runs.
    runs_code: ClassVar[bool] = False
    # Several calls of one turn may run at once (the tool touches nothing shared).
    concurrent: ClassVar[bool] = False

    def spec(self, env: ToolEnv, values: Mapping[str, Any]) -> ToolSpec:
        return ToolSpec(self.name, env.render(f"react_tool_{self.name}", **values), self.parameters)

    @abstractmethod
    def run(self, args: dict[str, Any], env: ToolEnv) -> ToolOutcome: ...


def _code_schema(*extra: str) -> dict[str, Any]:
    props: dict[str, Any] = {"code": {"type": "string"}}
    for name in extra:
        props[name] = {"type": "string"}
    return {"type": "object", "properties": props, "required": ["code"]}


def cut_text(text: str, chars: int) -> dict[str, Any]:
    """`text` as the result shows it: whole up to `chars`, else its start and its end
    (half each) and how many characters between them are not shown."""
    if len(text) <= chars:
        return {"head": text.rstrip("\n"), "cut": 0, "tail": ""}
    half = max(1, chars // 2)
    return {"head": text[:half], "cut": len(text) - 2 * half, "tail": text[-half:].rstrip("\n")}


class Python(Tool):
    name = "python"
    parameters = _code_schema("stdin")
    runs_code = True
    concurrent = True

    def language(self, env: ToolEnv) -> str:
        return PYTHON_LANGUAGE

    def run(self, args: dict[str, Any], env: ToolEnv) -> ToolOutcome:
        s = env.settings
        try:
            run = run_script(env.scope, args["code"], args.get("stdin") or "", timeout_s=s.python_timeout_s,
                             language=self.language(env))
        except Exception as exc:  # the sandbox itself failed: the model reads it, the attempt goes on
            return ToolOutcome("error", env.error("sandbox", detail=" ".join(f"{type(exc).__name__}: {exc}".split())[:300]))
        status = {"ok": "ok", "timeout": "timeout", "lost": "killed"}.get(run.status, "error")
        if run.exit_code is not None and run.exit_code < 0:
            status = "killed"
        result = env.render(f"react_result_{self.name}", status=run.status, exit_code=run.exit_code,
                            seconds=run.seconds, detail=run.detail, stdout=cut_text(run.stdout, s.output_chars),
                            stderr=cut_text(run.stderr, s.output_chars))
        return ToolOutcome(status, result, run.exit_code, sandbox_s=run.job_s)


class Run(Python):
    """A whole program in the task's language, compiled (where it compiles) and run."""

    name = "run"

    def language(self, env: ToolEnv) -> str:
        return env.task.language


def draft_of(code: str, env: ToolEnv) -> Draft | str:
    """The answer a call's `code` gives, or why it gives none (the extractor's words)."""
    task = env.task
    try:
        extracted = kind_for(task).extract(code, task)
    except UnparseableOutput as exc:
        return str(exc)
    return Draft(code, extracted, graded_program(task, extracted), None, env.settings.temperature_used)


class Submit(Tool):
    name = "submit"
    parameters = _code_schema()

    def run(self, args: dict[str, Any], env: ToolEnv) -> ToolOutcome:
        draft = draft_of(args["code"], env)
        if isinstance(draft, str):
            return ToolOutcome("error", env.error("unusable", detail=draft))
        return ToolOutcome("ok", env.render("react_result_submit"), submitted=draft)


class RunTests(Tool):
    name = "run_tests"
    parameters = _code_schema()
    runs_code = True

    def run(self, args: dict[str, Any], env: ToolEnv) -> ToolOutcome:
        if not env.tests:
            return ToolOutcome("error", env.error("no_tests"))
        draft = draft_of(args["code"], env)
        if isinstance(draft, str):
            return ToolOutcome("error", env.error("unusable", detail=draft))
        # evaluate() adds to scope.sandbox_s itself (so this tool never runs concurrently)
        internal, feedback = evaluate(env.scope, draft, env.tests, label="run_tests")
        passed = bool(internal and internal.passed)
        return ToolOutcome("ok" if passed else "error", env.render("react_result_run_tests", feedback=feedback,
                                                                      passed=passed))


TOOLS: dict[str, type[Tool]] = {t.name: t for t in (Python, Run, Submit, RunTests)}


def tools_of(names: Sequence[str]) -> list[Tool]:
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        raise ValueError(f"unknown agent tool(s) {', '.join(unknown)}; the tools are: {', '.join(TOOLS)}")
    if "submit" not in names:
        raise ValueError("the agent's tools must include submit (the only way an episode gives an answer)")
    return [TOOLS[n]() for n in dict.fromkeys(names)]


@dataclass(frozen=True)
class ToolPolicy:
    """Which calls of a turn run. In order: at most `max_calls_per_turn` calls a turn;
    a call must name an offered tool with arguments that fit its schema; code at most
    `max_code_chars` long; at most `max_python_runs` sandbox runs an episode; nothing
    after a submit of the same turn that was accepted."""

    max_calls_per_turn: int = 8
    max_python_runs: int = 30
    max_code_chars: int = 20_000

    def refusal(self, index: int, call: ToolCall, specs: Sequence[ToolSpec], tool: Tool | None,
                args: dict[str, Any] | None, env: ToolEnv, submitted: bool) -> tuple[str, str, dict[str, Any]] | None:
        """(status, problem, values) for a call that must not run, else None."""
        if submitted:
            return "refused", "after_submit", {}
        if index >= self.max_calls_per_turn:
            return "refused", "too_many_calls", {"limit": self.max_calls_per_turn}
        problem = argument_problem(call, list(specs))
        if problem is not None or tool is None or args is None:
            return "error", "arguments", {"detail": problem or "no such tool"}
        code = args.get("code", "")
        if len(code) > self.max_code_chars:
            return "refused", "code_too_long", {"size": len(code), "limit": self.max_code_chars}
        if tool.runs_code and env.python_runs >= self.max_python_runs:
            return "refused", "python_budget", {"limit": self.max_python_runs}
        return None


@dataclass
class TurnResult:
    messages: list[Message] = field(default_factory=list)  # one tool result per call, in the calls' order
    submitted: Draft | None = None


def run_calls(env: ToolEnv, calls: Sequence[ToolCall], tools: Sequence[Tool], specs: Sequence[ToolSpec],
              policy: ToolPolicy, turn: int, parallel: int) -> TurnResult:
    """Runs one turn's calls: the policy first, in order; the calls that run code at once
    that may (python, up to `parallel`), the others in order after them; one ToolCallRun event and one
    tool message per call, in the calls' order."""
    by_name = {t.name: t for t in tools}
    planned: list[tuple[ToolCall, Tool | None, dict[str, Any] | None, tuple[str, str, dict] | None]] = []
    submit_seen = False
    for index, call in enumerate(calls):
        tool, args = by_name.get(call.name), arguments_of(call)
        refusal = policy.refusal(index, call, specs, tool, args, env, submit_seen)
        if refusal is None and tool is not None and tool.runs_code:
            env.python_runs += 1
        if refusal is None and call.name == "submit":
            draft = draft_of((args or {}).get("code", ""), env)
            submit_seen = not isinstance(draft, str)
        planned.append((call, tool, args, refusal))

    outcomes: dict[int, tuple[ToolOutcome, float]] = {}

    def go(i: int) -> tuple[ToolOutcome, float]:
        call, tool, args, _ = planned[i]
        started = time.perf_counter()
        try:
            outcome = tool.run(args, env)  # type: ignore[union-attr,arg-type]
        except Exception as exc:  # a tool's own failure is the model's result, not the run's
            outcome = ToolOutcome("error", env.error("failed", detail=" ".join(f"{type(exc).__name__}: {exc}".split())[:300]))
        return outcome, time.perf_counter() - started

    runnable = [i for i, (_, tool, _, refusal) in enumerate(planned) if refusal is None and tool is not None]
    code_runs = [i for i in runnable if planned[i][1].concurrent]  # type: ignore[union-attr]
    if len(code_runs) > 1 and parallel > 1:
        with ThreadPoolExecutor(max_workers=min(parallel, len(code_runs))) as pool:
            for i, done in zip(code_runs, pool.map(go, code_runs)):
                outcomes[i] = done
    else:
        for i in code_runs:
            outcomes[i] = go(i)
    for i in runnable:
        if i not in outcomes:
            outcomes[i] = go(i)

    out = TurnResult()
    for i, (call, tool, args, refusal) in enumerate(planned):
        if refusal is not None:
            status, problem, values = refusal
            outcome, seconds = ToolOutcome(status, env.error(problem, **values)), 0.0
        else:
            outcome, seconds = outcomes[i]
        env.scope.sandbox_s += outcome.sandbox_s
        if outcome.submitted is not None and out.submitted is None:
            out.submitted = outcome.submitted
        env.scope.event(ToolCallRun(id=call.id, name=call.name, arguments=call.arguments, status=outcome.status,
                                    result=outcome.result, seconds=round(seconds, 4), turn=turn,
                                    exit_code=outcome.exit_code))
        out.messages.append(Message("tool", outcome.result, tool_call_id=call.id, name=call.name))
    return out
