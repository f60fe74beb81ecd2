"""Two or more runs side by side: an outcome matrix per task and the paired statistics
`harness compare` prints (harness.rundata.numbers.compare: the first run minus each
later one, strategy by strategy, on the tasks in both runs' equal footing).

Warnings come first: runs that could not be found, then the comparison's own caveats
(the same run given twice: its difference is zero by construction; task sets that differ).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.rundata import numbers
from harness.view.catalog import Catalog, RunEntry

MAX_ROWS = 1000


@dataclass
class Comparison:
    entries: list[RunEntry] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    caveats: list[dict[str, str]] = field(default_factory=list)
    columns: list[tuple[str, str]] = field(default_factory=list)  # (run label, strategy)
    rows: list[dict[str, Any]] = field(default_factory=list)
    total_rows: int = 0
    pairs: list[dict[str, Any]] = field(default_factory=list)
    answer: list[str] = field(default_factory=list)
    lines: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # (label, strategy, numbers)


def compare(catalog: Catalog, run_ids: list[str]) -> Comparison:
    out = Comparison()
    if len(run_ids) < 2:
        out.warnings.append("Choose two or more runs to compare.")
    for rid in run_ids:
        entry = catalog.get(rid)
        if entry is None:
            out.warnings.append(f"No run named {rid!r}.")
            continue
        out.entries.append(entry)
    if not out.entries:
        return out
    out.labels = _labels(out.entries)
    docs = [e.numbers() for e in out.entries]
    if len(out.entries) >= 2:
        across = numbers.compare([(lab, e.path, e.prepared) for lab, e in zip(out.labels, out.entries)])
        out.pairs, out.answer, out.caveats = across["paired"], across["answer"], across["caveats"]
    tables: dict[str, dict[str, dict[str, Any]]] = {}
    for lab, doc in zip(out.labels, docs):
        for name, s in doc["strategies"].items():
            out.lines.append((lab, name, s))
            out.columns.append((lab, name))
        tables[lab] = {t["task_id"]: t["strategies"] for t in doc["per_task"]}
    task_ids = sorted(set().union(*(set(t) for t in tables.values())))
    shared = set.intersection(*(set(t) for t in tables.values()))
    if len(shared) < len(task_ids):
        out.warnings.append(f"{len(task_ids) - len(shared)} of {len(task_ids)} tasks are not in every run.")
    out.total_rows = len(task_ids)
    for tid in task_ids[:MAX_ROWS]:
        cells = [tables[lab].get(tid, {}).get(strategy) for lab, strategy in out.columns]
        by_strategy: dict[str, set[bool]] = {}
        for (_, strategy), c in zip(out.columns, cells):
            if c and c["attempts"]:
                by_strategy.setdefault(strategy, set()).add(c["passed"] * 2 > c["attempts"])
        out.rows.append({"task_id": tid, "cells": cells, "differs": any(len(v) > 1 for v in by_strategy.values())})
    return out


def _labels(entries: list[RunEntry]) -> list[str]:
    out: list[str] = []
    used: dict[str, int] = {}
    for e in entries:
        n = used.get(e.label, 0) + 1
        used[e.label] = n
        out.append(e.label if n == 1 else f"{e.label}#{n}")
    return out
