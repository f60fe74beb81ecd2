"""Report, compare and the sub-commands, on synthetic run folders."""
from __future__ import annotations

import msgspec
import dataclasses
import html
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from markupsafe import escape

from harness.cli import UsageError
from harness.report import write_compare, write_report
from harness.report.render import task_anchor
from tests.helpers import run_harness
from synthrun import EVIL_CODE, EVIL_LESSON, EVIL_TASK, RUN_ID, header, run_command, synthetic_records, write_run

CSVS = ["pass_at_k.csv", "pass1_by_trial.csv", "compute_curve.csv", "compute_matched.csv", "paired.csv",
        "self_test.csv", "stopped_on_false_positive.csv", "resources.csv", "per_task.csv", "headline.csv"]


def test_report_writes_every_file(run_dir: Path, capsys):
    assert run_command(["report", str(run_dir)]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == str(run_dir / "report.html")
    for name in ["report.html", "report.md", "summary.json", "pass1_by_trial.svg", "compute.svg", *CSVS]:
        assert (run_dir / name).stat().st_size > 0, name
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["strategies"]["reflexion"]["pass@1"] == pytest.approx(0.5)
    pak = pd.read_csv(run_dir / "pass_at_k.csv").set_index(["strategy", "k"])
    assert pak.loc[("reflexion", 1), "pass"] == pytest.approx(0.5)
    # equal footing: every strategy on the 4 tasks all of them completed, 1 left out
    assert set(pak["tasks"]) == {4} and set(pak["excluded"]) == {1}
    assert pak.loc[("baseline", 1), "pass"] == pytest.approx(0.375)
    assert pak.loc[("baseline", 2), "pass"] == pytest.approx(0.5)
    assert pak.loc[("reflexion", 1), "ci_low"] <= 0.5 <= pak.loc[("reflexion", 1), "ci_high"]
    by_trial = pd.read_csv(run_dir / "pass1_by_trial.csv")
    assert by_trial[by_trial["strategy"] == "reflexion"]["pass"].tolist() == pytest.approx([0.375, 0.625, 0.5])
    paired = pd.read_csv(run_dir / "paired.csv").set_index(["a", "b"])
    rb = paired.loc[("reflexion", "baseline")]
    assert (rb["diff"], rb["fixed"], rb["broken"], rb["pairs"], rb["tasks"], rb["excluded"]) == (
        pytest.approx(0.125), 1, 0, 8, 4, 1)
    per_task = pd.read_csv(run_dir / "per_task.csv", keep_default_na=False)
    row = per_task[(per_task["task_id"] == "HumanEval/2") & (per_task["strategy"] == "reflexion")].iloc[0]
    assert (row["attempts"], row["passed"], row["incomplete_attempts"], row["compared"]) == (1, 1, 1, False)
    self_test = pd.read_csv(run_dir / "self_test.csv")
    first = self_test[(self_test["strategy"] == "reflexion") & (self_test["trial"] == 1)].iloc[0]
    # compared tasks only; the error trial left out; HumanEval/1 a2 is the false positive
    assert (first["trials"], first["false_positive"]) == (7, 1)
    stops = pd.read_csv(run_dir / "stopped_on_false_positive.csv").set_index("strategy")
    assert stops.loc["reflexion", "stopped_on_false_positive"] == 1


def test_report_rebuilds_summary_and_keeps_run_only_fields(run_dir: Path):
    stale = {"schema": 1, "run_id": "x", "tasks": 0, "strategies": {}, "timings": {"load_s": 1.5}}
    (run_dir / "summary.json").write_text(json.dumps(stale))
    write_report(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["timings"] == {"load_s": 1.5}  # written by `run`; not derivable from the records
    assert summary["run_id"] == RUN_ID and summary["tasks"] == 5
    assert summary["strategies"]["reflexion"]["pass@1"] == pytest.approx(0.5)


def test_html_is_self_contained_and_escaped(run_dir: Path):
    page = write_report(run_dir).read_text(encoding="utf-8")
    # model-written text is escaped, never live markup
    assert "<script" not in page.lower()
    assert str(escape(EVIL_CODE.splitlines()[1])) in page
    assert str(escape(EVIL_LESSON)) in page
    assert "<b>bold</b>" not in page
    # nothing is fetched: no external stylesheet, script, image or font; the only
    # outside links are plain <a> links to `harness view` on this machine
    assert not re.search(r'src\s*=\s*"(https?:)?//', page)
    links = re.findall(r'<(\w+)[^>]*\shref\s*=\s*"((?:https?:)?//[^"]*)"', page)
    assert links and all(tag == "a" and url.startswith(f"http://127.0.0.1:8765/runs/{RUN_ID}")
                         for tag, url in links)
    assert "@import" not in page and "url(http" not in page
    # plots are inline SVG
    assert page.count("<svg") >= 2 and 'id="plot-pass1-by-trial"' in page
    # per-task table links to a detail section for every task
    for task in ["HumanEval/0", "HumanEval/1", "HumanEval/2", "HumanEval/3", EVIL_TASK]:
        anchor = task_anchor(task)
        assert f'href="#{anchor}"' in page and f'id="{anchor}"' in page
    assert "oracle-warning" not in page


def test_html_trial_details(run_dir: Path):
    page = write_report(run_dir).read_text(encoding="utf-8")
    section = page[page.index(f'id="{task_anchor("HumanEval/1")}"'):page.index(f'id="{task_anchor("HumanEval/2")}"')]
    # trial 2 shows trial 1's feedback (what the Actor saw), trial 1 shows none
    assert "feedback reflexion HumanEval/1 a1 t1: &lt;fail&gt; &amp; more" in section
    assert "feedback reflexion HumanEval/1 a1 t3" not in section  # the last trial's feedback reached no Actor
    assert "lesson HumanEval/1 a1 t1" in section and "lesson HumanEval/1 a1 t2" in section
    assert "final trial 3: hidden FAIL" in section
    assert "test writer: dropped over limit 0, dropped unparseable 1, kept 2" in section
    assert "not &lt;a&gt; test" in section
    assert "assert f(-1) == &#39;&lt;x&gt;&#39;" in section and "got 0 &amp; &lt;y&gt;" in section
    # incomplete attempt and model error are visible
    assert "incomplete (no final trial): not scored" in page
    assert "model error: timed out after 5 retries" in page
    assert "interrupted: 29 of 30 attempts complete; the run stopped before its end. Resume with: python -m harness run --resume" in page


def test_oracle_feedback_is_flagged_in_red(tmp_path: Path):
    run = write_run(tmp_path / "oracle", header(oracle_feedback=True), synthetic_records())
    page = write_report(run).read_text(encoding="utf-8")
    banner = re.search(r'<p class="oracle" id="oracle-warning">([^<]*)</p>', page)
    assert banner and "hidden tests fed the trial loop" in banner.group(1)
    assert page.index("oracle-warning") < page.index('id="pass_at_k"')  # at the top
    assert re.search(r"\.oracle \{[^}]*background: #c00", page)
    assert "WARNING - oracle feedback" in (run / "report.md").read_text()


def test_markdown_report(run_dir: Path):
    write_report(run_dir)
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert md.startswith(f"# Run {RUN_ID}")
    pass_at_k = _md_table(md, "## pass@k and pass^k")
    assert pass_at_k[0] == ["strategy", "k", "pass@k", "pass@k 95% CI", "pass^k", "pass^k 95% CI", "tasks", "excluded"]
    assert ["reflexion", "1", "50.0%", "[15.0%, 85.0%]", "50.0%", "[15.0%, 85.0%]", "4", "1"] in pass_at_k[1:]
    # pass^2, all of two samples pass: the baseline passes both only on Evil (1 of 4 tasks);
    # pass@2, one of two: /0 and Evil
    assert ["baseline", "2", "50.0%", "[15.0%, 85.0%]", "25.0%", "[4.6%, 69.9%]", "4", "1"] in pass_at_k[1:]
    # the side-by-side table speaks words; reflexion spent 17 trials x 0.5 s = 0.14 min
    side = {row[0]: row[1:] for row in _md_table(md, "## Side by side")}
    assert side["figure"] == ["reflexion", "feedback", "baseline"]
    assert side["model calls"][0] == "32" and side["trial time summed over workers"][0] == "8 s"
    assert f"[view](http://127.0.0.1:8765/runs/{RUN_ID}/tasks/HumanEval/1)" in md
    assert "![pass@1 by trial](pass1_by_trial.svg)" in md
    assert "Evil&lt;&amp;&gt;\"task" in md  # markdown table cell: HTML shown as text, pipes escaped


def _md_table(md: str, heading: str) -> list[list[str]]:
    """The first markdown table after `heading`, as rows of cells (header first)."""
    lines = md[md.index(heading + "\n"):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if not set("".join(cells)) <= set("-: "):  # the separator row
            rows.append(cells)
    return rows


def test_report_is_reproducible(run_dir: Path):
    first = write_report(run_dir).read_bytes()
    assert write_report(run_dir).read_bytes() == first


@pytest.mark.parametrize("case", ["missing_dir", "no_header", "empty_trials", "bad_header", "bad_line"])
def test_bad_input_is_a_one_line_usage_error(tmp_path: Path, case: str):
    run = tmp_path / "run"
    if case != "missing_dir":
        run.mkdir()
    if case in ("empty_trials", "bad_line"):
        (run / "run.json").write_text(json.dumps(header()))
        (run / "trials.jsonl").write_text("" if case == "empty_trials" else "{not json\n")
    if case == "bad_header":
        (run / "run.json").write_text("{")
    for argv in (["report", str(run)], ["export", str(run)], ["compare", str(run), str(run)]):
        with pytest.raises(UsageError) as info:
            run_command(argv)
        message = str(info.value)
        assert "\n" not in message and str(run) in message


def test_compare_needs_two_runs(run_dir: Path):
    with pytest.raises(UsageError, match="at least two"):
        run_command(["compare", str(run_dir)])


def test_compare_two_runs(tmp_path: Path, capsys):
    a = write_run(tmp_path / "a", header("run-a"), synthetic_records("run-a"))
    # run-b: another model where reflexion solves everything it tries
    records_b = [msgspec.structs.replace(r, hidden_passed=r.final or r.hidden_passed)
                 if r.strategy == "reflexion" else r for r in synthetic_records("run-b")]
    b = write_run(tmp_path / "b", header("run-b", model="scripted:other"), records_b)
    out = tmp_path / "cmp"
    assert run_command(["compare", str(a), str(b), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out / "report.html")
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "run-a" in page and "run-b" in page and "scripted:other" in page
    pak = pd.read_csv(out / "pass_at_k.csv").set_index(["run", "strategy", "k"])
    assert pak.loc[("run-a", "reflexion", 1), "pass"] == pytest.approx(0.5)
    assert pak.loc[("run-b", "reflexion", 1), "pass"] == pytest.approx(1.0)
    by_trial = pd.read_csv(out / "pass1_by_trial.csv")
    assert set(zip(by_trial["run"], by_trial["strategy"])) == {
        (r, s) for r in ("run-a", "run-b") for s in ("reflexion", "feedback", "baseline")}
    paired = pd.read_csv(out / "paired.csv")
    cross = paired[paired["run"] == "run-a vs run-b"].set_index("a")
    # on the 4 tasks both runs compare (HumanEval/2 is out of both): run-a reflexion
    # passes both attempts of /0 and Evil, run-b every attempt: broken = /1 and /3 x2
    row = cross.loc["reflexion (run-a)"]
    assert (row["fixed"], row["broken"], row["both"], row["neither"]) == (0, 4, 4, 0)
    assert (row["pairs"], row["tasks"], row["excluded"]) == (8, 4, 1)
    assert row["p_value"] == pytest.approx(2 / 16)
    assert row["diff"] == pytest.approx(-0.5)
    head = pd.read_csv(out / "headline.csv").set_index("figure")
    assert list(head.columns) == [f"{s} ({r})" for r in ("run-a", "run-b") for s in ("reflexion", "feedback", "baseline")]
    assert head.loc["pass@1", "reflexion (run-b)"] == pytest.approx(1.0)
    assert head.loc["pass@1 at trial 1", "reflexion (run-a)"] == pytest.approx(0.375)
    assert page.count("<svg") >= 2
    assert 'id="details"' not in page  # trial details live in each run's own report
    across = page[page.index('data-run="across runs"'):]
    top = html.unescape(re.search(r'<p class="topline">([^<]*)</p>', across).group(1))
    assert top.startswith("reflexion (run-a) \u2212 reflexion (run-b): \u221250.0 points [95% CI ")
    assert "fixed 0, broken 4 of 8 attempt pairs on 4 tasks" in top
    assert "data-caveat" not in across[:across.index("</div>")]  # same tasks, different runs: nothing to warn


def test_compare_labels_repeated_run_ids(tmp_path: Path):
    a = write_run(tmp_path / "a", header(), synthetic_records())
    b = write_run(tmp_path / "b", header(), synthetic_records())
    out = write_compare([a, b], tmp_path / "cmp")
    runs = set(pd.read_csv(out.parent / "resources.csv")["run"])
    assert runs == {RUN_ID, f"{RUN_ID}#2"}


def test_cli_dispatcher_prints_one_line_and_exits_2(tmp_path: Path):
    """Through `python -m harness`: one line on stderr, nothing on stdout, exit 2."""
    proc = run_harness("report", str(tmp_path / "nope"))
    assert proc.returncode == 2 and proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith("error: ") and "no such run folder" in line


@pytest.mark.parametrize("strategies", [["baseline"], ["reflexion"], ["feedback", "baseline"]])
def test_report_with_a_subset_of_strategies(tmp_path: Path, strategies: list[str]):
    records = [r for r in synthetic_records() if r.strategy in strategies]
    run = write_run(tmp_path / "run", header(strategies=strategies), records)
    page = write_report(run).read_text(encoding="utf-8")
    assert 'id="plot-pass1-by-trial"' in page and page.count("<svg") >= 2
    summary = json.loads((run / "summary.json").read_text())
    assert set(summary["strategies"]) == set(strategies)  # write_json sorts keys
    paired = pd.read_csv(run / "paired.csv")
    assert len(paired) == (1 if strategies == ["feedback", "baseline"] else 0)


def four_strategy_run(tmp_path: Path) -> Path:
    """reflexion, feedback, resample and baseline on 3 tasks, 3 samples each.

    Costs as the loop charges them: trial 1 = test writer + actor (2 calls), a later
    reflexion trial = the reflection written about the previous trial + actor (2),
    a later feedback or resample trial = actor (1); a baseline sample = 1 call.
    """
    from synthrun import rec

    records = []
    for task in ("T1", "T2", "T3"):
        for a in (1, 2, 3):
            for strategy, later in (("reflexion", 2), ("feedback", 1), ("resample", 1)):
                verdicts = [False, task != "T3"]
                for t, hidden in enumerate(verdicts, 1):
                    records.append(rec(task, strategy, a, t, final=t == 2, hidden=hidden, internal=hidden,
                                       stop="internal_pass" if hidden else "budget", calls=2 if t == 1 else later))
            records.append(rec(task, "baseline", a, 1, final=True, hidden=(task == "T1" and a == 1),
                               stop="single_sample"))
    head = header(strategies=["reflexion", "feedback", "resample", "baseline"], samples=3, k=[1], trials=2)
    head["tasks"].update(count=3, task_ids=["T1", "T2", "T3"])
    return write_run(tmp_path / "four", head, records)


def test_compute_view_for_every_strategy_and_oracle_labelled(tmp_path: Path):
    run = four_strategy_run(tmp_path)
    page = write_report(run).read_text(encoding="utf-8")
    curve = pd.read_csv(run / "compute_curve.csv")
    assert list(dict.fromkeys(curve["strategy"])) == ["reflexion", "feedback", "resample", "baseline"]
    by = curve.set_index(["strategy", "budget"])
    # the records as they are: calls and tokens summed over trials up to t, per attempt
    assert by.loc[("reflexion", "t=1"), "calls"] == 2 and by.loc[("reflexion", "t=2"), "calls"] == 4
    assert by.loc[("feedback", "t=2"), "calls"] == 3 and by.loc[("resample", "t=2"), "calls"] == 3
    assert by.loc[("resample", "t=2"), "tokens"] == 3 * 120
    assert by.loc[("resample", "t=2"), "pass"] == pytest.approx(2 / 3)
    assert by.loc[("baseline", "k=1"), "calls"] == 1
    assert by.loc[("baseline", "k=1"), "pass"] == pytest.approx(1 / 9)
    kinds = dict(zip(curve["budget"][curve["strategy"] == "baseline"], curve["kind"][curve["strategy"] == "baseline"]))
    assert kinds == {"k=1": "agent", "k=2": "oracle", "k=3": "oracle"}
    assert set(curve.loc[curve["strategy"] != "baseline", "kind"]) == {"agent"}
    svg = (run / "compute.svg").read_text(encoding="utf-8")
    assert "resample" in page and "oracle, an upper bound only" in page
    assert "Upper bound only" in page and "oracle_best_of_k_calls" in page
    # matplotlib draws text as paths and keeps each label as a comment
    legend = re.findall(r"<!-- (.*?) -->", svg)
    # short labels for a paper (the caption says what each line is)
    for label in ("reflexion", "feedback", "resample", "baseline (k=1)", "baseline, best of k (oracle)"):
        assert label in legend
    assert "calls per task" in legend and "tokens per task" in legend
    paired = pd.read_csv(run / "paired.csv").set_index(["a", "b"])
    assert ("resample", "baseline") in paired.index and ("reflexion", "resample") in paired.index
    rs = paired.loc[("reflexion", "resample")]
    assert (rs["fixed"], rs["broken"], rs["pairs"], rs["tasks"]) == (0, 0, 9, 3)
    assert rs["calls_ratio"] == pytest.approx(4 / 3)


def _errors_line(task: str, strategy: str, attempt: int, trial: int | None, kind: str = "model_error") -> str:
    return json.dumps({"schema": 1, "kind": kind, "task_id": task, "strategy": strategy, "attempt": attempt,
                       "trial": trial, "role": "actor" if kind == "model_error" else None,
                       "error": "model error: 503 after 5 retries", "at": "2026-11-30T00:00:00Z"}) + "\n"


def test_answer_first_with_caveats_from_errors_jsonl(tmp_path: Path):
    # feedback's HumanEval/0 attempt 2 was stopped before its first trial: only errors.jsonl knows it
    records = [r for r in synthetic_records()
               if not (r.strategy == "feedback" and r.task_id == "HumanEval/0" and r.attempt == 2)]
    run = write_run(tmp_path / RUN_ID, header(), records)
    (run / "errors.jsonl").write_text(
        _errors_line("HumanEval/0", "feedback", 2, 1)
        + _errors_line("HumanEval/2", "reflexion", 2, 2)
        + _errors_line("HumanEval/1", "baseline", 2, 1, kind="unit_exception")  # resumed since: complete
        + '{"torn": ', encoding="utf-8")
    page = write_report(run).read_text(encoding="utf-8")
    summary = json.loads((run / "summary.json").read_text())
    assert summary["harness_errors"] == 3
    assert (summary["tasks_compared"], summary["tasks_excluded"]) == (3, 2)
    assert summary["strategies"]["feedback"]["incomplete_attempts"] == 1
    assert summary["strategies"]["baseline"]["incomplete_attempts"] == 0
    # on /1, /3 and Evil: reflexion (0, 0, 1) = 1/3, feedback (0, 0, 1), baseline (0, 0, 1) = 1/3;
    # all attempt pairs agree. The run holds feedback: the lesson's own effect leads, saying so
    answer = page[page.index('<section id="answer">'):page.index('<section class="run-info">')]
    top = re.search(r'<p class="topline">([^<]*)</p>', answer).group(1)
    assert top.startswith("The lesson&#39;s own effect (feedback is reflexion without it): "
                          "reflexion \u2212 feedback: +0.0 points [95% CI \u221247.1, +47.1], McNemar p = 1")
    assert "fixed 0, broken 0 of 6 attempt pairs on 3 tasks; 0.8\u00d7 the calls" in top
    total = re.search(r'<li>(Total, against baseline[^<]*)</li>', answer).group(1)
    assert "reflexion \u2212 baseline: +0.0 points" in total and "3.0\u00d7 the calls" in total
    caveats = dict(re.findall(r'data-caveat="([a-z_]+)">([^<]*)</li>', answer))
    assert set(caveats) == {"excluded", "incomplete", "errors", "errors_redone", "few_tasks", "samples", "unusable_answers"}
    assert caveats["excluded"].startswith("2 tasks of 5 left out of every figure")
    assert "HumanEval/0, HumanEval/2" in caveats["excluded"]
    assert caveats["incomplete"].startswith("2 incomplete attempts (1 reflexion, 1 feedback)")
    assert "never scored as failures" in caveats["incomplete"]
    assert caveats["errors"] == "2 harness errors in errors.jsonl left attempts unfinished (model error: 2)."
    assert caveats["errors_redone"].startswith("1 harness error in errors.jsonl stopped attempts that a resumed session then finished")
    assert caveats["few_tasks"].startswith("Few tasks for the effect size: 3 shared tasks")
    assert page.index('id="answer"') < page.index('class="run-info"') < page.index('id="pass_at_k"')
    assert "incomplete (no trial recorded; see errors.jsonl): not scored" in page
    md = (run / "report.md").read_text(encoding="utf-8")
    assert f"**{html.unescape(top)}**" in md


def test_caveats_for_oracle_error_log_resume_and_missing_tests(tmp_path: Path):
    records = [msgspec.structs.replace(r, internal_tests=[], internal_results=[], internal_passed=None)
               if r.strategy == "feedback" and r.task_id == "HumanEval/0" else r for r in synthetic_records()]
    head = header(oracle_feedback=True)
    head["resumes"] = ["2026-11-30T01:00:00Z"]
    run = write_run(tmp_path / "run", head, records)
    (run / "error.log").write_text("Traceback ...\n")
    page = write_report(run).read_text(encoding="utf-8")
    caveats = dict(re.findall(r'data-caveat="([a-z_]+)">([^<]*)</li>', page))
    assert {"oracle", "error_log", "resumed", "no_tests"} <= set(caveats)
    assert caveats["resumed"].startswith("Resumed once")
    assert caveats["no_tests"].startswith("2 compared attempts where the test writer kept no usable test")
    assert re.search(r'<li class="caveat severe" data-caveat="oracle">', page)
    clean = write_report(write_run(tmp_path / "clean", header(), synthetic_records())).read_text(encoding="utf-8")
    assert not {"oracle", "error_log", "resumed", "no_tests", "errors"} & set(
        re.findall(r'data-caveat="([a-z_]+)"', clean))


def test_header_shows_memory_prompt_set_and_mbpp_form(tmp_path: Path):
    head = header()
    head["memory"] = {"namespace": "shared-ns", "earlier_lessons": 7}
    head["prompts"] = {"dir": "my-prompts", "digest": "sha256:0123456789abcdef0123456789"}
    head["tasks"]["spec"] = "mbpp:with-example"
    run = write_run(tmp_path / "mbpp", head, synthetic_records())
    page = write_report(run).read_text(encoding="utf-8")
    info = dict(re.findall(r"<dt>([^<]+)</dt><dd>([^<]*)", page))
    assert info["memory"] == "namespace shared-ns; 7 lesson(s) from earlier runs"
    assert info["prompts"] == "my-prompts, digest sha256:0123456789abcdef"
    assert info["prompt form"] == "with the example assert in the prompt (as the original benchmark)"
    plain = write_report(write_run(tmp_path / "plain", header(), synthetic_records())).read_text(encoding="utf-8")
    info = {k: html.unescape(v) for k, v in re.findall(r"<dt>([^<]+)</dt><dd>([^<]*)", plain)}
    assert info["memory"] == "the run's own namespace (empty at start)"
    assert info["prompts"] == "default prompts (digest not recorded)"
    assert "prompt form" not in info
    # the loop's MemoryStore.earlier_runs() shape
    head = header()
    head["memory"] = {"namespace": "ns", "earlier_runs": {"lessons": 7, "runs": 2, "oracle_feedback": 0}}
    page = write_report(write_run(tmp_path / "mem", head, synthetic_records())).read_text(encoding="utf-8")
    info = dict(re.findall(r"<dt>([^<]+)</dt><dd>([^<]*)", page))
    assert info["memory"] == "namespace ns; 7 lesson(s) from 2 earlier run(s)"
    # what the runner records (harness/run/runner.py make_header)
    head = header()
    head["memory"] = {"namespace": RUN_ID, "shared": False, "earlier": {"lessons": 0, "runs": 0, "oracle_feedback": 0}}
    head["prompts"] = {"digest": "sha256:" + "ab" * 32, "folder": "paper-style", "overridden": ["actor_task", "reflection"]}
    head["tasks"].update(spec="mbpp", prompt_form="signature, description and the first test_list assert as an example")
    page = write_report(write_run(tmp_path / "runner", head, synthetic_records())).read_text(encoding="utf-8")
    info = {k: html.unescape(v) for k, v in re.findall(r"<dt>([^<]+)</dt><dd>([^<]*)", page)}
    assert info["memory"] == f"namespace {RUN_ID} (the run's own, empty at start); 0 lesson(s) from 0 earlier run(s)"
    assert info["prompts"] == "paper-style (overrides actor_task, reflection), digest sha256:abababababababab"
    assert info["prompt form"] == "signature, description and the first test_list assert as an example"


def test_links_to_view_pages(run_dir: Path):
    assert run_command(["report", str(run_dir), "--view-port", "9001"]) == 0
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    base = f"http://127.0.0.1:9001/runs/{RUN_ID}"
    assert f'class="view-link" href="{base}"' in page
    assert f'href="{base}/tasks/HumanEval/1"' in page
    assert f'href="{base}/tasks/HumanEval/1#reflexion-2"' in page
    assert f'href="{base}/tasks/Evil%3C%26%3E%22task"' in page  # percent-encoded, never raw markup


def test_compare_warns_about_the_same_run_twice_and_different_task_sets(tmp_path: Path):
    a = write_run(tmp_path / "a", header("run-a"), synthetic_records("run-a"))
    page = write_compare([a, a], tmp_path / "same").read_text(encoding="utf-8")
    caveats = dict(re.findall(r'<li class="caveat severe" data-caveat="([a-z_]+)">([^<]*)</li>', page))
    assert caveats["same_run"].startswith("run-a and run-a#2 are the same run folder")
    head_b = header("run-b")
    head_b["tasks"].update(task_ids=["HumanEval/0", "HumanEval/1", "Other/9"], count=3)
    b = write_run(tmp_path / "b", head_b, [r for r in synthetic_records("run-b")
                                           if r.task_id in ("HumanEval/0", "HumanEval/1")])
    page = write_compare([a, b], tmp_path / "diff").read_text(encoding="utf-8")
    caveats = dict(re.findall(r'data-caveat="([a-z_]+)">([^<]*)</li>', page))
    assert caveats["task_sets"].startswith("run-a and run-b ran different task sets (5 and 3 tasks, 2 in common)")
    cross = pd.read_csv(tmp_path / "diff" / "paired.csv").set_index("a").loc["reflexion (run-a)"]
    assert (cross["tasks"], cross["excluded"]) == (2, 4)
