"""The study report: report.html (self-contained) and report.md at the study folder's top,
with study_summary.json, CSV tables and SVG plots beside them. It renders
harness.rundata.study's numbers (each cell's own run numbers) and computes none."""
from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pandas as pd
from markupsafe import Markup

from harness import __version__
from harness.report import latex, plots
from harness.report.render import VIEW_PORT, Cell, View, _csv_safe, _env, _view
from harness.rundata import folder, wording
from harness.rundata import study as study_numbers


def pass_at_1_view(doc: dict[str, Any]) -> View:
    """One row per cell, one column per strategy: pass@1 [95% CI] on that cell's shared tasks."""
    names = doc["strategies"]
    rows = []
    for c in doc["cells"]:
        cells = [Cell(c.get("model_label") or c["model"], css="txt"), Cell(c.get("tasks_label") or c["tasks"], css="txt"),
                 Cell(str(c["tasks_compared"]))]
        for s in names:
            v = c["strategies"].get(s)
            cells.append(Cell(wording.rate_with_ci(v.get("pass@1"), *(v.get("pass@1_ci95") or [None, None]))
                              if v else wording.DASH))
        cells.append(Cell(c["state"], css="txt" + ("" if c["state"] == "complete" else " warn")))
        rows.append(cells)
    return View("study_pass", "pass@1 per model and task set", "Each cell's pass@1 with its 95% Wilson CI over tasks on "
                "the tasks every strategy completed in that cell (tasks compared); each cell is its own run.",
                ["model", "task set", "tasks compared", *names, "state"], rows, "study_pass_at_1.csv")


def effects_frame(doc: dict[str, Any]) -> pd.DataFrame:
    cols = ["model", "tasks", "effect", "label", "a", "b", "diff", "ci_low", "ci_high", "p_value", "fixed", "broken",
            "pairs", "tasks_n", "calls_ratio"]
    rows = [{**{k: e.get(k) for k in cols if k != "tasks_n"}, "tasks_n": e.get("tasks") if isinstance(e.get("tasks"), int)
             else None} for e in doc["effects"]]
    # "tasks" is both the task set and a pair's task count: the count goes as tasks_n
    for row, e in zip(rows, doc["effects"]):
        row["model"] = e.get("model_label") or e.get("model")
        row["tasks"] = e.get("tasks_label") or (e["cell"].split(" \u00d7 ", 1)[1] if " \u00d7 " in e["cell"] else "")
    return pd.DataFrame(rows, columns=cols)


def effects_view(frame: pd.DataFrame) -> View:
    rows = []
    for r in frame.to_dict("records"):
        rows.append([Cell(str(r["model"]), css="txt"), Cell(str(r["tasks"]), css="txt"),
                     Cell(str(r["label"]), css="txt"), Cell(f"{r['a']} \u2212 {r['b']}", css="txt"),
                     Cell(wording.points(r["diff"])),
                     Cell(f"[{wording.points(r['ci_low'])}, {wording.points(r['ci_high'])}]"),
                     Cell(wording.pvalue(r["p_value"])), Cell(str(r["fixed"])), Cell(str(r["broken"])),
                     Cell(str(r["pairs"])), Cell(str(r["tasks_n"])), Cell(wording.ratio(r["calls_ratio"]))])
    return View("study_effects", "Effects per model and task set",
                "Per cell, the headline strategy's effects from its traits: the one that isolates its idea (against "
                "the strategy that differs only by it), the compute-matched one (against its rival) and the total "
                "(against plain sampling). diff in points of pass@1 with its 95% CI by Newcombe's paired score interval over tasks; "
                "McNemar's exact two-sided test over attempt pairs (fixed: a passed, b failed; broken: the reverse).",
                ["model", "task set", "effect", "pair", "diff", "95% CI", "McNemar p", "fixed", "broken",
                 "attempt pairs", "tasks", "calls ratio"], rows, "study_effects.csv")


def repeats_frame(doc: dict[str, Any]) -> pd.DataFrame:
    cols = ["model", "tasks", "strategy", "repeats", "seeds", "tasks_compared", "mean", "sd", "ci_low", "ci_high",
            "clustered_se", "per_repeat"]
    rows = [{**{k: r.get(k) for k in cols if k in r}, "model": r["model_label"], "tasks": r["tasks_label"],
             "ci_low": r["ci95"][0], "ci_high": r["ci95"][1]} for r in doc.get("repeats") or []]
    return pd.DataFrame(rows, columns=cols)


def repeats_view(frame: pd.DataFrame, method: str) -> View:
    rows = [[Cell(str(r["model"]), css="txt"), Cell(str(r["tasks"]), css="txt"), Cell(str(r["strategy"]), css="txt"),
             Cell(str(r["repeats"])), Cell(str(r["tasks_compared"])), Cell(wording.pct(r["mean"])),
             Cell(f"{100 * r['sd']:.1f}"), Cell(wording.ci(r["ci_low"], r["ci_high"])),
             Cell(f"{100 * r['clustered_se']:.1f}")] for r in frame.to_dict("records")]
    return View("study_repeats", "Across repeats (seeds)", f"Per model, task set and strategy run once per seed: {method}.",
                ["model", "task set", "strategy", "repeats", "tasks", "mean pass@1", "sd (points)", "95% CI",
                 "clustered SE (points)"], rows, "study_repeats.csv")


def cost_panels(doc: dict[str, Any]) -> list[tuple[str, pd.DataFrame, str]]:
    return [(c["label"], pd.DataFrame(c["cost_points"]), str(c["cost_axis"] or "tokens"))
            for c in doc["cells"] if c["cost_points"]]


def write_study_report(study_dir: Path, view_port: int = VIEW_PORT) -> Path:
    """Writes study_summary.json, report.html, report.md, CSVs and plots at the study folder's
    top; returns report.html. StudyError when the folder holds no study."""
    from harness.run.study import read_study

    study_dir = Path(study_dir)
    data = read_study(study_dir)
    doc = study_numbers.compute(data, study_dir)
    folder.write_json(study_dir / study_numbers.SUMMARY_FILE, doc)
    effects = effects_frame(doc)
    _csv_safe(pd.DataFrame(study_numbers.pass_at_1_rows(doc))).to_csv(study_dir / "study_pass_at_1.csv", index=False)
    _csv_safe(effects).to_csv(study_dir / "study_effects.csv", index=False)
    repeated = repeats_frame(doc)
    if len(repeated):
        _csv_safe(repeated).to_csv(study_dir / "study_repeats.csv", index=False)
    forest = plots.write_figure(plots.forest_figure(
        effects.assign(cell=[e["cell"] for e in doc["effects"]]) if len(effects) else effects), study_dir, "forest")
    cost = plots.write_figure(plots.cost_figure(cost_panels(doc)), study_dir, "cost") if cost_panels(doc) else ""
    (study_dir / "tables.tex").write_text(latex.study_tex(doc), encoding="utf-8", errors="backslashreplace")
    cells = [{"label": c["label"], "state": c["state"], "status": c["status"], "run_id": c["run_id"],
              "report": f"{quote(c['run_id'])}/report.html" if c["run_id"] and (study_dir / c["run_id"] / "report.html").is_file() else None,
              "view": f"http://127.0.0.1:{view_port}/runs/{quote(c['run_id'], safe='')}" if c["run_id"] else None}
             for c in doc["cells"]]
    context = {
        "title": f"Study {doc['name']}", "doc": doc, "cells": cells,
        "views": {"pass": pass_at_1_view(doc), "effects": effects_view(effects),
                  "repeats": repeats_view(repeated, doc["repeats_method"]) if len(repeated) else None},
        "plot_forest": Markup(plots.inline(forest)), "plot_cost": Markup(plots.inline(cost)) if cost else "",
        "view_url": f"http://127.0.0.1:{view_port}/study", "study_dir": str(study_dir),
        "generated": f"harness {__version__}",
    }
    html = study_dir / "report.html"
    for path, template, env in ((html, "study.html.j2", _env()), (study_dir / "report.md", "study.md.j2", _env(True))):
        path.write_text(env.get_template(template).render(context), encoding="utf-8", errors="backslashreplace")
    return html


__all__ = ["write_study_report", "_view"]
