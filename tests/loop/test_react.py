"""The tool-using agent (react, react+reflexion) with a scripted model through the real
sandbox: stop conditions, errors given back to the model, the policy, parallel calls,
compaction, Reflexion over episodes, resumes."""
from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest

from harness.agent import EpisodeSettings, run_episode
from harness.agent.episode import prompt_values
from harness.agent.tools import Python, Submit, ToolEnv, ToolPolicy, run_calls
from harness.core.calls import CallSettings
from harness.core import AttemptContext, LoopSettings, Stopped
from harness.config import RunConfig
from harness.core.evaluator import Evaluator
from harness.models.base import Message
from harness.models.scripted import ScriptedModel, ScriptedReply
from harness.models.tools import ToolCall
from harness.text.prompting import Prompts
from harness.rundata import read_errors, read_trials
from harness.rundata.events import Compaction, ModelCall, Note, ToolCallRun
from sandbox import TestOutcome
from tests.loop.helpers import ADD, ADD_TESTS, LESSON, NEG, kind, resume, run

RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"


def py(code: str, stdin: str | None = None, id: str = "") -> ToolCall:
    args: dict[str, Any] = {"code": code}
    if stdin is not None:
        args["stdin"] = stdin
    return ToolCall(id, "python", json.dumps(args))


def submit(code: str = RIGHT) -> ToolCall:
    return ToolCall("", "submit", json.dumps({"code": code}))


def agent(turns: Sequence[Any], *, others: Callable[[str, Sequence[Message]], Any] | None = None,
          after: Any = None, by_call: bool = False) -> ScriptedModel:
    """An agent whose turn t (counted in its conversation) is turns[t] (a reply: text, a
    ToolCall, a ScriptedReply, or a list of ToolCalls); past them, `after` (default:
    a reply with no call). Other roles: `others(kind, messages)`, else the usual.
    `by_call`: count turns by the agent's calls (a compacted conversation has fewer)."""
    made = {"n": 0}

    def respond(system, messages):
        role = kind(system)
        if role == "agent":
            made["n"] += 1
            t = made["n"] - 1 if by_call else sum(1 for m in messages if m.role == "assistant")
            reply = turns[t] if t < len(turns) else (after if after is not None else "I am thinking.")
            return ScriptedReply("", tuple(reply)) if isinstance(reply, list) else reply
        if others is not None:
            found = others(role, messages)
            if found is not None:
                return found
        return {"testgen": ADD_TESTS, "reflection": LESSON}.get(role, "```python\n" + RIGHT + "```")
    return ScriptedModel(responder=respond)


def react(tmp_path: Path, model: ScriptedModel, sandbox, strategy: str = "react", tasks=(ADD,), **options):
    result = run(tmp_path, model, sandbox, tasks=tasks, strategy=strategy,
                 strategy_options={strategy: options} if options else {}, trials=2)
    return result, sorted(read_trials(result.run_dir / "trials.jsonl"), key=lambda r: (r.task_id, r.trial))


def runs(record) -> list[ToolCallRun]:
    return [e for e in record.events if isinstance(e, ToolCallRun)]


def agent_calls(model: ScriptedModel):
    return [c for c in model.calls if kind(c.system) == "agent"]


def episode(record) -> dict:
    return next(e.data for e in record.events if isinstance(e, Note) and e.name == "episode")


# --- stop conditions --------------------------------------------------------------


def test_submitted_code_is_graded_and_the_episode_is_recorded_turn_by_turn(tmp_path, loop_sandbox):
    model = agent([[py(WRONG + "print(add(1, 2))")], [py(RIGHT + "print(add(1, 2))")], [submit()]])
    _, [rec] = react(tmp_path, model, loop_sandbox)
    assert rec.final and rec.stop_reason == "submitted" and rec.hidden_passed and rec.code == RIGHT
    assert rec.internal_passed is None and rec.error is None
    calls = [e for e in rec.events if isinstance(e, ModelCall)]
    assert [c.turn for c in calls] == [1, 2, 3] and all(c.role == "agent" for c in calls)
    assert all(c.tools == ["python", "submit"] for c in calls)
    assert [[t["name"] for t in c.tool_calls] for c in calls] == [["python"], ["python"], ["submit"]]
    first, second, done = runs(rec)
    assert (first.status, first.exit_code, first.turn) == ("ok", 0, 1) and "stdout:\n-1" in first.result
    assert "stdout:\n3" in second.result and done.status == "ok"
    # the model read each result in the next turn, as the tool message of its call
    [result] = [m for m in agent_calls(model)[1].messages if m.role == "tool"]
    assert result.content == first.result and result.tool_call_id == first.id and result.name == "python"
    assert episode(rec)["tool_calls"] == {"python": 2, "submit": 1} and episode(rec)["turns"] == 3
    assert rec.model_calls == 3 and rec.sandbox_s > 0


def test_stdin_reaches_the_script(tmp_path, loop_sandbox):
    model = agent([[py("import sys\nprint(sys.stdin.read().upper())", stdin="shout")], [submit()]])
    _, [rec] = react(tmp_path, model, loop_sandbox)
    assert "SHOUT" in runs(rec)[0].result


def test_max_turns_ends_an_episode_unanswered_and_scored_failed(tmp_path, loop_sandbox):
    model = agent([], after=ScriptedReply("", (py("print(1)"),)))
    result, [rec] = react(tmp_path, model, loop_sandbox, max_turns=3)
    assert rec.final and rec.stop_reason == "max_turns" and not rec.hidden_passed and rec.code == ""
    assert rec.error and "max_turns" in rec.error and rec.hidden_results == []
    assert len(agent_calls(model)) == 3 and read_errors(result.run_dir / "errors.jsonl") == []  # not a harness error


def test_replies_without_a_call_are_nudged_then_end_the_episode(tmp_path, loop_sandbox):
    model = agent(["Here:\n```python\n" + RIGHT + "```"], after="still no call")
    _, [rec] = react(tmp_path, model, loop_sandbox, max_no_call=3)
    assert rec.stop_reason == "no_tool_call" and not rec.hidden_passed and episode(rec)["no_tool_call"] == 3
    sent = agent_calls(model)
    assert len(sent) == 3
    nudges = [m.content for m in sent[-1].messages if m.role == "user"][1:]
    assert len(nudges) == 2 and all("called no tool" in n for n in nudges) and "last reminder" in nudges[-1]


def test_a_token_budget_ends_the_episode(tmp_path, loop_sandbox):
    model = agent([], after=ScriptedReply("", (py("print('x' * 500)"),)))
    _, [rec] = react(tmp_path, model, loop_sandbox, token_budget=300, max_turns=50)
    assert rec.stop_reason == "token_budget" and 1 < len(agent_calls(model)) < 50
    assert episode(rec)["tokens"] >= 300 and rec.input_tokens + rec.output_tokens >= 300


def test_a_context_that_no_compaction_can_make_fit_ends_the_episode(tmp_path, loop_sandbox):
    model = agent([[submit()]])
    _, [rec] = react(tmp_path, model, loop_sandbox, context_tokens=800)  # the reply alone reserves 768
    assert rec.stop_reason == "context_full" and agent_calls(model) == [] and rec.model_calls == 0


def test_a_model_error_leaves_the_attempt_incomplete_and_resume_finishes_it(tmp_path, loop_sandbox):
    broken = agent([[py("print(1)")], "!error: 503 after 5 retries"])
    first, records = react(tmp_path, broken, loop_sandbox)
    assert records == []
    [err] = read_errors(first.run_dir / "errors.jsonl")
    assert (err["kind"], err["role"], err["trial"]) == ("model_error", "agent", 1)
    assert err["spent"]["model_calls"] == 2
    again = resume(first, agent([[py("print(1)")], [submit()]]), loop_sandbox)
    [rec] = read_trials(again.run_dir / "trials.jsonl")
    assert rec.stop_reason == "submitted" and rec.hidden_passed


def test_ctrl_c_stops_an_episode_between_turns(tmp_path, process_sandbox):
    stop = threading.Event()
    ctx = _context(tmp_path, agent([[py("print(1)")], [py("print(2)")], [submit()]]), process_sandbox, stop)

    def respond_then_stop(system, messages):
        if sum(1 for m in messages if m.role == "assistant") == 1:
            stop.set()  # Ctrl-C arrives while turn 2 is being answered
        return None
    ctx.model._responder = _chain(respond_then_stop, ctx.model._responder)
    scope = ctx.trial(ADD, "react", 1, 1)
    with pytest.raises(Stopped):
        run_episode(scope, _settings(scope))
    assert len(ctx.model.calls) == 2  # turn 3 was never asked for


# --- errors go back to the model ----------------------------------------------------


def test_every_bad_call_is_a_short_result_and_the_episode_goes_on(tmp_path, loop_sandbox):
    bad = [
        ToolCall("", "shell", json.dumps({"cmd": "ls"})),
        ToolCall("", "python", "{not json"),
        ToolCall("", "python", json.dumps({"stdin": "x"})),
        ToolCall("", "python", json.dumps({"code": 5})),
        ToolCall("", "python", "[1, 2]"),
        ToolCall("", "submit", json.dumps({"code": "this is not python ("})),
    ]
    model = agent([bad, [py("while True:\n    pass")], [py("print('y' * 10**7)")], [py("1/0")],
                       [py("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")], [submit()]])
    # One limit for every script: the loop must reach it, and the flood, the crash and the
    # kill must end (with their own verdicts) well within it on a slow machine too.
    _, [rec] = react(tmp_path, model, loop_sandbox, python_timeout_s=5.0)
    assert rec.stop_reason == "submitted" and rec.hidden_passed
    r = runs(rec)
    assert [x.status for x in r[:6]] == ["error"] * 6
    assert "unknown tool 'shell'" in r[0].result and "not a JSON object" in r[1].result
    assert "needs the argument(s) code" in r[2].result and "must be of type string" in r[3].result
    assert "not a JSON object" in r[4].result and r[5].result.startswith("Not submitted:")
    timeout, flood, crash, killed = r[6:10]
    assert timeout.status == "timeout" and "time limit" in timeout.result
    assert flood.status == "error" and "output limit" in flood.result and len(flood.result) < 6000
    assert "characters not shown" in flood.result  # the start and the end of what it printed
    assert crash.status == "error" and crash.exit_code == 1 and "ZeroDivisionError" in crash.result
    assert killed.status == "killed" and killed.exit_code == -9
    assert all(len(x.result) < 6000 for x in r)


def test_the_policy_refuses_calls_past_its_limits(tmp_path, loop_sandbox):
    many = [py(f"print({i})") for i in range(4)]
    model = agent([many, [py("x = 1\n" * 200)], [py("print(1)"), submit(), py("print(2)")]])
    _, [rec] = react(tmp_path, model, loop_sandbox, max_calls_per_turn=3, max_code_chars=500, max_python_runs=4)
    r = runs(rec)
    assert [x.status for x in r[:4]] == ["ok", "ok", "ok", "refused"] and "at most 3 tool calls" in r[3].result
    assert r[4].status == "refused" and "characters long" in r[4].result
    assert [x.status for x in r[5:]] == ["ok", "ok", "refused"] and "already submitted" in r[7].result
    assert rec.stop_reason == "submitted"


def test_the_python_budget_is_per_episode(tmp_path, loop_sandbox):
    model = agent([[py("print(1)")], [py("print(2)")], [py("print(3)")], [submit()]])
    _, [rec] = react(tmp_path, model, loop_sandbox, max_python_runs=2)
    assert [x.status for x in runs(rec)] == ["ok", "ok", "refused", "ok"] and "used up" in runs(rec)[2].result


class _Broken:
    """A sandbox whose worker dies under every job, or that fails itself."""

    name = "broken"

    def __init__(self, how: str) -> None:
        self.how = how

    def run(self, request):
        if self.how == "raise":
            raise RuntimeError("the sandbox fell over")
        return [TestOutcome("script", "error", "the sandbox worker died (exit 137); it was replaced")]

    def close(self):
        pass


@pytest.mark.parametrize("how, status", [("lost", "killed"), ("raise", "error")])
def test_a_worker_killed_or_a_sandbox_failing_under_a_script_is_the_model_s_result(tmp_path, how, status):
    ctx = _context(tmp_path, agent([]), _Broken(how))
    scope = ctx.trial(ADD, "react", 1, 1)
    env = ToolEnv(scope, _settings(scope))
    tools = [Python(), Submit()]
    specs = [t.spec(env, {**prompt_values(ADD), "timeout_s": "1", "output_chars": 100}) for t in tools]
    result = run_calls(env, [py("print(1)", id="c1")], tools, specs, ToolPolicy(), 1, 2)
    [event] = runs(scope)
    assert event.status == status and result.messages[0].content == event.result and result.submitted is None
    assert ("could not finish" in event.result) if how == "lost" else ("the sandbox fell over" in event.result)


def test_independent_calls_of_a_turn_run_at_once(tmp_path, process_sandbox):
    # Each script prints when its sleep began and ended (the sandbox's processes share
    # this machine's clock): the two ran at once if the spans overlap, however slow the
    # machine, where a bound on the turn's total time depends on its speed.
    sleepy = [py("import time\nstart = time.time()\ntime.sleep(1.0)\nprint('span', start, time.time())", id=f"s{i}")
              for i in range(2)]
    ctx = _context(tmp_path, agent([]), process_sandbox)
    scope = ctx.trial(ADD, "react", 1, 1)
    env = ToolEnv(scope, _settings(scope))
    tools = [Python(), Submit()]
    specs = [t.spec(env, {**prompt_values(ADD), "timeout_s": "5", "output_chars": 100}) for t in tools]
    result = run_calls(env, sleepy, tools, specs, ToolPolicy(), 1, parallel=2)
    assert [m.tool_call_id for m in result.messages] == ["s0", "s1"]  # results in the calls' order
    spans = [re.search(r"span ([\d.]+) ([\d.]+)", m.content) for m in result.messages]
    assert all(spans), [m.content for m in result.messages]
    (start0, end0), (start1, end1) = [map(float, span.groups()) for span in spans]
    assert max(start0, start1) < min(end0, end1), f"the sleeps did not overlap: {[span.group(0) for span in spans]}"


# --- compaction ---------------------------------------------------------------------


def test_compaction_cuts_old_tool_results_to_fit_a_small_context(tmp_path, loop_sandbox):
    noisy = [[py(f"print('{c}' * 1500)")] for c in "abcdef"]
    model = agent([*noisy, [submit()]])
    _, [rec] = react(tmp_path, model, loop_sandbox, context_tokens=3000, keep_turns=2, max_turns=10)
    assert rec.stop_reason == "submitted" and rec.hidden_passed
    cuts = [e for e in rec.events if isinstance(e, Compaction)]
    assert cuts and all(c.tokens_after < c.tokens_before and c.dropped > 0 for c in cuts)
    assert "older than the last 2 turns" in cuts[0].rule
    last = agent_calls(model)[-1]
    results = [m.content for m in last.messages if m.role == "tool"]
    assert results[-1].count("f") > 1000  # the last turn's result is whole
    assert any(r.startswith("[cut to fit the context") for r in results)  # older ones are stubs
    # the recorded messages are the shortened ones that were sent
    recorded = [e for e in rec.events if isinstance(e, ModelCall)][-1]
    assert [m["content"] for m in recorded.messages] == [m.content for m in last.messages]
    assert episode(rec)["compactions"] == len(cuts) and episode(rec)["context_source"] == "setting"


def test_compaction_by_summary_replaces_older_turns_with_the_model_s_summary(tmp_path, loop_sandbox):
    noisy = [[py(f"print('{c}' * 1500)")] for c in "abcdef"]
    summaries = []

    def summariser(role, messages):
        if role == "summary":
            summaries.append(messages[0].content)
            return "SUMMARY: printed long lines of letters."
        return None
    model = agent([*noisy, [submit()]], others=summariser, by_call=True)
    _, [rec] = react(tmp_path, model, loop_sandbox, context_tokens=3000, compaction="summary", keep_turns=1)
    assert rec.stop_reason == "submitted" and summaries
    [first, *_] = [e for e in rec.events if isinstance(e, Compaction)]
    assert first.summary.startswith("SUMMARY") and "summary by the model" in first.rule
    assert any(isinstance(e, ModelCall) and e.role == "compaction" for e in rec.events)
    last = agent_calls(model)[-1]
    assert "SUMMARY: printed long lines" in last.messages[0].content and last.messages[1].role == "assistant"


# --- react+reflexion ----------------------------------------------------------------


def test_react_reflexion_writes_a_lesson_from_the_transcript_and_starts_the_next_episode_fresh(tmp_path,
                                                                                               loop_sandbox):
    reflections = []

    def others(role, messages):
        if role == "reflection":
            reflections.append(messages[0].content)
            return "Return a + b: the submitted add subtracted."
        return None

    def turns(system, messages):
        first = messages[0].content
        t = sum(1 for m in messages if m.role == "assistant")
        code = RIGHT if "earlier attempts" in first else WRONG
        return [py(code + "print(add(1, 2))")] if t == 0 else [submit(code)]
    model = agent([], others=others)
    model._responder = _chain(lambda s, m: ScriptedReply("", tuple(turns(s, m))) if kind(s) == "agent" else None,
                              model._responder)
    _, records = react(tmp_path, model, loop_sandbox, strategy="react+reflexion")
    assert [(r.trial, r.final, r.stop_reason, r.internal_passed, r.hidden_passed) for r in records] == [
        (1, False, None, False, False), (2, True, "internal_pass", True, True)]
    assert [episode(r)["stop"] for r in records] == ["submitted", "submitted"]
    [reflection] = reflections
    assert "return a - b" in reflection and "stdout:\n-1" in reflection  # the transcript: script and its result
    assert "Tests failed" in reflection or "assert add(1, 2) == 3" in reflection  # the own tests' feedback
    assert records[1].lesson == "Return a + b: the submitted add subtracted." and records[1].lessons[0].about_trial == 1
    second = [c for c in agent_calls(model) if "earlier attempts" in c.messages[0].content]
    assert second and "the submitted add subtracted" in second[0].messages[0].content
    assert len(second[0].messages) == 1  # fresh: no earlier transcript, code or feedback
    assert records[0].internal_tests == records[1].internal_tests  # tests written once


def test_react_reflexion_resumes_with_the_lesson_written_from_the_recorded_transcript(tmp_path, loop_sandbox):
    count = {"agent": 0}

    def failing(system, messages):
        if kind(system) == "agent":
            count["agent"] += 1
            if count["agent"] == 3:  # the first call of the second episode
                return "!error: 503"
            t = sum(1 for m in messages if m.role == "assistant")
            return ScriptedReply("", (py(WRONG + "print('probe', add(1, 2))"),) if t == 0 else (submit(WRONG),))
        return None
    broken = agent([])
    broken._responder = _chain(failing, broken._responder)
    first, records = react(tmp_path, broken, loop_sandbox, strategy="react+reflexion")
    assert [r.trial for r in records] == [1]
    seen = []

    def others(role, messages):
        if role == "reflection":
            seen.append(messages[0].content)
        return None
    again = resume(first, agent([[submit()]], others=others), loop_sandbox)
    after = sorted(read_trials(again.run_dir / "trials.jsonl"), key=lambda r: r.trial)
    assert [r.trial for r in after] == [1, 2] and after[1].final and after[1].hidden_passed
    assert seen and "probe" in seen[0]  # the transcript of episode 1, read back from its record


# --- helpers ------------------------------------------------------------------------


def _chain(*responders):
    def respond(system, messages):
        for r in responders:
            if r is None:
                continue
            found = r(system, messages)
            if found is not None:
                return found
        return None
    return respond


def _context(tmp_path: Path, model: ScriptedModel, sandbox, stop: threading.Event | None = None) -> AttemptContext:
    prompts = Prompts()
    config = RunConfig(tasks="test", model=model.spec, out=tmp_path / "out", memory_dir=tmp_path / "mem",
                       cache=False, report=False, sandbox="process").validate()
    return AttemptContext("run", model, prompts, Evaluator(sandbox, prompts, timeout_s=5.0), None,
                          LoopSettings.from_config(config), stop or threading.Event())


def _settings(scope) -> EpisodeSettings:
    from harness.agent import OPTIONS

    return EpisodeSettings.of(lambda k: OPTIONS[k], scope, CallSettings(0.0, 0))


def test_through_the_text_protocol_the_record_holds_what_the_backend_was_handed(tmp_path, process_sandbox):
    from harness.models.text_tools import TextToolModel

    def block(name: str, args: dict) -> str:
        return "```tool_call\n" + json.dumps({"name": name, "arguments": args}) + "\n```"

    def respond(system, messages):
        if kind(system) != "agent":
            return None
        if len(messages) == 1:
            return "Let me check.\n" + block("python", {"code": RIGHT + "print(add(2, 2))"})
        return block("submit", {"code": RIGHT})
    inner = ScriptedModel(responder=respond)
    _, [rec] = react(tmp_path, TextToolModel(inner), process_sandbox)
    assert rec.stop_reason == "submitted" and rec.hidden_passed
    assert [e.status for e in runs(rec)] == ["ok", "ok"] and "stdout:\n4" in runs(rec)[0].result
    calls = [e for e in rec.events if isinstance(e, ModelCall)]
    # the backend got the protocol's instructions and the tool turns as text; the record says so
    assert [(c.system, [m.content for m in c.messages]) for c in inner.calls] == \
        [(e.system, [m["content"] for m in e.messages]) for e in calls]
    assert all("tool_call" in e.system for e in calls) and calls[1].messages[-1]["role"] == "user"
    assert all(e.tools == ["python", "submit"] for e in calls)
    assert [[t["name"] for t in e.tool_calls] for e in calls] == [["python"], ["submit"]]


@pytest.mark.parametrize("option, message", [
    ({"react": {"max_turns": "0"}}, "max_turns must be >= 1"),
    ({"react": {"max_turns": "many"}}, "react.max_turns"),
    ({"react": {"tools": "python,shell"}}, "unknown agent tool"),
    ({"react": {"tools": "python"}}, "must include submit"),
    ({"react+reflexion": {"compaction": "zip"}}, "compaction must be one of cut, summary"),
    ({"react": {"turns": "3"}}, "has no option 'turns'"),
])
def test_agent_options_are_checked_before_a_run(option, message):
    from harness.config import ConfigError

    with pytest.raises(ConfigError, match=message):
        RunConfig(strategy="agents", strategy_options=option, sandbox="process").validate()
