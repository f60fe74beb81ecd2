"""A unit of work: one attempt of one task under one strategy, and how it runs.

A unit is (task, strategy, attempt); the strategy is found by name in the registry
(harness/strategies/). To run, it needs what a `Workbench` holds: the
model, the sandbox pool, the prompt set, and the run's long-term memory; together they
make the loop's context. Every executor (the local thread pool, each Ray node) opens a
Workbench the same way (`open_workbench`) and runs each unit through `run_unit`, which
hands every finished trial to a `store` callback before the next trial starts (the
driver's single writer, or the Ray Collector that forwards to it).

Library errors only (ModelConfigError, SandboxUnavailable, ...): the CLI turns them
into usage errors.
"""
from __future__ import annotations

import dataclasses
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, NamedTuple, Sequence

from harness.core.evaluator import BLIND_DOMAINS, DOMAINS, Evaluator, GradingError
from harness.core import AttemptContext, AttemptIncomplete, LoopSettings, Stopped, TrialLedger, lessons_of
from harness.models.base import ChatModel, ModelSettings
from harness.models.gate import BudgetGate, BudgetRefused
from harness.models.prices import run_prices
from harness.text.prompting import Prompts
from harness.rundata import TrialRecord
from harness.tasks.base import Task, TaskSet

if TYPE_CHECKING:
    from pathlib import Path

    from harness.config import RunConfig
    from harness.core.memory import MemoryStore
    from harness.core.recall import Recall
    from sandbox import Sandbox

UnitKey = tuple[str, str, int]  # (task_id, strategy, attempt)
Store = Callable[[TrialRecord], None]


class Unit(NamedTuple):
    task: Task
    strategy: str
    attempt: int

    @property
    def key(self) -> UnitKey:
        return (self.task.task_id, self.strategy, self.attempt)


def units_for(config: "RunConfig", tasks: TaskSet) -> list[Unit]:
    """Every unit of a run; strategies interleave per task, so a partial run compares
    them on the same tasks."""
    return [
        Unit(task, strategy, attempt)
        for task in tasks.tasks
        for attempt in range(1, config.samples + 1)
        for strategy in config.strategies
    ]


@dataclass(frozen=True)
class UnitFailure:
    """Why a unit ended without finishing its attempt (contract: errors.jsonl)."""

    # "model_error" | "sandbox_error" (evaluator.GradingError) | "unit_exception" | "budget" (the run's
    # budget refused a call mid-attempt: not an error; a resume with a higher budget goes on)
    kind: str
    trial: int
    role: str | None
    error: str
    trace: str | None = None
    spent: dict[str, Any] | None = None  # the unfinished trial's usage fields (model calls, tokens, cost)


def open_prompts(override: "Path | None") -> Prompts:
    """The run's prompt set: the harness's templates, plug-in strategies' own folders,
    and the `--prompts` override over them."""
    from harness.strategies import template_folders

    return Prompts(override, extra=template_folders())


def check_prompts(prompts: Prompts) -> None:
    """Renders every template with its sample values (PromptSetError if one fails)."""
    from harness.strategies import template_samples

    prompts.check(template_samples())


def model_settings(config: "RunConfig", **extra: Any) -> ModelSettings:
    """The model settings a run's config asks for (on the driver, or on each Ray node)."""
    return ModelSettings(
        timeout_s=config.model_timeout_s,
        max_retries=config.max_retries,
        requests_per_minute=config.requests_per_minute,
        tokens_per_minute=config.tokens_per_minute,
        prices=run_prices(config.prices, config.price_table, config.price),
        cache_dir=config.cache_dir if config.cache else None,
        local_slots=config.local_slots or 1,
        speculative=config.speculative,
        tool_protocol=config.tool_protocol,
        stream=config.stream,
        **extra,
    )


def budget_gate(config: "RunConfig") -> BudgetGate:
    """The gate every model call of the run passes (harness/models/gate.py): the run's
    --max-calls and --max-cost, its model's price for a call's worst case, and the run's
    prices for what an answer cost."""
    from harness.models.prices import load_table, model_id_of, price_for

    prices = run_prices(config.prices, config.price_table, config.price)
    return BudgetGate(config.max_calls, config.max_cost, price=price_for(model_id_of(config.model), prices, load_table()),
                      prices=prices)


def describe_model(model: ChatModel) -> dict[str, Any]:
    """What run.json records as "model_identity": the model's own `describe()` (spec, cache
    identity, engine, capabilities, tool protocol, a file's sha256)."""
    return dict(model.describe())


def describe_sandbox(sandbox: "Sandbox") -> dict[str, Any]:
    """What run.json records as "sandbox_identity": the backend's `describe()` (image and
    its digest, the worker code's digest), else its name; "domains", the sandbox
    domains the run graded in, each on containers of its own (harness/core/evaluator.py):
    hidden-test scoring never shared a container with a grading whose result reached the
    agent (a run recorded without "domains" graded both in the same containers); and
    "blind_domains", those graded verdict-blind (RunRequest.blind; a run recorded
    without it graded none so); and "io_compare", the output comparison rules per source
    and their float tolerances (sandbox/worker/io_compare.py; the run's config says which
    mode it graded in)."""
    from sandbox.worker import io_compare

    describe = getattr(sandbox, "describe", None)
    found = dict(describe()) if callable(describe) else {"backend": getattr(sandbox, "name", None)}
    return {**found, "domains": list(DOMAINS), "blind_domains": list(BLIND_DOMAINS), "io_compare": io_compare.describe()}


@dataclass
class Workbench:
    """What units need opened: the model, the sandbox pool, the prompt set."""

    model: ChatModel
    sandbox: "Sandbox"
    prompts: Prompts
    opened_s: dict[str, float] = field(default_factory=dict)  # model "load_s", "sandbox_start_s"

    def context(self, config: "RunConfig", run_id: str, memory: "MemoryStore | Any",
                stop: threading.Event, recall: "Recall | None" = None) -> AttemptContext:
        """The loop's context for this run's units; `memory` is a MemoryStore or a proxy
        with its interface (Ray's RemoteMemory); `recall` the run's frozen pool, if any."""
        evaluator = Evaluator(self.sandbox, self.prompts, timeout_s=config.test_timeout_s,
                              compare_mode=config.io_compare)
        return AttemptContext(run_id, self.model, self.prompts, evaluator, memory, LoopSettings.from_config(config),
                              stop, recall)

    def identities(self) -> dict[str, dict[str, Any]]:
        return {"model_identity": describe_model(self.model), "sandbox_identity": describe_sandbox(self.sandbox)}

    def close(self) -> None:
        self.sandbox.close()
        self.model.close()


def open_workbench(config: "RunConfig", prompts: Prompts, languages: tuple[str, ...] = (), **settings: Any) -> Workbench:
    """Opens the run's model (ModelSettings fields may be added: a shared limiter, the
    threads of a node) and its sandbox pool, with the images of the task set's
    `languages` besides Python's; closes the model if the sandbox fails."""
    from harness.models import open_model
    from sandbox import SandboxConfig, open_sandbox

    started = time.perf_counter()
    model = open_model(config.model, model_settings(config, **settings))
    loaded = time.perf_counter()
    try:
        sandbox = open_sandbox(SandboxConfig(backend=config.sandbox, workers=config.sandbox_workers, domains=DOMAINS,
                                             languages=tuple(sorted(set(languages) - {"python"}))))
    except BaseException:
        model.close()
        raise
    opened_s = {"load_s": round(loaded - started, 3), "sandbox_start_s": round(time.perf_counter() - loaded, 3)}
    return Workbench(model, sandbox, prompts, opened_s)


def run_attempt(ctx: AttemptContext, task: Task, strategy: str, attempt: int,
                done: Sequence[TrialRecord] = ()) -> Iterator[TrialRecord]:
    """The strategy's records for one attempt, from after `done` (an interrupted run's)."""
    from harness.strategies import get_strategy

    done = sorted(done, key=lambda r: r.trial)
    if done and done[-1].final:
        return
    yield from get_strategy(strategy).run_attempt(ctx, task, attempt, done)


def run_unit(ctx: AttemptContext, unit: Unit, done: Sequence[TrialRecord], store: Store) -> UnitFailure | None:
    """Runs one attempt from after `done`, storing each trial's record before the next.

    A model error that outlived the retries, a call the run's budget refused, or any
    exception of the unit's own, ends the attempt incomplete and is returned, with what
    its unrecorded trials spent; Stopped (Ctrl-C, a superseded unit, a refused resume)
    propagates, and so does a budget refusal before the unit spent anything (it did not
    start).
    """
    task, strategy, attempt = unit
    ledger = TrialLedger()
    ctx = dataclasses.replace(ctx, ledger=ledger)
    next_trial = max((r.trial for r in done), default=0) + 1
    stored = False
    try:
        for record in run_attempt(ctx, task, strategy, attempt, done):
            store(record)
            stored = True
            next_trial = record.trial + 1
    except Stopped:
        raise
    except BudgetRefused as exc:
        spent = ledger.unrecorded()
        if spent is None and not stored:
            raise Stopped() from None
        return UnitFailure("budget", next_trial, None, str(exc), spent=spent)
    except AttemptIncomplete as exc:
        return UnitFailure("model_error", exc.trial, exc.role, exc.error, spent=ledger.unrecorded() or exc.spent)
    except GradingError as exc:  # the sandbox's failure, never a verdict
        return UnitFailure("sandbox_error", next_trial, None, " ".join(str(exc).split()), traceback.format_exc(),
                           spent=ledger.unrecorded())
    except Exception as exc:  # one unit's bug or outage must not end the run
        error = " ".join(f"{type(exc).__name__}: {exc}".split())
        return UnitFailure("unit_exception", next_trial, None, error, traceback.format_exc(), spent=ledger.unrecorded())
    return None


def restore_lessons(memory: Any, records: Sequence[TrialRecord], model: str, task_set: str = "") -> None:
    """Puts back the lessons of recorded trials (idempotent): a kill may fall between
    a trial's record and its lesson."""
    for rec in records:
        for lesson in lessons_of(rec, model, task_set):
            memory.add(lesson)
