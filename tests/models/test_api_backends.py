"""The anthropic and openai backends, with their real SDK clients, against the stub server."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from harness.models import Message, ModelConfigError, ModelError, ModelSettings, Price, open_model
from harness.models.limiter import RateLimiter
from tests.doubles.stub_server import (
    LongReply,
    Malformed,
    RateLimited,
    Reply,
    Stall,
    Status,
    StubRequest,
)


BACKENDS = ["anthropic", "openai"]


def spec_for(backend: str, stub, model: str | None = None) -> str:
    if backend == "anthropic":
        return f"anthropic:{model or 'claude-sonnet-4-6'}@{stub.url}"
    return f"openai:{model or 'qwen2.5-coder'}@{stub.openai_url}"


def ask(model, text: str = "write f", **kwargs):
    return model.complete([Message("user", text)], **kwargs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_success_reports_text_usage_and_stop_reason(backend, stub, settings):
    stub.script(Reply(lambda req: f"echo: {req.prompt_text.splitlines()[-1]}"))
    model = open_model(spec_for(backend, stub), settings)
    completion = ask(model, "one two three", system="be brief")
    assert completion.text == "echo: one two three"
    usage = completion.usage  # stub: one token per word of system + messages
    assert usage.input_tokens + usage.cache_write_tokens + usage.cache_read_tokens == 5
    assert completion.usage.output_tokens == 4
    assert completion.stop_reason == "end_turn"
    assert completion.latency_s > 0
    assert not completion.cached
    assert len(stub.requests) == 1 and stub.requests[0].api == backend


def test_anthropic_cost_from_the_price_table(stub, settings):
    model = open_model(spec_for("anthropic", stub, "claude-haiku-4-5"), settings)
    completion = ask(model, "a b c d")  # 4 input tokens, reply "ok" = 1 output token
    assert completion.model == "claude-haiku-4-5"
    assert completion.cost_usd == pytest.approx((4 * 1.0 + 1 * 5.0) / 1e6)


def test_settings_prices_override_the_table_by_model_id(stub):
    settings = ModelSettings(prices={"claude-haiku-4-5": Price(input=100.0, output=1000.0)})
    model = open_model(spec_for("anthropic", stub, "claude-haiku-4-5-20251001"), settings)
    completion = ask(model, "a b c d")
    assert completion.cost_usd == pytest.approx((4 * 100.0 + 1 * 1000.0) / 1e6)


def test_openai_cost_only_when_priced(stub, settings):
    unpriced = ask(open_model(spec_for("openai", stub, "my-model"), settings))
    assert unpriced.cost_usd is None
    priced_settings = dataclasses.replace(settings, prices={"my-model": Price(input=1.0, output=2.0)})
    priced = ask(open_model(spec_for("openai", stub, "my-model"), priced_settings), "a b")
    assert priced.cost_usd == pytest.approx((2 * 1.0 + 1 * 2.0) / 1e6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_429_waits_as_long_as_retry_after_says(backend, stub, settings):
    stub.script(RateLimited(retry_after=1.5), Reply("after the wait"))
    model = open_model(spec_for(backend, stub), settings)
    completion = ask(model)
    assert completion.text == "after the wait"
    assert len(stub.requests) == 2
    gap = stub.requests[1].received_at - stub.requests[0].received_at
    # The SDKs' own first backoff is at most 0.5 s: only the header explains 1.5 s.
    # (A lower bound only: a loaded machine may add time, never remove it.)
    assert gap >= 1.45, gap


@pytest.mark.parametrize("backend", BACKENDS)
def test_500_then_success(backend, stub, settings):
    stub.script(Status(500), Status(503), Reply("recovered"))
    completion = ask(open_model(spec_for(backend, stub), settings))
    assert completion.text == "recovered"
    assert len(stub.requests) == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_retries_exhausted_raise_model_error_saying_what_failed(backend, stub, settings):
    stub.script(*[Status(500, message="backend on fire")] * 3, Reply("too late"))
    model = open_model(spec_for(backend, stub), settings)
    with pytest.raises(ModelError) as err:
        ask(model)
    message = str(err.value)
    assert "HTTP 500" in message and "3 attempts" in message and "backend on fire" in message
    assert len(stub.requests) == 3  # max_retries=2: one call and two retries


@pytest.mark.parametrize("backend", BACKENDS)
def test_client_errors_are_not_retried(backend, stub, settings):
    stub.script(Status(400, message="bad request body"))
    with pytest.raises(ModelError, match="HTTP 400.*not retried"):
        ask(open_model(spec_for(backend, stub), settings))
    assert len(stub.requests) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_stalled_response_hits_the_timeout(backend, stub):
    settings = ModelSettings(timeout_s=0.5, max_retries=1)
    stub.script(Stall(10), Stall(10))
    model = open_model(spec_for(backend, stub), settings)
    with pytest.raises(ModelError, match=r"no response within 0.5 s \(2 attempts\)"):
        ask(model)
    assert len(stub.requests) == 2
    # The retry came only after the first request had waited out its timeout.
    assert stub.requests[1].received_at - stub.requests[0].received_at >= 0.5


@pytest.mark.parametrize("backend", BACKENDS)
def test_stall_then_success_is_retried(backend, stub):
    # The stall waits out the timeout; the reply after it must come within it on any machine.
    settings = ModelSettings(timeout_s=2.0, max_retries=2)
    stub.script(Stall(30), Reply("second try"))
    assert ask(open_model(spec_for(backend, stub), settings)).text == "second try"


@pytest.mark.parametrize("backend", BACKENDS)
def test_malformed_json_is_a_model_error(backend, stub, settings):
    stub.script(Malformed())
    with pytest.raises(ModelError, match="malformed response"):
        ask(open_model(spec_for(backend, stub), settings))


@pytest.mark.parametrize("backend", BACKENDS)
def test_over_long_reply_is_cut_and_marked(backend, stub, settings):
    stub.script(LongReply(chars=2_000_000))
    completion = ask(open_model(spec_for(backend, stub), settings), max_tokens=100)
    assert completion.stop_reason == "max_tokens"
    assert 0 < len(completion.text) <= 100 * 32


@pytest.mark.parametrize("backend", BACKENDS)
def test_connection_refused_is_a_model_error(backend, settings):
    from tests.doubles.stub_server import StubServer

    with StubServer() as dead:
        spec = spec_for(backend, dead)
    # The server is gone: nothing listens on that port any more.
    with pytest.raises(ModelError, match="cannot connect"):
        ask(open_model(spec, dataclasses.replace(settings, max_retries=0)))


def test_anthropic_prompt_caching_breakpoints(stub, settings):
    model = open_model(spec_for("anthropic", stub), settings)
    task = "Task: implement the function described here " * 5
    messages = [
        Message("user", task, cache_prefix=True),
        Message("assistant", "first try"),
        Message("user", "it failed; try again"),
    ]
    first = model.complete(messages, system="You write Python.")
    second = model.complete(messages, system="You write Python.")
    body = stub.requests[0].body
    assert body["system"] == [
        {"type": "text", "text": "You write Python.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][1]["content"] == "first try"  # no breakpoint elsewhere
    assert body["messages"][2]["content"] == "it failed; try again"
    prefix_tokens = 3 + len(task.split())
    assert first.usage.cache_write_tokens == prefix_tokens and first.usage.cache_read_tokens == 0
    assert second.usage.cache_read_tokens == prefix_tokens and second.usage.cache_write_tokens == 0
    # claude-sonnet-4-6: cache write 3.75, cache read 0.30, input 3, output 15 per MTok
    rest = first.usage.input_tokens
    assert second.cost_usd == pytest.approx((prefix_tokens * 0.30 + rest * 3 + 1 * 15) / 1e6)
    assert first.cost_usd == pytest.approx((prefix_tokens * 3.75 + rest * 3 + 1 * 15) / 1e6)


def test_anthropic_temperature_only_for_models_that_accept_it(stub, settings):
    ask(open_model(spec_for("anthropic", stub, "claude-sonnet-4-6"), settings), temperature=0.7)
    ask(open_model(spec_for("anthropic", stub, "claude-opus-4-7"), settings), temperature=0.7)
    assert stub.requests[0].body["temperature"] == 0.7
    assert "temperature" not in stub.requests[1].body


def test_anthropic_stop_sequences(stub, settings):
    ask(open_model(spec_for("anthropic", stub), settings), stop=["\n```"])
    assert stub.requests[0].body["stop_sequences"] == ["\n```"]


def test_openai_passes_seed_stop_temperature_and_system(stub, settings):
    model = open_model(spec_for("openai", stub), settings)
    model.complete([Message("user", "hi")], system="sys", temperature=0.3, seed=42, stop=["END"],
                   max_tokens=77)
    body = stub.requests[0].body
    assert body["seed"] == 42 and body["temperature"] == 0.3 and body["stop"] == ["END"]
    assert body["max_tokens"] == 77
    assert body["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]


def test_openai_without_key_sends_a_placeholder_to_a_named_server(stub, settings, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    ask(open_model(spec_for("openai", stub), settings))
    assert stub.requests[0].headers["authorization"] == "Bearer no-key"


def test_openai_without_key_or_server_is_a_config_error(settings, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        open_model("openai:gpt-x", settings)


@pytest.mark.parametrize("backend,key_env", [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")])
def test_key_is_sent_but_never_in_results_errors_or_cache(backend, key_env, stub, settings, tmp_path: Path):
    key = os.environ[key_env]
    cached_settings = dataclasses.replace(settings, cache_dir=tmp_path / "cache")
    model = open_model(spec_for(backend, stub), cached_settings)
    completion = ask(model)
    stub.script(*[Status(500)] * 3)
    with pytest.raises(ModelError) as err:
        ask(model, "another prompt")
    sent = stub.requests[0].headers
    assert key in (sent.get("authorization", "") + sent.get("x-api-key", ""))  # the check can fail
    for text in (repr(completion), str(completion), repr(model), model.spec, str(err.value),
                 repr(err.value.__cause__)):
        assert key not in text
    for path in (tmp_path / "cache").rglob("*"):
        if path.is_file():
            assert key not in path.read_text()


class RecordingLimiter(RateLimiter):
    """The real limiter, keeping every ticket it hands out."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.tickets: list = []

    def acquire(self, tokens: int = 0):
        ticket = super().acquire(tokens)
        self.tickets.append(ticket)
        return ticket


@pytest.mark.parametrize("backend", BACKENDS)
def test_limiter_is_applied_by_the_backend(backend, stub, settings):
    model = open_model(spec_for(backend, stub), dataclasses.replace(settings, requests_per_minute=2))
    assert model.limiter.requests_per_minute == 2
    # The same limit over a 1 s window instead of 60 s, so the test runs quickly.
    model._limiter = limiter = RecordingLimiter(requests_per_minute=2, window_s=1.0)
    stub.script(Reply("a b c"), Reply("a b c"), Status(400), Reply("a b c"), Reply("a b c"))
    outcomes = []
    for _ in range(5):
        try:
            outcomes.append(ask(model, "one two").usage)
        except ModelError:
            outcomes.append(None)
    assert len(stub.requests) == 5 and len(limiter.tickets) == 5  # every request took a ticket
    starts = [t.at for t in limiter.tickets]  # the limiter's own admission times
    assert all(later - earlier >= 1.0 for earlier, later in zip(starts, starts[2:])), starts
    # Each ticket was settled to what the call really used; the failed one to zero.
    used = [u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens if u else 0
            for u in outcomes]
    assert [t.tokens for t in limiter.tickets] == used and used[2] == 0 and used[0] > 0


def test_stub_request_text_helper():
    req = StubRequest("anthropic", "/v1/messages", {}, {"system": "s", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "t"}]}]}, b"", 0.0)
    assert req.prompt_text == "s\nt"


def test_openai_model_that_rejects_the_temperature_is_asked_again_without_one(stub, settings):
    stub.script(
        Status(400, message="Unsupported value: 'temperature' does not support 0.0 with this model."),
        Reply("first"), Reply("second"),
    )
    model = open_model(spec_for("openai", stub), settings)
    first = ask(model, temperature=0.0)
    second = ask(model, temperature=0.0)
    assert [r.body.get("temperature") for r in stub.requests] == [0.0, None, None]
    assert first.text == "first" and first.temperature_ignored and second.temperature_ignored
    assert model.accepts_temperature is False


def test_openai_other_bad_requests_are_errors(stub, settings):
    stub.script(Status(400, message="messages: too long"))
    model = open_model(spec_for("openai", stub), settings)
    with pytest.raises(ModelError, match="too long"):
        ask(model, temperature=0.0)
    assert len(stub.requests) == 1 and model.accepts_temperature is True


def test_anthropic_completion_says_when_the_temperature_was_left_out(stub, settings):
    kept = ask(open_model(spec_for("anthropic", stub, "claude-sonnet-4-6"), settings), temperature=0.0)
    dropped = ask(open_model(spec_for("anthropic", stub, "claude-opus-4-7"), settings), temperature=0.0)
    assert kept.temperature_ignored is False and dropped.temperature_ignored is True
