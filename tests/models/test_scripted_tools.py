"""The scripted model replays tool calls and retries; the response cache keys on the
tools offered and on the conversation's tool turns, and stores the calls."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from harness.models import (
    CachedModel,
    Message,
    ModelConfigError,
    ModelError,
    ModelSettings,
    Retry,
    ScriptedModel,
    ScriptedReply,
    ToolCall,
    ToolSpec,
    open_model,
)
from harness.models.cache import cache_key

PYTHON = ToolSpec("python", "Run a script.", {"type": "object", "properties": {"code": {"type": "string"}},
                                              "required": ["code"]})
SUBMIT = ToolSpec("submit", "Submit.", {"type": "object", "properties": {"code": {"type": "string"}}})
ASK = [Message("user", "implement add")]


def test_a_script_file_replays_tool_calls_and_retries(tmp_path: Path):
    script = tmp_path / "agent.jsonl"
    script.write_text("\n".join(json.dumps(row) for row in [
        {"tool_calls": [{"name": "python", "arguments": {"code": "print(1)"}}]},
        {"reply": "Looks right.", "tool_calls": [{"id": "mine", "name": "submit", "arguments": "{broken"}],
         "retries": [["429", 1.5], ["timeout", 0.5]]},
    ]) + "\n")
    model = open_model(f"scripted:{script}")
    first = model.complete(ASK, tools=[PYTHON, SUBMIT])
    assert first.tool_calls == (ToolCall("call_1_0", "python", '{"code": "print(1)"}'),)
    assert first.stop_reason == "tool_use" and first.text == ""
    history = [*ASK, Message("assistant", "", tool_calls=first.tool_calls),
               Message("tool", "1\n", tool_call_id="call_1_0", name="python")]
    second = model.complete(history, tools=[PYTHON, SUBMIT], tool_choice="submit")
    assert second.text == "Looks right."
    assert second.tool_calls == (ToolCall("mine", "submit", "{broken"),)  # replayed as written
    assert second.retries == (Retry("429", 1.5), Retry("timeout", 0.5))
    seen = model.calls[1]
    assert seen.tools == (PYTHON, SUBMIT) and seen.tool_choice == "submit"
    assert "python" in seen.prompt and "1\n" in seen.prompt  # tool turns are part of what it saw


def test_inline_replies_tool_calls_and_errors_with_retries():
    model = ScriptedModel([
        ToolCall("", "python", '{"code": "x"}'),
        ScriptedReply("!error: overloaded", retries=(Retry("529", 2.0),)),
        "plain",
    ])
    assert model.complete(ASK).tool_calls[0].id == "call_1_0"
    with pytest.raises(ModelError, match="overloaded") as err:
        model.complete(ASK)
    assert err.value.retries == (Retry("529", 2.0),)
    assert model.complete(ASK).tool_calls == ()


def test_a_bad_tool_call_line_names_the_file_and_line(tmp_path: Path):
    script = tmp_path / "bad.jsonl"
    script.write_text('{"reply": "ok"}\n{"tool_calls": [{"arguments": {}}]}\n')
    with pytest.raises(ModelConfigError, match=r"bad.jsonl:2: .*'name'"):
        open_model(f"scripted:{script}")


# --------------------------------------------------------------------------- cache


def _old_key(identity: str, messages, **kw) -> str:
    """The key as the cache computed it before tools existed (format 2)."""
    payload = {"format": 2, "model": identity, "system": kw["system"],
               "messages": [[m.role, m.content] for m in messages], "max_tokens": kw["max_tokens"],
               "temperature": float(kw["temperature"]), "stop": None, "seed": kw["seed"]}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def test_a_call_without_tools_keeps_its_old_key():
    kw = dict(system="s", max_tokens=10, temperature=0.0, stop=None, seed=3)
    assert cache_key("m", ASK, **kw) == _old_key("m", ASK, **kw)


def test_the_key_covers_tools_tool_choice_and_tool_turns():
    kw = dict(system="s", max_tokens=10, temperature=0.0, stop=None, seed=3)
    base = cache_key("m", ASK, **kw, tools=(PYTHON,))
    other_schema = ToolSpec("python", "Run a script.", {"type": "object", "properties": {"src": {"type": "string"}}})
    keys = {
        base,
        cache_key("m", ASK, **kw),
        cache_key("m", ASK, **kw, tools=(PYTHON, SUBMIT)),
        cache_key("m", ASK, **kw, tools=(PYTHON,), tool_choice="required"),
        cache_key("m", ASK, **kw, tools=(ToolSpec("python", "Run it.", PYTHON.parameters),)),
        cache_key("m", ASK, **kw, tools=(other_schema,)),
        cache_key("m", [Message("assistant", "", tool_calls=(ToolCall("a", "python", "{}"),))], **kw),
        cache_key("m", [Message("assistant", "", tool_calls=(ToolCall("a", "python", '{"code": 1}'),))], **kw),
        cache_key("m", [Message("tool", "out", tool_call_id="a")], **kw),
        cache_key("m", [Message("tool", "out", tool_call_id="b")], **kw),
    }
    assert len(keys) == 10
    assert cache_key("m", ASK, **kw, tools=(PYTHON,)) == base  # and it is stable


def test_tool_calls_are_stored_and_replayed_by_the_cache(tmp_path: Path):
    inner = ScriptedModel(responder=lambda s, m: ScriptedReply(
        "calling", (ToolCall("c7", "python", '{"code": "1"}'),), retries=(Retry("500", 0.5),)))
    model = CachedModel(inner, tmp_path)
    first = model.complete(ASK, tools=[PYTHON])
    hit = model.complete(ASK, tools=[PYTHON])
    assert hit.cached and not first.cached and len(inner.calls) == 1
    assert hit.tool_calls == first.tool_calls == (ToolCall("c7", "python", '{"code": "1"}'),)
    assert hit.text == "calling" and hit.stop_reason == "tool_use"
    assert first.retries == (Retry("500", 0.5),) and hit.retries == ()  # a hit made no call
    model.complete(ASK, tools=[PYTHON, SUBMIT])  # other tools offered: a miss
    model.complete(ASK)  # no tools: a miss
    assert len(inner.calls) == 3
    assert inner.calls[1].tools == (PYTHON, SUBMIT) and inner.calls[2].tools == ()


def test_an_entry_written_before_tools_still_reads(tmp_path: Path):
    inner = ScriptedModel(["old answer"])
    model = CachedModel(inner, tmp_path)
    kw = dict(system=None, max_tokens=512, temperature=0.0, stop=None, seed=None)
    key = _old_key(model.identity, ASK, **kw)
    path = model.path_for(key)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"format": 2, "spec": "x", "identity": model.identity, "completion": {
        "text": "from before", "model": "m", "usage": {"input_tokens": 1, "output_tokens": 2,
                                                      "cache_read_tokens": 0, "cache_write_tokens": 0},
        "latency_s": 0.1, "cost_usd": None, "cached": False, "stop_reason": "end_turn",
        "temperature_ignored": False}}))
    hit = model.complete(ASK)
    assert hit.cached and hit.text == "from before" and hit.tool_calls == () and inner.calls == []


def test_a_model_error_keeps_its_retries_when_pickled():
    import pickle

    err = pickle.loads(pickle.dumps(ModelError("gave up", retries=(Retry("429", 1.0),), status="500")))
    assert (str(err), err.retries, err.status) == ("gave up", (Retry("429", 1.0),), "500")


def test_a_message_rebuilt_from_a_record_gets_its_calls_back():
    call = ToolCall("a", "python", "{}")
    assert Message("assistant", "", tool_calls=[call.to_dict()]).tool_calls == (call,)
    with pytest.raises(ValueError, match="needs the tool_call_id"):
        Message("tool", "result")
    with pytest.raises(ValueError, match="cannot carry tool calls"):
        Message("user", "x", tool_calls=(call,))
