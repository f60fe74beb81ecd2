"""What a unit that ends early spent is reported (harness/run/units.py run_unit and the
trial ledger): every answered call is counted, whichever way its attempt ended."""
from __future__ import annotations

from typing import Any, Iterator, Sequence

import pytest

import harness.strategies as registry
from harness.core.calls import CallSettings, call
from harness.core import AttemptContext, LoopSettings, Stopped
from harness.models import ChatModel, Completion, Message, Usage
from harness.models.gate import BudgetGate, GatedModel
from harness.tasks.base import Task
from harness.run.units import Unit, run_unit

TASK = Task("t/1", 'def f(n: int) -> int:\n    """Return n."""\n', "f", ("assert f(1) == 1",))


class Echo(ChatModel):
    spec = "echo:"

    def complete(self, messages: Sequence[Message], **kwargs: Any) -> Completion:
        return Completion("ok", "echo", Usage(7, 3), cost_usd=0.5)


class Calls:
    """A strategy that makes `calls` model calls in trial 1, then fails as `then` says."""

    def __init__(self, calls: int, then: Exception | None) -> None:
        self.calls, self.then = calls, then

    def run_attempt(self, ctx: AttemptContext, task: Task, attempt: int, done: Sequence[Any]) -> Iterator[Any]:
        scope = ctx.trial(task, "calls", attempt, 1)
        for _ in range(self.calls):
            scope.model_call("actor", lambda: call(ctx.model, scope.meter, [Message("user", "x")], system="",
                                                   max_tokens=5, settings=CallSettings(0.0, 0)))
        if self.then is not None:
            raise self.then
        yield scope.record(final=True, stop_reason="submitted", code="", raw_output="")


def context(model: ChatModel) -> AttemptContext:
    settings = LoopSettings(trials=1, samples=1, max_internal_tests=1, memory_window=1, max_tokens=5,
                            max_tokens_tests=5, max_tokens_lesson=5, test_timeout_s=1.0, temperature=0.0,
                            resample_temperature=0.8, seed=0, oracle_feedback=False)
    return AttemptContext("run", model, None, None, None, settings)  # type: ignore[arg-type]


def run_with(monkeypatch: pytest.MonkeyPatch, strategy: Calls, model: ChatModel) -> Any:
    monkeypatch.setattr(registry, "get_strategy", lambda name: strategy)
    stored: list[Any] = []
    return run_unit(context(model), Unit(TASK, "calls", 1), [], stored.append), stored


def test_a_unit_that_fails_after_its_calls_reports_what_they_spent(monkeypatch: pytest.MonkeyPatch):
    failure, stored = run_with(monkeypatch, Calls(2, RuntimeError("a bug after the calls")), Echo())
    assert not stored and failure.kind == "unit_exception"
    assert failure.spent["model_calls"] == 2 and failure.spent["input_tokens"] == 14
    assert failure.spent["cost_usd"] == pytest.approx(1.0)


def test_a_call_the_budget_refuses_cuts_the_attempt_with_what_it_spent(monkeypatch: pytest.MonkeyPatch):
    gate = BudgetGate(max_calls=2)
    failure, stored = run_with(monkeypatch, Calls(3, None), GatedModel(Echo(), gate))
    assert not stored and failure.kind == "budget" and "--max-calls 2" in failure.error
    assert failure.spent["model_calls"] == 2  # the refused third call is no call


def test_a_refusal_before_any_call_leaves_the_attempt_pending(monkeypatch: pytest.MonkeyPatch):
    gate = BudgetGate(max_calls=1)
    gate.seed(1, 0.0)
    with pytest.raises(Stopped):
        run_with(monkeypatch, Calls(1, None), GatedModel(Echo(), gate))


def test_a_finished_attempt_reports_nothing(monkeypatch: pytest.MonkeyPatch):
    failure, stored = run_with(monkeypatch, Calls(1, None), Echo())
    assert failure is None and len(stored) == 1 and stored[0].model_calls == 1
