"""A study's numbers: every cell's own (harness.rundata.numbers), side by side.

Nothing is pooled across cells: each cell (model x task set) is its own run, with its
own tasks, and its figures are that run's numbers as its report gives them. The study
gathers, per cell, each strategy's pass@1 with its CI, the headline strategy's effects
(harness.rundata.effects: the one that isolates its idea, the compute-matched one and
the total, each with Newcombe's paired score interval and McNemar's exact test), accuracy against cost,
and its status; the study report and the view's study page render this document
(study_summary.json at the study folder's top).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from harness.rundata import folder, numbers, wording

SUMMARY_FILE = "study_summary.json"
SCHEMA = 1
_STRATEGY_FIELDS = ("pass@1", "pass@1_ci95", "tasks_scored", "tasks_completed", "calls_per_attempt", "model_calls",
                    "tokens", "cost_usd", "cached_cost_usd", "incomplete_attempts")
_EFFECT_FIELDS = ("effect", "label", "a", "b", "diff", "ci_low", "ci_high", "p_value", "fixed", "broken", "both",
                  "neither", "pairs", "tasks", "excluded", "calls_ratio", "tokens_ratio")

NumbersOf = Callable[[Path], "dict[str, Any] | None"]


def numbers_of_folder(run_dir: Path) -> dict[str, Any] | None:
    """A cell's numbers computed from its folder (None before its first trial)."""
    run = folder.load(run_dir, need_trials=False)
    return numbers.of_folder(run) if run.records else None


def cell_label(model: str, tasks: str) -> str:
    return f"{model} \u00d7 {tasks}"


def short_label(name: str, labels: Mapping[str, Any] | None) -> str:
    """The study file's short label for a model or task set (`labels`), else a short
    form of it: a model spec without its base URL."""
    given = (labels or {}).get(name)
    if isinstance(given, str) and given.strip():
        return given.strip()
    return name.split("@", 1)[0]


def _cell(study_dir: Path, cell: Mapping[str, Any], numbers_of: NumbersOf,
          labels: Mapping[str, Any] | None = None) -> dict[str, Any]:
    run_id = cell.get("run_id")
    path = Path(study_dir) / run_id if run_id else None
    model_label, tasks_label = short_label(cell["model"], labels), short_label(cell["tasks"], labels)
    seed = cell.get("seed")
    label = cell_label(model_label, tasks_label) + (f" (seed {seed})" if seed is not None else "")
    out: dict[str, Any] = {"model": cell["model"], "tasks": cell["tasks"], "label": label, "seed": seed,
                           "model_label": model_label, "tasks_label": tasks_label, "intervals": None,
                           "task_rates": {},
                           "run_id": run_id, "state": "pending", "status": "not started", "strategies": {},
                           "effects": [], "headline": None, "answer": [], "caveats": [], "cost_points": [],
                           "cost_axis": None, "tasks_compared": 0, "oracle_feedback": False}
    if path is None or not (path / folder.HEADER).is_file():
        return out
    try:
        doc = numbers_of(path)
    except folder.FolderError as exc:
        return {**out, "state": "unreadable", "status": str(exc)}
    if doc is None:
        return {**out, "state": "started", "status": "started: no trial recorded yet"}
    lead = doc.get("headline")
    out.update(
        state=doc["status"]["state"], status=doc["status"]["text"], tasks_compared=doc["tasks_compared"],
        strategies={s: {k: v.get(k) for k in _STRATEGY_FIELDS} for s, v in doc["strategies"].items()},
        headline=lead, effects=[{k: e.get(k) for k in _EFFECT_FIELDS} for e in doc.get("effects") or []
                                if e.get("a") == lead],
        answer=list(doc["answer"]), caveats=[c for c in doc["caveats"] if c.get("level") != "info"],
        cost_points=list(doc.get("cost_points") or []), cost_axis=doc.get("cost_axis"),
        oracle_feedback=bool(doc.get("oracle_feedback")), intervals=doc.get("intervals"),
        compute=doc.get("compute"), task_rates=_task_rates(doc) if seed is not None else {})
    return out


def _task_rates(doc: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """Per strategy, each compared task's pass rate (its attempts' share passing)."""
    out: dict[str, dict[str, float]] = {}
    for row in doc.get("per_task") or []:
        if not row.get("compared"):
            continue
        for s, c in (row.get("strategies") or {}).items():
            if c.get("pass_rate") is not None:
                out.setdefault(s, {})[row["task_id"]] = float(c["pass_rate"])
    return out


REPEATS_METHOD = ("mean over repeats of each repeat's pass@1 on the tasks every repeat compared; sd: the run-to-run "
                  "standard deviation of those pass@1 values; ci95: Wilson's score interval over tasks of each "
                  "task's rate pooled over every repeat and sample (clustered by task: a task counts once, as in "
                  "Miller, 'Adding Error Bars to Evals', arXiv 2411.00640); clustered_se: the standard error with "
                  "tasks as clusters, sqrt(sum over tasks of (task rate - mean)^2) / tasks (Miller's clustered SE with "
                  "clusters of equal size)")


def repeats(cells: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per model x task set x strategy run with several seeds: repeats, each repeat's
    pass@1, their mean and run-to-run SD, and an interval over tasks pooling the
    repeats (REPEATS_METHOD says which)."""
    from harness.rundata.metrics import wilson_ci

    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for c in cells:
        if c.get("seed") is not None and c["state"] == "complete":
            groups.setdefault((c["model"], c["tasks"]), []).append(c)
    out = []
    for (model, tasks), group in groups.items():
        strategies = list(dict.fromkeys(s for c in group for s in c["task_rates"]))
        for s in strategies:
            rates = [c["task_rates"].get(s) or {} for c in group]
            common = sorted(set.intersection(*(set(r) for r in rates))) if rates else []
            if len(group) < 2 or not common:
                continue
            per_repeat = [sum(r[t] for t in common) / len(common) for r in rates]
            pooled = [sum(r[t] for r in rates) / len(rates) for t in common]
            mean = sum(per_repeat) / len(per_repeat)
            sd = math.sqrt(sum((x - mean) ** 2 for x in per_repeat) / (len(per_repeat) - 1))
            n = len(common)
            se = math.sqrt(sum((p - mean) ** 2 for p in pooled)) / n  # clusters of equal size: Miller's SE
            lo, hi = wilson_ci(sum(pooled), n)
            out.append({"model": model, "tasks": tasks, "model_label": group[0]["model_label"],
                        "tasks_label": group[0]["tasks_label"], "strategy": s, "repeats": len(group),
                        "seeds": [c["seed"] for c in group], "tasks_compared": n, "per_repeat": per_repeat,
                        "mean": mean, "sd": sd, "ci95": [lo, hi], "clustered_se": se})
    return out


def _status(cells: Sequence[dict[str, Any]], resume: str) -> dict[str, Any]:
    states = [c["state"] for c in cells]
    done = states.count("complete")
    n = len(cells)
    if done == n:
        state, text = "complete", f"complete: {n} of {n} cells complete"
    elif "budget" in states:
        state = "budget"
        text = f"stopped by its budget: {done} of {n} cells complete. Continue with a higher budget: {resume} --max-calls N"
    elif "running" in states:
        state, text = "running", f"running: {done} of {n} cells complete so far"
    else:
        state = "incomplete"
        text = f"incomplete: {done} of {n} cells complete. Continue with: {resume}"
    return {"state": state, "text": text, "complete_cells": done, "cells": n}


def _caveats(cells: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    out = []
    for c in cells:
        if c["state"] != "complete":
            out.append(wording.caveat("cell_state", "warn", f"{c['label']}: {c['status']}"))
        for cv in c["caveats"]:
            out.append(wording.caveat(cv["key"], cv["level"], f"{c['label']}: {cv['text']}"))
    out.append(wording.caveat("per_cell", "info", "Each cell is its own run on its own tasks: its figures are that "
                              "run's, on the tasks every strategy completed there; nothing is pooled across models "
                              "or task sets."))
    return out


def compute(data: Mapping[str, Any], study_dir: Path, numbers_of: NumbersOf = numbers_of_folder) -> dict[str, Any]:
    """The study's numbers from study.json (`data`) and its cells' numbers."""
    study_dir = Path(study_dir)
    spec = data.get("spec") if isinstance(data.get("spec"), Mapping) else {}
    labels = spec.get("labels") if isinstance(spec.get("labels"), Mapping) else {}
    cells = [_cell(study_dir, c, numbers_of, labels) for c in data.get("cells") or []]
    strategies = list(dict.fromkeys(s for c in cells for s in c["strategies"]))
    effects = [{"model": c["model"], "tasks": c["tasks"], "cell": c["label"], "model_label": c["model_label"],
                "tasks_label": c["tasks_label"], **e} for c in cells for e in c["effects"]]
    resume = f"python -m harness study --resume {study_dir}"
    answer = [f"{c['label']}: {c['answer'][0]}" for c in cells if c["answer"]]
    return {"schema": SCHEMA, "name": data.get("name"), "spec": data.get("spec"), "strategies": strategies,
            "cells": cells, "effects": effects, "answer": answer, "status": _status(cells, resume),
            "repeats": repeats(cells), "repeats_method": REPEATS_METHOD,
            "caveats": _caveats(cells), "oracle_feedback": any(c["oracle_feedback"] for c in cells)}


def pass_at_1_rows(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per cell x strategy: pass@1 with its CI, tasks compared, spend."""
    rows = []
    for c in doc["cells"]:
        for s, v in c["strategies"].items():
            lo, hi = v.get("pass@1_ci95") or [None, None]
            rows.append({"model": c["model"], "tasks": c["tasks"], "strategy": s, "pass@1": v.get("pass@1"),
                         "ci_low": lo, "ci_high": hi, "tasks_compared": v.get("tasks_scored"),
                         "calls_per_attempt": v.get("calls_per_attempt"), "tokens": v.get("tokens"),
                         "cost_usd": v.get("cost_usd")})
    return rows
