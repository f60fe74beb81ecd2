"""Prices for any model: a wrapper that prices each answer from the run's price tables.

Backends price what they know (Anthropic's models from harness/data/prices.toml); this
wrapper prices every answer by the model id it reports and the run's own prices (a
user's table, the run TOML's `prices`, `--price`), so an OpenAI-compatible server, the
local model or a script gets a cost too. An answer with no price keeps the backend's
cost (None: unknown, never 0). It sits outside the response cache, so an answer the
cache serves is priced at today's prices; `inner` is the model it wraps.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from harness.models.base import Capabilities, ChatModel, Completion, Message, Price, ToolSpec
from harness.models.prices import cost_usd, price_for


class PricedModel(ChatModel):
    """A ChatModel whose answers carry their cost at the run's prices."""

    def __init__(self, inner: ChatModel, prices: Mapping[str, Price]) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.prices = dict(prices)

    @property
    def identity(self) -> str:  # the cache and run.json key on what answers, not on the price
        return self.inner.identity

    @property
    def capabilities(self) -> Capabilities:  # type: ignore[override]
        return self.inner.capabilities

    @property
    def accepts_temperature(self) -> bool:  # type: ignore[override]
        return self.inner.accepts_temperature

    @property
    def concurrency_note(self) -> str | None:  # type: ignore[override]
        return self.inner.concurrency_note

    @property
    def preferred_tool_protocol(self) -> str:
        return self.inner.preferred_tool_protocol

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def as_sent(self, messages: Sequence[Message], *, system: str | None = None,
                tools: Sequence[ToolSpec] = (), tool_choice: str = "auto"):
        return self.inner.as_sent(messages, system=system, tools=tools, tool_choice=tool_choice)

    def complete(self, messages: Sequence[Message], *, system: str | None = None, max_tokens: int = 512,
                 temperature: float = 0.0, stop: Sequence[str] | None = None, seed: int | None = None,
                 tools: Sequence[ToolSpec] = (), tool_choice: str = "auto") -> Completion:
        completion = self.inner.complete(messages, system=system, max_tokens=max_tokens, temperature=temperature,
                                         stop=stop, seed=seed, tools=tools, tool_choice=tool_choice)
        price = price_for(completion.model, self.prices, {})
        if price is None:
            return completion
        return dataclasses.replace(completion, cost_usd=cost_usd(completion.usage, price))

    def close(self) -> None:
        self.inner.close()
