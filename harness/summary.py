"""summary.json: the run's headline numbers, derived from run.json + trials.jsonl.

Schema 1 (stable: fields may be added, never renamed or removed)::

    {
      "schema": 1,
      "run_id": "<run id>",
      "tasks": N,                      # tasks in the task set (run.json tasks.count)
      "tasks_compared": n,             # tasks every strategy completed: every figure uses these
      "tasks_excluded": n,             # the run's other tasks, left out of every figure
      "samples": n,                    # attempts per task and strategy (config)
      "trials": T,                     # trial budget per attempt (config)
      "k": [1, ...],                   # requested k values (config)
      "oracle_feedback": false,        # true: hidden tests fed the loop (ablation only)
      "harness_errors": n,             # lines in errors.jsonl
      "strategies": {
        "<name>": {                    # reflexion | feedback | resample | baseline
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
          "tasks_scored": n,           # tasks its figures average over (= tasks_compared)
          "tasks_completed": n,        # tasks where all its attempts are complete
          "attempts": n,               # complete attempts (with a final trial)
          "incomplete_attempts": n     # attempts without a final trial: never scored
        }
      },
      "paired": [                      # each default pair a vs b, on tasks_compared
        {"a", "b", "diff", "ci_low", "ci_high", "p_value", "fixed", "broken", "both",
         "neither", "pairs", "tasks", "excluded", "calls_ratio", "tokens_ratio"}
      ],
      "by_kind": {                     # only when the run mixes task kinds (function, io)
        "<kind>": {"tasks": n, "<strategy>": {"pass@1": x, "pass@1_ci95": [lo, hi]}}
      }
    }

Definitions:

* Only complete attempts are scored; an attempt's result is its final (submitted)
  trial's hidden verdict, never "any trial passed". An attempt is complete iff it
  has a record with final=true; the others (a model error that outlived the
  retries, an exception in the unit, a killed run) are counted, never scored.
* Equal footing: a task counts only when every strategy of the run completed all
  of its `samples` attempts there; pass@k, pass@1_by_trial and `paired` average
  over those tasks_compared alone, the rest are tasks_excluded.
* paired: diff = pass@1(a) - pass@1(b) on the shared tasks, with a paired
  bootstrap 95% CI (tasks resampled with both results); McNemar's exact test over
  attempt pairs (attempt i of a with attempt i of b on the same task): fixed = a
  passed and b failed, broken = the reverse. calls_ratio/tokens_ratio: a's mean
  spend per attempt over b's.
* pass@k per task is the unbiased estimator 1 - C(n-c, k)/C(n, k) (Chen et al.
  2021, stable product form) over the task's n complete attempts, c of them
  passing; the strategy's pass@k is its mean over tasks with n >= k. A value is
  null when no task could be scored.
* pass@1_by_trial[t-1] is the share of attempts whose implementation at trial
  min(t, last trial) passes the hidden tests, averaged per task then over tasks,
  for t = 1..max(trial budget, highest trial seen); the baseline has one trial.
  Its last element equals pass@1.
* model_calls, tokens, cost_usd, errors and wall_s are totals over every
  recorded trial, incomplete attempts included, plus what the trials a model error
  left unfinished had spent (errors.jsonl's `spent`; the failed call counts): what
  the run spent.
* wall_s adds up each trial's wall time. Strategies and tasks run interleaved
  over several workers, so this is time spent on the strategy, not elapsed time.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from harness import metrics
from harness.rundata import SCHEMA_VERSION, TrialRecord

SUMMARY_SCHEMA = 1


def strategies_of(header: dict[str, Any], records: Sequence[TrialRecord]) -> list[str]:
    """The configured strategies in their configured order, then any others seen."""
    listed = list((header.get("config") or {}).get("strategies") or [])
    seen = [r.strategy for r in records]
    return list(dict.fromkeys([*listed, *seen]))


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def paired_dict(p: metrics.Paired, attempts: Any) -> dict[str, Any]:
    """A Paired as JSON-ready data, with the spend ratios of a over b."""
    return {"a": p.a, "b": p.b, "diff": _num(p.diff), "ci_low": _num(p.ci_low), "ci_high": _num(p.ci_high),
            "p_value": _num(p.p_value), "fixed": p.fixed, "broken": p.broken, "both": p.both,
            "neither": p.neither, "pairs": p.pairs, "tasks": p.tasks, "excluded": p.excluded,
            "calls_ratio": _num(metrics.spend_ratio(attempts, p.a, p.b, "calls")),
            "tokens_ratio": _num(metrics.spend_ratio(attempts, p.a, p.b, "tokens"))}


def _task_ids(header: dict[str, Any], records: Sequence[TrialRecord]) -> list[str]:
    listed = (header.get("tasks") or {}).get("task_ids")
    return [str(t) for t in listed] if listed else sorted({r.task_id for r in records})


def _error_keys(errors: Sequence[dict[str, Any]]) -> list[tuple[str, str, int]]:
    keys = []
    for e in errors:
        try:
            keys.append((str(e["task_id"]), str(e["strategy"]), int(e["attempt"])))
        except (KeyError, TypeError, ValueError):
            continue  # not a line this reader understands: it explains, never scores
    return keys


def build_summary(header: dict[str, Any], records: list[TrialRecord],
                  errors: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """The summary.json document for one run (schema in this module's docstring).

    `errors`: the lines of the run's errors.jsonl (harness.rundata.read_errors);
    without them an attempt stopped before its first trial record is not counted
    as incomplete (it still leaves its task out of the comparison).
    """
    config = header.get("config") or {}
    trials = metrics.trials_frame(records)
    attempts = metrics.attempts_frame(trials)
    strategies = strategies_of(header, records)
    samples = int(config.get("samples") or 1)
    ks = sorted({1, *(int(k) for k in (config.get("k") or [1]) if int(k) <= samples)})
    budget = config.get("trials")
    error_keys = _error_keys(errors)
    spend = metrics.resources(trials, strategies, error_keys,
                              metrics.unfinished_spend(errors)).set_index("strategy")
    task_ids = _task_ids(header, records)
    tasks_info = header.get("tasks") or {}
    n_tasks = tasks_info.get("count")
    if n_tasks is None:
        n_tasks = len(task_ids)
    footing = metrics.equal_footing(attempts, strategies, samples, task_ids)
    shared = set(footing.shared)
    s_trials, s_attempts = trials[trials["task_id"].isin(shared)], attempts[attempts["task_id"].isin(shared)]

    out: dict[str, Any] = {}
    for strategy in strategies:
        entry: dict[str, Any] = {}
        for k in ks:
            est = metrics.estimate(metrics.per_task_pass_at_k(s_attempts, strategy, k))
            entry[f"pass@{k}"] = _num(est.value)
            entry[f"pass@{k}_ci95"] = [_num(est.ci_low), _num(est.ci_high)]
        n_trials = metrics.max_trials(trials, strategy, budget)
        entry["pass@1_by_trial"] = [_num(x) for x in metrics.pass1_by_trial(s_trials, strategy, n_trials)]
        row = spend.loc[strategy]
        for name in ("model_calls", "cached_calls", "input_tokens", "output_tokens", "errors",
                     "attempts", "incomplete_attempts"):
            entry[name] = int(row[name])
        for name in ("cost_usd", "cached_cost_usd"):
            entry[name] = None if row[name] is None or math.isnan(row[name]) else round(float(row[name]), 6)
        entry["wall_s"] = round(float(row["wall_s"]), 3)
        entry["tasks_scored"] = int(s_attempts.loc[s_attempts["strategy"] == strategy, "task_id"].nunique())
        entry["tasks_completed"] = len(metrics.complete_tasks(attempts, strategy, samples))
        out[strategy] = entry
    paired = [paired_dict(metrics.paired_comparison(s_attempts, a, b, tasks=footing.shared, all_tasks=task_ids),
                          s_attempts)
              for a, b in metrics.default_pairs(strategies)]
    by_kind = _by_kind(records, s_attempts, strategies)
    return {
        **({"by_kind": by_kind} if by_kind else {}),
        "schema": SUMMARY_SCHEMA,
        "run_id": header.get("run_id"),
        "tasks": int(n_tasks),
        "tasks_compared": len(footing.shared),
        "tasks_excluded": len(footing.excluded),
        "samples": samples,
        "trials": budget,
        "k": ks,
        "oracle_feedback": bool(config.get("oracle_feedback", False)),
        "harness_errors": len(errors),
        "trial_record_schema": SCHEMA_VERSION,
        "strategies": out,
        "paired": paired,
    }


def task_kinds(records: Sequence[TrialRecord]) -> dict[str, str]:
    """task_id -> its kind (function | io), as the records name it."""
    return {r.task_id: getattr(r, "task_kind", "function") or "function" for r in records}


def _by_kind(records: Sequence[TrialRecord], attempts: Any, strategies: Sequence[str]) -> dict[str, Any]:
    """Where a run mixes task kinds: pass@1 (with its CI) per kind and strategy, on the
    shared tasks of that kind; {} for a run of one kind."""
    kinds = task_kinds(records)
    if len(set(kinds.values())) < 2:
        return {}
    out: dict[str, Any] = {}
    for kind in sorted(set(kinds.values())):
        ids = {t for t, k in kinds.items() if k == kind}
        sub = attempts[attempts["task_id"].isin(ids)]
        entry: dict[str, Any] = {"tasks": int(sub["task_id"].nunique())}
        for strategy in strategies:
            est = metrics.estimate(metrics.per_task_pass_at_k(sub, strategy, 1))
            entry[strategy] = {"pass@1": _num(est.value), "pass@1_ci95": [_num(est.ci_low), _num(est.ci_high)]}
        out[kind] = entry
    return out


def _signed(x: float, minus: str) -> str:
    return f"{'+' if x >= 0 else minus}{abs(x):.1f}"


def answer_line(p: dict[str, Any], *, minus: str = "\u2212", times: str = "\u00d7") -> str:
    """The comparison in one line, e.g. "reflexion - baseline: +4.3 points [95% CI
    -1.2, +9.8], McNemar p = 0.21; fixed 9, broken 2 of 164 tasks; 3.4x the calls"."""
    head = f"{p['a']} {minus} {p['b']}: "
    if p.get("diff") is None:
        return head + f"no task completed by both ({p.get('excluded', 0)} left out)"
    text = head + f"{_signed(100 * p['diff'], minus)} points"
    if p.get("ci_low") is not None and p.get("ci_high") is not None:
        text += f" [95% CI {_signed(100 * p['ci_low'], minus)}, {_signed(100 * p['ci_high'], minus)}]"
    text += f", McNemar p = {p['p_value']:.2g}"
    of = (f"{p['pairs']} tasks" if p["pairs"] == p["tasks"]
          else f"{p['pairs']} attempt pairs on {p['tasks']} tasks")
    text += f"; fixed {p['fixed']}, broken {p['broken']} of {of}"
    ratio = p.get("calls_ratio")
    if ratio is not None:
        text += f"; {ratio:.1f}{times} the calls"
    return text


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
    lines += [answer_line(p, minus="-", times="x") for p in summary.get("paired") or []]
    if summary.get("tasks_excluded"):
        lines.append(f"{summary['tasks_excluded']} task(s) left out: not completed by every strategy; "
                     f"figures below are on the {summary.get('tasks_compared')} shared tasks")
    if summary.get("harness_errors"):
        lines.append(f"{summary['harness_errors']} harness error(s) in errors.jsonl")
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
    by_kind = summary.get("by_kind") or {}
    if by_kind:
        names = list(strategies)
        head = ["pass@1 by task kind", "tasks", *names]
        rows = [[kind, str(entry.get("tasks", "")), *(_fmt((entry.get(n) or {}).get("pass@1")) for n in names)]
                for kind, entry in by_kind.items()]
        lines += ["", *_table(head, rows)]
    lines.append("wall s = time spent per strategy (strategies run interleaved), not elapsed time")
    return "\n".join(lines)
