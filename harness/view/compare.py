"""Two or more runs side by side: an outcome matrix per task and paired statistics.

Warnings come first: the same run given twice, task sets that differ (digest or
ids), and runs that could not be read. Paired figures follow `harness compare`
(harness.report.tables.cross_run_paired): the first run minus each later one,
strategy by strategy, on the tasks in both runs' equal footing (every strategy of
each run completed them, metrics.equal_footing as stats.compute takes it); the
tasks of either run's task list outside those are excluded.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from harness.view import stats
from harness.view.catalog import Catalog, RunEntry

MAX_ROWS = 1000


@dataclass
class Comparison:
    entries: list[RunEntry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    columns: list[tuple[str, str]] = field(default_factory=list)  # (run label, strategy)
    rows: list[dict[str, Any]] = field(default_factory=list)
    total_rows: int = 0
    pairs: list[stats.PairLine] = field(default_factory=list)
    lines: list[tuple[str, stats.StrategyLine]] = field(default_factory=list)


def compare(catalog: Catalog, run_ids: list[str]) -> Comparison:
    out = Comparison()
    if len(run_ids) < 2:
        out.warnings.append("Choose two or more runs to compare.")
    seen: set[str] = set()
    for rid in run_ids:
        if rid in seen:
            out.warnings.append(f"Run {rid} is given more than once: it is compared with itself once only.")
            continue
        seen.add(rid)
        entry = catalog.get(rid)
        if entry is None:
            out.warnings.append(f"No run named {rid!r}.")
            continue
        out.entries.append(entry)
    if len(out.entries) < 1:
        return out
    labels = _labels(out.entries)
    digests = {e.run_id: str((e.header.get("tasks") or {}).get("digest") or "?") for e in out.entries}
    if len(set(digests.values())) > 1:
        out.warnings.append("The task sets differ (" + ", ".join(f"{labels[r]}: {d[:19]}" for r, d in digests.items())
                            + "): only shared tasks are paired; the matrix shows a dash where a run lacks a task.")
    attempts = []
    for e in out.entries:
        numbers = e.numbers()
        lab = labels[e.run_id]
        shared = numbers.attempts[numbers.attempts["task_id"].isin(set(numbers.extra["shared"]))]
        attempts.append(shared.assign(strategy=shared["strategy"] + "@" + lab))
        for line in numbers.lines:
            out.lines.append((lab, line))
            out.columns.append((lab, line.name))
    tables = {labels[e.run_id]: e.numbers().tasks.set_index("task_id") for e in out.entries}
    task_ids = sorted(set().union(*(t.index for t in tables.values())))
    shared = set.intersection(*(set(t.index) for t in tables.values()))
    if len(shared) < len(task_ids):
        out.warnings.append(f"{len(task_ids) - len(shared)} of {len(task_ids)} tasks are not in every run.")
    out.total_rows = len(task_ids)
    for tid in task_ids[:MAX_ROWS]:
        cells = []
        for lab, strategy in out.columns:
            t = tables[lab]
            if tid not in t.index or f"{strategy}:attempts" not in t.columns:
                cells.append(None)
                continue
            n = int(t.at[tid, f"{strategy}:attempts"])
            cells.append({"passed": int(t.at[tid, f"{strategy}:passed"]), "attempts": n})
        by_strategy: dict[str, set[bool]] = {}
        for (lab, strategy), c in zip(out.columns, cells):
            if c and c["attempts"]:
                by_strategy.setdefault(strategy, set()).add(c["passed"] * 2 > c["attempts"])
        differs = any(len(v) > 1 for v in by_strategy.values())
        out.rows.append({"task_id": tid, "cells": cells, "differs": differs})
    both = pd.concat(attempts, ignore_index=True) if attempts else pd.DataFrame()
    first = out.entries[0]
    boot = stats.Bootstrap()
    for other in out.entries[1:]:
        out.pairs += cross_run_pairs(both, first.numbers(), labels[first.run_id],
                                     other.numbers(), labels[other.run_id], boot)
    return out


def cross_run_pairs(both: pd.DataFrame, first: stats.RunNumbers, first_label: str,
                    other: stats.RunNumbers, other_label: str, boot: stats.Bootstrap) -> list[stats.PairLine]:
    """Each strategy of `first` that `other` ran too: first minus other, as
    harness.report.tables.cross_run_paired. `both`: the runs' attempts on their own
    shared tasks, strategies named "<strategy>@<run label>". Compared: the tasks
    shared in both runs; the universe for `excluded`: both runs' task lists."""
    tasks = sorted(set(first.extra["shared"]) & set(other.extra["shared"]))
    universe = sorted(set(first.extra["task_ids"]) | set(other.extra["task_ids"]))
    out = []
    for s in first.strategies:
        if s not in other.strategies:
            continue
        p = stats.paired(both, f"{s}@{first_label}", f"{s}@{other_label}", boot, tasks=tasks, all_tasks=universe)
        out.append(dataclasses.replace(p, a=f"{s} ({first_label})", b=f"{s} ({other_label})"))
    return out


def _labels(entries: list[RunEntry]) -> dict[str, str]:
    out: dict[str, str] = {}
    used: dict[str, int] = {}
    for e in entries:
        n = used.get(e.label, 0) + 1
        used[e.label] = n
        out[e.run_id] = e.label if n == 1 else f"{e.label}#{n}"
    return out
