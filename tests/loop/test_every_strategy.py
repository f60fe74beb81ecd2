"""Safety nets that run for every registered strategy, one registered only here included:

* no hidden test (nor a hidden verdict) reaches any prompt, and every prompt the model
  was sent is in the trial records as sent (what the model saw is recorded, not rebuilt);
* an attempt broken by a model error resumes with no trial lost or done twice;
* the run's report and every view page render, and tell each strategy's numbers.
"""
from __future__ import annotations

import json
from typing import Iterator, Sequence

import pytest
from starlette.testclient import TestClient

from harness.core import AttemptContext, evaluate, grade_hidden, store_lessons, verdicts, write_code, write_tests
from harness.models.scripted import ScriptedModel, ScriptedReply
from harness.models.tools import ToolCall
from harness.report import write_report
from harness.rundata import read_errors, read_trials
from harness.rundata.events import ModelCall, Note, ToolCallRun
from harness.strategies import Strategy, Traits, register, strategy_names, traits_of, unregister
from harness.tasks.base import Task
from harness.view.app import create_app
from tests.loop.helpers import ADD, ADD_TESTS, LESSON, NEG, RIGHT_ADD, WRONG_ADD, kind, resume, run

TEST_ONLY = "two-drafts"


class TwoDrafts(Strategy):
    """A strategy only this test knows: two drafts per attempt, the one that passes more
    of the agent's own tests is submitted."""

    traits = Traits(name=TEST_ONLY, description="two drafts, the better on its own tests submitted",
                    writes_tests=True, iterates=False, writes_lessons=False, order=95)

    def run_attempt(self, ctx: AttemptContext, task: Task, attempt: int, done: Sequence) -> Iterator:
        scope = ctx.trial(task, TEST_ONLY, attempt, 1)
        tests = write_tests(scope, attempt)
        best = None
        for i in (1, 2):
            draft = write_code(scope, previous=None, settings=ctx.settings.fresh_sample(attempt, i))
            internal, feedback = evaluate(scope, draft, tests, label=f"draft {i}")
            score = sum(r.status == "passed" for r in internal.records) if internal else -1
            if best is None or score > best[0]:
                best = (score, draft, internal, feedback)
        _, draft, internal, feedback = best
        scope.event(Note(name="choice", data={"drafts": 2, "score": best[0]}))
        hidden = grade_hidden(scope, draft)
        record = scope.record(final=True, stop_reason="chosen", code=draft.code, raw_output=draft.raw_output,
                              feedback=feedback, error=draft.error, **verdicts(internal, hidden, tests, task))
        yield record
        store_lessons(ctx, record)


@pytest.fixture(scope="module", autouse=True)
def test_only_strategy():
    register(TwoDrafts)
    yield
    unregister(TEST_ONLY)


def every_strategy() -> list[str]:
    return [*strategy_names()] if TEST_ONLY in strategy_names() else [*strategy_names(), TEST_ONLY]


def _model(fail_on_call: int | None = None) -> ScriptedModel:
    seen = {"n": 0}

    def respond(system, messages):
        seen["n"] += 1
        if fail_on_call is not None and seen["n"] == fail_on_call:
            return "!error: 503 after 5 retries"
        role = kind(system)
        first = messages[0].content
        if role == "testgen":
            return ADD_TESTS if "add" in first else "assert negate(1) == -1"
        if role == "reflection":
            return LESSON
        if role == "agent":
            return _agent_turn(first, messages)
        if "add" in first:
            return WRONG_ADD if len(messages) == 1 and seen["n"] % 3 else RIGHT_ADD
        return "```python\ndef negate(x):\n    return x\n```"
    return ScriptedModel(responder=respond)


def _agent_turn(first: str, messages) -> ScriptedReply:
    """A tool-using agent: runs a script on its own example (never a hidden test's), then
    submits: the wrong add in a first episode, the right one once it has lessons."""
    turn = sum(1 for m in messages if m.role == "assistant")
    if "`add`" in first:
        code = (RIGHT_ADD if "earlier attempts" in first else WRONG_ADD).split("\n", 1)[1].rsplit("```", 1)[0]
        example = "print(add(1, 2))"
    else:
        code, example = "def negate(x):\n    return x\n", "print(negate(1))"
    if turn == 0:
        return ScriptedReply("Let me run it.", (ToolCall("", "python", json.dumps({"code": code + example})),))
    return ScriptedReply("", (ToolCall("", "submit", json.dumps({"code": code})),))


def _sent(messages) -> tuple:
    """What a conversation holds, message by message: role, text, tool calls, result ids."""
    return tuple((m.role, m.content, tuple((c.id, c.name, c.arguments) for c in m.tool_calls), m.tool_call_id)
                 for m in messages)


def _recorded(messages: list[dict]) -> tuple:
    return tuple((m["role"], m["content"], tuple((c["id"], c["name"], c["arguments"]) for c in m.get("tool_calls", ())),
                  m.get("tool_call_id")) for m in messages)


def _config(strategy: str, tmp_path) -> dict:
    extra: dict = {"strategy": strategy, "trials": 3}
    traits = traits_of(strategy)
    if traits is not None and traits.recalls:
        source = tmp_path / "pool-run"
        extra["recall_from"] = "namespace:pool"
        (tmp_path / "reflections" / "pool").mkdir(parents=True, exist_ok=True)
        del source
    return extra


def _hidden_text(tasks=(ADD, NEG)) -> list[str]:
    return [line.strip() for t in tasks for test in t.hidden_tests for line in test.splitlines() if line.strip()]


@pytest.mark.parametrize("strategy", every_strategy())
def test_no_hidden_test_reaches_any_prompt_and_every_prompt_is_recorded(strategy, tmp_path, process_sandbox):
    model = _model()
    result = run(tmp_path, model, process_sandbox, tasks=(ADD, NEG), **_config(strategy, tmp_path))
    records = read_trials(result.run_dir / "trials.jsonl")
    assert records and all(r.strategy == strategy for r in records)
    assert any(r.hidden_results for r in records)  # the hidden tests did run
    for call in model.calls:
        for text in _hidden_text():
            assert text not in call.prompt, f"{strategy}: hidden test {text!r} reached a prompt"
        assert "add(2, 3)" not in call.prompt and "negate(-8)" not in call.prompt
    # Every call the model received is a ModelCall event, with its messages as sent.
    # Tool calls and their results included: every turn of an agent, every tool result.
    sent = sorted((c.system or "", _sent(c.messages), tuple(t.name for t in c.tools)) for c in model.calls)
    recorded = sorted((e.system or "", _recorded(e.messages), tuple(e.tools))
                      for r in records for e in r.events if isinstance(e, ModelCall))
    assert recorded == sent
    if traits_of(strategy) is not None and traits_of(strategy).uses_tools:
        runs = [e for r in records for e in r.events if isinstance(e, ToolCallRun)]
        assert {e.name for e in runs} == {"python", "submit"} and all(e.status == "ok" for e in runs), runs
        # each result the model was given is the one recorded for its call
        given = {m.tool_call_id: m.content for c in model.calls for m in c.messages if m.role == "tool"}
        assert given and all(given[e.id] == e.result for e in runs if e.id in given)


@pytest.mark.parametrize("strategy", every_strategy())
def test_an_attempt_broken_by_a_model_error_resumes_with_no_trial_lost_or_done_twice(strategy, tmp_path,
                                                                                       process_sandbox):
    first = run(tmp_path, _model(fail_on_call=2), process_sandbox, tasks=(ADD, NEG), **_config(strategy, tmp_path))
    errors = read_errors(first.run_dir / "errors.jsonl")
    assert errors, f"{strategy}: the scripted outage broke no attempt"
    before = read_trials(first.run_dir / "trials.jsonl")
    again = resume(first, _model(), process_sandbox, tasks=(ADD, NEG))
    after = read_trials(again.run_dir / "trials.jsonl")
    keys = [r.key for r in after]
    assert len(keys) == len(set(keys)), f"{strategy}: a trial was recorded twice"
    assert {r.key for r in before} <= set(keys), f"{strategy}: a finished trial was lost"
    finals = {(r.task_id, r.attempt) for r in after if r.final}
    assert finals == {(t.task_id, 1) for t in (ADD, NEG)}, f"{strategy}: not every attempt finished"


def test_the_report_and_the_view_tell_every_strategy(tmp_path, process_sandbox):
    names = [s for s in every_strategy() if not traits_of(s).recalls]
    result = run(tmp_path, _model(), process_sandbox, tasks=(ADD, NEG), strategy=",".join(names), trials=2)
    write_report(result.run_dir)
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert set(summary["strategies"]) == set(names)
    report = (result.run_dir / "report.html").read_text()
    app = create_app(result.run_dir.parent, warm=False)
    client = TestClient(app, base_url="http://127.0.0.1")
    run_id = result.run_dir.name
    pages = [f"/runs/{run_id}", f"/runs/{run_id}/tasks", f"/runs/{run_id}/tasks/demo/add"]
    for path in pages:
        resp = client.get(path)
        assert resp.status_code == 200, path
    run_page = client.get(f"/runs/{run_id}").text
    for name in names:
        assert name in report and name in run_page, name
    # the report shows every prompt as recorded, escaped
    assert report.count("with the messages exactly as sent") == len(read_trials(result.run_dir / "trials.jsonl"))
    assert "Implement the function" in report
    # the test-only strategy's own event is rendered, with no renderer written for it
    task_page = client.get(f"/runs/{run_id}/tasks/demo/add").text
    # stop reasons per strategy; turns and tool calls by tool for the agents
    stops = {(r["strategy"], r["stop_reason"]) for r in summary["stop_reasons"]}
    assert {s for s, _ in stops} == set(names)
    agents = [n for n in names if traits_of(n).uses_tools]
    assert {a["strategy"] for a in summary["agents"]} == set(agents)
    for a in summary["agents"]:
        assert a["tool_calls_by_tool"]["python"] >= 2 and a["tool_calls_by_tool"]["submit"] >= 2
        assert a["turns"] == a["tool_calls"] and a["episode_stops"] == {"submitted": a["episodes"]}
    assert "Why attempts stopped" in report and "Agents: turns and tool calls" in report
    assert 'id="agents"' in run_page and 'id="stop-reasons"' in run_page
    # an agent's attempt is shown as its conversation: each call folded with its result,
    # then the submitted code and its verdicts
    episodes = [r for r in read_trials(result.run_dir / "trials.jsonl")
                if r.task_id == "demo/add" and traits_of(r.strategy).uses_tools]
    assert len(episodes) >= 2 and task_page.count('class="conversation"') == len(episodes)
    assert "result the model read" in task_page and "Submitted code:" in task_page
    assert "print(add(1, 2))" in task_page
    assert "choice" in task_page and "draft 1" in task_page
    # and its prompts are shown as recorded
    prompt = client.get(f"/runs/{run_id}/prompt", params={"task": "demo/add", "strategy": TEST_ONLY,
                                                           "attempt": 1, "trial": 1},
                        headers={"X-View-Token": app.policy.token})
    assert prompt.status_code == 200 and "As recorded" in prompt.text and "Implement" in prompt.text
