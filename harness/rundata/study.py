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
    out: dict[str, Any] = {"model": cell["model"], "tasks": cell["tasks"], "label": cell_label(model_label, tasks_label),
                           "model_label": model_label, "tasks_label": tasks_label, "intervals": None,
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
        compute=doc.get("compute"))
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
