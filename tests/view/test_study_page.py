"""The view's study page: a study folder's cells as runs, the study's numbers (each cell's
own) with its effects and forest plot; from a results folder, its studies listed."""
from __future__ import annotations

import json
import re
from pathlib import Path

from test_headline import ORDER, PLAN, records
from viewruns import get, header, write_run


def make_study(root: Path) -> Path:
    study = root / "st"
    cells = []
    for model in ("scripted:a", "scripted:b"):
        run_id = f"{model.split(':')[1]}--tasks-0000"
        write_run(study / run_id, header(run_id, tasks=list(PLAN), strategy="all", strategies=list(ORDER),
                                         model=model), records(ORDER, run_id))
        cells.append({"model": model, "tasks": "jsonl:none.jsonl", "run_id": run_id, "state": "complete"})
    spec = {"name": "st", "models": ["scripted:a", "scripted:b"], "tasks": ["jsonl:none.jsonl"], "strategy": "all",
            "settings": {"trials": 3}, "out": None}
    (study / "study.json").write_text(json.dumps({"schema": 1, "name": "st", "spec": spec, "cells": cells}))
    return study


def test_a_study_folder_has_a_study_page(tmp_path: Path, serve):
    study = make_study(tmp_path / "results")
    server = serve(study)
    status, html = get(server.url + "study")
    assert status == 200
    lines = re.findall(r'<p class="topline small">(.*?)</p>', html)
    assert len(lines) == 2 and lines[0].startswith("scripted:a × jsonl:none.jsonl: The lesson&#39;s own effect")
    effects = re.findall(r'<tr data-effect="([a-z]+)">', html)
    assert effects == ["isolates", "rival", "total"] * 2
    assert 'id="plot-forest"' in html and html.count("<svg") == 2  # the forest plot and accuracy against cost
    links = re.findall(r'href="(/runs/[^"]+)"', html)
    assert "/runs/a--tasks-0000" in links
    assert get(server.url + "runs/a--tasks-0000")[0] == 200
    _, runs = get(server.url)
    assert '<a href="/study">Study</a>' in runs


def test_a_results_folder_lists_its_studies_and_their_cells(tmp_path: Path, serve):
    root = tmp_path / "results"
    make_study(root)
    server = serve(root)
    _, runs = get(server.url)
    assert '<p class="tools" id="studies">Studies: <a href="/studies/st">st</a></p>' in runs
    status, html = get(server.url + "studies/st")
    assert status == 200 and "/runs/st~a--tasks-0000" in html
    assert get(server.url + "runs/st~a--tasks-0000")[0] == 200
    assert get(server.url + "studies/nope")[0] == 404
    assert get(server.url + "study")[0] == 404
