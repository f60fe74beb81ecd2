"""`openai:<model>[@<base-url>]`: any OpenAI-compatible chat-completions server.

vLLM, Ollama, llama-server, LM Studio, or OpenAI itself, through the `openai` SDK.
The key comes from OPENAI_API_KEY when set; local servers need none, so a placeholder
is sent then. Without a base URL the SDK's default (api.openai.com, or
OPENAI_BASE_URL) is used, and a key is required.

A model that rejects the temperature (HTTP 400 naming it, as reasoning models do) is
asked again without one; from then on the backend sends none, warns once, and each
Completion says `temperature_ignored` (the model samples at its own default).
"""
from __future__ import annotations

import os
import threading
from typing import Any, Sequence

import openai

from harness.models import _api
from harness.models.base import Completion, Message, ModelConfigError, ModelError, ModelSettings, Usage
from harness.models.limiter import RateLimiter
from harness.models.prices import cost_usd, price_for

KEY_ENV = "OPENAI_API_KEY"
_NO_KEY = "no-key"  # local servers ignore the key, but the SDK insists on one


def _rejects_temperature(error: ModelError) -> bool:
    text = str(error)
    return "HTTP 400" in text and "temperature" in text.lower()


class OpenAIModel:
    serialised = False
    accepts_temperature = True  # until the server rejects one

    def __init__(
        self,
        model_id: str,
        settings: ModelSettings,
        *,
        api_key: str,
        base_url: str | None = None,
    ) -> None:
        self.model_id = model_id
        self.spec = f"openai:{model_id}" + (f"@{base_url}" if base_url else "")
        self._settings = settings
        self._served_model: str | None = None
        self._client = openai.OpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=settings.timeout_s,
            max_retries=settings.max_retries,
        )
        self._limiter = settings.limiter if settings.limiter is not None else RateLimiter(
            settings.requests_per_minute, settings.tokens_per_minute
        )
        self._temperature_lock = threading.Lock()

    def describe(self) -> dict[str, Any]:
        """What run.json records of the model (see _api.describe)."""
        return _api.describe(openai, self.spec, self.identity, self._client.base_url, self._served_model)

    @property
    def identity(self) -> str:
        """What the response cache keys on: the model id at the base URL the client
        really uses (the spec's, else the SDK's environment variable, else its default)."""
        return f"openai:{self.model_id}@{str(self._client.base_url).rstrip('/')}"

    def __repr__(self) -> str:
        return f"OpenAIModel({self.spec!r})"

    @property
    def limiter(self) -> RateLimiter:
        return self._limiter

    def complete(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Completion:
        chat: list[dict[str, Any]] = []
        if system:
            chat.append({"role": "system", "content": system})
        chat.extend({"role": m.role, "content": m.content} for m in messages)
        kwargs: dict[str, Any] = {
            "model": self.model_id,
            "messages": chat,
            # `max_tokens`, not `max_completion_tokens`: the compatible servers (vLLM,
            # Ollama, llama-server) all read the older name.
            "max_tokens": max_tokens,
        }
        if self.accepts_temperature:
            kwargs["temperature"] = temperature
        if stop:
            kwargs["stop"] = list(stop)
        if seed is not None:
            kwargs["seed"] = seed

        def send() -> tuple[Any, float, Any]:
            return _api.send(
                openai, self.spec, self._settings, self._limiter,
                lambda: self._client.chat.completions.create(**kwargs),
                system=system, messages=messages, max_tokens=max_tokens,
            )

        try:
            reply, latency, ticket = send()
        except ModelError as exc:
            if "temperature" not in kwargs or not _rejects_temperature(exc):
                raise
            with self._temperature_lock:
                if self.accepts_temperature:
                    self.accepts_temperature = False
                    _api.log.warning(
                        "%s rejects the temperature; sampling at its own default from now on "
                        "(records say temperature_used null; its answers are not cached)", self.spec,
                    )
            kwargs.pop("temperature")
            reply, latency, ticket = send()
        if not getattr(reply, "choices", None):
            raise ModelError(f"{self.spec}: the server answered with no choices")
        choice = reply.choices[0]
        usage = _usage(reply.usage)
        if ticket is not None:
            ticket.settle(usage.input_tokens + usage.output_tokens + usage.cache_read_tokens)
        text, reason = _api.cap_reply(
            self.spec, choice.message.content or "", max_tokens, _api.stop_reason(choice.finish_reason)
        )
        model = reply.model or self.model_id
        if self._served_model is None:
            self._served_model = reply.model or None  # as the server reports it, in its first reply
        price = price_for(model, self._settings.prices, {})
        return Completion(
            text=text,
            model=model,
            usage=usage,
            latency_s=latency,
            cost_usd=cost_usd(usage, price),
            stop_reason=reason,
            temperature_ignored="temperature" not in kwargs,
        )

    def close(self) -> None:
        self._client.close()


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    details = getattr(raw, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", None) or 0) if details is not None else 0
    # OpenAI counts cached tokens inside prompt_tokens; split them out as Anthropic does.
    prompt = raw.prompt_tokens or 0
    return Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=raw.completion_tokens or 0,
        cache_read_tokens=cached,
    )


def open_openai(rest: str, settings: ModelSettings) -> OpenAIModel:
    """Factory for the registry: `rest` is what follows `openai:`."""
    model_id, base_url = _api.split_model_url(rest, "openai")
    key = os.environ.get(KEY_ENV, "").strip()
    if not key:
        if base_url is None and not os.environ.get("OPENAI_BASE_URL"):
            raise ModelConfigError(
                f"openai:{model_id} without a base URL talks to api.openai.com and needs "
                f"{KEY_ENV}; set it, or name your server: openai:{model_id}@http://host:port/v1"
            )
        key = _NO_KEY
    return OpenAIModel(model_id, settings, api_key=key, base_url=base_url)
