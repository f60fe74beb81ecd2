"""Model calls with accounting: every call's usage, cost and time lands in a Meter."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence

from harness.models.base import ChatModel, Completion, Message, ModelError, Usage


@dataclass
class Meter:
    """Accumulates what a trial spent on the model."""

    calls: int = 0  # calls the strategy made, cache hits included (the compute it asked for)
    cached: int = 0  # of which served from the response cache
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None  # money spent: calls a model answered
    cached_cost_usd: float | None = None  # what the cache-served answers cost when first made
    seconds: float = 0.0

    def add(self, completion: Completion, seconds: float) -> None:
        self.calls += 1
        self.cached += int(completion.cached)
        self.usage = self.usage + completion.usage
        if completion.cost_usd is not None:
            if completion.cached:  # no money spent now: the answer came from disk
                self.cached_cost_usd = (self.cached_cost_usd or 0.0) + completion.cost_usd
            else:
                self.cost_usd = (self.cost_usd or 0.0) + completion.cost_usd
        # The backend's own latency excludes time queued behind other workers (e.g.
        # the local model's wait for a free slot). A cache hit took no model time (it
        # may have waited for an identical call in flight: that call counts the time).
        if not completion.cached:
            self.seconds += completion.latency_s if completion.latency_s > 0 else seconds

    def failed_call(self, seconds: float) -> None:
        self.calls += 1
        self.seconds += seconds


@dataclass(frozen=True)
class CallSettings:
    temperature: float
    seed: int


def call(
    model: ChatModel,
    meter: Meter,
    messages: Sequence[Message],
    *,
    system: str,
    max_tokens: int,
    settings: CallSettings,
    stop: Sequence[str] | None = None,
) -> Completion:
    """One call; raises ModelError (never anything else) when the backend gives up."""
    start = time.perf_counter()
    try:
        completion = model.complete(
            messages, system=system, max_tokens=max_tokens, temperature=settings.temperature,
            seed=settings.seed, stop=stop,
        )
    except ModelError:
        meter.failed_call(time.perf_counter() - start)
        raise
    except Exception as exc:  # a backend bug must not kill the run: record it as a failed call
        meter.failed_call(time.perf_counter() - start)
        raise ModelError(f"{model.spec}: {type(exc).__name__}: {exc}") from exc
    meter.add(completion, time.perf_counter() - start)
    return completion
