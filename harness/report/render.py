"""Report writing: tables -> CSV, Markdown and one self-contained HTML file.

The HTML has inline CSS and inline SVG plots, no script and no external resource,
so it opens offline from file://. Every model-written string is escaped by jinja2's
autoescape; only the SVG that matplotlib drew is marked safe.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import quote

import jinja2
import pandas as pd
from markupsafe import Markup

from harness import __version__
from harness.report import plots
from harness.report.answer import across_runs, answer
from harness.report.runs import Run, load_run, load_runs
from harness.report.tables import RunFrames, Tables, build_tables
from harness.rundata import write_json
from harness.summary import build_summary


# `harness view` serves on this port unless told otherwise (harness/view/README.md
# gives the URL scheme the report links to).
VIEW_PORT = 8765


def view_url(run: Run, port: int, task_id: str | None = None, anchor: str | None = None) -> str:
    """A page of `harness view` for this run: /runs/<run folder name>[/tasks/<task id>]."""
    url = f"http://127.0.0.1:{port}/runs/{quote(run.run_dir.name, safe='')}"
    if task_id is not None:
        url += f"/tasks/{quote(task_id, safe='/')}"
    if anchor:
        url += f"#{quote(anchor, safe='')}"
    return url


@dataclass(frozen=True)
class Cell:
    text: str
    href: str | None = None
    css: str = ""


@dataclass(frozen=True)
class View:
    """A table as the templates show it: formatted cells, a title and a note."""

    key: str
    title: str
    note: str
    columns: list[str]
    rows: list[list[Cell]]
    csv: str | None = None


def _fmt(value: Any, column: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if column == "p_value":
            return f"{value:.4g}"
        if column in ("cost_usd", "cached_cost_usd"):
            return f"{value:.4f}"
        if column == "minutes":
            return f"{value:,.2f}"
        if column in ("calls", "tokens", "wall_s", "mean_calls", "mean_trials") or "per_sample" in column:
            return f"{value:,.1f}"
        return f"{value:.3f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}" if "tokens" in column else str(value)
    return str(value)


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) or value is None


def _view(key: str, title: str, note: str, df: pd.DataFrame, single: bool, csv: str | None = None,
          ci: bool = False) -> View:
    if single and "run" in df.columns:
        df = df.drop(columns="run")
    if ci and {"ci_low", "ci_high"} <= set(df.columns):
        df = df.assign(**{"95% CI": [f"[{_fmt(lo, 'x')}, {_fmt(hi, 'x')}]"
                                     for lo, hi in zip(df["ci_low"], df["ci_high"])]})
        df = df.drop(columns=["ci_low", "ci_high"])
    cols = list(df.columns)
    rows = [[Cell(_fmt(v, c), css="" if _numeric(v) else "txt") for v, c in zip(rec, cols)]
            for rec in df.itertuples(index=False)]
    return View(key, title, note, cols, rows, csv)


def task_anchor(task_id: str) -> str:
    """An HTML id for a task: readable, unique (short hash), safe in a URL fragment."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", task_id).strip("-")[:60]
    return f"task-{slug}-{hashlib.sha1(task_id.encode()).hexdigest()[:6]}"


def _per_task_view(per_task: pd.DataFrame, single: bool, run: Run | None = None, port: int = VIEW_PORT) -> View:
    """Task rows, one column per (run, strategy): passed/attempts, linked to details
    (and, for one run, to the task's page in `harness view`)."""
    if per_task.empty:
        return View("per_task", "Per task", "", ["task"], [], "per_task.csv")
    series = list(dict.fromkeys(zip(per_task["run"], per_task["strategy"])))
    names = [s if single else f"{s} ({r})" for r, s in series]
    rows = []
    for task_id, g in per_task.groupby("task_id", sort=True):
        by = {(r, s): row for r, s, row in zip(g["run"], g["strategy"], g.itertuples(index=False))}
        cells = [Cell(str(task_id), href=f"#{task_anchor(str(task_id))}" if single else None, css="txt")]
        for key in series:
            row = by.get(key)
            if row is None:
                cells.append(Cell("-"))
                continue
            text = f"{row.passed}/{row.attempts}"
            if row.incomplete_attempts:
                text += f" (+{row.incomplete_attempts} incomplete)"
            if row.errors:
                text += f", {row.errors} err"
            rate = row.pass_rate
            css = "" if rate is None or (isinstance(rate, float) and math.isnan(rate)) else (
                "pass" if rate > 0.5 else "fail")
            cells.append(Cell(text, css=css))
        compared = bool(g["compared"].all()) if "compared" in g else True
        cells.append(Cell("yes" if compared else "left out", css="" if compared else "txt warn"))
        if single and run is not None:
            cells.append(Cell("view", href=view_url(run, port, str(task_id)), css="txt"))
        rows.append(cells)
    note = ("Hidden-test passes of final trials / complete attempts; \"left out\": not completed by every "
            "strategy, so in no figure. "
            + ("Each task links to its trials below, and to its page in `harness view`." if single
               else "Trial details are in each run's own report."))
    columns = ["task", *names, "compared"] + (["harness view"] if single and run is not None else [])
    return View("per_task", "Per task", note, columns, rows, "per_task.csv")


# How the side-by-side table names summary.json's fields (its CSV keeps the keys).
HEADLINE_LABELS = {
    "model_calls": "model calls", "input_tokens": "input tokens", "output_tokens": "output tokens",
    "cost_usd": "cost (USD)", "cached_cost_usd": "cost of cache-served answers (USD, not spent)",
    "errors": "trials with unusable output", "wall_s": "time spent, summed (min)",
    "attempts": "complete attempts", "incomplete_attempts": "incomplete attempts (not scored)",
    "tasks_scored": "tasks compared", "tasks_completed": "tasks it completed",
}


def headline(runs: Sequence[Run]) -> tuple[View, pd.DataFrame]:
    """The summary.json figures side by side: one row per figure, one column per
    run x strategy (the first thing a reader compares)."""
    shown: dict[str, dict[str, str]] = {}
    raw: dict[str, dict[str, Any]] = {}
    for run in runs:
        summary = build_summary(run.header, run.records, run.errors)
        for strategy, s in summary["strategies"].items():
            col = strategy if len(runs) == 1 else f"{strategy} ({run.label})"
            entry: dict[str, str] = {}
            values: dict[str, Any] = {}
            for key, value in s.items():
                if key.startswith("pass@") and not key.endswith(("_ci95", "_by_trial")):
                    lo, hi = s.get(f"{key}_ci95", [None, None])
                    entry[key] = f"{_fmt(value, key)} [{_fmt(lo, key)}, {_fmt(hi, key)}]"
                    values.update({key: value, f"{key} ci_low": lo, f"{key} ci_high": hi})
            for t, value in enumerate(s["pass@1_by_trial"], 1):
                entry[f"pass@1 at trial {t}"] = _fmt(value, "pass")
                values[f"pass@1 at trial {t}"] = value
            for kind, of_kind in (summary.get("by_kind") or {}).items():  # a run that mixes kinds
                k = of_kind.get(strategy) or {}
                lo, hi = k.get("pass@1_ci95", [None, None])
                label = f"pass@1 on {kind} tasks ({of_kind.get('tasks')})"
                entry[label] = f"{_fmt(k.get('pass@1'), 'pass@1')} [{_fmt(lo, 'pass@1')}, {_fmt(hi, 'pass@1')}]"
                values[label] = k.get("pass@1")
            for key in ("model_calls", "input_tokens", "output_tokens", "cost_usd", "cached_cost_usd",
                        "errors", "wall_s",
                        "attempts", "incomplete_attempts", "tasks_scored", "tasks_completed"):
                shown_value = s.get(key) / 60 if key == "wall_s" and s.get(key) is not None else s.get(key)
                entry[HEADLINE_LABELS[key]] = _fmt(shown_value, "minutes" if key == "wall_s" else key)
                values[key] = s.get(key)
            shown[col], raw[col] = entry, values
    df = pd.DataFrame(shown).fillna("")
    df.index.name = "figure"
    figures = list(dict.fromkeys(k for v in raw.values() for k in v))
    # built row by row as objects, so that counts stay integers in the CSV
    csv = pd.DataFrame([[raw[c].get(f) for c in raw] for f in figures], index=figures, columns=list(raw), dtype=object)
    csv.index.name = "figure"
    view = View("headline", "Side by side", "pass@k with [95% bootstrap CI] on the tasks every strategy "
                "completed (tasks_scored); the figures of summary.json, one "
                "column per " + ("strategy." if len(runs) == 1 else "run x strategy."),
                ["figure", *df.columns],
                [[Cell(str(idx), css="txt"), *(Cell(str(v)) for v in row)] for idx, row in df.iterrows()],
                "headline.csv")
    return view, csv.reset_index()


# ------------------------------------------------------------------ trial details

@dataclass(frozen=True)
class TrialView:
    trial: int
    final: bool
    stop_reason: str | None
    hidden_passed: bool
    hidden_summary: str
    internal_passed: bool | None
    error: str | None
    code: str
    tests: list[tuple[str, str, str]]  # (test, status, detail)
    feedback_shown: str
    memory_shown: list[str]
    lesson: str | None
    lesson_label: str
    testgen: str
    testgen_raw: str
    spend: str


@dataclass(frozen=True)
class AttemptView:
    strategy: str
    attempt: int
    complete: bool
    verdict: str
    trials: list[TrialView] = field(default_factory=list)
    view_url: str = ""


@dataclass(frozen=True)
class TaskView:
    task_id: str
    anchor: str
    attempts: list[AttemptView]
    view_url: str = ""


def _lesson_label(rec: Any) -> str:
    """Schema 1 kept a lesson on the trial it was about; from schema 2 on it sits on
    the trial whose start wrote it (and whose cost it is)."""
    if int(getattr(rec, "schema", 1) or 1) >= 2:
        return f"Lesson written at the start of this trial, about trial {rec.trial - 1}:"
    return "Lesson written after this trial:"


def _trial_view(rec: Any, previous_feedback: str) -> TrialView:
    results = {}
    for r in rec.internal_results:
        results.setdefault(r.test, r)
    tests = [(t, results[t].status if t in results else "not run", results[t].detail if t in results else "")
             for t in rec.internal_tests]
    tests += [(r.test, r.status, r.detail) for r in rec.internal_results if r.test not in set(rec.internal_tests)]
    hidden_ok = sum(1 for r in rec.hidden_results if r.status == "passed")
    hidden_summary = f"{hidden_ok}/{len(rec.hidden_results)} hidden tests passed" if rec.hidden_results else ""
    testgen, testgen_raw = "", ""
    if rec.testgen:
        # whatever counts the loop records (kept, dropped_unparseable, ...), shown as they are
        counts = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(rec.testgen.items()) if k != "raw_output")
        testgen = f"test writer: {counts}" if counts else "test writer"
        testgen_raw = str(rec.testgen.get("raw_output") or "")
    cost = f", ${rec.cost_usd:.4f}" if rec.cost_usd is not None else ""
    spend = (f"{rec.model_calls} calls ({rec.cached_calls} cached), {rec.input_tokens}+{rec.output_tokens} tokens"
             f"{cost}, {rec.wall_s:.1f} s")
    return TrialView(rec.trial, rec.final, rec.stop_reason, bool(rec.hidden_passed), hidden_summary,
                     rec.internal_passed, rec.error, rec.code, tests, previous_feedback,
                     list(rec.memory_shown), rec.lesson, _lesson_label(rec), testgen, testgen_raw, spend)


def task_views(rf: RunFrames, port: int = VIEW_PORT) -> list[TaskView]:
    order = {s: i for i, s in enumerate(rf.strategies)}
    by_attempt: dict[tuple[str, str, int], list[Any]] = {}
    for rec in rf.run.records:
        by_attempt.setdefault((rec.task_id, rec.strategy, rec.attempt), []).append(rec)
    tasks: dict[str, list[AttemptView]] = {}
    for (task_id, strategy, attempt), recs in sorted(
            by_attempt.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], 99), kv[0][2])):
        recs = sorted({r.trial: r for r in recs}.values(), key=lambda r: r.trial)
        final = next((r for r in recs if r.final), None)
        views, prev = [], ""
        for rec in recs:
            views.append(_trial_view(rec, prev))
            prev = rec.feedback
            if rec.final:
                break
        if final is None:
            verdict = "incomplete (no final trial): not scored"
        else:
            verdict = f"final trial {final.trial}: hidden {'PASS' if final.hidden_passed else 'FAIL'}"
        tasks.setdefault(task_id, []).append(AttemptView(
            strategy, attempt, final is not None, verdict, views,
            view_url(rf.run, port, task_id, f"{strategy}-{attempt}")))
    for task_id, strategy, attempt in sorted(set(rf.run.error_keys)):  # stopped before any trial record
        if (task_id, strategy, attempt) not in by_attempt:
            tasks.setdefault(task_id, []).append(AttemptView(
                strategy, attempt, False, "incomplete (no trial recorded; see errors.jsonl): not scored", [],
                view_url(rf.run, port, task_id, f"{strategy}-{attempt}")))
    return [TaskView(t, task_anchor(t), sorted(a, key=lambda v: (order.get(v.strategy, 99), v.attempt)),
                     view_url(rf.run, port, t)) for t, a in sorted(tasks.items())]


# ------------------------------------------------------------------ assembling

def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("harness", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default_for_string=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md"] = _md_cell
    return env


def _md_cell(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _first(d: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if d.get(key) is not None:
            return d[key]
    return None


def provenance(run: Run) -> dict[str, str]:
    """What the run's numbers depend on beyond model and tasks, read from run.json
    defensively (older runs record less): long-term memory, prompt set, MBPP form."""
    cfg, head = run.config, run.header
    mem = head.get("memory") if isinstance(head.get("memory"), dict) else {}
    namespace = _first(mem, "namespace") or cfg.get("memory_namespace")
    earlier = _first(mem, "earlier_lessons", "lessons_from_earlier_runs", "preloaded_lessons", "lessons_at_start")
    for key in ("earlier_runs", "earlier"):
        if earlier is None and isinstance(mem.get(key), dict):  # MemoryStore.earlier_runs(): lessons, runs
            info = mem[key]
            earlier = info.get("lessons")
            if earlier is not None and info.get("runs") is not None:
                earlier = f"{earlier} lesson(s) from {info['runs']} earlier run(s)"
    if namespace and mem.get("shared") is False:
        memory = f"namespace {namespace} (the run's own, empty at start)"
    elif namespace:
        memory = f"namespace {namespace}"
    else:
        memory = "the run's own namespace (empty at start)"
    if isinstance(earlier, str):
        memory += f"; {earlier}"
    elif earlier is not None:
        memory += f"; {earlier} lesson(s) from earlier runs"
    elif namespace and mem.get("shared") is not False:
        memory += "; lessons from earlier runs: not recorded"
    prompts_raw = head.get("prompts") if head.get("prompts") is not None else cfg.get("prompts")
    if isinstance(prompts_raw, dict):
        digest = _first(prompts_raw, "digest", "sha256")
        where = _first(prompts_raw, "folder", "dir", "path", "source")
        overridden = prompts_raw.get("overridden")
        if where and isinstance(overridden, list):
            where = f"{where} (overrides {', '.join(map(str, overridden)) or 'no template'})"
        prompts = f"{where or 'default prompts'}, digest {str(digest)[:23] if digest else 'not recorded'}"
    elif prompts_raw:
        prompts = str(prompts_raw)
    else:
        prompts = "default prompts (digest not recorded)"
    out = {"memory": memory, "prompts": prompts, "mbpp": "", "recall": recall_line(head)}
    tasks = head.get("tasks") or {}
    spec = str(tasks.get("spec") or cfg.get("tasks") or "")
    if ("mbpp" in spec.lower() or "mbpp" in str(tasks.get("name") or "").lower()
            or tasks.get("prompt_form") not in (None, "as published")):
        form = _first(tasks, "mbpp_form", "form", "prompt_form") or _first(cfg, "mbpp_form")
        if form is None and cfg.get("mbpp_with_example") is not None:
            form = "with-example" if cfg.get("mbpp_with_example") else "plain"
        if form is None and "with-example" in spec:
            form = "with-example"
        out["mbpp"] = {"with-example": "with the example assert in the prompt (as the original benchmark)",
                       "plain": "without the example assert"}.get(str(form), str(form) if form else
                                                                   f"not recorded (spec {spec})")
    return out


def recall_line(header: dict[str, Any]) -> str:
    """What a reflexion+recall run recalled from: source, digest, K, scope, ranking,
    hygiene ("" for a run without recall)."""
    rec = header.get("recall")
    if not isinstance(rec, dict):
        return ""
    ranking = rec.get("ranking") or {}
    left = (rec.get("hygiene") or {}).get("excluded") or {}
    left_text = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(left.items()) if k != "source_lessons" and v)
    return (f"{', '.join(rec.get('strategies') or ['reflexion+recall'])}: up to K={rec.get('k')} lessons from other "
            f"tasks per trial, scope {rec.get('scope')}, ranked by {ranking.get('ranker', '?')} "
            f"({ranking.get('library', '?')} {ranking.get('version') or ''}) on {ranking.get('query', '?')}; "
            f"frozen at start from {rec.get('source')} ({rec.get('pool_lessons')} lessons, source digest "
            f"{str(rec.get('source_digest'))[:23]}), each cut to {rec.get('max_chars')} characters"
            + (f"; left out or cut: {left_text}" if left_text else ""))


def _run_info(run: Run, port: int = VIEW_PORT) -> dict[str, Any]:
    cfg, tasks = run.config, run.header.get("tasks") or {}
    git = run.header.get("git") or {}
    return {
        "label": run.label,
        "dir": str(run.run_dir),
        "created_at": run.header.get("created_at", ""),
        "model": cfg.get("model", ""),
        "tasks": f"{tasks.get('name') or tasks.get('spec') or '?'} ({tasks.get('count', '?')} tasks, digest {str(tasks.get('digest', '?'))[:16]})",
        "settings": ", ".join(f"{k}={cfg[k]}" for k in ("strategies", "samples", "trials", "k", "temperature", "seed")
                              if k in cfg),
        "provenance": provenance(run),
        "view_url": view_url(run, port),
        "results_dir": str(run.run_dir.parent),
        "git": f"{str(git.get('commit', '?'))[:12]}{' (dirty)' if git.get('dirty') else ''}" if git else "",
        "oracle_feedback": run.oracle_feedback,
        "config_json": json.dumps(cfg, indent=2, sort_keys=True, default=str),
        "versions": json.dumps(run.header.get("versions") or {}, sort_keys=True, default=str),
    }


def _views(tables: Tables, single: bool, run: Run, port: int) -> dict[str, View]:
    v = {
        "pass_at_k": _view("pass_at_k", "pass@k", "Unbiased estimator (Chen et al. 2021) over each task's complete "
                           "attempts, final trials only; mean over the tasks every strategy completed (tasks; "
                           "excluded: the run's other tasks, in no figure) with a 95% bootstrap CI "
                           "(2000 resamples of tasks, seeded).", tables.pass_at_k, single, "pass_at_k.csv", ci=True),
        "pass1_by_trial": _view("pass1_by_trial", "pass@1 by trial, table", "Share of attempts whose implementation at trial "
                                "min(t, last trial) passes the hidden tests (per task over attempts, then over tasks).",
                                tables.pass1_by_trial, single, "pass1_by_trial.csv", ci=True),
        "compute_matched": _view("compute_matched", "Upper bound only: baseline best-of-k picked by the hidden tests",
                                 "An oracle, not a rival an agent could run: the baseline's best of k samples as chosen "
                                 "by the hidden tests (pass@k), with k = round(the strategy's mean calls (tokens) per "
                                 "attempt / baseline calls (tokens) per sample); empty where the run has fewer baseline "
                                 "samples per task than k. The compute-matched rival an agent can run is resample, in "
                                 "the curve above. Calls include response-cache hits.",
                                 tables.compute_matched, single, "compute_matched.csv"),
        "compute_curve": _view("compute_curve", "Pass rate against compute", "Mean calls and tokens per task spent up to "
                               "trial t (every strategy with a trial loop: reflexion, feedback, resample), each call "
                               "charged to the trial it serves (the lesson written after trial t counts in trial t+1); "
                               "the baseline at one sample (kind agent) and its best of k by the hidden tests "
                               "(kind oracle: an upper bound only).", tables.compute_curve, single,
                               "compute_curve.csv"),
        "paired": _view("paired", "Paired comparison on the same tasks", "On the tasks every strategy completed "
                        "(tasks; excluded = the run's other tasks). diff = pass@1 of a minus b with its paired "
                        "bootstrap 95% CI (tasks resampled with both results). McNemar's exact two-sided test over "
                        "attempt pairs (attempt i of a with attempt i of b on the same task, every attempt): fixed = "
                        "a passed, b failed; broken = the reverse. calls_ratio / tokens_ratio: a's mean spend per "
                        "attempt over b's.", tables.paired, single, "paired.csv", ci=True),
        "self_test": _view("self_test", "Self-test quality by trial", "false_positive: internal tests passed, hidden "
                           "failed; false_negative: internal failed, hidden passed; rates are shares of the trials at "
                           "that trial number.", tables.self_test, single, "self_test.csv"),
        "stopped_fp": _view("stopped_fp", "Attempts stopped on a false positive", "Attempts that stopped because all "
                            "internal tests passed, and how many of them fail the hidden tests.", tables.stopped_fp,
                            single, "stopped_on_false_positive.csv"),
        "resources": _view("resources", "Tokens, cost, model calls and time", "Totals over every recorded trial, "
                           "incomplete attempts included. wall_s adds up trial wall times; strategies run interleaved, "
                           "so it is time spent, not elapsed. cost_usd is money spent; cached_cost_usd what the "
                           "answers served by the response cache cost when first made (not spent again). "
                           "cost '-' = the backend reports no price.",
                           tables.resources, single, "resources.csv"),
        "per_task": _per_task_view(tables.per_task, single, run, port),
    }
    return v


def _rows(paired: pd.DataFrame, label: str) -> list[dict[str, Any]]:
    """paired.csv's rows for one run label, NaN read back as None."""
    rows = paired[paired["run"] == label].to_dict("records")
    return [{k: None if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()} for r in rows]


def _answers(rfs: Sequence[RunFrames], tables: Tables) -> list[Any]:
    out = []
    if len(rfs) > 1:
        first = rfs[0].run.label
        out.append(across_runs(rfs, [r for rf in rfs[1:] for r in _rows(tables.paired, f"{first} vs {rf.run.label}")]))
    for rf in rfs:
        out.append(answer(rf, _rows(tables.paired, rf.run.label)))
    return out


def _render(out_dir: Path, runs: Sequence[Run], title: str, view_port: int = VIEW_PORT) -> Path:
    tables, rfs = build_tables(runs)
    single = len(runs) == 1
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, df in tables.csv_files().items():
        df.to_csv(out_dir / name, index=False, errors="backslashreplace")
    head_view, head_df = headline(runs)
    head_df.to_csv(out_dir / "headline.csv", index=False, errors="backslashreplace")
    trial_svg = plots.pass1_by_trial_svg(tables.pass1_by_trial)
    compute_svg = plots.compute_svg(tables.compute_curve)
    (out_dir / "pass1_by_trial.svg").write_text(trial_svg, encoding="utf-8", errors="backslashreplace")
    (out_dir / "compute.svg").write_text(compute_svg, encoding="utf-8", errors="backslashreplace")
    context = {
        "title": title,
        "single": single,
        "runs": [_run_info(r, view_port) for r in runs],
        "answers": _answers(rfs, tables),
        "oracle": [r.label for r in runs if r.oracle_feedback],
        "views": {**_views(tables, single, runs[0], view_port), "headline": head_view},
        "plot_trial": Markup(plots.inline(trial_svg)),
        "plot_compute": Markup(plots.inline(compute_svg)),
        "tasks": task_views(rfs[0], view_port) if single else [],
        "incomplete": {r.label: int(tables.resources.loc[tables.resources["run"] == r.label, "incomplete_attempts"].sum())
                       for r in runs},
        "generated": f"harness {__version__}",
    }
    env = _env()
    html = out_dir / "report.html"
    # Text that is not valid UTF-8 (a lone surrogate a task file carried) is written as
    # its \udXXX escape rather than failing the report.
    for path, template in ((html, "report.html.j2"), (out_dir / "report.md", "report.md.j2")):
        path.write_text(env.get_template(template).render(context), encoding="utf-8", errors="backslashreplace")
    return html


def write_report(run_dir: Path, view_port: int = VIEW_PORT) -> Path:
    """Writes report.html, report.md, CSV tables, SVG plots and summary.json into
    the run folder, from run.json, trials.jsonl and errors.jsonl alone; returns
    report.html. `view_port`: where its links to `harness view` point."""
    run = load_run(Path(run_dir))
    summary = build_summary(run.header, run.records, run.errors)
    path = run.run_dir / "summary.json"
    try:  # keep top-level fields that only the run knew (e.g. its elapsed timings)
        old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, json.JSONDecodeError):
        old = {}
    if isinstance(old, dict):
        summary = {**{k: v for k, v in old.items() if k not in summary}, **summary}
    write_json(path, summary)
    return _render(run.run_dir, [run], f"Run {run.label}", view_port)


def default_compare_dir(run_dirs: Sequence[Path]) -> Path:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return Path(run_dirs[0]).resolve().parent / f"compare-{stamp}"


def write_compare(run_dirs: Sequence[Path], out_dir: Path | None = None, view_port: int = VIEW_PORT,
                  labels: dict[str, str] | None = None) -> Path:
    """Several runs side by side in one report (one series per run x strategy);
    `labels` names runs (run folder name -> label) instead of their run ids."""
    runs = load_runs([Path(p) for p in run_dirs], labels)
    out = Path(out_dir) if out_dir is not None else default_compare_dir(run_dirs)
    return _render(out, runs, "Comparison of " + ", ".join(r.label for r in runs), view_port)
