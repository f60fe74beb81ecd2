"""Tool calls, streaming and counted retries of the anthropic and openai backends, with
their real SDK clients, against the stub server on 127.0.0.1."""
from __future__ import annotations

import dataclasses
import json

import pytest

from harness.models import Message, ModelError, ModelSettings, Retry, ToolCall, ToolSpec, open_model
from tests.doubles.stub_server import CutStream, GarbageStream, Malformed, RateLimited, Reply, Stall, Status

BACKENDS = ["anthropic", "openai"]
PYTHON = ToolSpec("python", "Run a Python script; returns its output.", {
    "type": "object",
    "properties": {"code": {"type": "string"}, "stdin": {"type": "string"}},
    "required": ["code"],
})
SUBMIT = ToolSpec("submit", "Submit the final program.", {
    "type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"],
})
CALL = {"id": "call_a1", "name": "python", "arguments": json.dumps({"code": "print(1 + 1)", "stdin": ""})}


def spec_for(backend: str, stub) -> str:
    if backend == "anthropic":
        return f"anthropic:claude-sonnet-4-6@{stub.url}"
    return f"openai:qwen2.5-coder@{stub.openai_url}"


def streaming(settings: ModelSettings) -> ModelSettings:
    return dataclasses.replace(settings, stream=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tools_are_offered_and_the_call_comes_back(backend, stub, settings):
    stub.script(Reply("Let me run it.", tool_calls=(CALL,)))
    model = open_model(spec_for(backend, stub), settings)
    completion = model.complete([Message("user", "add two numbers")], tools=[PYTHON, SUBMIT],
                                tool_choice="required")
    assert completion.tool_calls == (ToolCall("call_a1", "python", CALL["arguments"]),)
    assert json.loads(completion.tool_calls[0].arguments) == {"code": "print(1 + 1)", "stdin": ""}
    assert completion.text == "Let me run it." and completion.stop_reason == "tool_use"
    assert completion.retries == ()
    body = stub.requests[0].body
    if backend == "anthropic":
        assert [t["name"] for t in body["tools"]] == ["python", "submit"]
        assert body["tools"][0]["input_schema"]["required"] == ["code"]
        assert body["tool_choice"] == {"type": "any"}
    else:
        assert body["tools"][0] == {"type": "function", "function": PYTHON.to_dict()}
        assert body["tool_choice"] == "required"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_named_tool_choice_and_no_tools_at_all(backend, stub, settings):
    model = open_model(spec_for(backend, stub), settings)
    model.complete([Message("user", "go")], tools=[PYTHON, SUBMIT], tool_choice="submit")
    model.complete([Message("user", "go")])  # a caller that passes no tools sends none
    named, plain = stub.requests[0].body, stub.requests[1].body
    if backend == "anthropic":
        assert named["tool_choice"] == {"type": "tool", "name": "submit"}
    else:
        assert named["tool_choice"] == {"type": "function", "function": {"name": "submit"}}
    assert "tools" not in plain and "tool_choice" not in plain
    with pytest.raises(ValueError, match="tool_choice 'nothing'"):
        model.complete([Message("user", "go")], tools=[PYTHON], tool_choice="nothing")


@pytest.mark.parametrize("backend", BACKENDS)
def test_tool_turns_are_sent_in_the_api_s_own_shape(backend, stub, settings):
    call = ToolCall("call_a1", "python", CALL["arguments"])
    other = ToolCall("call_b2", "python", json.dumps({"code": "print(2)"}))
    history = [
        Message("user", "task", cache_prefix=True),
        Message("assistant", "two scripts", tool_calls=(call, other)),
        Message("tool", "2\n", tool_call_id="call_a1", name="python"),
        Message("tool", "exit 1: NameError", tool_call_id="call_b2", name="python"),
        Message("user", "go on"),
    ]
    open_model(spec_for(backend, stub), settings).complete(history, system="sys", tools=[PYTHON])
    sent = stub.requests[0].body["messages"]
    if backend == "anthropic":
        assert [m["role"] for m in sent] == ["user", "assistant", "user"]  # results + text: one user turn
        assert sent[1]["content"] == [
            {"type": "text", "text": "two scripts"},
            {"type": "tool_use", "id": "call_a1", "name": "python", "input": {"code": "print(1 + 1)", "stdin": ""}},
            {"type": "tool_use", "id": "call_b2", "name": "python", "input": {"code": "print(2)"}},
        ]
        assert sent[2]["content"] == [
            {"type": "tool_result", "tool_use_id": "call_a1", "content": "2\n"},
            {"type": "tool_result", "tool_use_id": "call_b2", "content": "exit 1: NameError"},
            {"type": "text", "text": "go on"},
        ]
    else:
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]
        assert sent[2]["tool_calls"][1] == {
            "id": "call_b2", "type": "function", "function": {"name": "python", "arguments": '{"code": "print(2)"}'}}
        assert sent[3] == {"role": "tool", "tool_call_id": "call_a1", "content": "2\n"}


def test_openai_streamed_text_and_tool_calls_are_assembled(stub, settings):
    second = {"id": "call_z9", "name": "submit", "arguments": json.dumps({"code": "def f():\n    return 'x'\n"})}
    stub.script(Reply("Running both of these now.", tool_calls=(CALL, second)))
    model = open_model(spec_for("openai", stub), streaming(settings))
    completion = model.complete([Message("user", "one two three")], tools=[PYTHON, SUBMIT])
    body = stub.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert completion.text == "Running both of these now."
    assert completion.tool_calls == (ToolCall("call_a1", "python", CALL["arguments"]),
                                     ToolCall("call_z9", "submit", second["arguments"]))
    assert completion.stop_reason == "tool_use"
    assert completion.usage.input_tokens == 3 and completion.usage.output_tokens > 0  # from the last chunk
    assert model.describe()["stream"] is True and model.capabilities.streaming


def test_openai_streamed_plain_text(stub, settings):
    stub.script(Reply("a fairly long answer, cut into many deltas by the stub"))
    completion = open_model(spec_for("openai", stub), streaming(settings)).complete([Message("user", "hi")])
    assert completion.text == "a fairly long answer, cut into many deltas by the stub"
    assert completion.tool_calls == () and completion.stop_reason == "end_turn"


@pytest.mark.parametrize("backend,stream", [("anthropic", False), ("openai", False), ("openai", True)])
def test_retries_are_counted_by_status(backend, stream, stub, settings):
    settings = dataclasses.replace(settings, max_retries=3, timeout_s=5.0, stream=stream)  # nothing stalls: wide
    stub.script(RateLimited(retry_after=0.2), Status(500), Status(503), Reply("fine", tool_calls=(CALL,)))
    completion = open_model(spec_for(backend, stub), settings).complete([Message("user", "x")], tools=[PYTHON])
    assert [r.status for r in completion.retries] == ["429", "500", "503"]
    assert completion.retries[0].waited_s == pytest.approx(0.2)  # retry-after honoured, and counted
    assert all(0 < r.waited_s <= 8 for r in completion.retries)
    assert completion.tool_calls[0].name == "python" and len(stub.requests) == 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_timeouts_and_connection_errors_are_counted(backend, stub):
    # The stall waits out the timeout; the reply after it must come within it on any machine.
    settings = ModelSettings(timeout_s=2.0, max_retries=2)
    stub.script(Stall(30), Reply("after a timeout"))
    completion = open_model(spec_for(backend, stub), settings).complete([Message("user", "x")])
    assert completion.text == "after a timeout"
    assert [r.status for r in completion.retries] == ["timeout"]
    from tests.doubles.stub_server import StubServer

    with StubServer() as dead:
        spec = spec_for(backend, dead)
    with pytest.raises(ModelError) as err:
        open_model(spec, settings).complete([Message("user", "x")])
    assert "cannot connect" in str(err.value) and "(3 attempts)" in str(err.value)
    assert [r.status for r in err.value.retries] == ["connection", "connection"]
    assert err.value.status == "connection"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_model_error_that_gave_up_carries_its_retries(backend, stub, settings):
    stub.script(Status(503), Status(500), Status(502), Reply("too late"))
    with pytest.raises(ModelError) as err:
        open_model(spec_for(backend, stub), settings).complete([Message("user", "x")])
    assert [r.status for r in err.value.retries] == ["503", "500"]  # max_retries=2
    assert err.value.status == "502" and "after 3 attempts" in str(err.value)
    assert all(isinstance(r, Retry) and r.waited_s > 0 for r in err.value.retries)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_wait_over_two_minutes_is_not_retried_and_says_so(backend, stub, settings):
    stub.script(RateLimited(retry_after=600), Reply("never asked"))
    with pytest.raises(ModelError, match=r"HTTP 429 .*asks to wait 600 s, more than 120 s") as err:
        open_model(spec_for(backend, stub), settings).complete([Message("user", "x")])
    assert err.value.retries == () and err.value.status == "429" and len(stub.requests) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_garbage_is_an_error_not_retried(backend, stub, settings):
    stub.script(Malformed())
    with pytest.raises(ModelError, match="malformed response") as err:
        open_model(spec_for(backend, stub), settings).complete([Message("user", "x")])
    assert err.value.retries == () and len(stub.requests) == 1


def test_a_garbage_stream_is_a_model_error(stub, settings):
    stub.script(GarbageStream())
    with pytest.raises(ModelError) as err:
        open_model(spec_for("openai", stub), streaming(settings)).complete([Message("user", "x")])
    assert "malformed response" in str(err.value) and err.value.retries == ()


def test_a_stream_cut_midway_is_retried_and_counted(stub, settings):
    stub.script(CutStream(), Reply("whole this time", tool_calls=(CALL,)))
    completion = open_model(spec_for("openai", stub), streaming(settings)).complete(
        [Message("user", "x")], tools=[PYTHON])
    assert completion.text == "whole this time" and completion.tool_calls[0].id == "call_a1"
    assert [r.status for r in completion.retries] == ["connection"]
