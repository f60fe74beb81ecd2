"""summary.json: the run's headline numbers, derived from run.json + trials.jsonl.

Schema 1 (stable: fields may be added, never renamed or removed)::

    {
      "schema": 1,
      "run_id": "<run id>",
      "tasks": N,                      # tasks in the task set (run.json tasks.count)
      "samples": n,                    # attempts per task and strategy (config)
      "trials": T,                     # trial budget per attempt (config)
      "k": [1, ...],                   # requested k values (config)
      "oracle_feedback": false,        # true: hidden tests fed the loop (ablation only)
      "strategies": {
        "<name>": {                    # reflexion | feedback | baseline
          "pass@1": x,                 # mean over tasks of per-task pass@1 (final trials)
          "pass@<k>": x, ...,          # one per requested k with k <= samples
          "pass@<k>_ci95": [lo, hi],   # 95% bootstrap CI over tasks, for each pass@<k>
          "pass@1_by_trial": [x1, ...],# pass@1 if every attempt stopped at trial t
          "model_calls": n,            # calls the strategy made (cache hits included)
          "cached_calls": n,           # of which the response cache answered (no model ran)
          "input_tokens": n,
          "output_tokens": n,
          "cost_usd": x | null,        # money spent; null when the backend reports no price
          "cached_cost_usd": x | null, # what the cache-served answers cost when first made
                                       # (not spent by this run); null when none had a price
          "errors": n,                 # trials with a model error / unparseable output
          "wall_s": x,                 # sum of trial wall times (see below)
          "tasks_scored": n,           # tasks with at least one complete attempt
          "attempts": n,               # complete attempts (with a final trial)
          "incomplete_attempts": n     # attempts without a final trial (killed run)
        }
      }
    }

Definitions:

* Only complete attempts are scored; an attempt's result is its final (submitted)
  trial's hidden verdict, never "any trial passed".
* pass@k per task is the unbiased estimator 1 - C(n-c, k)/C(n, k) (Chen et al.
  2021, stable product form) over the task's n complete attempts, c of them
  passing; the strategy's pass@k is its mean over tasks with n >= k. A value is
  null when no task could be scored.
* pass@1_by_trial[t-1] is the share of attempts whose implementation at trial
  min(t, last trial) passes the hidden tests, averaged per task then over tasks,
  for t = 1..max(trial budget, highest trial seen); the baseline has one trial.
  Its last element equals pass@1.
* model_calls, tokens, cost_usd, errors and wall_s are totals over every
  recorded trial, incomplete attempts included: what the run spent.
* wall_s adds up each trial's wall time. Strategies and tasks run interleaved
  over several workers, so this is time spent on the strategy, not elapsed time.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from harness import metrics
from harness.results import SCHEMA_VERSION, TrialRecord

SUMMARY_SCHEMA = 1


def strategies_of(header: dict[str, Any], records: Sequence[TrialRecord]) -> list[str]:
    """The configured strategies in their configured order, then any others seen."""
    listed = list((header.get("config") or {}).get("strategies") or [])
    seen = [r.strategy for r in records]
    return list(dict.fromkeys([*listed, *seen]))


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def build_summary(header: dict[str, Any], records: list[TrialRecord]) -> dict[str, Any]:
    """The summary.json document for one run (schema in this module's docstring)."""
    config = header.get("config") or {}
    trials = metrics.trials_frame(records)
    attempts = metrics.attempts_frame(trials)
    strategies = strategies_of(header, records)
    samples = int(config.get("samples") or 1)
    ks = sorted({1, *(int(k) for k in (config.get("k") or [1]) if int(k) <= samples)})
    budget = config.get("trials")
    spend = metrics.resources(trials, strategies).set_index("strategy")
    tasks_info = header.get("tasks") or {}
    n_tasks = tasks_info.get("count")
    if n_tasks is None:
        n_tasks = len({r.task_id for r in records})

    out: dict[str, Any] = {}
    for strategy in strategies:
        entry: dict[str, Any] = {}
        for k in ks:
            est = metrics.estimate(metrics.per_task_pass_at_k(attempts, strategy, k))
            entry[f"pass@{k}"] = _num(est.value)
            entry[f"pass@{k}_ci95"] = [_num(est.ci_low), _num(est.ci_high)]
        n_trials = metrics.max_trials(trials, strategy, budget)
        entry["pass@1_by_trial"] = [_num(x) for x in metrics.pass1_by_trial(trials, strategy, n_trials)]
        row = spend.loc[strategy]
        for name in ("model_calls", "cached_calls", "input_tokens", "output_tokens", "errors",
                     "attempts", "incomplete_attempts"):
            entry[name] = int(row[name])
        for name in ("cost_usd", "cached_cost_usd"):
            entry[name] = None if row[name] is None or math.isnan(row[name]) else round(float(row[name]), 6)
        entry["wall_s"] = round(float(row["wall_s"]), 3)
        entry["tasks_scored"] = int(attempts.loc[attempts["strategy"] == strategy, "task_id"].nunique())
        out[strategy] = entry
    return {
        "schema": SUMMARY_SCHEMA,
        "run_id": header.get("run_id"),
        "tasks": int(n_tasks),
        "samples": samples,
        "trials": budget,
        "k": ks,
        "oracle_feedback": bool(config.get("oracle_feedback", False)),
        "trial_record_schema": SCHEMA_VERSION,
        "strategies": out,
    }


def _fmt(x: Any, spec: str = ".3f") -> str:
    if x is None:
        return "-"
    return format(x, spec)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    line = lambda cells: "  ".join(  # noqa: E731
        str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


def format_summary(summary: dict[str, Any]) -> str:
    """A plain-text table of a summary (printed at the end of a run)."""
    strategies: dict[str, dict[str, Any]] = summary.get("strategies", {})
    ks = summary.get("k") or [1]
    lines = [f"run {summary.get('run_id')}: {summary.get('tasks')} tasks, "
             f"{summary.get('samples')} sample(s), up to {summary.get('trials')} trial(s)"]
    if summary.get("oracle_feedback"):
        lines.append("WARNING: oracle feedback - hidden tests fed the loop; not a fair comparison")
    head = ["strategy", *(f"pass@{k}" for k in ks), "95% CI (pass@1)", "calls", "in tokens",
            "out tokens", "cost $", "cached $", "errors", "wall s", "incomplete"]
    rows = []
    for name, s in strategies.items():
        lo, hi = s.get("pass@1_ci95", [None, None])
        rows.append([name, *(_fmt(s.get(f"pass@{k}")) for k in ks),
                     f"{_fmt(lo, '.2f')}-{_fmt(hi, '.2f')}",
                     str(s["model_calls"]), str(s["input_tokens"]), str(s["output_tokens"]),
                     _fmt(s.get("cost_usd"), ".4f"), _fmt(s.get("cached_cost_usd"), ".4f"),
                     str(s["errors"]), _fmt(s["wall_s"], ".1f"),
                     str(s.get("incomplete_attempts", 0))])
    lines += ["", *_table(head, rows)]
    iterating = {n: s for n, s in strategies.items() if n != metrics.BASELINE}
    if iterating:
        width = max(len(s["pass@1_by_trial"]) for s in iterating.values())
        head = ["pass@1 by trial", *(f"t={t}" for t in range(1, width + 1))]
        rows = [[n, *(_fmt(x) for x in s["pass@1_by_trial"]),
                 *([""] * (width - len(s["pass@1_by_trial"])))] for n, s in iterating.items()]
        if metrics.BASELINE in strategies:
            rows.append([f"{metrics.BASELINE} (ref.)", *([_fmt(strategies[metrics.BASELINE].get("pass@1"))] * width)])
        lines += ["", *_table(head, rows)]
    lines.append("wall s = time spent per strategy (strategies run interleaved), not elapsed time")
    return "\n".join(lines)
