"""Report writing: a run's numbers -> CSV, Markdown and one self-contained HTML file.

Every figure and sentence comes from harness.rundata.numbers (summary.json's
document); this module only lays them out. The HTML has inline CSS and inline SVG
plots, no script and no external resource, so it opens offline from file://. Every
model-written string is escaped by jinja2's autoescape; only the SVG that matplotlib
drew is marked safe.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import quote

import jinja2
import jinja2.sandbox
import pandas as pd
from markupsafe import Markup

from harness import __version__
from harness.report import latex, plots
from harness.rundata import folder, frames, numbers, timeline, wording

# `harness view` serves on this port unless told otherwise (harness/view/README.md
# gives the URL scheme the report links to).
VIEW_PORT = 8765


@dataclass(frozen=True)
class Source:
    """One run as a report shows it: its folder, a label, its frames and its numbers."""

    run: folder.RunFolder
    label: str
    frames: frames.Frames
    numbers: dict[str, Any]

    @property
    def run_dir(self) -> Path:
        return self.run.run_dir


def source(run: folder.RunFolder, label: str | None = None, doc: dict[str, Any] | None = None) -> Source:
    trials = frames.trials_frame(run.records)
    label = label or str(run.header.get("run_id") or run.run_dir.name)
    if doc is None:
        doc = numbers.of_folder(run)
    return Source(run, label, frames.prepare(run.header, trials, run.errors), doc)


def view_url(run_dir: Path, port: int, task_id: str | None = None, anchor: str | None = None) -> str:
    """A page of `harness view` for this run: /runs/<run folder name>[/tasks/<task id>]."""
    url = f"http://127.0.0.1:{port}/runs/{quote(Path(run_dir).name, safe='')}"
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


_RATES = {"pass", "ci_low", "ci_high", "pass@1", "fp_rate", "fn_rate", "share", "pass_rate", "pass@k", "pass^k",
          "oracle_best_of_k_calls", "oracle_best_of_k_tokens"}


def _fmt(value: Any, column: str) -> str:
    """One format per kind of number (harness.rundata.wording)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return wording.UNKNOWN if column in ("cost_usd", "cached_cost_usd") else wording.DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if column in _RATES:
            return wording.pct(value)
        if column == "diff":
            return wording.points(value)
        if column == "p_value":
            return wording.pvalue(value)
        if column.endswith("_ratio"):
            return wording.ratio(value)
        if column in ("cost_usd", "cached_cost_usd"):
            return f"{value:.4f}"
        if column == "summed_s":
            return wording.duration(value)
        return f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}" if "tokens" in column else str(value)
    return str(value)


def _counts(value: Any) -> str:
    """A {name: count} cell as text: "python 6 · submit 2"."""
    return " \u00b7 ".join(f"{k} {v}" for k, v in value.items()) if value else wording.DASH


def _agent_frame(sources: Sequence[Source]) -> pd.DataFrame:
    """The numbers' agents table, its {name: count} cells as text."""
    df = _table(sources, "agents")
    for column in ("tool_calls_by_tool", "episode_stops"):
        if column in df.columns:
            df[column] = df[column].map(lambda v: _counts(v) if isinstance(v, dict) else v)
    return df


def _stop_frame(sources: Sequence[Source]) -> pd.DataFrame:
    """Stop reasons, one row per strategy (per run): its attempts by stop reason, and
    those whose final program did not compile, by compile status."""
    rows: dict[tuple[str, str], dict[str, int]] = {}
    broken: dict[tuple[str, str], dict[str, int]] = {}
    finals: dict[tuple[str, str], int] = {}
    for s in sources:
        for r in s.numbers.get("stop_reasons") or []:
            rows.setdefault((s.label, r["strategy"]), {})[r["stop_reason"]] = r["attempts"]
        for strategy, entry in (s.numbers.get("not_compiled") or {}).items():
            broken[(s.label, strategy)] = dict(entry.get("by_status") or {})
            finals[(s.label, strategy)] = int(entry.get("finals") or 0)
    columns = ["run", "strategy", "attempts", "stop_reasons", "did_not_compile"]
    return pd.DataFrame([{"run": run, "strategy": strategy, "attempts": finals.get((run, strategy), sum(c.values())),
                          "stop_reasons": _counts(c),
                          "did_not_compile": _counts(broken.get((run, strategy), {}))}
                         for (run, strategy), c in rows.items()], columns=columns)


def _compile_failures(df: pd.DataFrame) -> bool:
    """Whether some final program of the stop-reason table did not compile."""
    return "did_not_compile" in df.columns and bool((df["did_not_compile"] != wording.DASH).any())


def _shown_stops(df: pd.DataFrame) -> pd.DataFrame:
    """The stop-reason table as shown: its "did not compile" column only where some
    final program did not compile (a run of Python or JavaScript compiles nothing)."""
    if not _compile_failures(df):
        return df.drop(columns="did_not_compile", errors="ignore")
    return df.rename(columns={"did_not_compile": "did not compile (final programs)"})


def _by_language_shown(df: pd.DataFrame) -> pd.DataFrame:
    """The per-language table as shown: pass@1 beside its CI."""
    out = pd.DataFrame({"run": df["run"], "language": df["language"], "strategy": df["strategy"],
                        "pass@1": df["pass@1"], "95% CI": [wording.ci(lo, hi) for lo, hi in zip(df["ci_low"],
                                                                                             df["ci_high"])],
                        "tasks": df["tasks"], "attempts": df["attempts"]})
    return out


def by_language_frame(sources: Sequence[Source]) -> pd.DataFrame:
    """by_language.csv: one row per run x language x strategy (runs that mix languages)."""
    rows = [{"run": s.label, "language": r["language"], "strategy": r["strategy"], "pass@1": r["pass@1"],
             "ci_low": (r.get("pass@1_ci95") or [None, None])[0], "ci_high": (r.get("pass@1_ci95") or [None, None])[1],
             "tasks": r["tasks"], "attempts": r["attempts"]}
            for s in sources for r in s.numbers.get("by_language") or []]
    return pd.DataFrame(rows, columns=["run", "language", "strategy", "pass@1", "ci_low", "ci_high", "tasks",
                                       "attempts"])


def languages_text(numbers_doc: dict[str, Any]) -> str:
    """The run's languages with their task counts: "go 1 · python 1 · rust 2"."""
    languages = numbers_doc.get("languages") or {}
    return _counts(languages) if languages else ""


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) or value is None


def _view(key: str, title: str, note: str, df: pd.DataFrame, single: bool, csv: str | None = None,
          ci: bool = False) -> View:
    if single and "run" in df.columns:
        df = df.drop(columns="run")
    if ci and {"ci_low", "ci_high"} <= set(df.columns):
        low, high = df["ci_low"], df["ci_high"]
        is_diff = "diff" in df.columns
        df = df.drop(columns=["ci_low", "ci_high"]).assign(**{"95% CI": [
            f"[{wording.points(lo)}, {wording.points(hi)}]" if is_diff else wording.ci(lo, hi)
            for lo, hi in zip(low, high)]})
    cols = list(df.columns)
    rows = [[Cell(_fmt(v, c), css="" if _numeric(v) else "txt") for v, c in zip(rec, cols)]
            for rec in df.itertuples(index=False)]
    return View(key, title, note, cols, rows, csv)


def task_anchor(task_id: str) -> str:
    """An HTML id for a task: readable, unique (short hash), safe in a URL fragment."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", task_id).strip("-")[:60]
    return f"task-{slug}-{hashlib.sha1(task_id.encode()).hexdigest()[:6]}"


# ------------------------------------------------------------------ tables of numbers

def _table(sources: Sequence[Source], key: str) -> pd.DataFrame:
    parts = [pd.DataFrame(s.numbers.get(key) or []).assign(run=s.label) for s in sources]
    parts = [p for p in parts if len(p.columns) > 1]
    if not parts:
        return pd.DataFrame()
    df = pd.concat(parts, ignore_index=True)
    return df[["run", *[c for c in df.columns if c != "run"]]]


def per_task_frame(sources: Sequence[Source]) -> pd.DataFrame:
    """per_task.csv: one row per run x task x strategy, from the numbers' per-task table."""
    rows = []
    for s in sources:
        for t in s.numbers.get("per_task") or []:
            for strategy, c in t["strategies"].items():
                rows.append({"run": s.label, "task_id": t["task_id"], "language": t.get("language"), "strategy": strategy,
                             "attempts": c["attempts"], "passed": c["passed"], "pass_rate": c["pass_rate"],
                             "mean_trials": c["mean_trials"], "mean_calls": c["mean_calls"],
                             "incomplete_attempts": c["incomplete"], "errors": c["errors"],
                             "compared": t["compared"]})
    return pd.DataFrame(rows, columns=["run", "task_id", "language", "strategy", "attempts", "passed", "pass_rate",
                                       "mean_trials", "mean_calls", "incomplete_attempts", "errors", "compared"])


def _per_task_view(sources: Sequence[Source], single: bool, port: int) -> View:
    """Task rows, one column per (run, strategy): passed/attempts, linked to details
    (and, for one run, to the task's page in `harness view`)."""
    series = list(dict.fromkeys((s.label, name) for s in sources for name in s.numbers["strategies"]))
    names = [name if single else f"{name} ({label})" for label, name in series]
    by_task: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    compared: dict[str, bool] = {}
    language: dict[str, str] = {}
    for s in sources:
        for t in s.numbers.get("per_task") or []:
            for strategy, c in t["strategies"].items():
                by_task.setdefault(t["task_id"], {})[(s.label, strategy)] = c
            compared[t["task_id"]] = compared.get(t["task_id"], True) and t["compared"]
            if t.get("language"):
                language[t["task_id"]] = t["language"]
    mixed = len(set(language.values())) > 1  # a column of one language says nothing the header does not
    rows = []
    for task_id in sorted(by_task):
        cells = [Cell(task_id, href=f"#{task_anchor(task_id)}" if single else None, css="txt")]
        if mixed:
            cells.append(Cell(language.get(task_id, wording.DASH), css="txt"))
        for key in series:
            c = by_task[task_id].get(key)
            if c is None:
                cells.append(Cell(wording.DASH))
                continue
            text = f"{c['passed']}/{c['attempts']}"
            if c["incomplete"]:
                text += f" (+{c['incomplete']} incomplete)"
            if c["errors"]:
                text += f", {c['errors']} err"
            rate = c["pass_rate"]
            cells.append(Cell(text, css="" if rate is None else ("pass" if rate > 0.5 else "fail")))
        ok = compared.get(task_id, False)
        cells.append(Cell("yes" if ok else "left out", css="" if ok else "txt warn"))
        if single:
            cells.append(Cell("view", href=view_url(sources[0].run_dir, port, task_id), css="txt"))
        rows.append(cells)
    note = ("Hidden-test passes of final trials / complete attempts; \"left out\": not completed by every "
            "strategy, so in no figure. "
            + ("Each task links to its trials below, and to its page in `harness view`." if single
               else "Trial details are in each run's own report."))
    columns = ["task", *(["language"] if mixed else []), *names, "compared"] + (["harness view"] if single else [])
    return View("per_task", "Per task", note, columns, rows, "per_task.csv")


# How the side-by-side table names summary.json's fields (its CSV keeps the keys).
HEADLINE_LABELS = {
    "model_calls": "model calls", "cached_calls": "of which cached", "input_tokens": "input tokens",
    "output_tokens": "output tokens", "tokens": "tokens", "cost_usd": "cost (USD)",
    "cached_cost_usd": "cost of cache-served answers (USD, not spent)",
    "errors": "trials whose answer held no usable code",
    "model_errors": "attempts a model error stopped (errors.jsonl)", "summed_s": "trial time summed over workers",
    "calls_per_attempt": "calls per attempt", "attempts": "complete attempts",
    "incomplete_attempts": "incomplete attempts (not scored)", "tasks_scored": "tasks compared",
    "tasks_completed": "tasks it completed",
}


def headline(sources: Sequence[Source]) -> tuple[View, pd.DataFrame]:
    """The summary.json figures side by side: one row per figure, one column per
    run x strategy (the first thing a reader compares)."""
    shown: dict[str, dict[str, str]] = {}
    raw: dict[str, dict[str, Any]] = {}
    for src in sources:
        for strategy, s in src.numbers["strategies"].items():
            col = strategy if len(sources) == 1 else f"{strategy} ({src.label})"
            entry: dict[str, str] = {}
            values: dict[str, Any] = {}
            for k in src.numbers["k"]:
                key = f"pass@{k}"
                lo, hi = s.get(f"{key}_ci95", [None, None])
                entry[f"{key} [95% CI]"] = wording.rate_with_ci(s.get(key), lo, hi)
                values.update({key: s.get(key), f"{key} ci_low": lo, f"{key} ci_high": hi})
                if k > 1 and f"pass^{k}" in s:  # pass^1 is pass@1
                    hat = f"pass^{k}"
                    lo, hi = s.get(f"{hat}_ci95", [None, None])
                    entry[f"{hat} [95% CI] (all {k} pass)"] = wording.rate_with_ci(s.get(hat), lo, hi)
                    values.update({hat: s.get(hat), f"{hat} ci_low": lo, f"{hat} ci_high": hi})
            for t, value in enumerate(s["pass@1_by_trial"], 1):
                entry[f"pass@1 at trial {t}"] = wording.pct(value)
                values[f"pass@1 at trial {t}"] = value
            for kind, of_kind in (src.numbers.get("by_kind") or {}).items():  # a run that mixes kinds
                k = of_kind.get(strategy) or {}
                label = f"pass@1 on {kind} tasks ({of_kind.get('tasks')})"
                entry[label] = wording.rate_with_ci(k.get("pass@1"), *(k.get("pass@1_ci95") or [None, None]))
                values[label] = k.get("pass@1")
            for row in src.numbers.get("by_language") or []:  # a run that mixes languages
                if row["strategy"] != strategy:
                    continue
                label = f"pass@1 on {row['language']} tasks ({row['tasks']})"
                entry[label] = wording.rate_with_ci(row.get("pass@1"), *(row.get("pass@1_ci95") or [None, None]))
                values[label] = row.get("pass@1")
            for key, label in HEADLINE_LABELS.items():
                v = s.get(key)
                entry[label] = (wording.duration(v) if key == "summed_s" else
                                f"{v:,.1f}" if key == "calls_per_attempt" and v is not None else _fmt(v, key))
                values[key] = v
            shown[col], raw[col] = entry, values
    df = pd.DataFrame(shown).fillna("")
    figures = list(dict.fromkeys(k for v in raw.values() for k in v))
    csv = pd.DataFrame([[raw[c].get(f) for c in raw] for f in figures], index=figures, columns=list(raw), dtype=object)
    csv.index.name = "figure"
    view = View("headline", "Side by side", "pass@k with [95% CI: Wilson score over tasks] on the tasks every strategy "
                "completed (tasks compared); spend and times over the whole run; one column per "
                + ("strategy." if len(sources) == 1 else "run x strategy."),
                ["figure", *df.columns],
                [[Cell(str(idx), css="txt"), *(Cell(str(v)) for v in row)] for idx, row in df.iterrows()],
                "headline.csv")
    return view, csv.reset_index()


def _first(d: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if d.get(key) is not None:
            return d[key]
    return None


def provenance(header: dict[str, Any]) -> dict[str, str]:
    """What the run's numbers depend on beyond model and tasks, read from run.json
    defensively (older runs record less): long-term memory, prompt set, MBPP form."""
    head = header
    cfg = head.get("config") if isinstance(head.get("config"), dict) else {}
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
    return (f"{', '.join(rec.get('strategies') or ['recall'])}: up to K={rec.get('k')} lessons from other "
            f"tasks per trial, scope {rec.get('scope')}, ranked by {ranking.get('ranker', '?')} "
            f"({ranking.get('library', '?')} {ranking.get('version') or ''}) on {ranking.get('query', '?')}; "
            f"frozen at start from {rec.get('source')} ({rec.get('pool_lessons')} lessons, source digest "
            f"{str(rec.get('source_digest'))[:23]}), each cut to {rec.get('max_chars')} characters"
            + (f"; left out or cut: {left_text}" if left_text else ""))


def _views(sources: Sequence[Source], single: bool, port: int) -> dict[str, View]:
    t = {key: _table(sources, key) for key in ("pass_at_k", "by_trial", "compute_matched", "compute_curve",
                                               "self_test", "stopped_fp", "resources")}
    t["paired"] = _paired_table(sources)
    t["agents"] = _agent_frame(sources)
    t["stop_reasons"] = _stop_frame(sources)
    t["by_language"] = by_language_frame(sources)
    t["cost_points"] = _table(sources, "cost_points")
    return {
        "cost_points": _view("cost_points", "Accuracy against cost", "Each strategy's pass@1 with its 95% CI against "
                             "its mean cost per task (per task over its attempts, then over the tasks every strategy "
                             "completed) in dollars at list price (usd: answers the response cache served are "
                             "included, at what they cost) and in tokens, each with its 95% CI over the same "
                             "bootstrap resamples of tasks (pass@1: Wilson's score interval over tasks). priced = every attempt had a price; where one had none "
                             "the plot's axis is tokens and usd is unknown, never $0. pareto = on the front "
                             "(nothing cheaper is as accurate) of the plot's axis.",
                             _cost_frame(t["cost_points"]), single, "cost_points.csv"),
        "pass_at_k": _view("pass_at_k", "pass@k and pass^k", "pass@k: at least one of k samples passes, by the "
                           "unbiased estimator (Chen et al. 2021); pass^k: all k samples pass (the reliability of k "
                           "tries in a row), by its unbiased counterpart C(c, k) / C(n, k), from the same samples. "
                           "Over each task's complete attempts, final trials only; mean over the tasks every strategy "
                           "completed, each with a 95% Wilson score interval over tasks (Wilson 1927: successes = the "
                           "sum of per-task rates, n = tasks; conservative with several samples per task).",
                           _pass_at_k_frame(t["pass_at_k"]), single, "pass_at_k.csv"),
        "pass1_by_trial": _view("pass1_by_trial", "pass@1 by trial, table", "Share of attempts whose implementation "
                                "at trial min(t, last trial) passes the hidden tests (per task over attempts, then "
                                "over tasks).", t["by_trial"], single, "pass1_by_trial.csv", ci=True),
        "compute_matched": _view("compute_matched", "Upper bound only: baseline best-of-k picked by the hidden tests",
                                 "An oracle, not a rival an agent could run: the baseline's best of k samples as "
                                 "chosen by the hidden tests (pass@k), with k = round(the strategy's mean calls "
                                 "(tokens) per attempt / baseline calls (tokens) per sample); empty where the run has "
                                 "fewer baseline samples per task than k. The compute-matched rival an agent can run "
                                 "is resample, in the curve above. Calls include response-cache hits.",
                                 t["compute_matched"], single, "compute_matched.csv"),
        "compute_curve": _view("compute_curve", "Pass rate against compute", "Mean calls and tokens per task spent up "
                               "to trial t (every strategy with a trial loop), each call charged to the trial it "
                               "serves (the lesson written after trial t counts in trial t+1); the baseline at one "
                               "sample (kind agent) and its best of k by the hidden tests (kind oracle: an upper "
                               "bound only).", t["compute_curve"], single, "compute_curve.csv"),
        "paired": _view("paired", "Paired comparison on the same tasks", "On the tasks every strategy completed "
                        "(tasks; excluded = the run's other tasks). diff = pass@1 of a minus b in points with its "
                        "95% CI by Newcombe's paired score interval (1998, method 10) over tasks. McNemar's exact two-sided test "
                        "over attempt pairs (attempt i of a with attempt i of b on the same task): fixed = a passed, "
                        "b failed; broken = the reverse. calls_ratio / tokens_ratio: a's mean spend per attempt over "
                        "b's.", t["paired"], single, "paired.csv", ci=True),
        "self_test": _view("self_test", "Self-test quality by trial", "false_positive: internal tests passed, hidden "
                           "failed; false_negative: internal failed, hidden passed; rates are shares of the trials at "
                           "that trial number.", t["self_test"], single, "self_test.csv"),
        "stopped_fp": _view("stopped_fp", "Attempts stopped on a false positive", "Attempts that stopped because all "
                            "internal tests passed, and how many of them fail the hidden tests.", t["stopped_fp"],
                            single, "stopped_on_false_positive.csv"),
        "resources": _view("resources", "Tokens, cost, model calls and time", "Totals over every recorded trial, "
                           "incomplete attempts included. summed_s adds up every trial's own time over the workers: "
                           "it is not the elapsed time (given above the tables). cost_usd is money spent; "
                           "cached_cost_usd what the answers served by the response cache cost when first made (not "
                           "spent again). unknown = no price for the model (--price, or a price table): never counted as $0.", t["resources"], single,
                           "resources.csv"),
        "agents": _view("agents", "Agents: turns and tool calls", "Strategies whose trials are episodes of a "
                        "tool-using agent, over every recorded trial: episodes, model turns, tool calls by tool, calls "
                        "that did not return ok (refused, failed, timed out, killed), and how the episodes ended "
                        "(submitted, max_turns, token_budget, context_full, no_tool_call).", t["agents"], single,
                        "agents.csv"),
        "stop_reasons": _view("stop_reasons", "Why attempts stopped", "Complete attempts by their final trial's "
                              "stop reason, per strategy." + (
                                  " Did not compile: of those, the attempts whose final program did not compile, by "
                                  "the compiler's status (compile_error, compile_timeout, compile_memory)."
                                  if _compile_failures(t["stop_reasons"]) else ""),
                              _shown_stops(t["stop_reasons"]), single, "stop_reasons.csv"),
        "by_language": _view("by_language", "pass@1 by language", "The run mixes languages: pass@1 with its 95% "
                             "Wilson CI over tasks per language and strategy, on the tasks of that language every strategy "
                             "completed (tasks), over their complete attempts (attempts).",
                             _by_language_shown(t["by_language"]), single, "by_language.csv"),
        "per_task": _per_task_view(sources, single, port),
    }, t


def _cost_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The cost points as shown: pass@1 and its CI, dollars and tokens per task with theirs."""
    if df.empty:
        return df
    out = pd.DataFrame({"strategy": df["strategy"], "pass@1": df["pass"],
                        "pass@1 95% CI": [wording.ci(lo, hi) for lo, hi in zip(df["ci_low"], df["ci_high"])],
                        "usd per task": [wording.money(v) for v in df["usd"]],
                        "usd 95% CI": [f"[{wording.money(lo)}, {wording.money(hi)}]" if pd.notna(lo) else
                                       wording.UNKNOWN for lo, hi in zip(df["usd_ci_low"], df["usd_ci_high"])],
                        "tokens per task": df["tokens"],
                        "tokens 95% CI": [f"[{lo:,.0f}, {hi:,.0f}]" if pd.notna(lo) else wording.DASH
                                          for lo, hi in zip(df["tokens_ci_low"], df["tokens_ci_high"])],
                        "priced": df["priced"], "pareto": df["pareto"], "tasks": df["tasks"]})
    if "run" in df.columns:
        out.insert(0, "run", df["run"])
    return out


def cost_panels(sources: Sequence[Source]) -> list[tuple[str, pd.DataFrame, str]]:
    """One accuracy-against-cost panel per run."""
    return [("" if len(sources) == 1 else s.label, pd.DataFrame(s.numbers.get("cost_points") or []),
             str(s.numbers.get("cost_axis") or "tokens")) for s in sources]


def _pass_at_k_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The pass@k table as shown: pass@k and pass^k side by side, each with its CI."""
    if df.empty:
        return df
    out = pd.DataFrame({"strategy": df["strategy"], "k": df["k"], "pass@k": df["pass"],
                        "pass@k 95% CI": [wording.ci(lo, hi) for lo, hi in zip(df["ci_low"], df["ci_high"])]})
    if "pass_hat" in df.columns:
        out["pass^k"] = df["pass_hat"]
        out["pass^k 95% CI"] = [wording.ci(lo, hi) for lo, hi in zip(df["pass_hat_ci_low"], df["pass_hat_ci_high"])]
    out["tasks"] = df["tasks"]
    if "excluded" in df.columns:
        out["excluded"] = df["excluded"]
    if "run" in df.columns:
        out.insert(0, "run", df["run"])
    return out


def tests_frame(sources: Sequence[Source]) -> pd.DataFrame:
    """tests.csv: one row per test run on a trial's implementation: the attempt's own
    tests (domain agent: their results reached the agent) and the hidden tests (domain
    hidden: measurement only), with status and the seconds it took (blank when the
    record does not say)."""
    rows = []
    for s in sources:
        for r in s.run.records:
            for domain, results in (("agent", r.internal_results), ("hidden", r.hidden_results)):
                for t in results:
                    rows.append({"run": s.label, "task_id": r.task_id, "strategy": r.strategy, "attempt": r.attempt,
                                 "trial": r.trial, "domain": domain, "test": t.test, "status": t.status,
                                 "seconds": getattr(t, "seconds", None)})
    return pd.DataFrame(rows, columns=["run", "task_id", "strategy", "attempt", "trial", "domain", "test", "status",
                                       "seconds"])


def _paired_table(sources: Sequence[Source], across: dict[str, Any] | None = None) -> pd.DataFrame:
    rows = [{"run": s.label, **p} for s in sources for p in s.numbers["paired"]]
    rows += [{"run": p["runs"], **{k: v for k, v in p.items() if k != "runs"}} for p in (across or {}).get("paired", [])]
    cols = ["run", "a", "b", "diff", "ci_low", "ci_high", "p_value", "fixed", "broken", "both", "neither", "pairs",
            "tasks", "excluded", "calls_ratio", "tokens_ratio"]
    return pd.DataFrame(rows, columns=cols)


def task_views(src: Source, port: int = VIEW_PORT) -> list[dict[str, Any]]:
    """Every task's attempts as timelines (harness.rundata.timeline), with their links."""
    by_task = timeline.attempts(src.run.records, src.run.errors, src.frames.strategies)
    return [{"task_id": t, "anchor": task_anchor(t), "view_url": view_url(src.run_dir, port, t),
             "attempts": [{"a": a, "view_url": view_url(src.run_dir, port, t, a.anchor)} for a in atts]}
            for t, atts in sorted(by_task.items())]


def model_text(header: dict[str, Any]) -> str:
    """The model as run.json recorded it: its spec, and the identity the run recorded
    (file sha256 or served model name, engine and version), never a guess."""
    cfg = header.get("config") if isinstance(header.get("config"), dict) else {}
    spec = str(header.get("model") or cfg.get("model") or "?")
    ident = header.get("model_identity") if isinstance(header.get("model_identity"), dict) else {}
    parts = [f"{k} {ident[k]}" for k in ("served_model", "file_sha256", "engine", "engine_version", "slots",
                                          "base_url") if ident.get(k) not in (None, "")]
    return spec + (f" ({', '.join(map(str, parts))})" if parts else " (identity not recorded in run.json)")


def _run_info(src: Source, port: int) -> dict[str, Any]:
    head = src.run.header
    cfg = src.frames.config
    tasks = head.get("tasks") if isinstance(head.get("tasks"), dict) else {}
    git = head.get("git") if isinstance(head.get("git"), dict) else {}
    return {
        "label": src.label, "dir": str(src.run_dir), "created_at": head.get("created_at", ""),
        "model": model_text(head),
        "tasks": f"{tasks.get('name') or tasks.get('spec') or '?'} ({tasks.get('count', '?')} tasks, digest "
                 f"{str(tasks.get('digest', '?'))[:16]})",
        "languages": languages_text(src.numbers),
        "settings": ", ".join(f"{k}={cfg[k]}" for k in ("strategies", "samples", "trials", "k", "temperature", "seed")
                              if k in cfg),
        "provenance": provenance(head), "view_url": view_url(src.run_dir, port),
        "results_dir": str(src.run_dir.parent),
        "git": f"{str(git.get('commit', '?'))[:12]}{' (dirty)' if git.get('dirty') else ''}" if git else "",
        "oracle_feedback": src.numbers["oracle_feedback"],
        "status": src.numbers["status"]["text"], "state": src.numbers["status"]["state"],
        "time": src.numbers["time"]["text"],
        "compute": (src.numbers.get("compute") or {}).get("text") or "",
        "estimate": (src.numbers.get("estimate_check") or {}).get("text") or [],
        "model_calls": wording.model_line(src.numbers.get("model")),
        "task_check": _task_check_text(head),
        "config_json": json.dumps(cfg, indent=2, sort_keys=True, default=str),
        "versions": json.dumps(head.get("versions") or {}, sort_keys=True, default=str),
    }


def _task_check_text(header: dict[str, Any]) -> str:
    """What --check-tasks found before the run ("" when it did not run)."""
    check = header.get("task_check")
    if not isinstance(check, dict):
        return ""
    left = check.get("left_out") or []
    text = (f"{check.get('checked', 0)} tasks checked before the run (reference solution must pass its hidden tests, "
            f"a stub must fail them): {check.get('ok', 0)} ok, {len(left)} broken and left out")
    if check.get("unchecked"):
        text += f", {len(check['unchecked'])} without a reference solution (not checked, kept)"
    return text + "".join(f"; {v.get('task_id')}: {v.get('reason')}" for v in left[:10])


def _env(markdown: bool = False) -> jinja2.Environment:
    """The templates' environment: HTML autoescaped; for Markdown (`markdown`), every
    value written is made plain text there (see _md_text). Sandboxed: the harness's own
    templates only, and no value of a run folder reaches Python through one."""
    env = jinja2.sandbox.SandboxedEnvironment(
        loader=jinja2.PackageLoader("harness", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default_for_string=True),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        finalize=_md_text if markdown else None,
    )
    env.filters["md"] = _md_cell
    env.filters["written"] = _Written  # Markdown the template itself wrote (a table macro's output)
    return env


class _Written(str):
    """Markdown the template wrote, passed through as it is."""


def _md_text(value: Any) -> Any:
    """A value as Markdown shows it and nothing more: Markdown lets raw HTML through
    (`<img onerror=...>` in a task id or a model's text would be live in most
    previews) and makes `[text](url)` a link; entities and a backslash disarm both."""
    if not isinstance(value, str) or isinstance(value, _Written):
        return value
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("](", "]\\(")


def _md_cell(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


# A spreadsheet runs a cell that starts with one of these as a formula (=HYPERLINK(...),
# =cmd|' /C calc'!A0); a task id or a model's text may start so.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_cell(value: Any) -> Any:
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    try:
        float(value)  # "-0.25" is a number, not a formula
        return value
    except ValueError:
        return "'" + value  # shown as text, as spreadsheets do for a leading quote


def _csv_safe(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with every text cell a spreadsheet would run as a formula made plain text."""
    text_columns = [c for c in df.columns if pd.api.types.is_object_dtype(df[c]) or pd.api.types.is_string_dtype(df[c])]
    if not text_columns:
        return df
    out = df.copy()
    for column in text_columns:
        out[column] = out[column].map(_csv_cell)
    return out


def _render(out_dir: Path, sources: Sequence[Source], title: str, view_port: int = VIEW_PORT,
            across: dict[str, Any] | None = None) -> Path:
    single = len(sources) == 1
    out_dir.mkdir(parents=True, exist_ok=True)
    views, tables = _views(sources, single, view_port)
    if across is not None:
        tables["paired"] = _paired_table(sources, across)
        views["paired"] = _view("paired", views["paired"].title, views["paired"].note, tables["paired"], single,
                                "paired.csv", ci=True)
    csvs = {"pass_at_k.csv": tables["pass_at_k"], "pass1_by_trial.csv": tables["by_trial"],
            "compute_curve.csv": tables["compute_curve"], "compute_matched.csv": tables["compute_matched"],
            "paired.csv": tables["paired"], "self_test.csv": tables["self_test"],
            "stopped_on_false_positive.csv": tables["stopped_fp"], "resources.csv": tables["resources"],
            "agents.csv": tables["agents"], "stop_reasons.csv": tables["stop_reasons"],
            "by_language.csv": tables["by_language"],
            "per_task.csv": per_task_frame(sources), "tests.csv": tests_frame(sources),
            "cost_points.csv": tables["cost_points"]}
    head_view, head_df = headline(sources)
    csvs["headline.csv"] = head_df
    for name, df in csvs.items():
        _csv_safe(df).to_csv(out_dir / name, index=False, errors="backslashreplace")
    trial_svg = plots.write_figure(plots.pass1_by_trial_figure(tables["by_trial"]), out_dir, "pass1_by_trial",
                                   "pass1-by-trial")
    compute_svg = plots.write_figure(plots.compute_figure(tables["compute_curve"]), out_dir, "compute", "compute")
    cost_svg = plots.write_figure(plots.cost_figure(cost_panels(sources)), out_dir, "cost", "cost")
    # the same points against model time: the compute a model without a price (or a local one) took
    plots.write_figure(plots.cost_figure([(title, df, "seconds") for title, df, _ in cost_panels(sources)]), out_dir,
                       "cost_time", "cost-time")
    if single:
        (out_dir / "tables.tex").write_text(latex.run_tex(sources[0].numbers), encoding="utf-8",
                                            errors="backslashreplace")
    answers = []
    if across is not None:
        answers.append({"run": "across runs", "lines": across["answer"], "caveats": across["caveats"]})
    answers += [{"run": s.label, "lines": s.numbers["answer"], "caveats": s.numbers["caveats"]} for s in sources]
    context = {
        "title": title, "single": single, "runs": [_run_info(s, view_port) for s in sources], "answers": answers,
        "oracle": [s.label for s in sources if s.numbers["oracle_feedback"]],
        "views": {**views, "headline": head_view},
        "plot_trial": Markup(plots.inline(trial_svg)), "plot_compute": Markup(plots.inline(compute_svg)),
        "plot_cost": Markup(plots.inline(cost_svg)),
        "tasks": task_views(sources[0], view_port) if single else [],
        "generated": f"harness {__version__}",
    }
    html = out_dir / "report.html"
    # Text that is not valid UTF-8 (a lone surrogate a task file carried) is written as
    # its \udXXX escape rather than failing the report.
    for path, template, env in ((html, "report.html.j2", _env()), (out_dir / "report.md", "report.md.j2", _env(True))):
        path.write_text(env.get_template(template).render(context), encoding="utf-8", errors="backslashreplace")
    return html


def write_report(run_dir: Path, view_port: int = VIEW_PORT, doc: dict[str, Any] | None = None) -> Path:
    """Writes report.html, report.md, CSV tables and SVG plots into the run folder and
    returns report.html. `doc`: the run's numbers when the caller has them (the run
    writes summary.json itself); without it they are computed from the folder and
    summary.json is rewritten (`harness report`: rebuilt from run.json, trials.jsonl
    and errors.jsonl, keeping what only the run knew: its session and timings).
    FolderError when the folder cannot be read."""
    run = folder.load(Path(run_dir))
    if doc is None:
        doc = numbers.of_folder(run)
        folder.write_summary(run.run_dir, doc)
    src = source(run, doc=doc)
    return _render(run.run_dir, [src], f"Run {src.label}", view_port)


def default_compare_dir(run_dirs: Sequence[Path]) -> Path:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return Path(run_dirs[0]).resolve().parent / f"compare-{stamp}"


def labelled(run_dirs: Sequence[Path], labels: dict[str, str] | None = None) -> list[Source]:
    """Several runs, labelled by run_id or by `labels` (run folder name -> label); a
    repeated label gets a #n suffix."""
    out: list[Source] = []
    seen: dict[str, int] = {}
    for path in run_dirs:
        run = folder.load(Path(path))
        label = (labels or {}).get(Path(path).name) or str(run.header.get("run_id") or run.run_dir.name)
        n = seen.get(label, 0) + 1
        seen[label] = n
        out.append(source(run, label if n == 1 else f"{label}#{n}"))
    return out


def write_compare(run_dirs: Sequence[Path], out_dir: Path | None = None, view_port: int = VIEW_PORT,
                  labels: dict[str, str] | None = None) -> Path:
    """Several runs side by side in one report (one series per run x strategy);
    `labels` names runs (run folder name -> label) instead of their run ids."""
    sources = labelled(run_dirs, labels)
    across = numbers.compare([(s.label, s.run_dir, s.frames) for s in sources])
    out = Path(out_dir) if out_dir is not None else default_compare_dir(run_dirs)
    return _render(out, sources, "Comparison of " + ", ".join(s.label for s in sources), view_port, across)
