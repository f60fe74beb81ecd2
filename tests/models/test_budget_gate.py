"""The budget gate (harness/models/gate.py) on its own: many threads, one gate; a fake
backend that holds every call until the test lets it go, so calls are in flight together
whatever the machine's speed."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

import pytest

from harness.models import ChatModel, Completion, Message, ModelSettings, Price, Usage, open_model
from harness.models.gate import BudgetGate, BudgetRefused, GatedModel, input_bound, worst_case_usd
from harness.models.registry import ModelRegistry

PRICE = Price(input=100.0, output=200.0)


class HeldModel(ChatModel):
    """Answers each call once `release` is set, with `input_tokens` and `output_tokens`
    of usage (both within what the call could have cost); counts the calls it saw."""

    usage = "held:"
    argument = "optional"

    def __init__(self, input_tokens: int = 10, output_tokens: int = 5) -> None:
        self.spec = "held:"
        self.release = threading.Event()
        self.seen = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self._lock = threading.Lock()
        self.tokens = (input_tokens, output_tokens)

    @classmethod
    def open(cls, argument: str | None, settings: ModelSettings) -> "HeldModel":
        return cls()

    def complete(self, messages: Sequence[Message], **kwargs: Any) -> Completion:
        with self._lock:
            self.seen += 1
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        self.release.wait(30)
        with self._lock:
            self.in_flight -= 1
        return Completion("ok", "held-model", Usage(*self.tokens))


def call_many(model: ChatModel, n: int, *, release: threading.Event, text: str = "hello") -> list[Any]:
    """`n` calls from `n` threads; the backend answers from half a second on (calls
    overlap then, whatever the machine's speed; the tests' invariants hold either way)."""
    def one(_: int) -> Any:
        try:
            return model.complete([Message("user", text)], max_tokens=50)
        except BudgetRefused as exc:
            return exc

    with ThreadPoolExecutor(max_workers=n) as pool:
        futures = [pool.submit(one, i) for i in range(n)]
        threading.Timer(0.5, release.set).start()
        return [f.result(timeout=60) for f in futures]


def test_max_calls_lets_exactly_n_calls_reach_the_backend():
    inner = HeldModel()
    gate = BudgetGate(max_calls=3)
    results = call_many(GatedModel(inner, gate), 16, release=inner.release)
    assert inner.seen == 3 and gate.calls == 3
    refused = [r for r in results if isinstance(r, BudgetRefused)]
    assert len(refused) == 13 and refused[0].stop["kind"] == "max_calls"
    assert gate.stop == {"kind": "max_calls", "flag": "--max-calls", "limit": 3}
    assert not gate.may_start_work()


def test_max_cost_holds_the_worst_case_of_the_calls_in_flight():
    inner = HeldModel(input_tokens=10, output_tokens=5)
    worst = worst_case_usd(PRICE, input_bound(None, [Message("user", "hello")]), 50)
    real = (10 * PRICE.input + 5 * PRICE.output) / 1e6
    cap = 3.5 * worst  # three calls' worst cases fit at once, a fourth waits for them to settle
    gate = BudgetGate(max_cost=cap, price=PRICE)
    results = call_many(GatedModel(inner, gate), 40, release=inner.release)
    assert inner.most_in_flight <= 3
    answered = [r for r in results if isinstance(r, Completion)]
    assert gate.usd == pytest.approx(len(answered) * real) and gate.usd <= cap
    # every call that started fitted beside the others' worst case: more than 3 answered in all
    assert len(answered) == inner.seen > 3
    assert gate.stop is not None and gate.stop["kind"] == "max_cost"
    assert all(isinstance(r, BudgetRefused) for r in results if not isinstance(r, Completion))


def test_a_failed_call_counts_as_started_and_costs_nothing():
    class Failing(HeldModel):
        def complete(self, messages: Sequence[Message], **kwargs: Any) -> Completion:
            self.seen += 1
            raise RuntimeError("server down")

    gate = BudgetGate(max_calls=2, max_cost=1.0, price=PRICE)
    model = GatedModel(Failing(), gate)
    for _ in range(2):
        with pytest.raises(RuntimeError):
            model.complete([Message("user", "x")], max_tokens=5)
    assert (gate.calls, gate.usd) == (2, 0.0)
    with pytest.raises(BudgetRefused):
        model.complete([Message("user", "x")], max_tokens=5)


def test_a_resume_seeds_what_earlier_sessions_spent():
    inner = HeldModel()
    inner.release.set()
    gate = BudgetGate(max_calls=5)
    gate.seed(4, 0.0)
    model = GatedModel(inner, gate)
    model.complete([Message("user", "x")], max_tokens=5)
    with pytest.raises(BudgetRefused):
        model.complete([Message("user", "x")], max_tokens=5)
    assert inner.seen == 1


def test_the_input_bound_is_at_least_one_token_a_byte():
    text = "def f(x):\n    return x ** 2  # é 数 🙂\n" * 20
    assert input_bound("system", [Message("user", text)]) >= len(text.encode("utf-8")) + len("system")


def test_open_model_puts_the_gate_under_the_response_cache(tmp_path):
    registry = ModelRegistry({"held": HeldModel})
    gate = BudgetGate(max_calls=1)
    model = open_model("held:", ModelSettings(cache_dir=tmp_path, budget=gate), registry=registry)
    inner = model
    while not isinstance(inner, GatedModel):
        inner = inner.inner
    inner.inner.release.set()
    first = model.complete([Message("user", "same")], max_tokens=5)
    again = model.complete([Message("user", "same")], max_tokens=5)  # a cache hit: no call, nothing counted
    assert not first.cached and again.cached and gate.calls == 1
    with pytest.raises(BudgetRefused):
        model.complete([Message("user", "another")], max_tokens=5)
