"""The run's budget as a cap: every model call that would reach the backend passes here.

`--max-calls` and `--max-cost` are enforced before a call starts, in one place: the
`GatedModel` wraps the backend itself (inside the response cache, whose hits reach no
server and cost nothing), so every strategy, every role and every agent turn goes
through it. A call may start only when

* fewer than `max_calls` calls have started (answered or failed: each reached the
  server), and
* the dollars spent (answered calls at their real usage) plus the worst case of the
  calls in flight plus its own worst case stay within `max_cost`.

A call's worst case is its input at an upper bound of its tokens (`input_bound`: the
UTF-8 bytes of everything sent, since a byte-level tokenizer's token covers at least
one byte, plus a margin per message and per call for the chat template) and its whole
`max_tokens` of output, at the run's price (input at the dearest of the input and
prompt-cache rates). A call that does not fit while others are in flight waits for
them to settle (their real usage is usually far below their worst case); one that does
not fit with nothing in flight is refused: `BudgetRefused`, and the gate stays closed
for the rest of the session, so the run stops where it is. Thread safe: one gate per
run, shared by every worker.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from harness.models.base import ChatModel, Completion, Message, Price, ToolSpec, WrappedModel
from harness.models.priced import answer_cost
from harness.models.prices import cost_usd

# Tokens a chat template may add around one message (role markers, separators), and
# around one call (the template's header, the assistant's turn opening). With tools, a
# provider adds its own tool-use instructions (Anthropic's: a few hundred tokens).
MESSAGE_MARGIN = 16
CALL_MARGIN = 64
TOOLS_MARGIN = 1024
TOOL_MARGIN = 64


class BudgetRefused(Exception):
    """The run's budget refused a call before it started; `stop` says which budget
    ({kind, flag, limit}). Not a ModelError: the call never happened."""

    def __init__(self, stop: Mapping[str, Any]) -> None:
        self.stop = dict(stop)
        super().__init__(f"the run's budget refused a model call: {self.stop['flag']} {self.stop['limit']} "
                         "would be passed")


def input_bound(system: str | None, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()) -> int:
    """An upper bound of a call's input tokens, with no tokenizer and no network (see
    the module's docstring)."""
    n = CALL_MARGIN + len((system or "").encode("utf-8"))
    for m in messages:
        n += MESSAGE_MARGIN + len(m.content.encode("utf-8")) + len((m.tool_call_id or "").encode("utf-8"))
        for c in m.tool_calls:
            n += MESSAGE_MARGIN + len(f"{c.id}{c.name}{c.arguments}".encode("utf-8"))
    if tools:
        n += TOOLS_MARGIN
    for t in tools:
        n += TOOL_MARGIN + len(json.dumps({"name": t.name, "description": t.description,
                                           "parameters": dict(t.parameters)}).encode("utf-8"))
    return n


def worst_case_usd(price: Price, input_tokens: int, max_tokens: int) -> float:
    dearest_input = max(price.input, price.cache_read, price.cache_write)
    return (input_tokens * dearest_input + max(0, int(max_tokens)) * price.output) / 1_000_000


def charge(completion: Completion | None, prices: Mapping[str, Price], price: Price | None) -> float:
    """What a call is charged: an answer as the run prices answers (its record says the
    same), at the run's model's price when no price names the model it reports; a failed
    call (None) nothing."""
    if completion is None:
        return 0.0
    cost = answer_cost(completion, prices)
    if cost is None and price is not None:
        cost = cost_usd(completion.usage, price)
    return float(cost or 0.0)


@dataclass
class Reservation:
    usd: float


class BudgetGate:
    """The run's calls and dollars, with the calls in flight; `reserve` before a call,
    `settle` after it. `price`: the run's model's price (required for `max_cost`);
    `prices`: the run's own price overrides (how answers are priced, as PricedModel)."""

    def __init__(self, max_calls: int | None = None, max_cost: float | None = None, *, price: Price | None = None,
                 prices: Mapping[str, Price] | None = None) -> None:
        if max_cost is not None and price is None:
            raise ValueError("max_cost needs the model's price")
        self.max_calls = max_calls
        self.max_cost = max_cost
        self.price = price
        self.prices = dict(prices or {})
        self.calls = 0  # started, every session (a resume seeds the earlier ones)
        self.usd = 0.0  # spent: settled calls at their real usage
        self._reserved = 0.0
        self._in_flight = 0
        self._stop: dict[str, Any] | None = None
        self._cond = threading.Condition()

    @property
    def active(self) -> bool:
        return self.max_calls is not None or self.max_cost is not None

    def seed(self, calls: int, usd: float) -> None:
        """What earlier sessions of the run spent (before any call of this one)."""
        with self._cond:
            self.calls += max(0, int(calls))
            self.usd += max(0.0, float(usd))

    @property
    def stop(self) -> dict[str, Any] | None:
        """{kind, flag, limit} of the budget that refused a call; None while none has."""
        with self._cond:
            return dict(self._stop) if self._stop else None

    def may_start_work(self) -> bool:
        """False once a budget refused a call, or the call budget is used up (no new
        attempt should start: its first call would be refused)."""
        with self._cond:
            if self._stop is None and self.max_calls is not None and self.calls >= self.max_calls:
                self._close("max_calls")
            return self._stop is None

    def worst_case(self, system: str | None, messages: Sequence[Message], tools: Sequence[ToolSpec],
                   max_tokens: int) -> float:
        if self.price is None:
            return 0.0
        return worst_case_usd(self.price, input_bound(system, messages, tools), max_tokens)

    def reserve(self, worst_usd: float) -> Reservation:
        """Counts a call as started and holds its worst case, or raises BudgetRefused."""
        with self._cond:
            while True:
                if self._stop is not None:
                    raise BudgetRefused(self._stop)
                if self.max_calls is not None and self.calls >= self.max_calls:
                    self._close("max_calls")
                    continue
                if self.max_cost is not None and self.usd + self._reserved + worst_usd > self.max_cost:
                    if self._in_flight:  # they may settle below their worst case
                        self._cond.wait()
                        continue
                    self._close("max_cost", refused_usd=worst_usd)
                    continue
                self.calls += 1
                self._reserved += worst_usd
                self._in_flight += 1
                return Reservation(worst_usd)

    def settle(self, reservation: Reservation, completion: Completion | None) -> None:
        """The call ended: answered (`completion`) or failed (None: no charge)."""
        self.settle_usd(reservation, charge(completion, self.prices, self.price))

    def settle_usd(self, reservation: Reservation, spent: float) -> None:
        with self._cond:
            self._reserved -= reservation.usd
            self._in_flight -= 1
            self.usd += spent
            self._cond.notify_all()

    def state(self) -> tuple[dict[str, Any] | None, int, float]:
        """(stop, calls, dollars) as they stand."""
        with self._cond:
            return (dict(self._stop) if self._stop else None), self.calls, self.usd

    def absorb(self, stop: dict[str, Any] | None, calls: int, usd: float) -> None:
        """Takes the state of the gate that served the run elsewhere (Ray's GateHost)."""
        with self._cond:
            self._stop, self.calls, self.usd = (dict(stop) if stop else None), calls, usd

    def _close(self, kind: str, refused_usd: float | None = None) -> None:
        limit = self.max_calls if kind == "max_calls" else self.max_cost
        self._stop = {"kind": kind, "flag": f"--{kind.replace('_', '-')}", "limit": limit}
        if refused_usd is not None:  # the worst case of the call that did not fit
            self._stop["refused_usd"] = round(refused_usd, 6)
        self._cond.notify_all()


class GatedModel(WrappedModel):
    """The backend behind the run's BudgetGate (innermost of the wrappers: under the
    response cache, so a cache hit passes no gate)."""

    def __init__(self, inner: ChatModel, gate: BudgetGate) -> None:
        super().__init__(inner)
        self.gate = gate

    def complete(self, messages: Sequence[Message], *, system: str | None = None, max_tokens: int = 512,
                 temperature: float = 0.0, stop: Sequence[str] | None = None, seed: int | None = None,
                 tools: Sequence[ToolSpec] = (), tool_choice: str = "auto") -> Completion:
        reservation = self.gate.reserve(self.gate.worst_case(system, messages, tools, max_tokens))
        completion = None
        try:
            completion = self.inner.complete(messages, system=system, max_tokens=max_tokens, temperature=temperature,
                                             stop=stop, seed=seed, tools=tools, tool_choice=tool_choice)
            return completion
        finally:
            self.gate.settle(reservation, completion)
