"""A run that mixes languages: per-language lines in summary.json, the printed table, the
report (HTML, Markdown, by_language.csv) and each task's language; final programs that
did not compile in the "why attempts stopped" table. Expectations computed by hand.

  task   language  reflexion (a1, a2)             baseline (a1, a2)
  py/1   python    pass, pass                     pass, fail
  rs/1   rust      pass, fail                     fail, fail
  rs/2   rust      fail, fail (compile_error x2)  fail (compile_timeout), fail
  go/1   go        pass, pass                     pass, pass

pass@1 per language (per task over its attempts, then over tasks):
  python: reflexion 2/2 = 1.0, baseline 1/2 = 0.5 (1 task, 2 attempts each)
  rust:   reflexion (1/2 + 0/2) / 2 = 0.25, baseline 0.0 (2 tasks, 4 attempts each)
  go:     reflexion 1.0, baseline 1.0 (1 task, 2 attempts each)
"""
from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pandas as pd
import pytest

from harness.rundata import read_trials
from harness.rundata.numbers import of_records as build_summary
from harness.report.table import format_summary
from synthrun import header, rec, run_command, write_run

PLAN = {  # task -> (language, reflexion passes, baseline passes, compile status per (strategy, attempt))
    "py/1": ("python", [True, True], [True, False], {}),
    "rs/1": ("rust", [True, False], [False, False], {}),
    "rs/2": ("rust", [False, False], [False, False],
             {("reflexion", 1): "compile_error", ("reflexion", 2): "compile_error", ("baseline", 1): "compile_timeout"}),
    "go/1": ("go", [True, True], [True, True], {}),
}


def mixed_run(tmp_path: Path) -> Path:
    records = []
    for task, (language, reflexion, baseline, broken) in PLAN.items():
        for strategy, passes in (("reflexion", reflexion), ("baseline", baseline)):
            for attempt, hidden in enumerate(passes, 1):
                status = None if language == "python" else broken.get((strategy, attempt), "ok")
                r = rec(task, strategy, attempt, 1, final=True, hidden=hidden,
                        stop="budget" if strategy == "reflexion" else "single_sample")
                records.append(msgspec.structs.replace(r, language=language, compile_status=status))
    head = header(strategies=["reflexion", "baseline"], samples=2, k=[1])
    head["tasks"].update(count=4, task_ids=list(PLAN))
    return write_run(tmp_path / "polyglot", head, records)


def numbers_of(run_dir: Path) -> dict:
    return build_summary(json.loads((run_dir / "run.json").read_text()), read_trials(run_dir / "trials.jsonl"))


def test_a_mixed_run_has_pass1_per_language_and_strategy(tmp_path):
    summary = numbers_of(mixed_run(tmp_path))
    assert summary["languages"] == {"go": 1, "python": 1, "rust": 2}
    rows = {(r["language"], r["strategy"]): r for r in summary["by_language"]}
    assert set(rows) == {(lang, s) for lang in ("go", "python", "rust") for s in ("reflexion", "baseline")}
    expected = {("python", "reflexion"): (1.0, 1, 2), ("python", "baseline"): (0.5, 1, 2),
                ("rust", "reflexion"): (0.25, 2, 4), ("rust", "baseline"): (0.0, 2, 4),
                ("go", "reflexion"): (1.0, 1, 2), ("go", "baseline"): (1.0, 1, 2)}
    for key, (rate, tasks, attempts) in expected.items():
        row = rows[key]
        assert (row["pass@1"], row["tasks"], row["attempts"]) == (pytest.approx(rate), tasks, attempts), key
        lo, hi = row["pass@1_ci95"]
        assert lo <= rate <= hi, key
    # one task, or every task alike: Wilson's interval over tasks keeps its width
    assert rows[("python", "reflexion")]["pass@1_ci95"] == [pytest.approx(0.2065, abs=1e-4), 1.0]
    assert rows[("python", "baseline")]["pass@1_ci95"] == [pytest.approx(0.0546, abs=1e-4),
                                                           pytest.approx(0.9454, abs=1e-4)]
    assert rows[("rust", "baseline")]["pass@1_ci95"] == [0.0, pytest.approx(0.6576, abs=1e-4)]
    lo, hi = rows[("rust", "reflexion")]["pass@1_ci95"]  # tasks at 0.5 and 0.0: 2 tasks say little
    assert 0.0 < lo <= 0.25 <= hi and hi > 0.5
    assert {t["task_id"]: t["language"] for t in summary["per_task"]} == {
        "py/1": "python", "rs/1": "rust", "rs/2": "rust", "go/1": "go"}


def test_stop_reasons_count_the_final_programs_that_did_not_compile(tmp_path):
    summary = numbers_of(mixed_run(tmp_path))
    stops = {(r["strategy"], r["stop_reason"]): r for r in summary["stop_reasons"]}
    assert stops[("reflexion", "budget")]["attempts"] == 8
    assert stops[("reflexion", "budget")]["did_not_compile"] == {"compile_error": 2}
    assert stops[("baseline", "single_sample")]["did_not_compile"] == {"compile_timeout": 1}
    text = format_summary(summary)
    assert "final programs that did not compile: reflexion 2 of 8 (compile_error 2); " \
           "baseline 1 of 8 (compile_timeout 1)" in text


def test_the_printed_table_has_a_line_per_language(tmp_path):
    text = format_summary(numbers_of(mixed_run(tmp_path)))
    assert text.splitlines()[0].startswith("run synthetic-run: 4 tasks (go 1, python 1, rust 2), 2 sample(s)")
    assert "pass@1 by language" in text
    line = next(l for l in text.splitlines() if l.startswith("python"))
    # one python task: an interval over one task is wide
    assert line.split() == ["python", "1", "100.0%", "[20.7%,", "100.0%]", "50.0%", "[5.5%,", "94.5%]"]
    rust = next(l for l in text.splitlines() if l.startswith("rust"))
    assert rust.split()[:3] == ["rust", "2", "25.0%"] and rust.split()[-3:] == ["0.0%", "[0.0%,", "65.8%]"]


def test_the_report_shows_languages_per_task_and_per_language_lines(tmp_path, capsys):
    run_dir = mixed_run(tmp_path)
    assert run_command(["report", str(run_dir)]) == 0
    csv = pd.read_csv(run_dir / "by_language.csv").set_index(["language", "strategy"])
    assert csv.loc[("rust", "reflexion"), "pass@1"] == pytest.approx(0.25)
    assert (csv.loc[("rust", "reflexion"), "tasks"], csv.loc[("rust", "reflexion"), "attempts"]) == (2, 4)
    assert csv.loc[("python", "baseline"), "pass@1"] == pytest.approx(0.5)
    per_task = pd.read_csv(run_dir / "per_task.csv").drop_duplicates("task_id").set_index("task_id")
    assert per_task.loc["rs/2", "language"] == "rust" and per_task.loc["py/1", "language"] == "python"
    html = (run_dir / "report.html").read_text()
    table = html.split('id="by_language"')[1].split("</table>")[0]
    row = next(r for r in table.split("<tr>") if '<td class="txt">rust</td><td class="txt">reflexion</td>' in r)
    assert "<td>25.0%</td>" in row and "<td>2</td><td>4</td>" in row
    assert '<dd class="languages">go 1 · python 1 · rust 2</dd>' in html
    assert "pass@1 on rust tasks (2)" in html
    stops = html.split('id="stop_reasons"')[1].split("</table>")[0]
    assert "did not compile (final programs)" in stops and "compile_error 2" in stops and "compile_timeout 1" in stops
    md = (run_dir / "report.md").read_text()
    assert "## pass@1 by language" in md and "- languages: go 1 · python 1 · rust 2" in md
    assert "| rust | reflexion | 25.0% | [" in md
    per_task_md = md.split("## Per task")[1]
    assert "| rs/2 | rust |" in per_task_md


def test_a_run_of_one_language_has_no_per_language_lines(tmp_path, capsys):
    run_dir = write_run(tmp_path / "one", header(), [rec("f/1", "baseline", 1, 1, final=True, hidden=True,
                                                         stop="single_sample")])
    summary = numbers_of(run_dir)
    assert summary["languages"] == {"python": 1} and "by_language" not in summary
    assert summary["stop_reasons"] == [{"strategy": "baseline", "stop_reason": "single_sample", "attempts": 1,
                                        "did_not_compile": {}}]
    text = format_summary(summary)
    assert "by language" not in text and "did not compile" not in text
    assert text.splitlines()[0].startswith("run synthetic-run: 5 tasks, ")
    assert run_command(["report", str(run_dir)]) == 0
    html = (run_dir / "report.html").read_text()
    assert 'id="by_language"' not in html and "did not compile" not in html
    assert '<dd class="languages">python 1</dd>' in html


def test_a_rust_run_names_its_language_in_the_first_line(tmp_path):
    r = msgspec.structs.replace(rec("rs/1", "baseline", 1, 1, final=True, hidden=True, stop="single_sample"),
                                language="rust", compile_status="ok")
    text = format_summary(numbers_of(write_run(tmp_path / "rs", header(), [r])))
    assert text.splitlines()[0].startswith("run synthetic-run: 5 tasks in rust, ")


def test_compile_status_decodes_from_old_and_new_lines():
    from harness.rundata.records import decode_trial

    golden = Path(__file__).resolve().parents[1] / "data" / "golden_schema2" / "trials.jsonl"
    old = decode_trial(golden.read_text().splitlines()[0])  # schema 2: no such field
    assert old.schema == 2 and old.compile_status is None and old.language == "python"
    r = msgspec.structs.replace(rec("rs/1", "baseline", 1, 1, final=True, hidden=False, stop="single_sample"),
                                language="rust", compile_status="compile_timeout")
    row = json.loads(r.to_json())
    assert row["compile_status"] == "compile_timeout" and row["schema"] == 3
    assert decode_trial(json.dumps(row)).compile_status == "compile_timeout"
    del row["compile_status"]  # a schema-3 line written before the field
    assert decode_trial(json.dumps(row)).compile_status is None
    row.update(compile_status=None, cost_usd=None, attempt="1")  # read by the lenient path (a string count)
    assert decode_trial(json.dumps(row)).compile_status is None
