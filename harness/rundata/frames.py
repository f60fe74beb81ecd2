"""The frames every number is computed from, prepared once per run.

* trials: one row per trial record (the last line of a repeated key wins), with
  `complete` (the attempt has a final record) and `last_trial`;
* attempts: one row per complete attempt: its final verdict and what it spent;
* equal footing: the tasks every strategy completed (`shared`), the rest `excluded`.

The report reads records whole; the view keeps an incremental index of rows (with
their byte ranges): both build their trial frame from `trial_row`, here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import pandas as pd

from harness.rundata.agents import trial_counts
from harness.rundata.modelcalls import call_facts
from harness.rundata.records import ErrorRecord, TrialRecord

KEYS = ["task_id", "strategy", "attempt"]

# Columns kept per trial (error text kept short: pages filter on it, never print it).
TRIAL_COLUMNS = (
    "task_id", "strategy", "attempt", "trial", "final", "stop_reason", "hidden_passed",
    "internal_passed", "error", "model_calls", "cached_calls", "input_tokens", "output_tokens",
    "cost_usd", "cached_cost_usd", "wall_s", "model_s", "sandbox_s", "finished_at", "schema",
    "has_lesson", "n_internal", "n_hidden", "hidden_ok", "wrong_tests", "oracle_feedback", "task_kind",
    "language", "compile_status", "strict_changed", "strict_passed",
    # tool-using agents (harness/rundata/agents.py): turns, tool calls by tool, calls not ok, the episode's end
    "turns", "tool_calls", "tool_errors", "episode_stop",
    # per model call (harness.rundata.modelcalls): latencies, retried statuses, how known
    "call_latencies", "call_retries", "latency_basis", "retries_recorded",
)


def _strict(r: TrialRecord) -> tuple[int, bool]:
    """(hidden tests whose verdict differs from the strict rule's, whether the hidden
    tests all pass by the strict rule): graded with io_compare "source", each result
    keeps the strict verdict (TestRecord.strict_status); else it is the verdict."""
    strict = [h for h in r.hidden_results if h.strict_status is not None]
    if not strict:
        return 0, bool(r.hidden_passed)
    changed = sum(1 for h in strict if (h.status == "passed") != (h.strict_status == "passed"))
    return changed, all((h.strict_status or h.status) == "passed" for h in r.hidden_results)


def trial_row(r: TrialRecord) -> tuple:
    """A record's row of TRIAL_COLUMNS. wrong_tests: self-tests the reference solution
    fails (the record's internal_reference), -1 when not checked."""
    ref = r.internal_reference
    calls = call_facts(r)
    oracle = r.oracle_feedback or bool((r.testgen or {}).get("oracle_feedback", False))
    return (
        r.task_id, r.strategy, r.attempt, r.trial, r.final, r.stop_reason, bool(r.hidden_passed),
        r.internal_passed, (r.error[:200] if r.error else None), r.model_calls, r.cached_calls,
        r.input_tokens, r.output_tokens, r.cost_usd, r.cached_cost_usd, r.wall_s, r.model_s, r.sandbox_s,
        r.finished_at, r.schema, bool(r.lesson), len(r.internal_tests), len(r.hidden_results),
        sum(1 for h in r.hidden_results if h.status == "passed"),
        -1 if ref is None else sum(1 for h in ref if h.status != "passed"),
        oracle, r.task_kind or "function", r.language or "python", r.compile_status, *_strict(r), *trial_counts(r.events),
        calls.latencies, calls.retries, calls.basis, calls.retries_recorded,
    )


def trials_frame(records: Iterable[TrialRecord] = (), *, rows: Sequence[tuple] | None = None,
                 columns: Sequence[str] = TRIAL_COLUMNS) -> pd.DataFrame:
    """One row per trial, from records or from rows already made by `trial_row` (whose
    columns may go on beyond TRIAL_COLUMNS, e.g. the view's byte ranges).

    Adds ``complete`` and ``last_trial`` (NaN for incomplete attempts). Records beyond
    an attempt's final trial cannot happen in a valid log and are dropped.
    """
    if rows is None:
        rows = [trial_row(r) for r in records]
    df = pd.DataFrame.from_records(rows, columns=list(columns)) if len(rows) else \
        pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    if df.empty:
        df["complete"] = pd.Series(dtype=bool)
        df["last_trial"] = pd.Series(dtype=float)
        for c in ("attempt", "trial"):
            df[c] = df[c].astype(int)
        return df
    df = df.drop_duplicates(subset=KEYS + ["trial"], keep="last")
    last = df.loc[df["final"].astype(bool)].groupby(KEYS)["trial"].max().rename("last_trial")
    df = df.join(last, on=KEYS)
    df["complete"] = df["last_trial"].notna()
    df = df[~(df["complete"] & (df["trial"] > df["last_trial"]))]
    df = df.assign(hidden_passed=df["hidden_passed"].astype(bool), final=df["final"].astype(bool))
    return df.sort_values(KEYS + ["trial"], kind="stable").reset_index(drop=True)


def attempts_frame(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per complete attempt: task_id, strategy, attempt, trials (the final trial
    number), passed, stop_reason, error, calls (the compute the strategy asked for,
    response-cache hits included), tokens (input + output), cost (dollars at list
    price, cache hits included; NaN when any of its trials had no price), model_s (its
    model calls' own time added up)."""
    done = trials[trials["complete"]]
    cols = KEYS + ["trials", "passed", "stop_reason", "error", "calls", "tokens", "cost", "model_s"]
    if done.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    # cost: what its calls cost at list price, cache-served answers included (the compute
    # asked for, as calls count them); NaN when a trial that called the model had no price
    paid = done["cost_usd"].astype(float).fillna(0.0) + done["cached_cost_usd"].astype(float).fillna(0.0)
    unknown = (done["model_calls"] > 0) & done["cost_usd"].isna() & done["cached_cost_usd"].isna()
    spend = done.assign(calls=done["model_calls"], tokens=done["input_tokens"] + done["output_tokens"],
                        cost=paid, unpriced=unknown).groupby(KEYS).agg(
        calls=("calls", "sum"), tokens=("tokens", "sum"), cost=("cost", "sum"), unpriced=("unpriced", "any"),
        model_s=("model_s", "sum"))
    spend["cost"] = spend["cost"].where(~spend["unpriced"].astype(bool))
    spend = spend.drop(columns="unpriced")
    final = done[done["final"]].set_index(KEYS)
    out = pd.DataFrame({
        "trials": final["trial"].astype(int),
        "passed": final["hidden_passed"].astype(bool),
        "stop_reason": final["stop_reason"],
        "error": final["error"],
    }).join(spend)
    return out.reset_index()[cols]


def incomplete_keys(trials: pd.DataFrame, errors: Iterable[tuple[str, str, int]] = ()) -> set[tuple[str, str, int]]:
    """Attempts without a final record: those with trials but none final, and those
    errors.jsonl names (a model error before the first trial leaves no record). An
    attempt with a final record is complete, whatever errors.jsonl says."""
    seen = set(trials[KEYS].drop_duplicates().itertuples(index=False, name=None)) if not trials.empty else set()
    done = set(trials.loc[trials["complete"], KEYS].drop_duplicates().itertuples(index=False, name=None)) \
        if not trials.empty else set()
    seen = {(str(t), str(s), int(a)) for t, s, a in seen}
    done = {(str(t), str(s), int(a)) for t, s, a in done}
    return (seen | {(str(t), str(s), int(a)) for t, s, a in errors}) - done


def incomplete_attempts(trials: pd.DataFrame, errors: Iterable[tuple[str, str, int]] = ()) -> dict[str, int]:
    """Number of attempts without a final record, per strategy (see incomplete_keys)."""
    counts: dict[str, int] = {}
    for _, strategy, _ in incomplete_keys(trials, errors):
        counts[strategy] = counts.get(strategy, 0) + 1
    return dict(sorted(counts.items()))


def complete_tasks(attempts: pd.DataFrame, strategy: str, samples: int = 1) -> set[str]:
    """Tasks a strategy completed: at least `samples` complete attempts."""
    counts = attempts.loc[attempts["strategy"] == strategy].groupby("task_id").size()
    return {str(t) for t, n in counts.items() if n >= max(1, int(samples))}


@dataclass(frozen=True)
class Footing:
    """The tasks every compared strategy completed (`shared`), and the rest of the
    run's tasks (`excluded`): left out of every headline and paired figure, so that
    no strategy is scored on tasks another one did not finish."""

    shared: tuple[str, ...]
    excluded: tuple[str, ...]


def equal_footing(attempts: pd.DataFrame, strategies: Sequence[str], samples: int = 1,
                  all_tasks: Iterable[str] | None = None) -> Footing:
    """Shared complete tasks of `strategies`; `all_tasks` is the run's task list
    (default: every task with a complete attempt)."""
    universe = {str(t) for t in (all_tasks if all_tasks is not None else attempts["task_id"].unique())}
    shared = set(universe) if strategies else set()
    for strategy in strategies:
        shared &= complete_tasks(attempts, strategy, samples)
    return Footing(tuple(sorted(shared)), tuple(sorted(universe - shared)))


def strategies_of(config: dict[str, Any], trials: pd.DataFrame) -> list[str]:
    """The configured strategies in their configured order, then any others seen."""
    raw = config.get("strategies")
    listed = [s for s in raw if isinstance(s, str)] if isinstance(raw, list) else []
    seen = list(dict.fromkeys(trials["strategy"])) if not trials.empty else []
    return list(dict.fromkeys([*listed, *seen]))


def task_ids_of(header: dict[str, Any], trials: pd.DataFrame) -> list[str]:
    """The run's task list: run.json's task_ids, or every task with a trial record."""
    tasks = header.get("tasks") if isinstance(header.get("tasks"), dict) else {}
    listed = tasks.get("task_ids")
    if isinstance(listed, list) and listed:
        return list(dict.fromkeys(str(t) for t in listed))
    return sorted({str(t) for t in trials["task_id"]}) if not trials.empty else []


def error_keys(errors: Iterable[dict[str, Any] | ErrorRecord]) -> list[tuple[str, str, int]]:
    """(task_id, strategy, attempt) of each errors.jsonl line that names one."""
    out = []
    for e in errors:
        try:
            if isinstance(e, ErrorRecord):
                out.append(e.attempt_key)
            else:
                out.append((str(e["task_id"]), str(e["strategy"]), int(e["attempt"])))
        except (KeyError, TypeError, ValueError):
            continue
    return out


@dataclass(frozen=True)
class Frames:
    """A run's frames, built once and shared by every figure.

    `trials`/`attempts` hold everything recorded (for spend and counts);
    `shared_trials`/`shared_attempts` only the tasks every strategy completed
    (`footing.shared`): every headline and paired figure uses these."""

    header: dict[str, Any]
    trials: pd.DataFrame
    attempts: pd.DataFrame
    strategies: list[str]
    task_ids: list[str]
    samples: int
    ks: list[int]
    budget: int | None
    footing: Footing
    shared_trials: pd.DataFrame
    shared_attempts: pd.DataFrame
    errors: tuple[dict[str, Any], ...]
    error_keys: tuple[tuple[str, str, int], ...]

    @property
    def config(self) -> dict[str, Any]:
        cfg = self.header.get("config")
        return cfg if isinstance(cfg, dict) else {}


def _count(value: Any) -> int | None:
    """A count run.json's config records (samples, trials, a k): an integer >= 1, else
    None (a damaged or hand-edited header is read, never trusted to be well formed)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


def prepare(header: dict[str, Any], trials: pd.DataFrame, errors: Sequence[dict[str, Any]] = ()) -> Frames:
    """The one preparation: a run's header, its trial frame and errors.jsonl's lines."""
    config = header.get("config") if isinstance(header.get("config"), dict) else {}
    attempts = attempts_frame(trials)
    strategies = strategies_of(config, trials)
    samples = _count(config.get("samples")) or 1
    listed_ks = config.get("k") if isinstance(config.get("k"), list) else []
    ks = sorted({1, *(k for k in map(_count, listed_ks) if k is not None and k <= samples)})
    task_ids = task_ids_of(header, trials)
    footing = equal_footing(attempts, strategies, samples, task_ids)
    shared = set(footing.shared)
    budget = _count(config.get("trials"))
    return Frames(header, trials, attempts, strategies, task_ids, samples, ks, budget, footing,
                  trials[trials["task_id"].isin(shared)], attempts[attempts["task_id"].isin(shared)],
                  tuple(errors), tuple(error_keys(errors)))
