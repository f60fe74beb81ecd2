"""Report, compare and the sub-commands, on synthetic run folders."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from markupsafe import escape

from harness.cli import UsageError
from harness.report import write_compare, write_report
from harness.report.render import task_anchor
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
    # equal footing: every strategy on the 4 tasks all of them completed
    assert set(pak["tasks"]) == {4}
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
    # nothing is fetched: no external stylesheet, script, image or font
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', page)
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
    assert "1 attempt(s) have no final trial" in page


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
    assert "| strategy | k | pass | tasks | 95% CI |" in md
    assert "| reflexion | 1 | 0.500 | 4 |" in md
    assert "![pass@1 by trial](pass1_by_trial.svg)" in md
    assert "Evil<&>\"task" in md  # markdown table cell; pipes would be escaped


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
    records_b = [r.__class__(**{**r.__dict__, "hidden_passed": r.final or r.hidden_passed})
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


def test_compare_labels_repeated_run_ids(tmp_path: Path):
    a = write_run(tmp_path / "a", header(), synthetic_records())
    b = write_run(tmp_path / "b", header(), synthetic_records())
    out = write_compare([a, b], tmp_path / "cmp")
    runs = set(pd.read_csv(out.parent / "resources.csv")["run"])
    assert runs == {RUN_ID, f"{RUN_ID}#2"}


def test_cli_dispatcher_prints_one_line_and_exits_2(tmp_path: Path):
    """Through `python -m harness`, once every sub-command module of harness.cli exists."""
    from harness import cli

    missing = [m for m in cli.COMMANDS.values()
               if not (Path(cli.__file__).parent / "commands" / f"{m}.py").exists()]
    if missing:
        pytest.skip(f"harness.cli sub-commands not written yet: {', '.join(missing)}")
    proc = subprocess.run([sys.executable, "-m", "harness", "report", str(tmp_path / "nope")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "no such run folder" in proc.stderr


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
