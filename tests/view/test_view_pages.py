"""`harness view` through its real server on 127.0.0.1: pages, filters, compare, live data."""
from __future__ import annotations

import json
import re
import time
import urllib.parse
from pathlib import Path

import pytest

from harness.cli import main as harness_main
from viewruns import CODE_V2, append, get, header, trial, two_strategy_records, write_run


def _text(html: str) -> str:
    """Visible text, roughly: tags dropped, whitespace folded, entities kept as written."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_runs_list_newest_first_with_status(results: Path, serve, tmp_path: Path):
    write_run(results / "run-b", header("run-b", created_at="2026-12-02T00:00:00+00:00"), two_strategy_records("run-b"),
              summary=False)
    (results / "not-a-run").mkdir()
    server = serve(results)
    status, html = get(server.url)
    assert status == 200
    order = re.findall(r'data-run="([^"]+)"', html)
    assert order == ["run-b", "run-a"]  # newest first; the folder without run.json is not a run
    rows = dict(zip(order, html.split('data-run="')[1:]))
    assert "s-complete" in rows["run-a"]  # summary.json written after the last trial
    assert "s-running" in rows["run-b"]  # no summary, trials written just now
    assert "reflexion: <b>50.0%</b>" in rows["run-a"]


def test_run_page_answer_first(results: Path, serve):
    server = serve(results)
    status, html = get(server.url + "runs/run-a")
    assert status == 200
    top = re.search(r'<p class="topline">(.*?)</p>', html, re.S).group(1)
    # reflexion 2/4 against baseline 2/4: T/fix fixed, T/brk broken; calls (4+2+2+6)/4 against 1
    assert top.startswith("Total, against baseline (plain sampling): reflexion − baseline: +0.0 points [95% CI")
    assert "McNemar p = 1; fixed 1, broken 1 of 4 tasks; 3.5× the calls" in top
    # reflexion and baseline alone: the line says the difference includes test feedback's own effect
    assert "this difference includes the effect of everything feedback does too (retry with test feedback" in top
    assert "run feedback beside them (--strategy all) to isolate the lesson&#39;s own effect" in top
    assert html.index('class="topline"') < html.index('id="caveats"') < html.index('id="plot-trial"')
    caveats = _text(re.search(r'<ul class="caveats" id="caveats">(.*?)</ul>', html, re.S).group(1))
    assert "Few tasks for the effect size: 4 shared tasks; the 95% CI of reflexion − baseline spans" in caveats
    assert html.count("<svg") == 3  # every plot inline: by trial, against compute, against cost
    # each column of the strategies table says its basis
    assert re.search(r'<th colspan="4" id="basis-shared">on the 4 shared tasks \(compared\)</th>', html)
    assert '<th colspan="10" id="basis-run">whole run: every task, every recorded trial</th>' in html
    assert "model_calls" not in _text(html)  # human labels, not field names


def test_caveats_for_oracle_errors_and_crash(tmp_path: Path, serve):
    root = tmp_path / "results"
    run = write_run(root / "run-o", header("run-o", oracle_feedback=True), two_strategy_records("run-o"))
    (run / "errors.jsonl").write_text(json.dumps({
        "schema": 1, "kind": "model_error", "task_id": "T/fix", "strategy": "reflexion", "attempt": 2, "trial": 1,
        "role": "actor", "error": "ModelError: 529 overloaded", "at": "2026-12-01T00:09:00+00:00"}) + "\n{torn",
        encoding="utf-8")
    (run / "error.log").write_text("Traceback (most recent call last):\nSandboxUnavailable: engine gone\n")
    server = serve(root)
    _, html = get(server.url + "runs/run-o")
    red = re.findall(r'<li class="cv-red"[^>]*>(.*?)</li>', html, re.S)
    assert len(red) == 1 and "Oracle feedback" in red[0]
    text = _text(html)
    assert "1 harness error in errors.jsonl left attempts unfinished (model error: 1)." in text
    assert "The run stopped on an error at least once (error.log holds the traceback)." in text
    assert "ModelError: 529 overloaded" in text and "SandboxUnavailable: engine gone" in text


def test_task_table_filters_search_and_paging(tmp_path: Path, serve):
    root = tmp_path / "results"
    write_run(root / "run-a", header(), two_strategy_records())
    server = serve(root)
    base = server.url + "runs/run-a/tasks"

    def ids(query: str) -> list[str]:
        status, html = get(base + query)
        assert status == 200
        return re.findall(r'/runs/run-a/tasks/(T/[a-z]+)"', html)

    assert ids("") == ["T/both", "T/brk", "T/fix", "T/none"]
    assert ids("?category=fixed") == ["T/fix"]
    assert ids("?category=broken") == ["T/brk"]
    assert ids("?category=both_pass") == ["T/both"]
    assert ids("?category=both_fail") == ["T/none"]
    assert ids("?category=false_positive") == ["T/brk"]
    assert ids("?category=wrong_tests") == ["T/none"]
    assert ids("?q=BR") == ["T/brk"]

    many = [trial(f"P/{i:03d}", "baseline", 1, final=True, internal=None, hidden=i % 2 == 0, stop="single_sample")
            for i in range(120)]
    write_run(root / "run-p", header("run-p", strategies=["baseline"]), many)
    _, html = get(server.url + "runs/run-p/tasks?page=3")
    shown = re.findall(r'/runs/run-p/tasks/(P/\d+)"', html)
    assert shown == [f"P/{i:03d}" for i in range(100, 120)]
    assert "page 3 of 3" in html


def test_attempt_timeline(results: Path, serve):
    server = serve(results)
    status, html = get(server.url + "runs/run-a/tasks/T/none")
    assert status == 200
    trials = html.split('<li class="trial"')[1:]
    assert len(trials) + 1 == len(html.split('<li class="trial"')) and len(trials) == 4  # 3 reflexion + 1 baseline
    t1, t2, t3 = trials[:3]
    assert 'class="d-add">+    return x + 1' in t2 and 'class="d-del">-    return x - 1' in t2
    assert "unchanged: the same code as trial 2" in t3 and "unchanged" not in t2
    assert "Lesson written at the start of this trial, about trial 1:" in t2 and "try adding" in t2
    assert "Feedback on trial 1:" in t2 and "got 0 (trial 1)" in t2  # what the Actor saw: trial 1's feedback
    assert "wrong: the reference solution fails it" in t1 and t1.count("wrong: the reference") == 1
    assert "AssertionError: got 4" in t1  # the hidden test's detail
    assert "never shown to the agent" in html


def test_task_page_escapes_model_text(tmp_path: Path, serve):
    root = tmp_path / "results"
    evil = "def f(x):\n    return '</pre><script>alert(1)</script>'\n"
    write_run(root / "run-e", header("run-e"), [trial("T/fix", "reflexion", 1, final=True, internal=True, hidden=False,
                                                      code=evil, stop="internal_pass", run_id="run-e")])
    server = serve(root)
    _, html = get(server.url + "runs/run-e/tasks/T/fix")
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html


def test_compare_warns_and_pairs(tmp_path: Path, serve):
    root = tmp_path / "results"
    write_run(root / "run-a", header(), two_strategy_records())
    better = [dict(r, hidden_passed=True) if r["strategy"] == "reflexion" and r["final"] else r
              for r in two_strategy_records("run-b")]
    write_run(root / "run-b", header("run-b"), better)
    other = [r for r in two_strategy_records("run-c") if r["task_id"] != "T/none"]
    write_run(root / "run-c", header("run-c", tasks=["T/fix", "T/brk", "T/both"], digest="sha256:other"), other)
    server = serve(root, {"run-b": "better"})

    _, html = get(server.url + "compare?run=run-a&run=run-b")
    assert "compare-warnings" not in html
    top = _text(re.search(r'<p class="topline small">(.*?)</p>', html, re.S).group(1))
    # first run minus the later one, as `harness compare`: run-a's reflexion passes 2/4
    # against run-b's 4/4: -50 points, 2 broken; every task is shared, none left out
    assert top.startswith("reflexion (run-a) − reflexion (better): \u221250.0 points") and "fixed 0, broken 2 of 4" in top
    left_out = _text(re.search(r'<p class="note excluded">(.*?)</p>', html, re.S).group(1))
    assert left_out.startswith("0 of 4 tasks left out")
    differs = re.findall(r'<tr class="differs"><td class="txt">([^<]+)</td>', html)
    assert differs == ["T/brk", "T/none"]  # reflexion's verdict changed between the runs

    _, html = get(server.url + "compare?run=run-a&run=run-a")
    assert "are the same run folder: their difference is zero by construction" in html
    assert "+0.0 points" in html  # the statistics, as `harness compare` gives them

    _, html = get(server.url + "compare?run=run-a&run=run-c")
    warnings = _text(re.search(r'id="compare-warnings">(.*?)</ul>', html, re.S).group(1))
    assert "ran different task sets (4 and 3 tasks, 3 in common)" in warnings and "1 of 4 tasks are not in every run" in warnings
    left_out = _text(re.search(r'<p class="note excluded">(.*?)</p>', html, re.S).group(1))
    assert left_out.startswith("1 of 4 tasks left out")  # T/none: only run-a's task list has it


def test_live_run_gains_trials(tmp_path: Path, serve):
    root = tmp_path / "results"
    records = two_strategy_records()
    run = write_run(root / "run-a", header(), records[:3], summary=False)
    with (run / "trials.jsonl").open("a") as fh:
        fh.write(json.dumps(records[3])[:40])  # a torn line: a trial being written
    server = serve(root)
    _, html = get(server.url + "runs/run-a")
    assert 'data-live-run="run-a"' in html
    state = json.loads(get(server.url + "api/runs/run-a/state")[1])
    assert state["trials"] == 3 and state["state"] == "running"
    with (run / "trials.jsonl").open("a") as fh:
        fh.write(json.dumps(records[3])[40:] + "\n")
    append(run, records[4:])
    state = json.loads(get(server.url + "api/runs/run-a/state")[1])
    assert state["trials"] == len(records)
    _, html = get(server.url + "runs/run-a")
    assert "fixed 1, broken 1 of 4 tasks" in html


def test_task_ids_with_slashes_and_unknown_pages(results: Path, serve):
    server = serve(results)
    quoted = urllib.parse.quote("T/fix", safe="")
    assert get(server.url + f"runs/run-a/tasks/{quoted}")[0] == 200
    assert get(server.url + "runs/nope")[0] == 404
    assert get(server.url + "runs/run-a/tasks/T/nope")[0] == 404


def test_view_command_bad_input(tmp_path: Path, capsys):
    assert harness_main(["view", str(tmp_path / "missing")]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert harness_main(["view", str(tmp_path), "--label", "oops"]) == 2
    assert "expected RUN=NAME" in capsys.readouterr().err


@pytest.mark.parametrize("schema", [1, 2])
def test_lesson_placement_by_schema(tmp_path: Path, serve, schema: int):
    root = tmp_path / "results"
    recs = [trial("T/fix", "reflexion", 1, final=False, internal=False, hidden=False, schema=schema,
                  lesson="about trial 1" if schema == 1 else None),
            trial("T/fix", "reflexion", 2, final=True, internal=True, hidden=True, code=CODE_V2, stop="internal_pass",
                  schema=schema, lesson="about trial 1" if schema == 2 else None)]
    write_run(root / "run-s", header("run-s"), recs)
    server = serve(root)
    _, html = get(server.url + "runs/run-s/tasks/T/fix")
    t1, t2 = html.split('<li class="trial"')[1:3]
    holder = t1 if schema == 1 else t2
    assert "about trial 1" in holder and "about trial 1" not in (t2 if schema == 1 else t1).replace(
        "about trial 1:", "")
    time.sleep(0)  # keep the parametrised cases independent of order


def test_unit_exception_log_is_not_a_stopped_run(tmp_path: Path, serve):
    root = tmp_path / "results"
    run = write_run(root / "run-u", header("run-u"), two_strategy_records("run-u"))
    (run / "errors.jsonl").write_text(json.dumps({
        "schema": 1, "kind": "unit_exception", "task_id": "T/extra", "strategy": "reflexion", "attempt": 1,
        "trial": 1, "role": None, "error": "KeyError: 'x'", "at": "2026-12-01T00:09:00+00:00"}) + "\n")
    (run / "error.log").write_text("--- 2026-12-01T00:09:00 T/extra reflexion attempt 1 trial 1\nTraceback ...\n")
    server = serve(root)
    _, html = get(server.url + "runs/run-u")
    text = _text(html)
    assert "stopped on an error" not in text
    assert "1 harness error in errors.jsonl left attempts unfinished (unit exception: 1)." in text
    assert "1 incomplete attempt (1 reflexion): never scored as failures." in text  # known from errors.jsonl alone
    _, html = get(server.url + "runs/run-u/tasks?category=error")
    assert re.findall(r'/runs/run-u/tasks/(T/[a-z]+)"', html) == ["T/extra"]  # no trial, yet listed
    status, html = get(server.url + "runs/run-u/tasks/T/extra")
    assert status == 200 and "incomplete: not scored" in html and "KeyError: &#39;x&#39;" in html


@pytest.mark.parametrize("backend", ["process", pytest.param("docker", marks=pytest.mark.docker)])
def test_check_self_tests_marks_wrong_ones(tmp_path: Path, serve, backend: str, sandbox_opener):
    from harness.view import selfcheck

    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text(json.dumps({"task_id": "T/fix", "prompt": 'def f(x):\n    """x + 1"""\n',
                                     "entry_point": "f", "tests": ["assert f(5) == 6"],
                                     "canonical_solution": "def f(x):\n    return x + 1\n"}) + "\n")
    head = header("run-c", tasks=["T/fix"])
    head["tasks"]["spec"] = f"jsonl:{task_file}"
    recs = [trial("T/fix", "reflexion", 1, final=True, internal=True, hidden=True, code=CODE_V2,
                  stop="internal_pass", run_id="run-c")]
    recs[0]["internal_tests"] = ["assert f(1) == 2", "assert f(0) == 7"]  # the second is wrong
    recs[0]["internal_results"] = [{"test": t, "status": "passed", "detail": ""} for t in recs[0]["internal_tests"]]
    root = tmp_path / "results"
    run = write_run(root / "run-c", head, recs)
    sandbox = sandbox_opener(backend)
    try:
        checked, wrong, note = selfcheck.check_run(run, sandbox)
    finally:
        sandbox.close()
    assert (checked, wrong, note) == (2, 1, "")
    server = serve(root)
    _, html = get(server.url + "runs/run-c/tasks?category=wrong_tests")
    assert re.findall(r'/runs/run-c/tasks/(T/[a-z]+)"', html) == ["T/fix"]
    _, html = get(server.url + "runs/run-c/tasks/T/fix")
    rows = re.findall(r"<tr class=\"t-\w+\"><td><code>(.*?)</code>(.*?)</td>", html)
    assert [(test, "wrong: the reference" in rest) for test, rest in rows] == [
        ("assert f(1) == 2", False), ("assert f(0) == 7", True)]


def test_timeline_shows_recalled_lessons_with_score_and_source_task(tmp_path: Path, serve):
    root = tmp_path / "results"
    recalled = [{"lesson": "Sort before you deduplicate.", "source_task": "builtin/top_k_words", "source_run": "run-src",
                 "score": 2.3456, "rank": 1, "id": "run-src/builtin/top_k_words/reflexion/1/1"}]
    recs = [trial("T/fix", "reflexion+recall", 1, final=False, internal=False, hidden=False, recalled=recalled),
            trial("T/fix", "reflexion+recall", 2, final=True, internal=True, hidden=True, code=CODE_V2,
                  stop="internal_pass", lesson="own lesson", recalled=recalled)]
    write_run(root / "run-r", header("run-r"), recs)
    server = serve(root)
    status, html = get(server.url + "runs/run-r/tasks/T/fix")
    assert status == 200
    t1 = html.split('<li class="trial"')[1]
    text = _text(t1)
    assert "Lessons recalled from similar tasks (1, ranked by BM25):" in text
    assert "score 2.346 · from builtin/top_k_words (run run-src)" in text and "Sort before you deduplicate." in text


def test_run_page_pairs_recall_with_reflexion(tmp_path: Path, serve):
    root = tmp_path / "results"
    recs = []
    for task, with_recall in (("T/a", True), ("T/b", False), ("T/c", True)):
        recs.append(trial(task, "reflexion", 1, final=True, internal=True, hidden=False, stop="internal_pass"))
        recs.append(trial(task, "reflexion+recall", 1, final=True, internal=True, hidden=with_recall,
                          stop="internal_pass"))
    write_run(root / "run-p", header("run-p", tasks=["T/a", "T/b", "T/c"], strategy="recall",
                                      strategies=["reflexion", "reflexion+recall"]), recs)
    server = serve(root)
    _, html = get(server.url + "runs/run-p")
    top = re.search(r'<p class="topline">(.*?)</p>', html, re.S).group(1)
    assert top.startswith("Recall&#39;s own effect (reflexion is reflexion+recall without it): "
                          "reflexion+recall − reflexion: +66.7 points"), top
