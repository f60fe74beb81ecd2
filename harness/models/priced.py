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
from typing import Mapping, Sequence

from harness.models.base import ChatModel, Completion, Message, Price, ToolSpec, WrappedModel
from harness.models.prices import cost_usd, price_for


class PricedModel(WrappedModel):
    """A ChatModel whose answers carry their cost at the run's prices; the cache and
    run.json key on what answers (the inner model's identity), not on the price."""

    def __init__(self, inner: ChatModel, prices: Mapping[str, Price]) -> None:
        super().__init__(inner)
        self.prices = dict(prices)

    def complete(self, messages: Sequence[Message], *, system: str | None = None, max_tokens: int = 512,
                 temperature: float = 0.0, stop: Sequence[str] | None = None, seed: int | None = None,
                 tools: Sequence[ToolSpec] = (), tool_choice: str = "auto") -> Completion:
        completion = self.inner.complete(messages, system=system, max_tokens=max_tokens, temperature=temperature,
                                         stop=stop, seed=seed, tools=tools, tool_choice=tool_choice)
        if price_for(completion.model, self.prices, {}) is None:
            return completion
        return dataclasses.replace(completion, cost_usd=answer_cost(completion, self.prices))


def answer_cost(completion: Completion, prices: Mapping[str, Price]) -> float | None:
    """What an answer costs as a run prices it: at the run's price for the model id it
    reports, else the backend's own cost (None: unknown). The budget gate
    (harness/models/gate.py) charges a call what its record will say."""
    price = price_for(completion.model, prices, {})
    return completion.cost_usd if price is None else cost_usd(completion.usage, price)
