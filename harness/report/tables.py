"""Every table of a report, as pandas DataFrames with a `run` column.

One function builds them for one or several runs, so a single-run report and a
comparison of runs share the same tables (the single-run report drops `run`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from harness import metrics
from harness.report.runs import Run
from harness.summary import strategies_of


@dataclass(frozen=True)
class RunFrames:
    """A run's trial and attempt frames, built once and shared by every table."""

    run: Run
    trials: pd.DataFrame
    attempts: pd.DataFrame
    strategies: list[str]
    ks: list[int]
    budget: int | None


def frames(run: Run) -> RunFrames:
    trials = metrics.trials_frame(run.records)
    samples = int(run.config.get("samples") or 1)
    ks = sorted({1, *(int(k) for k in (run.config.get("k") or [1]) if int(k) <= samples)})
    return RunFrames(run, trials, metrics.attempts_frame(trials),
                     strategies_of(run.header, run.records), ks, run.config.get("trials"))


def _with_run(df: pd.DataFrame, label: str) -> pd.DataFrame:
    df = df.copy()
    df.insert(0, "run", label)
    return df


def _concat(parts: list[pd.DataFrame]) -> pd.DataFrame:
    parts = [p for p in parts if not p.empty]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


@dataclass(frozen=True)
class Tables:
    pass_at_k: pd.DataFrame
    pass1_by_trial: pd.DataFrame
    compute_curve: pd.DataFrame
    compute_matched: pd.DataFrame
    paired: pd.DataFrame
    self_test: pd.DataFrame
    stopped_fp: pd.DataFrame
    resources: pd.DataFrame
    per_task: pd.DataFrame

    def csv_files(self) -> dict[str, pd.DataFrame]:
        """File name -> table, for the CSVs written beside the report."""
        return {
            "pass_at_k.csv": self.pass_at_k,
            "pass1_by_trial.csv": self.pass1_by_trial,
            "compute_curve.csv": self.compute_curve,
            "compute_matched.csv": self.compute_matched,
            "paired.csv": self.paired,
            "self_test.csv": self.self_test,
            "stopped_on_false_positive.csv": self.stopped_fp,
            "resources.csv": self.resources,
            "per_task.csv": self.per_task,
        }


def per_task(rf: RunFrames) -> pd.DataFrame:
    """Per task and strategy: complete attempts, passed, mean trials and calls."""
    cols = ["task_id", "strategy", "attempts", "passed", "pass_rate", "mean_trials",
            "mean_calls", "incomplete_attempts", "errors"]
    t = rf.trials
    if t.empty:
        return pd.DataFrame(columns=cols)
    a = rf.attempts.groupby(["task_id", "strategy"]).agg(
        attempts=("passed", "size"), passed=("passed", "sum"),
        mean_trials=("trials", "mean"), mean_calls=("calls", "mean"))
    inc = (t[~t["complete"]].drop_duplicates(["task_id", "strategy", "attempt"])
           .groupby(["task_id", "strategy"]).size().rename("incomplete_attempts"))
    err = t.groupby(["task_id", "strategy"])["error"].apply(lambda s: int(s.notna().sum())).rename("errors")
    keys = t[["task_id", "strategy"]].drop_duplicates().set_index(["task_id", "strategy"])
    out = keys.join(a).join(inc).join(err).reset_index()
    out["attempts"] = out["attempts"].fillna(0).astype(int)
    out["passed"] = out["passed"].fillna(0).astype(int)
    out["incomplete_attempts"] = out["incomplete_attempts"].fillna(0).astype(int)
    out["pass_rate"] = out["passed"] / out["attempts"].where(out["attempts"] > 0)
    order = {s: i for i, s in enumerate(rf.strategies)}
    out = out.assign(_o=out["strategy"].map(order)).sort_values(["task_id", "_o"]).drop(columns="_o")
    return out[cols].reset_index(drop=True)


def _paired_rows(label: str, pairs: list[metrics.Paired]) -> list[dict]:
    return [{"run": label, "a": p.a, "b": p.b, "tasks": p.tasks, "only_a": p.only_a,
             "only_b": p.only_b, "both": p.both, "neither": p.neither, "p_value": p.p_value}
            for p in pairs]


def cross_run_paired(rfs: Sequence[RunFrames]) -> list[dict]:
    """The same strategy in the first run against each later run, on shared tasks."""
    rows = []
    first = rfs[0]
    for other in rfs[1:]:
        both = pd.concat([
            first.attempts.assign(strategy=first.attempts["strategy"] + "@A"),
            other.attempts.assign(strategy=other.attempts["strategy"] + "@B"),
        ], ignore_index=True)
        for s in first.strategies:
            if s not in other.strategies:
                continue
            p = metrics.paired_comparison(both, f"{s}@A", f"{s}@B")
            rows += _paired_rows(f"{first.run.label} vs {other.run.label}", [
                metrics.Paired(f"{s} ({first.run.label})", f"{s} ({other.run.label})",
                               p.only_a, p.only_b, p.both, p.neither, p.p_value)])
    return rows


def build_tables(runs: Sequence[Run]) -> tuple[Tables, list[RunFrames]]:
    rfs = [frames(r) for r in runs]
    paired_rows: list[dict] = []
    for rf in rfs:
        pairs = [metrics.paired_comparison(rf.attempts, a, b) for a, b in metrics.default_pairs(rf.strategies)]
        paired_rows += _paired_rows(rf.run.label, pairs)
    paired_rows += cross_run_paired(rfs)
    paired = pd.DataFrame(paired_rows, columns=["run", "a", "b", "tasks", "only_a", "only_b",
                                                "both", "neither", "p_value"])
    tables = Tables(
        pass_at_k=_concat([_with_run(metrics.pass_at_k_table(rf.attempts, rf.strategies, rf.ks), rf.run.label) for rf in rfs]),
        pass1_by_trial=_concat([_with_run(metrics.pass1_by_trial_table(rf.trials, rf.strategies, rf.budget), rf.run.label) for rf in rfs]),
        compute_curve=_concat([_with_run(metrics.compute_curve(rf.trials, rf.attempts, s, rf.budget), rf.run.label)
                               for rf in rfs for s in rf.strategies]),
        compute_matched=_concat([_with_run(metrics.compute_matched(rf.attempts, rf.strategies), rf.run.label) for rf in rfs]),
        paired=paired,
        self_test=_concat([_with_run(metrics.self_test_quality(rf.trials, rf.strategies), rf.run.label) for rf in rfs]),
        stopped_fp=_concat([_with_run(metrics.stopped_on_false_positive(rf.attempts, rf.strategies), rf.run.label) for rf in rfs]),
        resources=_concat([_with_run(metrics.resources(rf.trials, rf.strategies), rf.run.label) for rf in rfs]),
        per_task=_concat([_with_run(per_task(rf), rf.run.label) for rf in rfs]),
    )
    return tables, rfs
