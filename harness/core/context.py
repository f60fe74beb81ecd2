"""What an attempt runs with (AttemptContext), what one trial accumulates (TrialScope),
and the two ways an attempt ends early (Stopped, AttemptIncomplete)."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeVar

from harness.core.calls import CallSettings, Meter
from harness.models.base import ChatModel, ModelError
from harness.rundata import TrialRecord

if TYPE_CHECKING:
    from harness.core.evaluator import Evaluator
    from harness.core.memory import MemoryStore
    from harness.text.prompting import Prompts
    from harness.tasks.base import Task

T = TypeVar("T")


@dataclass(frozen=True)
class LoopSettings:
    """The part of RunConfig strategies read (defaults live in RunConfig only)."""

    trials: int
    samples: int
    max_internal_tests: int
    memory_window: int
    max_tokens: int
    max_tokens_tests: int
    max_tokens_lesson: int
    test_timeout_s: float
    temperature: float
    resample_temperature: float
    seed: int
    oracle_feedback: bool
    model: str = ""  # the model spec, written into each lesson
    tasks: str = ""  # the task-set spec, written into each lesson (recall resolves its task by it)
    # A strategy's own settings (`--strategy-option NAME.KEY=VALUE`): strategy -> key -> value
    strategy_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: Any) -> "LoopSettings":
        """From a RunConfig (harness/config.py), which holds every default."""
        return cls(**{f.name: getattr(config, f.name) for f in fields(cls)})

    def first_call(self, attempt: int) -> CallSettings:
        """Every strategy's first calls: the run's temperature, one seed per attempt."""
        return CallSettings(temperature=self.temperature, seed=self.seed + attempt - 1)

    def fresh_sample(self, attempt: int, trial: int) -> CallSettings:
        """An independent sample at `trial` (>= 2) of an attempt: its own seed, and a
        temperature above 0 (at a run temperature of 0, `resample_temperature`)."""
        if trial == 1:
            return self.first_call(attempt)
        temperature = self.temperature if self.temperature > 0 else self.resample_temperature
        # Distinct for every (attempt, trial): attempt a's trial 1 uses seed + a - 1.
        return CallSettings(temperature=temperature, seed=self.seed + attempt - 1 + self.samples * (trial - 1))

    def options(self, strategy: str) -> Mapping[str, Any]:
        return self.strategy_options.get(strategy, {})


@dataclass
class AttemptContext:
    """What every attempt of a run shares: the model, prompts, evaluator, memory, settings."""

    run_id: str
    model: ChatModel
    prompts: "Prompts"
    evaluator: "Evaluator"
    memory: "MemoryStore | Any"
    settings: LoopSettings
    stop: threading.Event = field(default_factory=threading.Event)
    recall: Any = None  # the run's frozen pool of lessons from other tasks (harness/core/recall.py's Recall)
    # One unit's trials not yet recorded (harness/run/units.py run_unit gives each unit its own)
    ledger: "TrialLedger | None" = None

    def trial(self, task: "Task", strategy: str, attempt: int, trial: int) -> "TrialScope":
        """A new trial: raises Stopped when the run is being interrupted."""
        if self.stop.is_set():
            raise Stopped()
        scope = TrialScope(self, task, strategy, attempt, trial)
        if self.ledger is not None:
            self.ledger.opened(scope)
        return scope


_USAGE_COUNTS = ("model_calls", "cached_calls", "input_tokens", "output_tokens", "cache_read_tokens",
                 "cache_write_tokens")
_USAGE_MONEY = ("cost_usd", "cached_cost_usd")


def usage_sum(usages: "list[dict[str, Any]]") -> dict[str, Any]:
    """The usage fields of several trials, added (money stays None when none had a price)."""
    out: dict[str, Any] = {k: sum(int(u.get(k) or 0) for u in usages) for k in _USAGE_COUNTS}
    for k in _USAGE_MONEY:
        known = [float(u[k]) for u in usages if u.get(k) is not None]
        out[k] = sum(known) if known else None
    out["model_s"] = round(sum(float(u.get("model_s") or 0.0) for u in usages), 4)
    return out


class TrialLedger:
    """The trials one unit opened and has not turned into records: when the unit ends
    early (its budget, a model error, a sandbox fault, a bug), what they spent is still
    reported (errors.jsonl's `spent`), so every answered call is counted."""

    def __init__(self) -> None:
        self._open: list[TrialScope] = []
        self._lock = threading.Lock()

    def opened(self, scope: "TrialScope") -> None:
        with self._lock:
            self._open.append(scope)

    def recorded(self, scope: "TrialScope") -> None:
        with self._lock:
            self._open = [s for s in self._open if s is not scope]

    def unrecorded(self) -> dict[str, Any] | None:
        """The usage fields of the open trials added; None when they made no call."""
        with self._lock:
            usages = [s.usage() for s in self._open]
        total = usage_sum(usages)
        return total if total["model_calls"] else None


class Stopped(Exception):
    """The run is being interrupted; the unfinished trial is not recorded."""


class AttemptIncomplete(Exception):
    """A model call failed after the backend's retries; the attempt stops unscored."""

    def __init__(self, role: str, trial: int, error: str, spent: dict | None = None) -> None:
        super().__init__(f"{role} at trial {trial}: {error}")
        self.role = role  # test_writer | actor | reflection | agent | ...
        self.trial = trial
        self.error = error
        # What the unfinished trial had spent, the failed call included (the usage
        # fields of a trial record): real spending that no record will carry.
        self.spent = spent


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class TrialScope:
    """One trial in the making: its meter (every model call, with its event), its other
    events, and its sandbox time; `record()` turns it into the trial's record."""

    def __init__(self, ctx: AttemptContext, task: "Task", strategy: str, attempt: int, trial: int) -> None:
        self.ctx = ctx
        self.task = task
        self.strategy = strategy
        self.attempt = attempt
        self.trial = trial
        self.meter = Meter()
        self.sandbox_s = 0.0
        self.started = time.perf_counter()
        # How the program last graded on the hidden tests compiled (steps.grade_hidden):
        # every strategy grades the code it records there, just before recording it.
        self.compile_status: str | None = None

    @property
    def events(self) -> list[Any]:
        return self.meter.events

    def event(self, event: Any) -> None:
        self.meter.events.append(event)

    def model_call(self, role: str, fn: Callable[[], T]) -> T:
        """Runs one step that calls the model; a ModelError ends the attempt incomplete."""
        try:
            return fn()
        except ModelError as exc:
            raise AttemptIncomplete(role, self.trial, " ".join(str(exc).split()), self.usage()) from exc

    def usage(self) -> dict[str, Any]:
        m = self.meter
        return {
            "model_calls": m.calls,
            "cached_calls": m.cached,
            "input_tokens": m.usage.input_tokens,
            "output_tokens": m.usage.output_tokens,
            "cache_read_tokens": m.usage.cache_read_tokens,
            "cache_write_tokens": m.usage.cache_write_tokens,
            "cost_usd": m.cost_usd,
            "cached_cost_usd": m.cached_cost_usd,
            "model_s": round(m.seconds, 4),
        }

    def record(self, *, final: bool, stop_reason: str | None, code: str, raw_output: str,
               **core: Any) -> TrialRecord:
        """The trial's record: the core fields given, its usage, timing and events."""
        fields_: dict[str, Any] = {
            "task_kind": self.task.kind, "language": self.task.language, "oracle_feedback": self.ctx.settings.oracle_feedback,
            "sandbox_s": round(self.sandbox_s, 4), "wall_s": round(time.perf_counter() - self.started, 4),
            "finished_at": now(), "events": list(self.meter.events), "compile_status": self.compile_status,
            **self.usage(),
        }
        fields_.update(core)
        if self.ctx.ledger is not None:
            self.ctx.ledger.recorded(self)
        return TrialRecord(run_id=self.ctx.run_id, task_id=self.task.task_id, strategy=self.strategy,
                           attempt=self.attempt, trial=self.trial, final=final, stop_reason=stop_reason, code=code,
                           raw_output=raw_output, **fields_)
