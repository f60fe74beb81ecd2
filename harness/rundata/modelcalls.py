"""What a trial's records say about its model calls one by one: latencies and retries.

One small function, `call_facts`, reads them from a record, so that the figures built
on them (harness.rundata.numbers: the model's latency percentiles, retries by status
code) do not care where a record keeps them:

* `model_call` events (the record's `events`, each with `latency_s`, `cached` and
  `retries`, a list of {status, waited_s}): every call, exactly;
* else a record field `retries` (a list of {status, ...}, or of status codes);
* else, for latency, a trial whose model answered exactly one call (its `model_s` is
  that call's latency), and no retries (none recorded).

`basis` says which of these a record gave, and the numbers say so beside the figures.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from harness.rundata.events import ModelCall

EVENTS = "events"  # per-call facts from model_call events
SINGLE_CALL = "single_call_trials"  # a trial's model time where it made one uncached call
NONE = ""


@dataclass(frozen=True)
class CallFacts:
    latencies: tuple[float, ...]  # seconds of each call the model answered (no cache hit)
    retries: tuple[str, ...]  # the status code (or error kind) of each failed try that was retried
    basis: str  # EVENTS | SINGLE_CALL | NONE (nothing per call)
    retries_recorded: bool  # the record says how often its calls were retried (0 included)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _statuses(retries: Any) -> tuple[str, ...]:
    out = []
    for r in retries or ():
        status = _get(r, "status") if isinstance(r, Mapping) or hasattr(r, "status") else r
        out.append(str(status) if status is not None else "unknown")
    return tuple(out)


def _is_model_call(event: Any) -> bool:
    if isinstance(event, Mapping):
        return event.get("type") == "model_call"
    return isinstance(event, ModelCall)


def call_facts(record: Any) -> CallFacts:
    """The per-call facts of one trial record (see the module's docstring)."""
    events = [e for e in (_get(record, "events") or ()) if _is_model_call(e)]
    if events:
        latencies = tuple(float(_get(e, "latency_s") or 0.0) for e in events if not _get(e, "cached"))
        retries = tuple(s for e in events for s in _statuses(_get(e, "retries")))
        return CallFacts(latencies, retries, EVENTS, True)
    field = _get(record, "retries")
    retries, recorded = (_statuses(field), True) if field is not None else ((), False)
    calls = int(_get(record, "model_calls") or 0) - int(_get(record, "cached_calls") or 0)
    model_s = float(_get(record, "model_s") or 0.0)
    if calls == 1 and model_s > 0:
        return CallFacts((model_s,), retries, SINGLE_CALL, recorded)
    return CallFacts((), retries, NONE, recorded)


PERCENTILES = (50, 90, 99)


def latency_summary(latencies: Sequence[float], bases: Iterable[str]) -> dict[str, Any]:
    """{calls, p50, p90, p99, max, mean, basis}: seconds per model call; None where no
    call was timed. basis: "events" (every call), "single_call_trials" (only trials
    with one model call: a subset), or "" (not recorded)."""
    kinds = {b for b in bases if b}
    basis = EVENTS if kinds == {EVENTS} else SINGLE_CALL if kinds else NONE
    arr = sorted(float(x) for x in latencies if math.isfinite(x))
    out: dict[str, Any] = {"calls": len(arr), "basis": basis}
    for p in PERCENTILES:
        out[f"p{p}"] = _quantile(arr, p / 100) if arr else None
    out["max"] = arr[-1] if arr else None
    out["mean"] = sum(arr) / len(arr) if arr else None
    return out


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    pos = (len(sorted_values) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return float(sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo))


def retry_summary(retries: Iterable[Sequence[str]], recorded: Iterable[bool]) -> dict[str, Any]:
    """{total, by_status: {status: count}, recorded: trials whose record says}."""
    counts: dict[str, int] = {}
    for statuses in retries:
        for s in statuses:
            counts[s] = counts.get(s, 0) + 1
    return {"total": sum(counts.values()), "by_status": dict(sorted(counts.items())),
            "recorded_trials": sum(1 for r in recorded if r)}
