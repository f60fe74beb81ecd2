"""A run's numbers for the view: strategies, paired answer, caveats, task outcomes.

Everything is computed from the index frame (harness.view.index) with the metrics of
harness.metrics, so the view and the report agree. Pure functions; the app caches
the result per index version.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from harness import metrics
from harness.report.answer import FEW_TASKS, WIDE_CI  # the report's thresholds for a shaky effect size
from harness.view.index import trials_for_metrics

ITERATING_ORDER = ("reflexion", "feedback", "resample")


@dataclass(frozen=True)
class StrategyLine:
    """One strategy's row, with the report's bases (harness.summary): pass@1, its CI,
    `tasks` and `calls_per_attempt` on the shared tasks (equal footing); the counts
    and spend (`attempts` .. `errors`, `completed_tasks`) over the whole run."""

    name: str
    pass1: float
    ci_low: float
    ci_high: float
    tasks: int  # shared tasks scored (summary tasks_scored)
    attempts: int  # complete attempts, every task (summary attempts)
    incomplete: int
    calls: int
    cached_calls: int
    tokens: int
    cost_usd: float | None
    summed_s: float
    errors: int
    calls_per_attempt: float  # mean calls per attempt on the shared tasks, per task first
    no_tests: int  # attempts whose test writer kept no test
    completed_tasks: int = 0  # tasks where all its attempts are complete, every task (summary tasks_completed)


@dataclass(frozen=True)
class PairLine:
    """a - b on the tasks both completed (contract: harness.metrics.Paired)."""

    a: str
    b: str
    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    fixed: int  # tasks a passes and b fails
    broken: int  # tasks b passes and a fails
    tasks: int  # shared complete tasks
    excluded: int  # tasks left out (not complete under both)
    pairs: int  # attempt pairs behind McNemar's test
    calls_ratio: float | None  # a's mean calls per attempt / b's (None: not defined)
    tokens_ratio: float | None = None  # the same for tokens

    def sentence(self) -> str:
        if self.tasks == 0:  # the report's wording (harness.summary.answer_line)
            return f"{self.a} − {self.b}: no task completed by both ({self.excluded} left out)"
        ratio = f"; {self.calls_ratio:.1f}× the calls" if self.calls_ratio is not None else ""
        of = f"{self.tasks} tasks" if self.pairs == self.tasks else f"{self.pairs} attempt pairs on {self.tasks} tasks"
        return (f"{self.a} − {self.b}: {_points(self.diff)} points "
                f"[95% CI {_points(self.ci_low)}, {_points(self.ci_high)}], McNemar p = {_p(self.p_value)}; "
                f"fixed {self.fixed}, broken {self.broken} of {of}{ratio}")


@dataclass(frozen=True)
class Caveat:
    level: str  # "red" | "warn" | "info"
    text: str
    key: str = ""  # the report's caveat key where it has the same one (harness.report.answer.Caveat)


@dataclass
class RunNumbers:
    strategies: list[str]
    lines: list[StrategyLine]
    pairs: list[PairLine]
    caveats: list[Caveat]
    trials: pd.DataFrame  # metrics-shaped trial frame
    attempts: pd.DataFrame
    tasks: pd.DataFrame  # one row per task: outcomes and category flags
    by_trial: pd.DataFrame  # strategy, trial, pass, ci_low, ci_high
    compute: pd.DataFrame  # strategy, budget, calls, tokens, pass
    first_at: str = ""
    last_at: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def headline(self) -> str:
        if self.pairs:
            return self.pairs[0].sentence()
        if self.lines:
            return "; ".join(f"{s.name}: pass@1 {_pct(s.pass1)} [{_pct(s.ci_low)}, {_pct(s.ci_high)}]"
                             for s in self.lines)
        return "no complete attempt yet"


def _points(x: float) -> str:
    if x is None or not math.isfinite(x):
        return "–"
    return f"{x * 100:+.1f}"


def _pct(x: float) -> str:
    if x is None or not math.isfinite(x):
        return "–"
    return f"{x * 100:.1f}%"


def _p(p: float) -> str:
    if p is None or not math.isfinite(p):
        return "–"
    return f"{p:.2g}" if p >= 0.001 else "< 0.001"


def strategies_in(config: dict[str, Any], frame: pd.DataFrame) -> list[str]:
    listed = list(config.get("strategies") or [])
    seen = list(dict.fromkeys(frame["strategy"])) if not frame.empty else []
    return list(dict.fromkeys([*listed, *seen]))


def pairs_of(strategies: Sequence[str]) -> list[tuple[str, str]]:
    """reflexion+recall against reflexion (what recall adds), each iterating strategy
    against the baseline, then reflexion against the others."""
    have = set(strategies)
    out = [("reflexion+recall", "reflexion")] if {"reflexion+recall", "reflexion"} <= have else []
    out += [(s, metrics.BASELINE) for s in ITERATING_ORDER if s in have and metrics.BASELINE in have]
    out += [("reflexion", s) for s in ("feedback", "resample") if "reflexion" in have and s in have]
    out += [(s, metrics.BASELINE) for s in strategies
            if s not in ITERATING_ORDER and s != metrics.BASELINE and metrics.BASELINE in have]
    return out


class Bootstrap:
    """metrics.bootstrap_ci for many arrays over the same tasks, at the cost of one.

    Draws the very resamples metrics.bootstrap_ci draws (same seed, same generator
    calls) and turns them into a count matrix W (resamples x tasks), so every mean
    is one matrix product instead of a gather of resamples x tasks values.
    """

    def __init__(self) -> None:
        self._weights: dict[int, np.ndarray] = {}

    def _w(self, n: int) -> np.ndarray:
        if n not in self._weights:
            rng = np.random.default_rng(metrics.BOOTSTRAP_SEED)
            idx = rng.integers(0, n, size=(metrics.BOOTSTRAP_RESAMPLES, n))
            flat = idx + (np.arange(metrics.BOOTSTRAP_RESAMPLES)[:, None] * n)
            counts = np.bincount(flat.ravel(), minlength=metrics.BOOTSTRAP_RESAMPLES * n)
            self._weights[n] = counts.reshape(metrics.BOOTSTRAP_RESAMPLES, n).astype(float)
        return self._weights[n]

    def ci(self, values: np.ndarray | pd.Series) -> tuple[float, float]:
        arr = np.asarray(values, dtype=float)
        if arr.size == 0:
            return (math.nan, math.nan)
        means = self._w(arr.size) @ arr / arr.size
        lo, hi = np.quantile(means, [0.025, 0.975])
        return (float(lo), float(hi))


def per_task_pass1(attempts: pd.DataFrame, strategy: str) -> pd.Series:
    """pass@1 per task (c/n over complete attempts): metrics.per_task_pass_at_k(.., 1), vectorised."""
    sub = attempts[attempts["strategy"] == strategy]
    return sub.groupby("task_id")["passed"].mean().astype(float).sort_index()


def paired(attempts: pd.DataFrame, a: str, b: str, boot: Bootstrap | None = None,
           tasks: Sequence[str] | None = None, all_tasks: Sequence[str] | None = None) -> PairLine:
    """a against b, with the definitions of harness.metrics.paired_comparison (contract 4):

    diff = pass@1 of a minus b over `tasks` (default: tasks both completed), each
    task's pass@1 taken over its complete attempts; its paired bootstrap 95% CI
    resamples those tasks; fixed / broken = attempt pairs (attempt i of a and of b on
    the same task) that a passed and b failed / the reverse; McNemar's exact p on
    them; excluded = the run's other tasks. Computed here, vectorised, with a p-value
    that holds for any count (see `mcnemar`).

    calls_ratio / tokens_ratio: metrics.spend_ratio over `attempts` as given, as the
    report does; pass the attempts of the compared tasks only (the report passes its
    shared attempts), or the ratio counts tasks the difference leaves out.
    """
    boot = boot or Bootstrap()
    sub = attempts[attempts["strategy"].isin([a, b])]
    if tasks is None:
        shared = set(sub.loc[sub["strategy"] == a, "task_id"]) & set(sub.loc[sub["strategy"] == b, "task_id"])
    else:
        shared = set(tasks)
    universe = (set(all_tasks) if all_tasks is not None else set(sub["task_id"])) | shared
    sub = sub[sub["task_id"].isin(shared)]
    pa = sub[sub["strategy"] == a].set_index(["task_id", "attempt"])["passed"].astype(bool)
    pb = sub[sub["strategy"] == b].set_index(["task_id", "attempt"])["passed"].astype(bool)
    rate_a = pa.groupby(level="task_id").mean()
    rate_b = pb.groupby(level="task_id").mean()
    common = sorted(set(rate_a.index) & set(rate_b.index))
    if common:
        diffs = rate_a.loc[common].to_numpy(float) - rate_b.loc[common].to_numpy(float)
        diff = float(diffs.mean())
        lo, hi = boot.ci(diffs)
    else:
        diff, lo, hi = math.nan, math.nan, math.nan
    joined = pd.concat([pa.rename("a"), pb.rename("b")], axis=1, join="inner")
    xa, xb = joined["a"], joined["b"]
    fixed, broken = int((xa & ~xb).sum()), int((~xa & xb).sum())
    return PairLine(a, b, diff, lo, hi, mcnemar(fixed, broken), fixed, broken, len(common),
                    len(universe - set(common)), len(joined), _ratio(attempts, a, b, "calls"),
                    _ratio(attempts, a, b, "tokens"))


def run_task_ids(all_tasks: Sequence[str], trials: pd.DataFrame) -> list[str]:
    """The run's task list: run.json's task_ids, or (without one) every task with a
    trial record, as harness.summary and harness.report.runs.Run.task_ids take it."""
    if all_tasks:
        return [str(t) for t in all_tasks]
    return sorted({str(t) for t in trials["task_id"]}) if not trials.empty else []


def mcnemar(b: int, c: int) -> float:
    """McNemar's exact two-sided p = min(1, 2 P(X <= min(b, c))), X ~ Bin(b + c, 1/2).

    Summed in log space in floats: metrics.mcnemar_exact gives the same p exactly in big
    integers, which is slower at the counts a 100,000-trial run reaches."""
    n = b + c
    if n == 0:
        return 1.0
    i = np.arange(min(b, c) + 1, dtype=float)
    logs = math.lgamma(n + 1) - np.array([math.lgamma(x + 1) + math.lgamma(n - x + 1) for x in i]) - n * math.log(2)
    top = logs.max()
    tail = math.exp(top) * float(np.exp(logs - top).sum())
    return min(1.0, 2.0 * tail)


def _ratio(attempts: pd.DataFrame, a: str, b: str, column: str) -> float | None:
    """metrics.spend_ratio (mean `column` per attempt of a over b's, per task first),
    None where the report's summary.json has null (no attempt, or b spent nothing)."""
    ratio = metrics.spend_ratio(attempts, a, b, column)
    return ratio if math.isfinite(ratio) else None


def _matrix(trials: pd.DataFrame, strategy: str, column: str, top: int, cumulative: bool = False
            ) -> tuple[pd.Index, np.ndarray]:
    """Complete attempts x trials 1..top of `column`; a trial past the attempt's last
    takes the last trial's value (min(t, last) rule), or keeps the running total."""
    sub = trials[(trials["strategy"] == strategy) & trials["complete"]]
    wide = sub.set_index(["task_id", "attempt", "trial"])[column].astype(float).unstack("trial")
    wide = wide.reindex(columns=range(1, top + 1))
    if cumulative:
        wide = wide.fillna(0.0).cumsum(axis=1)
    else:
        wide = wide.astype(float).ffill(axis=1)
    return wide.index.get_level_values(0), wide.to_numpy(dtype=float)


def by_trial_table(trials: pd.DataFrame, strategies: Sequence[str], budget: int | None,
                   boot: Bootstrap) -> pd.DataFrame:
    """metrics.pass1_by_trial_table, vectorised: pass@1 at trial t with its 95% CI."""
    rows = []
    for s in strategies:
        top = metrics.max_trials(trials, s, budget)
        tasks, mat = _matrix(trials, s, "hidden_passed", top)
        if mat.size == 0:
            continue
        per_task = pd.DataFrame(mat).groupby(np.asarray(tasks)).mean()
        for t in range(1, top + 1):
            col = per_task[t - 1].dropna().to_numpy()
            lo, hi = boot.ci(col)
            rows.append({"strategy": s, "trial": t, "pass": float(col.mean()) if col.size else math.nan,
                         "ci_low": lo, "ci_high": hi, "tasks": int(col.size)})
    return pd.DataFrame(rows, columns=["strategy", "trial", "pass", "ci_low", "ci_high", "tasks"])


def _pass_at_k_task(n: int, c: int, k: int) -> float:
    return 1.0 if n - c < k else 1.0 - math.comb(n - c, k) / math.comb(n, k)


def compute_table(trials: pd.DataFrame, attempts: pd.DataFrame, strategies: Sequence[str],
                  budget: int | None) -> pd.DataFrame:
    """metrics.compute_curve for every strategy, vectorised: pass rate against mean
    calls and tokens per task, one point per trial budget t (or per k for the baseline)."""
    rows = []
    for s in strategies:
        if s == metrics.BASELINE:
            att = attempts[attempts["strategy"] == s]
            if att.empty:
                continue
            per_task = att.groupby("task_id").agg(calls=("calls", "mean"), tokens=("tokens", "mean"),
                                                  n=("passed", "size"), c=("passed", "sum"))
            calls, tokens = float(per_task["calls"].mean()), float(per_task["tokens"].mean())
            for k in range(1, int(per_task["n"].min()) + 1):
                rate = float(np.mean([_pass_at_k_task(int(n), int(c), k)
                                      for n, c in zip(per_task["n"], per_task["c"])]))
                rows.append({"strategy": s, "budget": f"k={k}", "calls": k * calls, "tokens": k * tokens,
                             "pass": rate})
            continue
        top = metrics.max_trials(trials, s, budget)
        tasks, passed = _matrix(trials, s, "hidden_passed", top)
        if passed.size == 0:
            continue
        spend = trials.assign(tokens=trials["input_tokens"] + trials["output_tokens"])
        _, calls = _matrix(spend, s, "model_calls", top, cumulative=True)
        _, tokens = _matrix(spend, s, "tokens", top, cumulative=True)
        key = np.asarray(tasks)
        p = pd.DataFrame(passed).groupby(key).mean()
        c = pd.DataFrame(calls).groupby(key).mean()
        k = pd.DataFrame(tokens).groupby(key).mean()
        for t in range(1, top + 1):
            rows.append({"strategy": s, "budget": f"t={t}", "calls": float(c[t - 1].mean()),
                         "tokens": float(k[t - 1].mean()), "pass": float(p[t - 1].mean())})
    return pd.DataFrame(rows, columns=["strategy", "budget", "calls", "tokens", "pass"])


def _incomplete(trials: pd.DataFrame, error_keys: Sequence[tuple[str, str, int]]) -> dict[str, int]:
    """Attempts without a final record per strategy: those with trials but no final one,
    and those errors.jsonl names (a model error before the first trial leaves no record)."""
    keys = ["task_id", "strategy", "attempt"]
    seen = set(trials[keys].drop_duplicates().itertuples(index=False, name=None)) if not trials.empty else set()
    done = set(trials.loc[trials["complete"], keys].drop_duplicates().itertuples(index=False, name=None)) \
        if not trials.empty else set()
    missing = (seen | set(error_keys)) - done
    out: dict[str, int] = {}
    for _, strategy, _ in missing:
        out[strategy] = out.get(strategy, 0) + 1
    return out


def _lines(trials: pd.DataFrame, attempts: pd.DataFrame, strategies: Sequence[str],
           boot: Bootstrap, error_keys: Sequence[tuple[str, str, int]] = (),
           unfinished: pd.DataFrame | None = None) -> list[StrategyLine]:
    """`unfinished`: what trials a model error left unfinished had spent
    (metrics.unfinished_spend), added to the spend as summary.json does."""
    inc = _incomplete(trials, error_keys)
    if unfinished is None:
        unfinished = metrics.unfinished_spend(())
    out = []
    for s in strategies:
        g = trials[trials["strategy"] == s]
        u = unfinished[unfinished["strategy"] == s]
        per_task = per_task_pass1(attempts, s)
        lo, hi = boot.ci(per_task)
        att = attempts[attempts["strategy"] == s]
        costs = pd.concat([g["cost_usd"].dropna(), u["cost_usd"].dropna()])
        first = g[g["trial"] == 1]
        no_tests = 0
        if s != metrics.BASELINE and not first.empty:
            no_tests = int(((first["n_internal"] == 0) & first["error"].isna()).sum())
        out.append(StrategyLine(
            s, float(per_task.mean()) if not per_task.empty else math.nan, lo, hi, int(per_task.size), len(att),
            inc.get(s, 0), int(g["model_calls"].sum() + u["model_calls"].sum()),
            int(g["cached_calls"].sum() + u["cached_calls"].sum()),
            int(g["input_tokens"].sum() + g["output_tokens"].sum() + u["input_tokens"].sum()
                + u["output_tokens"].sum()),
            float(costs.sum()) if not costs.empty else None, float(g["wall_s"].sum()),
            int(g["error"].notna().sum()),
            float(att.groupby("task_id")["calls"].mean().mean()) if not att.empty else math.nan, no_tests))
    return out


def _task_table(trials: pd.DataFrame, attempts: pd.DataFrame, strategies: Sequence[str],
                pair: tuple[str, str] | None) -> pd.DataFrame:
    """One row per task: per strategy passed/complete/incomplete, and the category flags."""
    tasks = pd.Index(sorted(trials["task_id"].unique()), name="task_id") if not trials.empty else \
        pd.Index([], name="task_id")
    out = pd.DataFrame(index=tasks)
    for s in strategies:
        att = attempts[attempts["strategy"] == s].groupby("task_id")["passed"].agg(["sum", "size"])
        out[f"{s}:passed"] = att["sum"].reindex(tasks).fillna(0).astype(int)
        out[f"{s}:attempts"] = att["size"].reindex(tasks).fillna(0).astype(int)
        inc = trials[(trials["strategy"] == s) & ~trials["complete"]].drop_duplicates(["task_id", "attempt"])
        out[f"{s}:incomplete"] = inc.groupby("task_id").size().reindex(tasks).fillna(0).astype(int)
    if pair is not None:
        a, b = pair
        ra = out[f"{a}:passed"] / out[f"{a}:attempts"].where(out[f"{a}:attempts"] > 0)
        rb = out[f"{b}:passed"] / out[f"{b}:attempts"].where(out[f"{b}:attempts"] > 0)
        known = ra.notna() & rb.notna()
        sa, sb = ra > 0.5, rb > 0.5
        out["fixed"] = known & sa & ~sb
        out["broken"] = known & ~sa & sb
        out["both_pass"] = known & sa & sb
        out["both_fail"] = known & ~sa & ~sb
    else:
        for c in ("fixed", "broken", "both_pass", "both_fail"):
            out[c] = False
    final = trials[trials["final"] & trials["complete"]]
    fp = final[(final["stop_reason"] == "internal_pass") & ~final["hidden_passed"]]
    out["false_positive"] = out.index.isin(fp["task_id"].unique())
    out["wrong_tests"] = out.index.isin(trials.loc[trials["wrong_tests"] > 0, "task_id"].unique())
    errs = trials.loc[trials["error"].notna() | ~trials["complete"], "task_id"].unique()
    out["error"] = out.index.isin(errs)
    return out.reset_index()


def compute(frame: pd.DataFrame, config: dict[str, Any], all_tasks: Sequence[str] = (),
            error_keys: Sequence[tuple[str, str, int]] = (),
            unfinished: pd.DataFrame | None = None) -> RunNumbers:
    """Every number the run page and the task table show, from the index frame.

    Headline, plots and paired figures use the tasks every strategy completed (equal
    footing, as the report); the task table keeps every task.
    """
    trials = trials_for_metrics(frame)
    strategies = strategies_in(config, trials)
    attempts = metrics.attempts_frame(trials)
    budget = config.get("trials")
    samples = int(config.get("samples") or 1)
    task_ids = run_task_ids(all_tasks, trials)
    # a task recorded in trials.jsonl but missing from run.json's task list is in no figure (as summary.json)
    footing = metrics.equal_footing(attempts, strategies, samples, task_ids)
    shared, excluded = list(footing.shared), list(footing.excluded)
    on = set(shared)
    s_trials = trials[trials["task_id"].isin(on)]
    s_attempts = attempts[attempts["task_id"].isin(on)]
    boot = Bootstrap()
    pairs = [paired(s_attempts, a, b, boot, tasks=shared, all_tasks=task_ids)
             for a, b in pairs_of(strategies)] if not attempts.empty else []
    primary = (pairs[0].a, pairs[0].b) if pairs else None
    stamps = frame["finished_at"][frame["finished_at"] != ""] if not frame.empty else pd.Series(dtype=str)
    lines = _lines(s_trials, s_attempts, strategies, boot)
    # counts, spend and errors cover every recorded trial (what the run did and cost), as
    # summary.json's; pass@1 and calls per attempt stay on the shared tasks
    every = {x.name: x for x in _lines(trials, attempts, strategies, boot, error_keys, unfinished)}
    lines = [StrategyLine(**{**x.__dict__, **{k: getattr(every[x.name], k) for k in (
        "attempts", "incomplete", "calls", "cached_calls", "tokens", "cost_usd", "summed_s", "errors", "no_tests")},
        "completed_tasks": len(metrics.complete_tasks(attempts, x.name, samples))})
        for x in lines]
    tasks = _task_table(trials, attempts, strategies, primary)
    failed = {k[0] for k in error_keys}
    if failed:
        tasks["error"] = tasks["error"] | tasks["task_id"].isin(failed)
        missing = sorted(failed - set(tasks["task_id"]))
        if missing:  # attempts stopped before their first trial: only errors.jsonl knows them
            extra = pd.DataFrame({"task_id": missing})
            for col in tasks.columns[1:]:
                extra[col] = True if col == "error" else (False if tasks[col].dtype == bool else 0)
            tasks = pd.concat([tasks, extra], ignore_index=True).sort_values("task_id", kind="stable")
            tasks = tasks.reset_index(drop=True)
    return RunNumbers(
        strategies=strategies, lines=lines, pairs=pairs, caveats=[],
        trials=trials, attempts=attempts, tasks=tasks,
        by_trial=by_trial_table(s_trials, strategies, budget, boot),
        compute=compute_table(s_trials, s_attempts, strategies, budget),
        first_at=str(stamps.min()) if not stamps.empty else "", last_at=str(stamps.max()) if not stamps.empty else "",
        extra={"shared": shared, "excluded": excluded, "task_ids": task_ids},
    )


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def effect_size_caveat(top: PairLine, shared: int) -> Caveat | None:
    """The report's few_tasks caveat (harness.report.answer.caveats): given when fewer
    than FEW_TASKS tasks are compared or the top pair's 95% CI is wider than WIDE_CI,
    and saying which of the two it is. `shared`: the tasks every strategy completed."""
    width = top.ci_high - top.ci_low if math.isfinite(top.ci_high) and math.isfinite(top.ci_low) else math.nan
    few, wide = shared < FEW_TASKS, math.isfinite(width) and width > WIDE_CI
    if not (few or wide):
        return None
    if shared == 0:
        return Caveat("warn", "No task was completed by every strategy: there is no difference to estimate.",
                      "few_tasks")
    points = round(100 * width) if math.isfinite(width) else 0
    span = f"the 95% CI of {top.a} − {top.b} spans {points} points"
    if not few:
        return Caveat("warn", f"Wide 95% CI: on {_count(shared, 'shared task')}, {span}. "
                              "A smaller difference cannot be told from chance.", "few_tasks")
    if points >= 1:
        return Caveat("warn", f"Few tasks for the effect size: {_count(shared, 'shared task')}; {span}. "
                              "A smaller difference cannot be told from chance.", "few_tasks")
    flat = ""
    if math.isfinite(width):  # a CI of no width is no sign of certainty here
        flat = (" (a CI from a single task has no width)" if shared == 1 else
                " (its 95% CI has no width only because every task shows the same difference)")
    return Caveat("warn", f"Few tasks for the effect size: {_count(shared, 'shared task')}{flat}. "
                          f"On fewer than {FEW_TASKS} tasks a difference of a few points cannot be told from chance.",
                  "few_tasks")


def caveats(numbers: RunNumbers, *, oracle: bool, errors: dict[str, int], resumed: bool,
            crashed: bool, bad_lines: int) -> list[Caveat]:
    """What a reader must know before believing the top line, most serious first."""
    out: list[Caveat] = []
    if oracle:
        out.append(Caveat("red", "Oracle feedback: the hidden tests fed the loop as its internal tests. "
                                 "An ablation, not a fair comparison."))
    if numbers.pairs:
        effect = effect_size_caveat(numbers.pairs[0], len(numbers.extra.get("shared") or []))
        if effect is not None:
            out.append(effect)
    excluded = numbers.extra.get("excluded") or []
    if excluded:
        shown = ", ".join(excluded[:5]) + (", …" if len(excluded) > 5 else "")
        out.append(Caveat("red" if not numbers.extra.get("shared") else "warn",
                          f"{len(excluded)} task(s) left out of every figure: not completed by every strategy "
                          f"({shown}). Figures are on the {len(numbers.extra.get('shared') or [])} shared tasks.",
                          "excluded"))
    incomplete = {s.name: s.incomplete for s in numbers.lines if s.incomplete}
    if incomplete:
        out.append(Caveat("warn", "Incomplete attempts (not scored): " + ", ".join(
            f"{n} {s}" for s, n in incomplete.items()) + "."))
    no_tests = {s.name: s.no_tests for s in numbers.lines if s.no_tests}
    if no_tests:
        out.append(Caveat("warn", "Attempts where the test writer kept no test (the loop had nothing to check): "
                          + ", ".join(f"{n} {s}" for s, n in no_tests.items()) + "."))
    model_errors = {s.name: s.errors for s in numbers.lines if s.errors}
    if model_errors:
        out.append(Caveat("warn", "Trials with a model error or an unusable answer: " + ", ".join(
            f"{n} {s}" for s, n in model_errors.items()) + "."))
    if errors:
        out.append(Caveat("warn", "Harness errors recorded in errors.jsonl: " + ", ".join(
            f"{n} {k.replace('_', ' ')}" for k, n in sorted(errors.items())) + "."))
    if crashed:
        out.append(Caveat("warn", "The run stopped on an error at least once (error.log); "
                                  "summary timings cover only the last session."))
    if resumed:
        out.append(Caveat("info", "This run was resumed: its trials come from more than one session."))
    if bad_lines:
        out.append(Caveat("warn", f"{bad_lines} line(s) of trials.jsonl could not be read and are left out."))
    return out


def task_page(tasks: pd.DataFrame, *, category: str | None, query: str | None, page: int,
              per_page: int = 50) -> tuple[pd.DataFrame, int]:
    """The task table filtered by category and id search, one page of it, and the match count."""
    df = tasks
    if category and category in df.columns and df[category].dtype == bool:
        df = df[df[category]]
    if query:
        df = df[df["task_id"].str.contains(query, case=False, regex=False)]
    total = len(df)
    start = max(0, (page - 1) * per_page)
    return df.iloc[start:start + per_page], total
