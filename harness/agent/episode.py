"""One episode of a tool-using agent: the loop of model calls and tool calls until the
model submits or a guard stops it.

Context: the system prompt (react_system.j2), the task (react_task.j2, with the lessons
from memory and recalled lessons when the strategy gives them), the history, and the
tool definitions (react_tool_<name>.j2). Each turn is one model call (a ModelCall event
of role "agent" with its turn number, the tools offered and the calls asked for), then
the tool layer (harness/agent/tools.py: a ToolCallRun event per call), whose results
the model reads next turn.

Stop reasons, in the order they are checked each turn:

* Ctrl-C: `Stopped` is raised (the trial is not recorded; the attempt resumes);
* `token_budget`: the episode's input + output tokens reached `token_budget`;
* `context_full`: compaction (harness/agent/compaction.py) could not make it fit;
* a model call that fails after the backend's retries: AttemptIncomplete (resumable);
* `submitted`: a usable submit;
* `no_tool_call`: the `max_no_call`-th reply without a tool call (each earlier one is
  answered with a nudge, react_nudge.j2);
* `max_turns`: `max_turns` replies without a submit.

An episode that ends without a submit has no answer: it is scored as failed, with its
stop reason (the strategy records it), never as a harness error.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from harness.core.actor import Draft
from harness.agent.compaction import Compactor
from harness.agent.tools import AUTO, ToolEnv, ToolPolicy, default_tools, run_calls, tools_of
from harness.kinds.languages.kind import kind_for, template_values
from harness.agent.transcript import of_messages, within
from harness.core.calls import CallSettings, call
from harness.core import Stopped
from harness.models.base import Message
from harness.models.tools import ToolCall
from harness.rundata.events import Note

if TYPE_CHECKING:
    from harness.core import TrialScope
    from harness.tasks.base import Test

# The context assumed for a model that does not say its own and a run that sets none.
ASSUMED_CONTEXT_TOKENS = 32_768
# The options an agent strategy takes (`--strategy-option react.max_turns=12`), with
# their defaults: see docs/agents.md.
OPTIONS: dict[str, Any] = {
    "max_turns": 10,  # model calls an episode may make
    "token_budget": 100_000,  # input + output tokens an episode may spend; 0: no budget
    "max_no_call": 3,  # replies without a tool call that end the episode (each earlier one is nudged)
    # comma-separated: python, run, submit, run_tests (the attempt's own tests); auto: python
    # and submit, and run for a task in another language than Python
    "tools": "auto",
    "python_timeout_s": 0.0,  # a script's wall-clock limit; 0: the run's test_timeout_s
    "output_chars": 2000,  # per stream in a python result: past it, the start and the end
    "parallel": 4,  # python calls of one turn that run at once
    "max_calls_per_turn": 8,
    "max_python_runs": 30,  # sandbox runs an episode may make
    "max_code_chars": 20_000,  # longest code argument
    "context_tokens": 0,  # the context compaction keeps under; 0: the model's own (else 32768)
    "compaction": "cut",  # cut | summary (the model summarises older turns)
    "keep_turns": 2,  # recent turns compaction leaves whole
    "summary_tokens": 256,  # max_tokens of a summary
}


def tools_setting(value: str, task: Any) -> tuple[str, ...]:
    """The tools a `tools` setting names for `task` (`auto`: the task's default tools)."""
    if value.strip() == AUTO:
        return default_tools(task)
    return tuple(t.strip() for t in value.split(",") if t.strip())


def prompt_values(task: Any) -> dict[str, Any]:
    """What the agent's templates say of the task: its answer's form, its language."""
    kind = kind_for(task)
    return {"io": kind.whole_program, "answer": kind.answer_form, "entry_point": task.entry_point,
            "language": "Python", "fence": "python", **template_values(task)}


@dataclass(frozen=True)
class EpisodeSettings:
    max_turns: int
    token_budget: int
    max_no_call: int
    tools: tuple[str, ...]
    python_timeout_s: float
    output_chars: int
    parallel: int
    policy: ToolPolicy
    context_tokens: int
    context_source: str  # model | setting | assumed
    compaction: str
    keep_turns: int
    summary_tokens: int
    max_tokens: int  # per reply
    call_settings: CallSettings
    temperature_used: float | None

    @classmethod
    def of(cls, option: Any, scope: "TrialScope", call_settings: CallSettings) -> "EpisodeSettings":
        """From a strategy's options (`option(key)`), the run's settings and the model."""
        ctx = scope.ctx
        given = int(option("context_tokens"))
        known = getattr(ctx.model.capabilities, "context_tokens", None)
        context, source = (given, "setting") if given > 0 else (int(known), "model") if known else \
            (ASSUMED_CONTEXT_TOKENS, "assumed")
        tools = tools_setting(str(option("tools")), scope.task)
        tools_of(tools)  # refuses unknown names and a tool set without submit
        timeout = float(option("python_timeout_s")) or ctx.settings.test_timeout_s
        positive = {k: int(option(k)) for k in ("max_turns", "max_no_call", "output_chars", "parallel",
                                               "max_calls_per_turn", "max_python_runs", "max_code_chars",
                                               "summary_tokens")}
        bad = [f"{k}={v}" for k, v in positive.items() if v < 1]
        if bad or int(option("token_budget")) < 0 or int(option("keep_turns")) < 0 or timeout <= 0:
            raise ValueError(f"agent options must be positive: {', '.join(bad) or 'token_budget/keep_turns/timeout'}")
        return cls(
            max_turns=positive["max_turns"], token_budget=int(option("token_budget")),
            max_no_call=positive["max_no_call"], tools=tools, python_timeout_s=timeout,
            output_chars=positive["output_chars"], parallel=positive["parallel"],
            policy=ToolPolicy(positive["max_calls_per_turn"], positive["max_python_runs"], positive["max_code_chars"]),
            context_tokens=context, context_source=source, compaction=str(option("compaction")),
            keep_turns=int(option("keep_turns")), summary_tokens=positive["summary_tokens"],
            max_tokens=ctx.settings.max_tokens, call_settings=call_settings,
            temperature_used=None if not ctx.model.accepts_temperature else call_settings.temperature,
        )


@dataclass
class EpisodeEnd:
    stop_reason: str
    draft: Draft | None  # the submitted answer; None without a submit
    turns: int
    tool_calls: dict[str, int] = field(default_factory=dict)  # tool name -> calls
    no_call: int = 0
    compactions: int = 0
    tokens: int = 0

    def note(self, settings: EpisodeSettings) -> Note:
        return Note(name="episode", data={
            "stop": self.stop_reason, "turns": self.turns, "tool_calls": dict(self.tool_calls),
            "no_tool_call": self.no_call, "compactions": self.compactions, "tokens": self.tokens,
            "submitted": self.draft is not None, "context_tokens": settings.context_tokens,
            "context_source": settings.context_source, "tools": list(settings.tools),
        })


def _ids(calls: Sequence[ToolCall], turn: int, seen: set[str]) -> tuple[ToolCall, ...]:
    """The calls with ids that pair each with its result: a missing or repeated id is
    replaced by call_<turn>_<n>."""
    out = []
    for i, c in enumerate(calls):
        cid = c.id if c.id and c.id not in seen else f"call_{turn}_{i + 1}"
        seen.add(cid)
        out.append(c if cid == c.id else ToolCall(cid, c.name, c.arguments))
    return tuple(out)


def run_episode(scope: "TrialScope", settings: EpisodeSettings, *, lessons: Sequence[str] = (),
                recalled: Sequence[str] = (), tests: Sequence["Test"] = ()) -> EpisodeEnd:
    """Runs one episode in `scope`'s trial; its events land in the scope."""
    ctx, task = scope.ctx, scope.task
    render = ctx.prompts.render
    about = prompt_values(task)
    env = ToolEnv(scope, settings, tests)
    tools = tools_of(settings.tools)
    values: Mapping[str, Any] = {**about, "timeout_s": f"{settings.python_timeout_s:g}",
                                 "output_chars": settings.output_chars}
    specs = [t.spec(env, values) for t in tools]
    names = [t.name for t in tools]
    system = render("react_system", tools=names, max_turns=settings.max_turns, **about)
    task_text = render("react_task", prompt=task.prompt, lessons=list(lessons), recalled=list(recalled), **about)
    messages: list[Message] = [Message("user", task_text, cache_prefix=not (lessons or recalled))]
    compactor = Compactor(
        limit=int((settings.context_tokens - settings.max_tokens) * 0.95), rule=settings.compaction,
        keep_turns=settings.keep_turns, render=render, task_text=task_text)
    start_tokens = scope.meter.usage.input_tokens + scope.meter.usage.output_tokens
    end = EpisodeEnd("max_turns", None, 0)
    seen_ids: set[str] = set()

    def spent() -> int:
        return scope.meter.usage.input_tokens + scope.meter.usage.output_tokens - start_tokens

    def summarise(turn: int):
        def run(older: list[Message], previous: str | None) -> str:
            entries, _ = within(of_messages(older), max(1000, compactor.limit))
            text = render("react_summarise", summary=previous, transcript=entries)
            reply = scope.model_call("compaction", lambda: call(
                ctx.model, scope.meter, [Message("user", text)], system=render("react_summarise_system"),
                max_tokens=settings.summary_tokens, settings=settings.call_settings, role="compaction", turn=turn))
            return reply.text
        return run

    def compacted(event: Any) -> None:
        end.compactions += 1
        scope.event(event)

    for turn in range(1, settings.max_turns + 1):
        if ctx.stop.is_set():
            raise Stopped()
        if settings.token_budget and spent() >= settings.token_budget:
            end.stop_reason = "token_budget"
            break
        messages, fits = compactor.fit(system, messages, specs, summarise(turn), compacted)
        if not fits:
            end.stop_reason = "context_full"
            break
        sent = list(messages)
        chars = compactor.chars(system, sent, specs)
        completion = scope.model_call("agent", lambda: call(
            ctx.model, scope.meter, sent, system=system, max_tokens=settings.max_tokens,
            settings=settings.call_settings, role="agent", turn=turn, tools=specs, tool_choice="auto"))
        end.turns = turn
        compactor.calibrate(chars, completion.usage.input_tokens)
        calls = _ids(completion.tool_calls, turn, seen_ids)
        messages.append(Message("assistant", completion.text, tool_calls=calls))
        if not calls:
            end.no_call += 1
            if end.no_call >= settings.max_no_call:
                end.stop_reason = "no_tool_call"
                break
            messages.append(Message("user", render("react_nudge", tools=names, parse_error=completion.tool_parse_error,
                                                   left=settings.max_no_call - end.no_call, language=about["language"])))
            continue
        for c in calls:
            end.tool_calls[c.name] = end.tool_calls.get(c.name, 0) + 1
        result = run_calls(env, calls, tools, specs, settings.policy, turn, settings.parallel)
        messages.extend(result.messages)
        if result.submitted is not None:
            end.stop_reason, end.draft = "submitted", result.submitted
            break
    end.tokens = spent()
    return end


def unanswered(end: EpisodeEnd) -> Draft:
    """The Draft of an episode that ended without a submit: no code, scored failed."""
    return Draft("", "", "", f"no answer submitted: the episode ended by {end.stop_reason}")
