"""The run's cluster-wide services on Ray, one actor each, and the proxies nodes use.

- `Collector` (on the driver's node): units hand it each finished trial's record and
  wait until the driver has written it to trials.jsonl (or refused it, for a unit
  that was given to another node meanwhile). The driver is the only writer.
- `MemoryHost` (on the driver's node): the run's MemoryStore, on the driver's disk;
  `RemoteMemory` forwards every call to it, so lessons behave as in a local run.
- `LimiterHost`: one RateLimiter for the whole cluster; `ClusterLimiter` is what a
  node's model backend holds in place of its own.
- `GateHost`: the run's one BudgetGate (--max-calls, --max-cost) for the whole cluster;
  `ClusterGate` is what a node's model holds in place of its own, and what the driver
  asks before it hands out a unit.
"""
from __future__ import annotations

import asyncio
import itertools
import threading
from pathlib import Path
from typing import Any, Callable

import ray

from harness.core.memory import MemoryStore
from harness.models.base import Completion, Price
from harness.models.gate import BudgetGate, BudgetRefused, Reservation, charge
from harness.models.limiter import RateLimiter, Ticket
from harness.rundata import TrialRecord

# Enough for every unit in flight on a large cluster; idle coroutines cost little.
COLLECTOR_CONCURRENCY = 10_000


@ray.remote(num_cpus=0, max_concurrency=COLLECTOR_CONCURRENCY)
class Collector:
    """An async actor: `put` blocks its caller until the driver acknowledges the record."""

    def __init__(self) -> None:
        self._batch: list[tuple[int, int, TrialRecord]] = []
        self._waiting: dict[int, asyncio.Future] = {}
        self._arrived = asyncio.Event()
        self._seq = itertools.count(1)

    async def put(self, generation: int, record: TrialRecord) -> bool:
        """True once the record is on the driver's disk; False if the driver refused it."""
        seq = next(self._seq)
        answer = asyncio.get_running_loop().create_future()
        self._waiting[seq] = answer
        self._batch.append((seq, generation, record))
        self._arrived.set()
        return await answer

    async def drain(self, timeout_s: float) -> list[tuple[int, int, TrialRecord]]:
        """The records put since the last drain; waits up to `timeout_s` for the first."""
        if not self._batch:
            try:
                await asyncio.wait_for(self._arrived.wait(), timeout_s)
            except asyncio.TimeoutError:
                pass
        batch, self._batch = self._batch, []
        self._arrived.clear()
        return batch

    async def ack(self, verdicts: dict[int, bool]) -> None:
        for seq, written in verdicts.items():
            answer = self._waiting.pop(seq, None)
            if answer is not None and not answer.done():
                answer.set_result(written)


@ray.remote(num_cpus=0, max_concurrency=16)
class MemoryHost:
    """Holds the run's MemoryStore; every node's lessons go through this one process."""

    def __init__(self, root: str, namespace: str) -> None:
        self._store = MemoryStore(Path(root), namespace)

    def call(self, method: str, args: tuple, kwargs: dict) -> Any:
        return getattr(self._store, method)(*args, **kwargs)

    def where(self) -> tuple[str, str]:
        return str(self._store.root), self._store.namespace


class RemoteMemory:
    """MemoryStore's interface, served by a MemoryHost (from a node or the driver)."""

    def __init__(self, host: Any) -> None:
        self._host = host
        root, self.namespace = ray.get(host.where.remote())
        self.root = Path(root)
        self.folder = self.root / self.namespace

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def forward(*args: Any, **kwargs: Any) -> Any:
            return ray.get(self._host.call.remote(name, args, kwargs))

        return forward


@ray.remote(num_cpus=0, concurrency_groups={"acquire": 256, "settle": 4})
class LimiterHost:
    """A RateLimiter shared by every node: its one-minute window counts the whole cluster."""

    def __init__(self, requests_per_minute: int | None, tokens_per_minute: int | None, window_s: float = 60.0) -> None:
        self._limiter = RateLimiter(requests_per_minute, tokens_per_minute, window_s=window_s)
        self._tickets: dict[int, Ticket] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    @ray.method(concurrency_group="acquire")
    def acquire(self, tokens: int) -> int:
        ticket = self._limiter.acquire(tokens)
        with self._lock:
            ticket_id = next(self._ids)
            self._tickets[ticket_id] = ticket
        return ticket_id

    @ray.method(concurrency_group="settle")
    def settle(self, ticket_id: int, tokens: int) -> None:
        with self._lock:
            ticket = self._tickets.pop(ticket_id, None)
        if ticket is not None:
            ticket.settle(tokens)

    @ray.method(concurrency_group="settle")
    def waited_s(self) -> float:
        return self._limiter.waited_s


class _RemoteTicket:
    def __init__(self, host: Any, ticket_id: int) -> None:
        self._host = host
        self._id = ticket_id

    def settle(self, tokens: int) -> None:
        self._host.settle.remote(self._id, tokens)


class ClusterLimiter:
    """RateLimiter's interface (active, acquire -> ticket.settle) backed by a LimiterHost."""

    active = True

    def __init__(self, host: Any) -> None:
        self._host = host

    def acquire(self, tokens: int = 0) -> _RemoteTicket:
        return _RemoteTicket(self._host, ray.get(self._host.acquire.remote(tokens)))


@ray.remote(num_cpus=0, concurrency_groups={"reserve": 256, "settle": 8})
class GateHost:
    """The run's BudgetGate, one for every node: a call anywhere in the cluster reserves
    its worst case here before it starts."""

    def __init__(self, max_calls: int | None, max_cost: float | None, price: Price | None, calls: int,
                 usd: float) -> None:
        self._gate = BudgetGate(max_calls, max_cost, price=price)
        self._gate.seed(calls, usd)

    @ray.method(concurrency_group="reserve")
    def reserve(self, worst_usd: float) -> "float | dict[str, Any]":
        """The worst case held, or the stop of the budget that refused the call."""
        try:
            return self._gate.reserve(worst_usd).usd
        except BudgetRefused as exc:
            return exc.stop

    @ray.method(concurrency_group="settle")
    def settle(self, worst_usd: float, spent: float) -> None:
        self._gate.settle_usd(Reservation(worst_usd), spent)

    @ray.method(concurrency_group="settle")
    def may_start_work(self) -> bool:
        return self._gate.may_start_work()

    @ray.method(concurrency_group="settle")
    def state(self) -> tuple[dict[str, Any] | None, int, float]:
        return self._gate.state()


class ClusterGate:
    """BudgetGate's interface for a node's model (GatedModel), backed by a GateHost;
    the worst case and the charge are worked out here, the counts kept there."""

    active = True

    def __init__(self, host: Any, price: Price | None, prices: dict[str, Price]) -> None:
        self._host = host
        self.price = price
        self.prices = dict(prices)

    def worst_case(self, system: str | None, messages: Any, tools: Any, max_tokens: int) -> float:
        return BudgetGate(price=self.price).worst_case(system, messages, tools, max_tokens)

    def reserve(self, worst_usd: float) -> Reservation:
        held = ray.get(self._host.reserve.remote(worst_usd))
        if isinstance(held, dict):
            raise BudgetRefused(held)
        return Reservation(float(held))

    def settle(self, reservation: Reservation, completion: Completion | None) -> None:
        ray.get(self._host.settle.remote(reservation.usd, charge(completion, self.prices, self.price)))
