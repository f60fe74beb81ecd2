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
from harness.summary import paired_dict, strategies_of


@dataclass(frozen=True)
class RunFrames:
    """A run's trial and attempt frames, built once and shared by every table.

    `trials`/`attempts` hold everything recorded (for spend and counts);
    `shared_trials`/`shared_attempts` only the tasks every strategy of the run
    completed (`footing.shared`): every headline and paired figure uses these.
    """

    run: Run
    trials: pd.DataFrame
    attempts: pd.DataFrame
    strategies: list[str]
    ks: list[int]
    budget: int | None
    footing: metrics.Footing
    shared_trials: pd.DataFrame
    shared_attempts: pd.DataFrame


def frames(run: Run) -> RunFrames:
    trials = metrics.trials_frame(run.records)
    attempts = metrics.attempts_frame(trials)
    samples = run.samples
    ks = sorted({1, *(int(k) for k in (run.config.get("k") or [1]) if int(k) <= samples)})
    strategies = strategies_of(run.header, run.records)
    footing = metrics.equal_footing(attempts, strategies, samples, run.task_ids)
    shared = set(footing.shared)
    return RunFrames(run, trials, attempts, strategies, ks, run.config.get("trials"), footing,
                     trials[trials["task_id"].isin(shared)], attempts[attempts["task_id"].isin(shared)])


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
    """Per task and strategy: complete attempts, passed, mean trials and calls,
    incomplete attempts (errors.jsonl included), and whether the task is in the
    comparison (every strategy completed it)."""
    cols = ["task_id", "strategy", "attempts", "passed", "pass_rate", "mean_trials",
            "mean_calls", "incomplete_attempts", "errors", "compared"]
    t = rf.trials
    keys = ["task_id", "strategy", "attempt"]
    complete = {tuple(k) for k in t.loc[t["complete"], keys].drop_duplicates().itertuples(index=False)}
    seen = {tuple(k) for k in t[keys].drop_duplicates().itertuples(index=False)}
    missing = pd.DataFrame(sorted((seen | set(rf.run.error_keys)) - complete), columns=keys)
    if t.empty and missing.empty:
        return pd.DataFrame(columns=cols)
    a = rf.attempts.groupby(["task_id", "strategy"]).agg(
        attempts=("passed", "size"), passed=("passed", "sum"),
        mean_trials=("trials", "mean"), mean_calls=("calls", "mean"))
    inc = missing.groupby(["task_id", "strategy"]).size().rename("incomplete_attempts")
    err = t.groupby(["task_id", "strategy"])["error"].apply(lambda s: int(s.notna().sum())).rename("errors")
    pairs = pd.concat([t[["task_id", "strategy"]], missing[["task_id", "strategy"]]]).drop_duplicates()
    out = pairs.set_index(["task_id", "strategy"]).join(a).join(inc).join(err).reset_index()
    for c in ("attempts", "passed", "incomplete_attempts", "errors"):
        out[c] = out[c].fillna(0).astype(int)
    out["pass_rate"] = out["passed"] / out["attempts"].where(out["attempts"] > 0)
    out["compared"] = out["task_id"].isin(set(rf.footing.shared))
    order = {s: i for i, s in enumerate(rf.strategies)}
    out = out.assign(_o=out["strategy"].map(order)).sort_values(["task_id", "_o"]).drop(columns="_o")
    return out[cols].reset_index(drop=True)


PAIRED_COLUMNS = ["run", "a", "b", "diff", "ci_low", "ci_high", "p_value", "fixed", "broken", "both",
                  "neither", "pairs", "tasks", "excluded", "calls_ratio", "tokens_ratio"]


def _paired_row(label: str, p: metrics.Paired, attempts: pd.DataFrame) -> dict:
    return {"run": label, **paired_dict(p, attempts)}


def run_pairs(rf: RunFrames) -> list[tuple[metrics.Paired, dict]]:
    """The run's default pairs on its shared complete tasks, with their table rows."""
    out = []
    for a, b in metrics.default_pairs(rf.strategies):
        p = metrics.paired_comparison(rf.shared_attempts, a, b, tasks=rf.footing.shared,
                                      all_tasks=rf.run.task_ids)
        out.append((p, _paired_row(rf.run.label, p, rf.shared_attempts)))
    return out


def cross_run_paired(rfs: Sequence[RunFrames]) -> list[dict]:
    """The same strategy in the first run against each later run, on the tasks
    both runs completed."""
    rows = []
    first = rfs[0]
    for other in rfs[1:]:
        both = pd.concat([
            first.shared_attempts.assign(strategy=first.shared_attempts["strategy"] + "@A"),
            other.shared_attempts.assign(strategy=other.shared_attempts["strategy"] + "@B"),
        ], ignore_index=True)
        tasks = set(first.footing.shared) & set(other.footing.shared)
        universe = set(first.run.task_ids) | set(other.run.task_ids)
        for s in first.strategies:
            if s not in other.strategies:
                continue
            p = metrics.paired_comparison(both, f"{s}@A", f"{s}@B", tasks=tasks, all_tasks=universe)
            row = _paired_row(f"{first.run.label} vs {other.run.label}", p, both)
            row.update(a=f"{s} ({first.run.label})", b=f"{s} ({other.run.label})")
            rows.append(row)
    return rows


def build_tables(runs: Sequence[Run]) -> tuple[Tables, list[RunFrames]]:
    rfs = [frames(r) for r in runs]
    paired_rows: list[dict] = []
    for rf in rfs:
        paired_rows += [row for _, row in run_pairs(rf)]
    paired_rows += cross_run_paired(rfs)
    paired = pd.DataFrame(paired_rows, columns=PAIRED_COLUMNS)
    tables = Tables(
        pass_at_k=_concat([_with_run(metrics.pass_at_k_table(rf.shared_attempts, rf.strategies, rf.ks)
                                     .assign(excluded=len(rf.footing.excluded)), rf.run.label) for rf in rfs]),
        pass1_by_trial=_concat([_with_run(metrics.pass1_by_trial_table(rf.shared_trials, rf.strategies, rf.budget),
                                          rf.run.label) for rf in rfs]),
        compute_curve=_concat([_with_run(metrics.compute_curve(rf.shared_trials, rf.shared_attempts, s, rf.budget),
                                         rf.run.label) for rf in rfs for s in rf.strategies]),
        compute_matched=_concat([_with_run(metrics.compute_matched(rf.shared_attempts, rf.strategies), rf.run.label)
                                 for rf in rfs]),
        paired=paired,
        self_test=_concat([_with_run(metrics.self_test_quality(rf.shared_trials, rf.strategies), rf.run.label)
                           for rf in rfs]),
        stopped_fp=_concat([_with_run(metrics.stopped_on_false_positive(rf.shared_attempts, rf.strategies),
                                      rf.run.label) for rf in rfs]),
        resources=_concat([_with_run(metrics.resources(rf.trials, rf.strategies, rf.run.error_keys,
                                                     metrics.unfinished_spend(rf.run.errors)), rf.run.label)
                           for rf in rfs]),
        per_task=_concat([_with_run(per_task(rf), rf.run.label) for rf in rfs]),
    )
    return tables, rfs
