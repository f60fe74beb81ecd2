"""The view never answers 500 for a run folder it can list: every page of odd run
folders (empty, no finished attempt, only errors, with-example, damaged files, fields of
the wrong type) answers, through the real server on 127.0.0.1."""
from __future__ import annotations

import json
import random
import urllib.parse
from pathlib import Path

from viewruns import get, header, trial, two_strategy_records, write_run


def _error_line(task: str, strategy: str = "reflexion", **extra) -> str:
    row = {"schema": 1, "kind": "model_error", "task_id": task, "strategy": strategy, "attempt": 1, "trial": 1,
           "role": "actor", "error": "openai:x@http://127.0.0.1:9/v1: cannot connect (3 attempts)",
           "at": "2026-12-01T00:00:00+00:00", **extra}
    return json.dumps(row) + "\n"


def odd_folders(root: Path) -> list[str]:
    """Run folders a user can end up with; returns their names."""
    (root / "empty").mkdir(parents=True)
    (root / "header-only").mkdir()
    (root / "header-only" / "run.json").write_text(json.dumps(header("header-only")))
    write_run(root / "no-trials", header("no-trials"), [], summary=False)
    only = write_run(root / "only-errors", header("only-errors"), [], summary=False)
    (only / "errors.jsonl").write_text(_error_line("T/fix") + _error_line("T/brk") + _error_line("T/fix", "baseline"))
    example = trial("T/fix", "reflexion", 1, final=True, internal=False, hidden=False, stop="budget",
                    run_id="with-example", testgen={"from_public_examples": True, "kept": 1})
    write_run(root / "with-example", header("with-example", tasks=["T/fix"], strategy="reflexion",
                                            strategies=["reflexion"]), [example])
    for name, text in (("bad-json", "{not json"), ("list-header", "[1, 2]"), ("string-header", '"run"')):
        (root / name).mkdir()
        (root / name / "run.json").write_text(text)
        (root / name / "trials.jsonl").write_text("")
    damaged = write_run(root / "damaged-lines", header("damaged-lines"), two_strategy_records("damaged-lines"))
    with (damaged / "trials.jsonl").open("a") as fh:
        fh.write('{"schema": 2, "task_id": 5}\nnot json\n[1]\n{"schema": 2}\n')
    (damaged / "summary.json").write_text("[]")
    (damaged / "errors.jsonl").write_text('{"kind": 5}\n[]\n{"task_id": null, "strategy": [1], "at": 7}\n'
                                          + _error_line("T/none"))
    (damaged / "error.log").write_bytes(b"--- the run stopped\n\xff\xfe not utf-8\n")
    return sorted(p.name for p in root.iterdir())


def _pages(run: str) -> list[str]:
    quoted = urllib.parse.quote(run, safe="")
    base = f"runs/{quoted}"
    return [base, f"{base}/tasks", f"{base}/tasks?category=error", f"{base}/tasks?category=fixed&page=9",
            f"{base}/tasks/T/fix", f"{base}/tasks/T/fix?strategy=reflexion&attempt=1", f"{base}/tasks/T/none",
            f"{base}/tasks/nope", f"{base}/prompt?task=T/fix&strategy=reflexion&attempt=1&trial=1",
            f"api/runs/{quoted}/state", f"compare?runs={quoted}&runs=run-a"]


def _no_500(server, runs: list[str]) -> dict[str, int]:
    statuses = {}
    token = {"X-View-Token": server.app.policy.token}  # what the view's own pages send for a prompt
    for url in ["", "api/runs", "compare", *(p for r in runs for p in _pages(r))]:
        status, body = get(server.url + url, token)
        assert status < 500, (url, status, body[-2000:])
        statuses[url] = status
    return statuses


def test_every_page_of_odd_run_folders_answers(tmp_path, serve):
    root = tmp_path / "results"
    write_run(root / "run-a", header(), two_strategy_records())
    runs = odd_folders(root)
    server = serve(root)
    statuses = _no_500(server, runs)
    # The folders with a run.json are runs the view shows, with pages that answer 200.
    for run in ("header-only", "no-trials", "only-errors", "with-example", "bad-json", "damaged-lines"):
        assert statuses[f"runs/{run}"] == 200, run
    status, html = get(server.url + "runs/only-errors")
    assert "No trial recorded yet" in html and "cannot connect" in html
    status, html = get(server.url + "runs/bad-json")
    assert "run.json is missing or not a JSON object" in html
    status, html = get(server.url + "runs/with-example/tasks/T/fix")
    assert status == 200 and "the task's public examples (1); the test writer was not called" in html


def test_header_fields_of_any_type_never_make_a_page_fail(tmp_path, serve):
    rng = random.Random(7)
    values = [None, 0, 7, -1, 1.5, "", "x", "2026-13-45", [], ["a"], [1, 2], {}, {"a": 1}, True]
    root = tmp_path / "results"
    keys = sorted(header())
    names = []
    for i in range(40):
        head = header(f"fuzz-{i}")
        for key in rng.sample(keys, rng.randint(1, 3)):
            head[key] = rng.choice(values)
        if rng.random() < 0.5:  # the config's own fields too
            cfg = dict(head["config"]) if isinstance(head.get("config"), dict) else {}
            for key in rng.sample(sorted(header()["config"]), 2):
                cfg[key] = rng.choice(values)
            head["config"] = cfg
        if rng.random() < 0.4 and isinstance(head.get("tasks"), dict):
            listed = dict(head["tasks"])
            for key in rng.sample(sorted(listed), 2):
                listed[key] = rng.choice(values)
            head["tasks"] = listed
        if rng.random() < 0.3:
            head[rng.choice(["resumes", "recall", "model_identity", "sandbox_identity", "prompts", "memory",
                             "versions", "git", "host", "engine", "resumed", "model_check"])] = rng.choice(values)
        folder = write_run(root / f"fuzz-{i}", head, two_strategy_records(f"fuzz-{i}"), summary=rng.random() < 0.5)
        if rng.random() < 0.3:
            summary = rng.choice([{"schema": 2, "session": rng.choice(values), "timings": rng.choice(values)},
                                  rng.choice(values)])
            (folder / "summary.json").write_text(json.dumps(summary))
        names.append(f"fuzz-{i}")
    write_run(root / "run-a", header(), two_strategy_records())
    _no_500(serve(root), names)
