"""Two or more runs side by side: an outcome matrix per task and paired statistics.

Warnings come first: the same run given twice, task sets that differ (digest or
ids), and runs that could not be read. Paired figures use the tasks both runs
completed (stats.paired), the first run against each later one, strategy by strategy.
"""
from __future__ import annotations

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
        attempts.append(numbers.attempts.assign(strategy=numbers.attempts["strategy"] + "@" + lab))
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
        for s in first.numbers().strategies:
            if s in other.numbers().strategies:
                out.pairs.append(stats.paired(both, f"{s}@{labels[other.run_id]}", f"{s}@{labels[first.run_id]}", boot))
    return out


def _labels(entries: list[RunEntry]) -> dict[str, str]:
    out: dict[str, str] = {}
    used: dict[str, int] = {}
    for e in entries:
        n = used.get(e.label, 0) + 1
        used[e.label] = n
        out[e.run_id] = e.label if n == 1 else f"{e.label}#{n}"
    return out
