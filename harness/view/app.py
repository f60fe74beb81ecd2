"""The view's web app: Starlette routes over a Catalog of run folders.

Endpoints are plain functions: Starlette runs them in its thread pool, so reading a
large trials.jsonl for one page never stalls the others.

URL scheme (kept stable; the static report links here): see README.md beside this
module. Pages are rendered on the server with jinja2 (autoescaped: model-written text
is always shown as text); the one script, static/view.js, sorts and filters tables and
polls /api/runs/<id>/state to refresh an open page while its run is running.
"""
from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import jinja2
import jinja2.sandbox
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

import pandas as pd

from harness.report import plots
from harness.rundata import folder, timeline, wording
from harness.view import compare as compare_mod
from harness.view import labels, tasksource
from harness.view.guard import TOKEN_HEADER, Guard, Policy
from harness.view.catalog import Catalog, RunEntry

HERE = Path(__file__).resolve().parent
PER_PAGE = 50


def categories_of(numbers: dict[str, Any]) -> list[tuple[str, str]]:
    """The task filters (key, label) as the run's numbers define them: each label says
    exactly what it counts (which strategy passes, which fails)."""
    return [(str(c["key"]), str(c["label"])) for c in numbers.get("categories") or [{"key": "", "label": "all tasks"}]]


def task_flags(task: dict[str, Any]) -> list[str]:
    """A per-task row's category keys: by the first pair and by the headline's effects."""
    return [*task.get("categories", []), *task.get("effect_categories", [])]


def _env() -> jinja2.Environment:
    # sandboxed: what the pages show is a shared run folder's data, and no value of it may
    # reach Python through a template (the view's own templates, never a run's)
    env = jinja2.sandbox.SandboxedEnvironment(
        # the view's own templates, then the report's (the event renderers both use)
        loader=jinja2.FileSystemLoader([str(HERE / "templates"), str(HERE.parent / "templates")]),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pct=wording.pct, num=labels.num, minutes=wording.duration, money=wording.money,
                       label=labels.label, when=labels.when, rate=lambda s: wording.rate_with_ci(
                           s.get("pass@1"), *(s.get("pass@1_ci95") or [None, None])),
                       rate_k=lambda s, key: wording.rate_with_ci(s.get(key), *(s.get(f"{key}_ci95") or [None, None])),
                       model_line=wording.model_line, points=wording.points, pvalue=wording.pvalue,
                       ratio=wording.ratio)
    env.globals.update(task_url=task_url, run_url=run_url, quote=quote, task_flags=task_flags)
    return env


def run_url(run_id: str) -> str:
    return f"/runs/{quote(run_id, safe='')}"


def task_url(run_id: str, task_id: str, **params: Any) -> str:
    query = urlencode({k: v for k, v in params.items() if v is not None})
    return f"{run_url(run_id)}/tasks/{quote(task_id, safe='/')}" + (f"?{query}" if query else "")


class ViewApp:
    """Holds the catalog and renders the pages; `asgi` is the Starlette app behind the
    view's guard (harness.view.guard: local hosts only, nothing another site starts, the
    prompt fragment only with the page's token). `bound`: the host the server listens on."""

    def __init__(self, root: Path, labels_by_run: dict[str, str] | None = None, *, warm: bool = True,
                 bound: str | None = None) -> None:
        self.catalog = Catalog(root, labels_by_run)
        self.policy = Policy.for_host(bound, token_paths=("/prompt",))
        self.env = _env()
        self.env.globals.update(view_token=self.policy.token, token_header=TOKEN_HEADER)
        self.tasks = tasksource.TaskCache()
        routes = [
            Route("/", self.runs_page),
            Route("/runs/{run_id}", self.run_page),
            Route("/runs/{run_id}/tasks", self.tasks_page),
            Route("/runs/{run_id}/tasks/{task_id:path}", self.task_page),
            Route("/runs/{run_id}/prompt", self.prompt_fragment),
            Route("/compare", self.compare_page),
            Route("/study", self.study_page),
            Route("/studies/{name}", self.study_page),
            Route("/api/runs", self.api_runs),
            Route("/api/runs/{run_id}/state", self.api_state),
            Mount("/static", app=StaticFiles(directory=str(HERE / "static")), name="static"),
        ]
        self.asgi = Guard(Starlette(routes=routes, exception_handlers={404: self.not_found}), self.policy)
        if warm:
            threading.Thread(target=self.catalog.warm, name="view-warm", daemon=True).start()

    # ------------------------------------------------------------------ helpers

    def render(self, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        context.setdefault("live_run", None)
        context.setdefault("root", str(self.catalog.root))
        context.setdefault("has_study", (self.catalog.root / "study.json").is_file())
        return HTMLResponse(self.env.get_template(name).render(**context), status_code=status_code)

    async def not_found(self, request: Request, exc: Exception) -> Response:
        detail = getattr(exc, "detail", "") or "no such page"
        return self.render("missing.html.j2", status_code=404, title="Not found", message=str(detail))

    def _entry(self, request: Request) -> RunEntry | None:
        return self.catalog.get(request.path_params["run_id"])

    def _missing_run(self, request: Request) -> HTMLResponse:
        run_id = request.path_params.get("run_id", "")
        return self.render("missing.html.j2", status_code=404, title="No such run",
                           message=f"No run folder named {run_id!r} under {self.catalog.root}.")

    def run_card(self, entry: RunEntry) -> dict[str, Any]:
        """What the runs list and page headers say about a run."""
        numbers = entry.numbers()
        status = entry.status()
        cfg = entry.config
        tasks_info = entry.header.get("tasks") if isinstance(entry.header.get("tasks"), dict) else {}
        return {
            "entry": entry, "numbers": numbers, "status": status,
            "model": labels.model_text(entry.header),
            "task_set": f"{tasks_info.get('name') or tasks_info.get('spec') or cfg.get('tasks') or '?'}",
            "task_count": numbers["tasks"], "strategies": list(numbers["strategies"]),
            "languages": dict(numbers.get("languages") or {}),
            "trials": len(entry.index.rows),
        }

    # ------------------------------------------------------------------ pages

    def runs_page(self, request: Request) -> HTMLResponse:
        cards = []
        for entry in self.catalog.runs():
            try:
                cards.append(self.run_card(entry))
            except Exception as exc:  # noqa: BLE001 - one unreadable run must not hide the others
                cards.append({"entry": entry, "broken": f"{type(exc).__name__}: {exc}"})
        studies = [{"name": name or path.name, "url": "/study" if not name else f"/studies/{quote(name, safe='')}"}
                   for name, path in self.catalog.studies().items()]
        return self.render("runs.html.j2", title="Runs", cards=cards, live_run="*", studies=studies)

    def run_page(self, request: Request) -> HTMLResponse:
        entry = self._entry(request)
        if entry is None:
            return self._missing_run(request)
        card = self.run_card(entry)
        numbers, status = card["numbers"], card["status"]
        trial_svg, compute_svg = entry.plots()
        return self.render(
            "run.html.j2", title=f"Run {entry.label}", card=card, caveats=numbers["caveats"],
            plot_trial=Markup(trial_svg), plot_compute=Markup(compute_svg), plot_cost=Markup(entry.cost_plot()),
            timings=numbers.get("timings") or {},
            settings=labels.settings(entry.config, entry.header), categories=categories_of(numbers),
            counts=_category_counts(numbers),
            error_log=entry.error_log(), errors=entry.errors()[-20:], resumes=entry.resumes(),
            live_run=entry.run_id if status.state == "running" else None,
        )

    def tasks_page(self, request: Request) -> HTMLResponse:
        entry = self._entry(request)
        if entry is None:
            return self._missing_run(request)
        card = self.run_card(entry)
        numbers = card["numbers"]
        category = request.query_params.get("category") or ""
        query = request.query_params.get("q") or ""
        try:
            page = max(1, int(request.query_params.get("page") or 1))
        except ValueError:
            page = 1
        rows, total = task_page(numbers["per_task"], category=category or None, query=query or None,
                                page=page, per_page=PER_PAGE)
        pages = max(1, math.ceil(total / PER_PAGE))
        trials = entry.index.frame()
        wrong_recorded = bool(numbers.get("self_checked")) or (
            bool((trials["wrong_tests"] >= 0).any()) if not trials.empty else False)
        return self.render(
            "tasks.html.j2", title=f"Tasks of {entry.label}", card=card, rows=rows,
            total=total, page=page, pages=pages, category=category, q=query, categories=categories_of(numbers),
            counts=_category_counts(numbers), wrong_recorded=wrong_recorded,
            live_run=entry.run_id if card["status"].state == "running" else None,
        )

    def task_page(self, request: Request) -> HTMLResponse:
        entry = self._entry(request)
        if entry is None:
            return self._missing_run(request)
        task_id = request.path_params["task_id"]
        card = self.run_card(entry)
        attempts = attempts_of(entry, task_id, card["strategies"], entry.errors(), entry.self_checks())
        if not attempts:
            return self.render("missing.html.j2", status_code=404, title="No such task",
                               message=f"Run {entry.run_id} has no trial for task {task_id!r}.")
        task, task_note = self.tasks.get(entry.header, task_id)
        outcome = next((t for t in card["numbers"]["per_task"] if t["task_id"] == task_id), {})
        return self.render(
            "task.html.j2", title=f"{task_id} in {entry.label}", card=card, task_id=task_id, attempts=attempts,
            task=task, task_note=task_note, outcome=outcome,
            live_run=entry.run_id if card["status"].state == "running" else None,
        )

    def prompt_fragment(self, request: Request) -> HTMLResponse:
        """The prompts of one trial, rebuilt from the task and the record (opened on demand)."""
        entry = self._entry(request)
        if entry is None:
            return self._missing_run(request)
        q = request.query_params
        try:
            attempt, trial = int(q.get("attempt", "")), int(q.get("trial", ""))
        except ValueError:
            return HTMLResponse("<p class='note'>attempt and trial must be numbers</p>", status_code=400)
        task_id, strategy = q.get("task", ""), q.get("strategy", "")
        attempts = attempts_of(entry, task_id, [strategy], [])
        chosen = next((a for a in attempts if a.strategy == strategy and a.attempt == attempt), None)
        if chosen is None:
            return HTMLResponse("<p class='note'>no such attempt</p>", status_code=404)
        calls = tasksource.recorded_calls(chosen, trial)
        if calls is not None:
            return self.render("prompt.html.j2", calls=calls, messages=None, note="As recorded: every model call "
                               "of this trial, with the messages exactly as sent")
        task, note = self.tasks.get(entry.header, task_id)
        if task is None:
            return self.render("prompt.html.j2", calls=None, messages=None, note=note)
        messages, how = tasksource.prompts_for(task, chosen, trial, entry.header)
        return self.render("prompt.html.j2", calls=None, messages=messages, note=how)

    def study_page(self, request: Request) -> HTMLResponse:
        """A study's numbers (harness.rundata.study), each cell's from the catalog's own."""
        from harness.rundata import study as study_numbers
        from harness.run.study import StudyError, read_study

        name = request.path_params.get("name", "")
        path = self.catalog.studies().get(name)
        if path is None:
            return self.render("missing.html.j2", status_code=404, title="No such study",
                               message=f"No study folder (study.json) named {name!r} under {self.catalog.root}."
                               if name else f"{self.catalog.root} holds no study (study.json).")
        try:
            data = read_study(path)
        except StudyError as exc:
            return self.render("missing.html.j2", status_code=404, title="No such study", message=str(exc))

        def numbers_of(run_dir: Path) -> dict[str, Any] | None:
            entry = self.catalog.entry_for(run_dir)
            if entry is None:
                return None
            doc = entry.numbers()  # (indexes the run first)
            return doc if entry.index.rows else None

        doc = study_numbers.compute(data, path, numbers_of)
        ids = {c["run_id"]: (self.catalog.entry_for(path / c["run_id"]) if c["run_id"] else None) for c in data["cells"]}
        links = {rid: e.run_id for rid, e in ids.items() if e is not None}
        effects = [dict(e) for e in doc["effects"]]
        forest = plots.inline(plots.forest_svg(pd.DataFrame(effects), salt="-study")) if effects else ""
        panels = [(c["label"], pd.DataFrame(c["cost_points"]), str(c["cost_axis"] or "tokens"))
                  for c in doc["cells"] if c["cost_points"]]
        cost = plots.inline(plots.cost_svg(panels, salt="-study")) if panels else ""
        return self.render("study.html.j2", title=f"Study {doc['name']}", doc=doc, links=links,
                           plot_forest=Markup(forest), plot_cost=Markup(cost),
                           live_run="*" if doc["status"]["state"] == "running" else None)

    def compare_page(self, request: Request) -> HTMLResponse:
        ids = request.query_params.getlist("run")
        result = compare_mod.compare(self.catalog, ids)
        return self.render("compare.html.j2", title="Compare runs", result=result,
                           all_runs=[e.run_id for e in self.catalog.runs()], chosen=ids)

    # ------------------------------------------------------------------ live

    def _state(self, entry: RunEntry) -> dict[str, Any]:
        """Cheap: never waits for an index being built (the lock is not taken)."""
        status = entry.status()
        if entry.indexed:  # never the first, long read of a large run: the warm-up does that
            entry.refresh()
        return {"run": entry.run_id, "trials": len(entry.index.rows), "size": entry.index.size,
                "version": entry.index.version, "status": status.label, "state": status.state,
                "status_text": status.text,
                "indexed": entry.ready}

    def api_state(self, request: Request) -> JSONResponse:
        entry = self._entry(request)
        if entry is None:
            return JSONResponse({"error": "no such run"}, status_code=404)
        return JSONResponse(self._state(entry))

    def api_runs(self, request: Request) -> JSONResponse:
        return JSONResponse({"runs": [self._state(e) for e in self.catalog.runs()]})


def attempts_of(entry: RunEntry, task_id: str, strategies: list[str], errors: list[dict[str, Any]],
                checks: dict[tuple[str, str, int], dict[str, str]] | None = None) -> list[timeline.Attempt]:
    """One task's attempts as timelines (harness.rundata.timeline), reading only its lines."""
    frame = entry.index.frame()
    rows = frame[frame["task_id"] == task_id] if not frame.empty else frame
    records = entry.index.read_records(list(zip(rows["offset"].astype(int), rows["length"].astype(int)))) \
        if not rows.empty else []
    mine = [e for e in errors if str(e.get("task_id")) == task_id]
    return timeline.attempts(records, mine, strategies, checks).get(task_id, [])


def task_page(tasks: list[dict[str, Any]], *, category: str | None, query: str | None, page: int,
              per_page: int = PER_PAGE) -> tuple[list[dict[str, Any]], int]:
    """The numbers' per-task table filtered by category and id search, one page of it,
    and the match count (paging only: every row and flag is the run data's)."""
    rows = tasks
    if category:
        rows = [t for t in rows if category in task_flags(t)]
    if query:
        q = query.lower()
        rows = [t for t in rows if q in t["task_id"].lower()]
    start = max(0, (page - 1) * per_page)
    return rows[start:start + per_page], len(rows)


def _category_counts(numbers: dict[str, Any]) -> dict[str, int]:
    out = {"": len(numbers["per_task"])}
    for key, _ in categories_of(numbers)[1:]:
        out[key] = sum(1 for t in numbers["per_task"] if key in task_flags(t))
    return out


def create_app(root: Path, labels_by_run: dict[str, str] | None = None, *, warm: bool = True,
               bound: str | None = None) -> Guard:
    """The ASGI app serving the runs under `root` (a results folder or one run folder)."""
    return ViewApp(Path(root), labels_by_run, warm=warm, bound=bound).asgi
