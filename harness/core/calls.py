"""Model calls with accounting: every call's usage, cost and time lands in a Meter, and
every call is an event (harness/rundata/events.py ModelCall) holding the exact system
prompt and messages sent and the reply, so a record says what the model saw."""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from harness.models.base import ChatModel, Completion, Message, ModelError, Retry, Usage
from harness.models.gate import BudgetRefused
from harness.models.tools import ToolSpec
from harness.rundata.events import ModelCall


@dataclass
class Meter:
    """Accumulates what a trial spent on the model."""

    calls: int = 0  # calls the strategy made, cache hits included (the compute it asked for)
    cached: int = 0  # of which served from the response cache
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None  # money spent: calls a model answered
    cached_cost_usd: float | None = None  # what the cache-served answers cost when first made
    seconds: float = 0.0
    events: list[Any] = field(default_factory=list)  # the trial's events, model calls among them

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


def message_data(message: Message) -> dict[str, Any]:
    """A message as the record keeps it: its fields that carry content (the prompt
    cache's breakpoint mark is a backend hint, not content)."""
    data = {k: v for k, v in dataclasses.asdict(message).items() if k != "cache_prefix" and v not in (None, (), [])}
    data.setdefault("content", "")
    return data


def _retries(retries: Sequence[Retry]) -> list[dict[str, Any]]:
    return [{"status": r.status, "waited_s": round(r.waited_s, 3)} for r in retries]


def _event(role: str, model: ChatModel, messages: Sequence[Message], system: str | None, max_tokens: int,
           settings: CallSettings, completion: Completion | None, seconds: float, error: str | None,
           turn: int | None, tools: Sequence[ToolSpec] = (), retries: Sequence[Retry] = (),
           tool_choice: str = "auto") -> ModelCall:
    reply: dict[str, Any] = {}
    if completion is not None:
        reply = {"text": completion.text, "model": completion.model, "input_tokens": completion.usage.input_tokens,
                 "output_tokens": completion.usage.output_tokens, "cached": completion.cached,
                 "latency_s": round(completion.latency_s if completion.latency_s > 0 else seconds, 4),
                 "stop_reason": completion.stop_reason,
                 "tool_calls": [c.to_dict() for c in completion.tool_calls],
                 "draft_tokens": completion.draft_tokens, "draft_accepted": completion.draft_accepted}
        retries = completion.retries
    # What the backend was handed (behind the text protocol: the instructions in the
    # system prompt, the tool turns as text); `tools` names the tools offered.
    try:
        system, messages, _ = model.as_sent(messages, system=system, tools=tuple(tools), tool_choice=tool_choice)
    except Exception:  # a model that cannot say keeps the messages as the strategy gave them
        pass
    return ModelCall(role=role, system=system, messages=[message_data(m) for m in messages],
                     tools=[t.name for t in tools], temperature=settings.temperature, seed=settings.seed,
                     max_tokens=max_tokens, turn=turn, error=error, retries=_retries(retries), **reply)


def call(
    model: ChatModel,
    meter: Meter,
    messages: Sequence[Message],
    *,
    system: str,
    max_tokens: int,
    settings: CallSettings,
    stop: Sequence[str] | None = None,
    role: str = "model",
    turn: int | None = None,
    tools: Sequence[ToolSpec] = (),
    tool_choice: str = "auto",
) -> Completion:
    """One call, recorded as a ModelCall event in `meter.events` (the tools offered, the
    calls asked for and the backend's retries with it); raises ModelError (never
    anything else) when the backend gives up. A call the run's budget refuses raises
    BudgetRefused and is no call: nothing is recorded (it reached no server)."""
    start = time.perf_counter()
    offer = {"tools": tuple(tools), "tool_choice": tool_choice} if tools else {}
    try:
        completion = model.complete(
            messages, system=system, max_tokens=max_tokens, temperature=settings.temperature,
            seed=settings.seed, stop=stop, **offer,
        )
    except BudgetRefused:
        raise
    except Exception as exc:
        seconds = time.perf_counter() - start
        meter.failed_call(seconds)
        error = " ".join(f"{type(exc).__name__}: {exc}".split())
        meter.events.append(_event(role, model, messages, system, max_tokens, settings, None, seconds, error, turn,
                                   tools, getattr(exc, "retries", ()), tool_choice))
        if isinstance(exc, ModelError):
            raise
        # a backend bug must not kill the run: record it as a failed call
        raise ModelError(f"{model.spec}: {type(exc).__name__}: {exc}") from exc
    seconds = time.perf_counter() - start
    meter.add(completion, seconds)
    meter.events.append(_event(role, model, messages, system, max_tokens, settings, completion, seconds, None, turn,
                               tools, tool_choice=tool_choice))
    return completion
