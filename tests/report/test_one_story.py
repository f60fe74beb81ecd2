"""One run, told the same way everywhere (issues 19.2, 20.8, 21.8).

The synthetic run (synthrun.py: five tasks, two samples, an incomplete reflexion
attempt, a model error) is made an oracle-feedback run with a resumed part: run.json
records a resume, errors.jsonl one harness error that the resumed session redid and
one that is still open. It is rendered through the CLI's table, `harness report`
(report.md, report.html) and every page of `harness view`; each number of the
strategy lines, each sentence of the answer and the caveats, the status and the two
times (elapsed, summed over workers) must read the same everywhere.
"""
from __future__ import annotations

import html as html_lib
import json
import os
import re
import time
from pathlib import Path

import msgspec
import pytest
from starlette.testclient import TestClient

from harness.rundata import numbers, wording
from harness.rundata.folder import load
from harness.report.table import format_summary
from harness.view.app import create_app
from synthrun import RUN_ID, header, run_command, synthetic_records, write_run


def _error(task: str, strategy: str, attempt: int, kind: str = "model_error") -> str:
    return json.dumps({"schema": 1, "kind": kind, "task_id": task, "strategy": strategy, "attempt": attempt,
                       "trial": 1, "role": "actor", "error": "model error: 503 after 5 retries",
                       "at": "2026-11-30T00:03:00Z"}) + "\n"


@pytest.fixture
def story(tmp_path: Path) -> dict:
    records = synthetic_records()
    # the trials span 7.5 minutes; each took 0.5 s of its worker's time
    records[-1] = msgspec.structs.replace(records[-1], finished_at="2026-11-30T00:07:30Z")
    head = header(oracle_feedback=True)
    head["resumes"] = [{"at": "2026-11-30T00:05:00Z", "trials_before": 30, "command": ["harness", "run"]}]
    run = write_run(tmp_path / "results" / RUN_ID, head, records)
    (run / "errors.jsonl").write_text(_error("HumanEval/1", "baseline", 2)      # redone: baseline /1 #2 is complete
                                      + _error("HumanEval/2", "reflexion", 2), encoding="utf-8")  # still open
    assert run_command(["report", str(run)]) == 0
    doc = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    for f in run.iterdir():  # written an hour ago: no session is writing this run now
        os.utime(f, (time.time() - 3600, time.time() - 3600))
    client = TestClient(create_app(run.parent, warm=False), base_url="http://127.0.0.1")
    pages = {}
    for path in ("/", f"/runs/{RUN_ID}", f"/runs/{RUN_ID}/tasks", f"/runs/{RUN_ID}/tasks/HumanEval/2",
                 f"/compare?run={RUN_ID}&run={RUN_ID}"):
        resp = client.get(path)
        assert resp.status_code == 200, path
        pages[path] = _text(resp.text)
    state = client.get(f"/api/runs/{RUN_ID}/state").json()
    return {"run": run, "doc": doc, "cli": format_summary(doc),
            "md": (run / "report.md").read_text(encoding="utf-8"),
            "html": _text((run / "report.html").read_text(encoding="utf-8")), "pages": pages, "state": state}


def _text(page: str) -> str:
    """A page's text: tags dropped, entities read, white space folded."""
    page = re.sub(r"<(script|style|svg)\b.*?</\1>", " ", page, flags=re.S)
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def _md(text: str) -> str:
    return " ".join(text.replace("**", "").split())


def test_the_numbers_are_computed_once(story):
    doc, run = story["doc"], story["run"]
    again = numbers.of_folder(load(run))
    assert again == doc  # summary.json is the numbers' serialised form, nothing added on the side
    assert doc["oracle_feedback"] and doc["samples"] == 2
    assert any(p["kind"] == "oracle" for p in doc["compute_curve"])  # the baseline's best of 2: marked oracle
    assert doc["strategies"]["reflexion"]["incomplete_attempts"] == 1


def test_answer_and_caveats_read_the_same_everywhere(story):
    doc = story["doc"]
    sentences = doc["answer"] + [c["text"] for c in doc["caveats"]]
    keys = {c["key"] for c in doc["caveats"]}
    assert {"oracle", "few_tasks", "excluded", "incomplete", "samples", "errors", "errors_redone",
            "resumed", "unusable_answers"} <= keys
    run_page = story["pages"][f"/runs/{RUN_ID}"]
    for text in sentences:
        assert text in story["cli"], text
        assert text in _md(story["md"]), text
        assert text in story["html"], text
        assert text in run_page, text
    # one format for p-values, signs and ratios in every answer line
    for line in doc["answer"]:
        assert "McNemar p = " in line and "\u2212" in line and "-" not in line.split(":", 1)[1]


def test_status_agrees_everywhere(story):
    doc = story["doc"]
    status = doc["status"]
    # 29 of 30 attempts complete, nobody writing the run, no session recorded its end
    assert status["state"] == "interrupted" and status["errors_redone"] == 1
    assert status["errors_open"] == {"model_error": 1}
    assert status["resume_command"] == f"python -m harness run --resume {story['run']}"
    text = status["text"]
    assert f"status: {text}" in story["cli"]
    assert f"status: {text}" in _md(story["md"]) and text in story["html"]
    assert text in story["pages"][f"/runs/{RUN_ID}"]
    assert story["state"]["state"] == "interrupted" and story["state"]["status_text"] == text
    runs = story["pages"]["/"]
    assert "interrupted, resumed" in runs and "interrupted, resumed" in story["pages"][f"/runs/{RUN_ID}"]


def test_elapsed_and_summed_times_are_both_shown_and_named(story):
    doc = story["doc"]
    t = doc["time"]
    assert t["elapsed_s"] == 450.0 and t["summed_s"] == pytest.approx(0.5 * len(synthetic_records()))
    assert t["text"].startswith("elapsed 7.5 min (from the run's start to its last trial, over 2 sessions); "
                                "trial time summed over workers 26 s")
    for where in (story["cli"], _md(story["md"]), story["html"], story["pages"][f"/runs/{RUN_ID}"],
                  story["pages"]["/"]):
        assert t["text"] in where
    # per strategy: summed time, under a name that says so, in the CLI, the report and the view
    side = _md(story["md"])
    run_page = story["pages"][f"/runs/{RUN_ID}"]
    assert "summed time" in story["cli"] and "trial time summed over workers" in side
    assert "trial time summed over workers" in run_page
    for name, s in doc["strategies"].items():
        assert wording.duration(s["summed_s"]) in story["cli"]
        assert wording.duration(s["summed_s"]) in side and wording.duration(s["summed_s"]) in run_page


def test_strategy_numbers_read_the_same_everywhere(story):
    doc = story["doc"]
    cli, md, run_page, runs = story["cli"], _md(story["md"]), story["pages"][f"/runs/{RUN_ID}"], story["pages"]["/"]
    lines = cli.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("strategy "))
    cli_rows = {line.split()[0]: line for line in lines[start + 2:start + 2 + len(doc["strategies"])]}
    view_rows = {name: run_page[run_page.index(f" {name} ", run_page.index("strategy pass@1 95% CI")):]
                 for name in doc["strategies"]}
    for name, s in doc["strategies"].items():
        lo, hi = s["pass@1_ci95"]
        rate = wording.rate_with_ci(s["pass@1"], lo, hi)
        assert rate in cli_rows[name], name  # CLI: "50.0% [0.0%, 100.0%]"
        assert rate in md and rate in story["html"], name  # report: the side-by-side table
        row = view_rows[name]
        assert row.startswith(f" {name} {wording.pct(s['pass@1'])} {wording.ci(lo, hi)} "), name
        assert f"{name}: {wording.pct(s['pass@1'])} {wording.ci(lo, hi)}" in runs
        cells = row.split()
        counts = [str(s["tasks_scored"]), f"{s['calls_per_attempt']:,.1f}", str(s["tasks_completed"]),
                  str(s["attempts"]), str(s["incomplete_attempts"]), str(s["model_calls"]), str(s["cached_calls"]),
                  f"{s['tokens']:,}"]
        assert cells[4:12] == counts, (name, cells)
        for value in (str(s["model_calls"]), f"{s['input_tokens']:,}", f"{s['output_tokens']:,}",
                      str(s["errors"]), str(s["incomplete_attempts"])):
            assert value in cli_rows[name].split(), (name, value)
        # pass@1 by trial: the same percentages in the CLI's table and the report's; the
        # baseline (one trial) has a value at t=1 only, in both
        for t, x in enumerate(s["pass@1_by_trial"], 1):
            assert f"pass@1 at trial {t} |" in story["md"]
            assert wording.pct(x) in cli
    by_trial_cli = [line.split() for line in cli.splitlines() if line.startswith("baseline ")][-1]
    assert by_trial_cli == ["baseline", wording.pct(doc["strategies"]["baseline"]["pass@1"])]


def test_per_task_cells_read_the_same_in_the_report_and_the_view(story):
    doc = story["doc"]
    tasks_page = story["pages"][f"/runs/{RUN_ID}/tasks"]
    md = story["md"]
    for t in doc["per_task"]:
        for name, c in t["strategies"].items():
            if c["attempts"]:
                assert f"{c['passed']}/{c['attempts']}" in tasks_page
                assert f"{c['passed']}/{c['attempts']}" in md
    # the incomplete attempt reads as such on the task page and in the report's details
    task_page = story["pages"][f"/runs/{RUN_ID}/tasks/HumanEval/2"]
    assert "incomplete: not scored" in task_page and "incomplete (no final trial): not scored" in story["html"]


def test_a_run_compared_with_itself_reads_the_same_in_the_cli_report_and_the_view(story, tmp_path: Path):
    out = tmp_path / "cmp"
    assert run_command(["compare", str(story["run"]), str(story["run"]), "--out", str(out)]) == 0
    report = _text((out / "report.html").read_text(encoding="utf-8"))
    view = story["pages"][f"/compare?run={RUN_ID}&run={RUN_ID}"]
    lines = re.findall(r"reflexion \(synthetic-run\) \u2212 reflexion \(synthetic-run#2\): [^;]*;[^;]*;[^<]*?calls",
                       report)
    assert lines and all(line in view for line in lines)
    same = "synthetic-run and synthetic-run#2 are the same run folder: their difference is zero by construction."
    assert same in report and same in view
    assert "+0.0 points" in lines[0]
