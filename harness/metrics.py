"""Metrics over trial records: pure functions, no I/O.

Rules every function here follows:

* Only *complete* attempts count: an attempt (task, strategy, attempt) is complete
  when it has a record with ``final=True``. A killed run leaves incomplete attempts;
  they are counted (``incomplete_attempts``) and otherwise left out.
* An attempt's result is its *final* trial's hidden verdict, never "any trial passed":
  an attempt whose trial 2 passed the hidden tests but whose submitted trial 3 fails
  counts as a failure.
* Rates are averaged per task over its attempts first, then over tasks, so every
  task weighs the same whatever its number of complete attempts.
* Figures that compare strategies (headline pass@k, pass@1 by trial, paired
  statistics, compute curves) are computed on the tasks every compared strategy
  completed (`equal_footing`); callers filter the frames to those tasks and show
  how many were left out.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from harness.rundata import TrialRecord

BASELINE = "baseline"
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20230320  # fixed so that a report is reproducible byte for byte

_TRIAL_COLUMNS = [
    "task_id", "strategy", "attempt", "trial", "final", "stop_reason", "hidden_passed",
    "internal_passed", "error", "model_calls", "cached_calls", "input_tokens",
    "output_tokens", "cost_usd", "cached_cost_usd", "wall_s",
]


# --------------------------------------------------------------------------- pass@k

def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k estimator of Chen et al. (2021) for one task.

    1 - C(n-c, k) / C(n, k), computed as 1 - prod_{i=n-c+1..n} (1 - k/i), which never
    forms the huge binomials. n samples, c of them correct.
    """
    if not (0 <= c <= n) or k < 1:
        raise ValueError(f"pass_at_k needs 0 <= c <= n and k >= 1, got n={n}, c={c}, k={k}")
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples per task, got n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


# --------------------------------------------------------------------------- frames

def trials_frame(records: Iterable[TrialRecord]) -> pd.DataFrame:
    """One row per trial record, with the columns the metrics need.

    Adds ``complete`` (the attempt has a final record) and ``last_trial`` (the
    final record's trial number; NaN for incomplete attempts). Records beyond an
    attempt's final trial cannot happen in a valid log and are dropped.
    """
    rows = [
        {
            "task_id": r.task_id, "strategy": r.strategy, "attempt": r.attempt,
            "trial": r.trial, "final": r.final, "stop_reason": r.stop_reason,
            "hidden_passed": bool(r.hidden_passed), "internal_passed": r.internal_passed,
            "error": r.error, "model_calls": r.model_calls, "cached_calls": r.cached_calls,
            "input_tokens": r.input_tokens, "output_tokens": r.output_tokens,
            "cost_usd": r.cost_usd, "cached_cost_usd": r.cached_cost_usd, "wall_s": r.wall_s,
        }
        for r in records
    ]
    df = pd.DataFrame(rows, columns=_TRIAL_COLUMNS)
    if df.empty:
        df["complete"] = pd.Series(dtype=bool)
        df["last_trial"] = pd.Series(dtype=float)
        return df
    keys = ["task_id", "strategy", "attempt"]
    df = df.drop_duplicates(subset=keys + ["trial"], keep="last")
    last = df[df["final"]].groupby(keys)["trial"].max().rename("last_trial")
    df = df.join(last, on=keys)
    df["complete"] = df["last_trial"].notna()
    df = df[~(df["complete"] & (df["trial"] > df["last_trial"]))]
    return df.sort_values(keys + ["trial"]).reset_index(drop=True)


def attempts_frame(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per complete attempt: its final verdict and what it spent.

    Columns: task_id, strategy, attempt, trials (the final trial number), passed,
    stop_reason, error, calls (model + cached calls: the compute the strategy asked
    for, whether or not the response cache served it), tokens (input + output).
    """
    done = trials[trials["complete"]]
    keys = ["task_id", "strategy", "attempt"]
    cols = keys + ["trials", "passed", "stop_reason", "error", "calls", "tokens"]
    if done.empty:
        return pd.DataFrame(columns=cols)
    spend = done.assign(
        calls=done["model_calls"],  # cache hits included: the compute the strategy asked for
        tokens=done["input_tokens"] + done["output_tokens"],
    ).groupby(keys)[["calls", "tokens"]].sum()
    final = done[done["final"]].set_index(keys)
    out = pd.DataFrame({
        "trials": final["trial"].astype(int),
        "passed": final["hidden_passed"].astype(bool),
        "stop_reason": final["stop_reason"],
        "error": final["error"],
    }).join(spend)
    return out.reset_index()[cols]


def incomplete_attempts(trials: pd.DataFrame, errors: Iterable[tuple[str, str, int]] = ()) -> dict[str, int]:
    """Number of attempts without a final record, per strategy.

    `errors`: (task_id, strategy, attempt) of the lines of errors.jsonl. An attempt
    that a model error stopped before its first trial has no trial record at all:
    only errors.jsonl knows it. An attempt with a final record is complete, whatever
    errors.jsonl says (a resumed run finished it).
    """
    keys = ["task_id", "strategy", "attempt"]
    seen = {tuple(k) for k in trials[keys].drop_duplicates().itertuples(index=False)}
    done = {tuple(k) for k in trials.loc[trials["complete"], keys].drop_duplicates().itertuples(index=False)}
    missing = {(str(t), str(s), int(a)) for t, s, a in seen} | {(str(t), str(s), int(a)) for t, s, a in errors}
    missing -= {(str(t), str(s), int(a)) for t, s, a in done}
    counts: dict[str, int] = {}
    for _, strategy, _ in missing:
        counts[strategy] = counts.get(strategy, 0) + 1
    return dict(sorted(counts.items()))


# --------------------------------------------------------------------------- per task

def per_task_pass_at_k(attempts: pd.DataFrame, strategy: str, k: int) -> pd.Series:
    """pass@k per task (index task_id) for one strategy; tasks with fewer than k
    complete attempts are left out (their pass@k is not defined)."""
    sub = attempts[attempts["strategy"] == strategy]
    grouped = sub.groupby("task_id")["passed"].agg(["size", "sum"])
    values = {
        task: pass_at_k(int(row["size"]), int(row["sum"]), k)
        for task, row in grouped.iterrows()
        if row["size"] >= k
    }
    return pd.Series(values, dtype=float, name=f"pass@{k}").sort_index()


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    *,
    level: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean, resampling tasks with replacement."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, arr.size, size=(resamples, arr.size))].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))


@dataclass(frozen=True)
class Estimate:
    """A mean over tasks with its 95% bootstrap CI; tasks = how many were averaged."""

    value: float
    ci_low: float
    ci_high: float
    tasks: int


def estimate(per_task: pd.Series) -> Estimate:
    if per_task.empty:
        return Estimate(math.nan, math.nan, math.nan, 0)
    lo, hi = bootstrap_ci(per_task.to_numpy())
    return Estimate(float(per_task.mean()), lo, hi, int(per_task.size))


def pass_at_k_table(attempts: pd.DataFrame, strategies: Sequence[str], ks: Sequence[int]) -> pd.DataFrame:
    """Rows (strategy, k): pass@k averaged over tasks with its 95% bootstrap CI."""
    rows = []
    for strategy in strategies:
        for k in ks:
            est = estimate(per_task_pass_at_k(attempts, strategy, k))
            rows.append({"strategy": strategy, "k": k, "pass": est.value,
                         "ci_low": est.ci_low, "ci_high": est.ci_high, "tasks": est.tasks})
    return pd.DataFrame(rows, columns=["strategy", "k", "pass", "ci_low", "ci_high", "tasks"])


# --------------------------------------------------------------------------- by trial

def _at_trial(trials: pd.DataFrame, t: int, column: str) -> pd.DataFrame:
    """For each complete attempt, `column` of its trial min(t, last trial).

    If a middle trial is missing from the log (never in a valid run), the latest
    recorded trial before it stands in.
    """
    done = trials[trials["complete"]]
    upto = done[done["trial"] <= done["last_trial"].clip(upper=t)]
    keys = ["task_id", "strategy", "attempt"]
    return upto.sort_values("trial").groupby(keys).tail(1)[keys + ["trial", column]]


def max_trials(trials: pd.DataFrame, strategy: str, budget: int | None) -> int:
    """Trial axis length for a strategy: the larger of the trial budget (strategies
    that iterate) and the highest trial recorded. The baseline has one trial."""
    seen = trials.loc[trials["strategy"] == strategy, "trial"]
    top = int(seen.max()) if not seen.empty else 0
    if strategy != BASELINE and budget:
        top = max(top, int(budget))
    return max(top, 1)


def pass1_by_trial(trials: pd.DataFrame, strategy: str, n_trials: int) -> list[float]:
    """pass@1 at trial t for t = 1..n_trials: the share of attempts whose
    implementation at trial min(t, last trial) passes the hidden tests, averaged
    per task over its complete attempts, then over tasks."""
    sub = trials[trials["strategy"] == strategy]
    out = []
    for t in range(1, n_trials + 1):
        at = _at_trial(sub, t, "hidden_passed")
        if at.empty:
            out.append(math.nan)
            continue
        out.append(float(at.groupby("task_id")["hidden_passed"].mean().mean()))
    return out


def pass1_by_trial_table(trials: pd.DataFrame, strategies: Sequence[str], budget: int | None) -> pd.DataFrame:
    """Rows (strategy, trial, pass, ci_low, ci_high)."""
    rows = []
    for strategy in strategies:
        sub = trials[trials["strategy"] == strategy]
        for t in range(1, max_trials(trials, strategy, budget) + 1):
            at = _at_trial(sub, t, "hidden_passed")
            est = estimate(at.groupby("task_id")["hidden_passed"].mean().astype(float))
            rows.append({"strategy": strategy, "trial": t, "pass": est.value,
                         "ci_low": est.ci_low, "ci_high": est.ci_high, "tasks": est.tasks})
    return pd.DataFrame(rows, columns=["strategy", "trial", "pass", "ci_low", "ci_high", "tasks"])


# --------------------------------------------------------------------------- equal footing

def complete_tasks(attempts: pd.DataFrame, strategy: str, samples: int = 1) -> set[str]:
    """Tasks a strategy completed: at least `samples` complete attempts (every
    configured attempt has its final record)."""
    sub = attempts[attempts["strategy"] == strategy]
    counts = sub.groupby("task_id").size()
    return {str(t) for t, n in counts.items() if n >= max(1, int(samples))}


@dataclass(frozen=True)
class Footing:
    """The tasks every compared strategy completed (`shared`), and the rest of
    the run's tasks (`excluded`): left out of every headline and paired figure, so
    that no strategy is scored on tasks another one did not finish."""

    shared: tuple[str, ...]
    excluded: tuple[str, ...]


def equal_footing(attempts: pd.DataFrame, strategies: Sequence[str], samples: int = 1,
                  all_tasks: Iterable[str] | None = None) -> Footing:
    """Shared complete tasks of `strategies`; `all_tasks` is the run's task list
    (default: every task with a complete attempt). A task no strategy finished,
    or one a strategy never started, is excluded too."""
    universe = {str(t) for t in (all_tasks if all_tasks is not None else attempts["task_id"].unique())}
    shared = set(universe)
    for strategy in strategies:
        shared &= complete_tasks(attempts, strategy, samples)
    if not strategies:
        shared = set()
    return Footing(tuple(sorted(shared)), tuple(sorted(universe - shared)))


# --------------------------------------------------------------------------- paired

@dataclass(frozen=True)
class Paired:
    """Strategy a against strategy b on the same tasks and attempts.

    diff: pass@1 of a minus pass@1 of b over the `tasks` both completed (per task
    over its complete attempts, then over tasks: the headline's own figures);
    ci_low/ci_high: its paired bootstrap 95% CI (tasks resampled, each carrying
    both strategies' results). McNemar's exact test runs over attempt pairs:
    attempt i of a with attempt i of b on the same task, every attempt (no
    majority vote). fixed: a passed and b failed; broken: b passed, a failed.
    """

    a: str
    b: str
    diff: float
    ci_low: float
    ci_high: float
    pairs: int
    tasks: int
    excluded: int
    fixed: int
    broken: int
    both: int
    neither: int
    p_value: float  # McNemar's exact two-sided test on (fixed, broken)

    @property
    def only_a(self) -> int:
        return self.fixed

    @property
    def only_b(self) -> int:
        return self.broken


def mcnemar_exact(b: int, c: int) -> float:
    """McNemar's exact two-sided p-value for discordant counts b and c.

    Under H0 each discordant pair goes either way with probability 1/2, so
    p = min(1, 2 * P(X <= min(b, c))) with X ~ Binomial(b + c, 1/2). Computed with
    math.comb in exact integer arithmetic (no scipy).
    """
    if b < 0 or c < 0:
        raise ValueError(f"counts must be >= 0, got {b}, {c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    # int / int is correctly rounded however large both are (2.0 * tail would
    # overflow a float past about 1,000 discordant pairs)
    return min(1.0, (2 * tail) / (1 << n))


def paired_bootstrap_ci(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *,
                        level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES,
                        seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """Percentile CI of mean(a) - mean(b) where a[i] and b[i] belong to the same
    task: tasks are resampled together, so what the two share cancels out."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if xa.shape != xb.shape:
        raise ValueError(f"paired values need equal lengths, got {xa.size} and {xb.size}")
    return bootstrap_ci(xa - xb, level=level, resamples=resamples, seed=seed)


def paired_comparison(attempts: pd.DataFrame, a: str, b: str, *, tasks: Iterable[str] | None = None,
                      all_tasks: Iterable[str] | None = None) -> Paired:
    """a against b. `tasks`: the shared complete tasks to compare on (default:
    tasks where both have a complete attempt); `all_tasks`: the tasks the run
    had, to count the ones left out (default: every task either one completed)."""
    sub = attempts[attempts["strategy"].isin([a, b])]
    if tasks is None:
        have_a = set(sub.loc[sub["strategy"] == a, "task_id"])
        have_b = set(sub.loc[sub["strategy"] == b, "task_id"])
        shared = have_a & have_b
    else:
        shared = {str(t) for t in tasks}
    universe = {str(t) for t in all_tasks} if all_tasks is not None else set(sub["task_id"])
    universe |= shared
    sub = sub[sub["task_id"].isin(shared)]
    pa = sub[sub["strategy"] == a].set_index(["task_id", "attempt"])["passed"].astype(bool)
    pb = sub[sub["strategy"] == b].set_index(["task_id", "attempt"])["passed"].astype(bool)
    rate_a = pa.groupby(level="task_id").mean()
    rate_b = pb.groupby(level="task_id").mean()
    common = sorted(set(rate_a.index) & set(rate_b.index))
    if common:
        ra, rb = rate_a.loc[common].to_numpy(float), rate_b.loc[common].to_numpy(float)
        diff = float(ra.mean() - rb.mean())
        lo, hi = paired_bootstrap_ci(ra, rb)
    else:
        diff, lo, hi = math.nan, math.nan, math.nan
    joined = pd.concat([pa.rename("a"), pb.rename("b")], axis=1, join="inner")
    xa, xb = joined["a"].astype(bool), joined["b"].astype(bool)
    fixed, broken = int((xa & ~xb).sum()), int((~xa & xb).sum())
    return Paired(a=a, b=b, diff=diff, ci_low=lo, ci_high=hi, pairs=len(joined), tasks=len(common),
                  excluded=len(universe - set(common)), fixed=fixed, broken=broken,
                  both=int((xa & xb).sum()), neither=int((~xa & ~xb).sum()),
                  p_value=mcnemar_exact(fixed, broken))


def spend_ratio(attempts: pd.DataFrame, a: str, b: str, column: str = "calls") -> float:
    """Mean `column` (calls or tokens) per attempt of a over that of b, each
    averaged per task first, then over tasks; NaN when b spent nothing."""
    def mean(s: str) -> float:
        sub = attempts[attempts["strategy"] == s]
        return float(sub.groupby("task_id")[column].mean().mean()) if not sub.empty else math.nan
    ma, mb = mean(a), mean(b)
    return ma / mb if mb else math.nan


def default_pairs(strategies: Sequence[str]) -> list[tuple[str, str]]:
    """reflexion+recall against reflexion (what recall adds), each strategy against
    the baseline (reflexion, feedback, resample first),
    then reflexion against feedback (the lesson's own value) and against resample
    (repair against resampling at similar compute), as present."""
    wanted = [("reflexion+recall", "reflexion"),  # recall's own value: the same strategy without it
              ("reflexion", BASELINE), ("reflexion+recall", BASELINE), ("feedback", BASELINE), ("resample", BASELINE),
              ("reflexion", "feedback"), ("reflexion", "resample")]
    have = set(strategies)
    pairs = [p for p in wanted if p[0] in have and p[1] in have]
    # Strategies this module does not know get paired with the baseline.
    known = {"reflexion", "feedback", "resample", BASELINE, "reflexion+recall"}
    pairs += [(s, BASELINE) for s in strategies if s not in known and BASELINE in have]
    return pairs


# --------------------------------------------------------------------------- compute

def compute_curve(trials: pd.DataFrame, attempts: pd.DataFrame, strategy: str, budget: int | None) -> pd.DataFrame:
    """Pass rate against compute spent, per task on average, for any strategy.

    Strategies with a trial loop (reflexion, feedback, resample): one point per
    trial budget t, pass@1 at trial t against the calls and tokens of trials up to
    min(t, last), taken from the records as they are (each call is charged to the
    trial it serves). The baseline: its pass@1 at the cost of one sample (kind
    "agent"), then for k >= 2 the best of k samples as picked by the hidden tests
    (kind "oracle": an upper bound no agent can reach, since it needs the hidden
    tests to choose), k up to the fewest complete samples any task has.
    """
    cols = ["strategy", "budget", "calls", "tokens", "pass", "kind"]
    sub = trials[(trials["strategy"] == strategy) & trials["complete"]]
    if sub.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    if strategy == BASELINE:
        att = attempts[attempts["strategy"] == strategy]
        per_task = att.groupby("task_id")[["calls", "tokens"]].mean()
        calls, tokens = float(per_task["calls"].mean()), float(per_task["tokens"].mean())
        n_min = int(att.groupby("task_id").size().min())
        for k in range(1, n_min + 1):
            rows.append({"strategy": strategy, "budget": f"k={k}", "calls": k * calls,
                         "tokens": k * tokens,
                         "pass": float(per_task_pass_at_k(attempts, strategy, k).mean()),
                         "kind": "agent" if k == 1 else "oracle"})
        return pd.DataFrame(rows, columns=cols)
    spend = sub.assign(calls=sub["model_calls"],
                       tokens=sub["input_tokens"] + sub["output_tokens"])
    keys = ["task_id", "attempt"]
    for t in range(1, max_trials(trials, strategy, budget) + 1):
        upto = spend[spend["trial"] <= t].groupby(keys)[["calls", "tokens"]].sum()
        per_task = upto.groupby("task_id").mean()
        rows.append({"strategy": strategy, "budget": f"t={t}",
                     "calls": float(per_task["calls"].mean()),
                     "tokens": float(per_task["tokens"].mean()),
                     "pass": pass1_by_trial(trials, strategy, t)[-1], "kind": "agent"})
    return pd.DataFrame(rows, columns=cols)


def compute_matched(attempts: pd.DataFrame, strategies: Sequence[str]) -> pd.DataFrame:
    """Upper bound only: each iterating strategy's pass@1 beside the baseline's
    best of k samples as picked by the hidden tests (an oracle: pass@k), at a
    matched budget.

    k_calls = round(strategy's mean calls per attempt / baseline's mean calls per
    sample), at least 1; likewise k_tokens for tokens. The oracle figure is given
    where every task has at least k complete baseline samples, else left empty.
    The rival an agent could run at that budget is `resample`, in the compute curve.
    """
    cols = ["strategy", "pass@1", "calls", "tokens", "baseline_calls_per_sample",
            "baseline_tokens_per_sample", "k_calls", "oracle_best_of_k_calls",
            "k_tokens", "oracle_best_of_k_tokens", "baseline_samples"]
    base = attempts[attempts["strategy"] == BASELINE]
    if base.empty:
        return pd.DataFrame(columns=cols)
    base_task = base.groupby("task_id")[["calls", "tokens"]].mean()
    b_calls, b_tokens = float(base_task["calls"].mean()), float(base_task["tokens"].mean())
    n_min = int(base.groupby("task_id").size().min())

    def matched(ratio: float) -> tuple[int | None, float | None]:
        if not math.isfinite(ratio):
            return None, None
        k = max(1, int(round(ratio)))
        if k > n_min:
            return k, None
        return k, float(per_task_pass_at_k(attempts, BASELINE, k).mean())

    rows = []
    for strategy in strategies:
        if strategy == BASELINE:
            continue
        att = attempts[attempts["strategy"] == strategy]
        if att.empty:
            continue
        per_task = att.groupby("task_id")[["calls", "tokens"]].mean()
        calls, tokens = float(per_task["calls"].mean()), float(per_task["tokens"].mean())
        k_c, p_c = matched(calls / b_calls if b_calls else math.inf)
        k_t, p_t = matched(tokens / b_tokens if b_tokens else math.inf)
        rows.append({
            "strategy": strategy,
            "pass@1": float(per_task_pass_at_k(attempts, strategy, 1).mean()),
            "calls": calls, "tokens": tokens,
            "baseline_calls_per_sample": b_calls, "baseline_tokens_per_sample": b_tokens,
            "k_calls": k_c, "oracle_best_of_k_calls": p_c,
            "k_tokens": k_t, "oracle_best_of_k_tokens": p_t, "baseline_samples": n_min,
        })
    return pd.DataFrame(rows, columns=cols)


# --------------------------------------------------------------------------- self-tests

def _ordered(groups: Iterable, strategies: Sequence[str] | None) -> list:
    """groupby items sorted by the given strategy order (unknown ones last), then key."""
    order = {s: i for i, s in enumerate(strategies or [])}
    def key(kv):
        k = kv[0] if isinstance(kv[0], tuple) else (kv[0],)
        return (order.get(k[0], len(order)), k)
    return sorted(groups, key=key)


def self_test_quality(trials: pd.DataFrame, strategies: Sequence[str] | None = None) -> pd.DataFrame:
    """Per strategy and trial number, internal verdict against hidden verdict.

    false_positive: internal tests passed, hidden failed; false_negative: internal
    failed, hidden passed. Rates are shares of the trials at that trial number.
    Trials without an internal verdict (the baseline; model errors) are left out.
    """
    cols = ["strategy", "trial", "trials", "both_pass", "false_positive", "false_negative",
            "both_fail", "fp_rate", "fn_rate"]
    sub = trials[trials["complete"] & trials["internal_passed"].notna()]
    rows = []
    for (strategy, t), g in _ordered(sub.groupby(["strategy", "trial"]), strategies):
        internal = g["internal_passed"].astype(bool)
        hidden = g["hidden_passed"].astype(bool)
        n = len(g)
        fp, fn = int((internal & ~hidden).sum()), int((~internal & hidden).sum())
        rows.append({"strategy": strategy, "trial": int(t), "trials": n,
                     "both_pass": int((internal & hidden).sum()), "false_positive": fp,
                     "false_negative": fn, "both_fail": int((~internal & ~hidden).sum()),
                     "fp_rate": fp / n, "fn_rate": fn / n})
    return pd.DataFrame(rows, columns=cols)


def stopped_on_false_positive(attempts: pd.DataFrame, strategies: Sequence[str] | None = None) -> pd.DataFrame:
    """Per strategy: attempts that stopped because their internal tests passed
    (stop_reason internal_pass), and how many of those fail the hidden tests."""
    cols = ["strategy", "attempts", "stopped_on_internal_pass", "stopped_on_false_positive", "share"]
    rows = []
    for strategy, g in _ordered(attempts.groupby("strategy"), strategies):
        stopped = g[g["stop_reason"] == "internal_pass"]
        if strategy == BASELINE and stopped.empty:
            continue
        fp = int((~stopped["passed"].astype(bool)).sum())
        rows.append({"strategy": strategy, "attempts": len(g),
                     "stopped_on_internal_pass": len(stopped),
                     "stopped_on_false_positive": fp, "share": fp / len(g)})
    return pd.DataFrame(rows, columns=cols)


# --------------------------------------------------------------------------- spend

_SPENT_COUNTS = ("model_calls", "cached_calls", "input_tokens", "output_tokens")
_SPENT_MONEY = ("cost_usd", "cached_cost_usd")


def unfinished_spend(errors: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """What unfinished trials spent, from errors.jsonl's `spent` fields: one row per
    line that has them (strategy + the usage fields of a trial record)."""
    rows = []
    for row in errors:
        spent = row.get("spent")
        if not isinstance(spent, Mapping) or not isinstance(row.get("strategy"), str):
            continue
        rows.append({"strategy": row["strategy"],
                     **{name: int(spent.get(name) or 0) for name in _SPENT_COUNTS},
                     **{name: (float(spent[name]) if spent.get(name) is not None else None) for name in _SPENT_MONEY}})
    return pd.DataFrame(rows, columns=["strategy", *_SPENT_COUNTS, *_SPENT_MONEY])


def resources(trials: pd.DataFrame, strategies: Sequence[str],
              errors: Iterable[tuple[str, str, int]] = (),
              unfinished: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per strategy totals over *every* recorded trial, incomplete attempts included
    (what the run spent), plus what trials a model error left unfinished had spent
    (`unfinished`, from `unfinished_spend`; the failed call counts as a call).
    cost_usd is money spent on model calls, cached_cost_usd what the answers the
    response cache served had cost when first made (not spent again); each is None
    when nothing of the strategy had a price for it.
    `errors`: errors.jsonl's attempt keys, for the incomplete count."""
    cols = ["strategy", "attempts", "incomplete_attempts", "trials", "model_calls",
            "cached_calls", "input_tokens", "output_tokens", "cost_usd", "cached_cost_usd",
            "errors", "wall_s", "unfinished_calls"]
    incomplete = incomplete_attempts(trials, errors)
    if unfinished is None:
        unfinished = unfinished_spend(())
    rows = []
    for strategy in strategies:
        g = trials[trials["strategy"] == strategy]
        u = unfinished[unfinished["strategy"] == strategy]
        done = g[g["complete"]].drop_duplicates(["task_id", "attempt"])
        row: dict[str, Any] = {
            "strategy": strategy, "attempts": len(done),
            "incomplete_attempts": incomplete.get(strategy, 0), "trials": len(g),
            "errors": int(g["error"].notna().sum()), "wall_s": float(g["wall_s"].sum()),
            "unfinished_calls": int(u["model_calls"].sum()),
        }
        for name in _SPENT_COUNTS:
            row[name] = int(g[name].sum()) + int(u[name].sum())
        for name in _SPENT_MONEY:
            costs = pd.concat([g[name].dropna(), u[name].dropna()])
            row[name] = float(costs.sum()) if not costs.empty else None
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)
