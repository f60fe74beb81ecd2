"""`anthropic:<model>[@<base-url>]`: Claude through the `anthropic` SDK.

Prompt caching: the system prompt and the message flagged `cache_prefix=True` carry a
`cache_control` breakpoint, so a task's later trials read the stable prefix (system +
task) from Anthropic's cache at a tenth of the input price.

Claude models from Opus 4.7 / Sonnet 5 on reject sampling parameters; for those (and
for models missing from harness/data/prices.toml) the temperature is left out, and a
warning says so once, whatever temperature was asked for (0 included: the answers are
then samples, not the greedy answer); each Completion says so (`temperature_ignored`).
"""
from __future__ import annotations

import os
import threading
from typing import Any, Sequence

import anthropic

from harness.models import _api
from harness.models.base import Completion, Message, ModelConfigError, ModelSettings, Usage
from harness.models.limiter import RateLimiter
from harness.models.prices import cost_usd, load_table, lookup, price_for

KEY_ENV = "ANTHROPIC_API_KEY"
_EPHEMERAL = {"type": "ephemeral"}


class AnthropicModel:
    serialised = False  # calls run concurrently, bounded only by the limiter

    def __init__(
        self,
        model_id: str,
        settings: ModelSettings,
        *,
        api_key: str,
        base_url: str | None = None,
    ) -> None:
        self.model_id = model_id
        self.spec = f"anthropic:{model_id}" + (f"@{base_url}" if base_url else "")
        self._settings = settings
        self._served_model: str | None = None
        self._client = anthropic.Anthropic(
            api_key=api_key,
            base_url=base_url,  # None: the SDK's default (or ANTHROPIC_BASE_URL)
            timeout=settings.timeout_s,
            max_retries=settings.max_retries,
        )
        self._limiter = settings.limiter if settings.limiter is not None else RateLimiter(
            settings.requests_per_minute, settings.tokens_per_minute
        )
        self._table = load_table()
        facts = lookup(model_id, self._table)
        self.accepts_temperature = facts.accepts_temperature if facts else False
        self._warned_temperature = threading.Event()

    def describe(self) -> dict[str, Any]:
        """What run.json records of the model (see _api.describe)."""
        return _api.describe(anthropic, self.spec, self.identity, self._client.base_url, self._served_model)

    @property
    def identity(self) -> str:
        """What the response cache keys on: the model id at the base URL the client
        really uses (the spec's, else the SDK's environment variable, else its default)."""
        return f"anthropic:{self.model_id}@{str(self._client.base_url).rstrip('/')}"

    def __repr__(self) -> str:
        return f"AnthropicModel({self.spec!r})"  # never the client: it holds the key

    @property
    def limiter(self) -> RateLimiter:
        return self._limiter

    def request_body(
        self,
        messages: Sequence[Message],
        *,
        system: str | None,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None,
    ) -> dict[str, Any]:
        """The keyword arguments of `messages.create` for one call."""
        body: dict[str, Any] = {
            "model": self.model_id,
            "max_tokens": max_tokens,
            "messages": [_message(m) for m in messages],
        }
        if system:
            body["system"] = [{"type": "text", "text": system, "cache_control": _EPHEMERAL}]
        if stop:
            body["stop_sequences"] = list(stop)
        if self.accepts_temperature:
            # The SDK no longer has a `temperature` argument; older models still take it.
            body["extra_body"] = {"temperature": temperature}
        elif not self._warned_temperature.is_set():
            self._warned_temperature.set()
            _api.log.warning(
                "%s does not accept a temperature; it samples at its own default instead of %g "
                "(records say temperature_used null; its answers are not cached)",
                self.spec, temperature,
            )
        return body

    def complete(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        seed: int | None = None,  # the Messages API has no seed; it is part of the cache key only
    ) -> Completion:
        body = self.request_body(
            messages, system=system, max_tokens=max_tokens, temperature=temperature, stop=stop
        )
        reply, latency, ticket = _api.send(
            anthropic, self.spec, self._settings, self._limiter,
            lambda: self._client.messages.create(**body),
            system=system, messages=messages, max_tokens=max_tokens,
        )
        raw_usage = reply.usage
        usage = Usage(
            input_tokens=raw_usage.input_tokens or 0,
            output_tokens=raw_usage.output_tokens or 0,
            cache_read_tokens=raw_usage.cache_read_input_tokens or 0,
            cache_write_tokens=raw_usage.cache_creation_input_tokens or 0,
        )
        if ticket is not None:
            ticket.settle(usage.input_tokens + usage.output_tokens
                          + usage.cache_read_tokens + usage.cache_write_tokens)
        text = "".join(block.text for block in reply.content if block.type == "text")
        text, reason = _api.cap_reply(
            self.spec, text, max_tokens, _api.stop_reason(reply.stop_reason)
        )
        model = reply.model or self.model_id
        if self._served_model is None:
            self._served_model = reply.model or None  # as the server reports it, in its first reply
        price = price_for(model, self._settings.prices, self._table)
        return Completion(
            text=text,
            model=model,
            usage=usage,
            latency_s=latency,
            cost_usd=cost_usd(usage, price),
            stop_reason=reason,
            temperature_ignored=not self.accepts_temperature,
        )

    def close(self) -> None:
        self._client.close()


def _message(m: Message) -> dict[str, Any]:
    if m.cache_prefix:
        block = {"type": "text", "text": m.content, "cache_control": _EPHEMERAL}
        return {"role": m.role, "content": [block]}
    return {"role": m.role, "content": m.content}


def open_anthropic(rest: str, settings: ModelSettings) -> AnthropicModel:
    """Factory for the registry: `rest` is what follows `anthropic:`."""
    model_id, base_url = _api.split_model_url(rest, "anthropic")
    key = os.environ.get(KEY_ENV, "").strip()
    if not key:
        raise ModelConfigError(
            f"anthropic:{model_id} needs an API key: set {KEY_ENV} in the environment"
        )
    return AnthropicModel(model_id, settings, api_key=key, base_url=base_url)

