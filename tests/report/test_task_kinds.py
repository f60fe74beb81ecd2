"""A run that mixes task kinds: per-kind lines in summary.json and the printed table,
and `export --format livecodebench`."""
from __future__ import annotations

import json
from pathlib import Path

import msgspec

from harness.rundata import read_trials
from harness.rundata.numbers import of_records as build_summary
from harness.report.table import format_summary
from synthrun import header, rec, run_command, write_run


def mixed_run(tmp_path: Path) -> Path:
    records = []
    for task, kind, passes in (("f/1", "function", [True, True]), ("f/2", "function", [False, False]),
                               ("lcb/abc1_a", "io", [True, False]), ("lcb/abc2_b", "io", [False, False])):
        for attempt in (1, 2):
            for strategy in ("reflexion", "baseline"):
                hidden = passes[0] if strategy == "reflexion" else passes[1]
                r = rec(task, strategy, attempt, 1, final=True, hidden=hidden, stop="budget",
                        code=f"print({attempt})  # {task} {strategy}\n")
                records.append(msgspec.structs.replace(r, task_kind=kind))
    head = header(strategies=["reflexion", "baseline"], samples=2, k=[1])
    head["tasks"].update(count=4, task_ids=["f/1", "f/2", "lcb/abc1_a", "lcb/abc2_b"])
    return write_run(tmp_path / "mixed", head, records)


def test_a_mixed_run_has_per_kind_lines(tmp_path):
    run_dir = mixed_run(tmp_path)
    head = json.loads((run_dir / "run.json").read_text())
    summary = build_summary(head, read_trials(run_dir / "trials.jsonl"))
    assert summary["by_kind"]["function"]["tasks"] == 2 and summary["by_kind"]["io"]["tasks"] == 2
    assert summary["by_kind"]["function"]["reflexion"]["pass@1"] == 0.5
    assert summary["by_kind"]["io"]["reflexion"]["pass@1"] == 0.5
    assert summary["by_kind"]["io"]["baseline"]["pass@1"] == 0.0
    text = format_summary(summary)
    assert "pass@1 by task kind" in text
    line = next(l for l in text.splitlines() if l.startswith("io"))
    assert line.split()[1:] == ["2", "50.0%", "[9.5%,", "90.5%]", "0.0%", "[0.0%,", "65.8%]"]


def test_a_run_of_one_kind_has_no_per_kind_lines(tmp_path):
    run_dir = write_run(tmp_path / "one", header(), [rec("f/1", "baseline", 1, 1, final=True, hidden=True, stop="single_sample")])
    summary = build_summary(json.loads((run_dir / "run.json").read_text()), read_trials(run_dir / "trials.jsonl"))
    assert "by_kind" not in summary and "by task kind" not in format_summary(summary)


def test_export_livecodebench_format(tmp_path, capsys):
    run_dir = mixed_run(tmp_path)
    assert run_command(["export", str(run_dir), "--format", "livecodebench", "--strategy", "reflexion"]) == 0
    assert "livecodebench.json: 8 samples, strategy reflexion" in capsys.readouterr().out
    entries = json.loads((run_dir / "livecodebench.json").read_text())
    # custom_evaluator's input: a list of {question_id, code_list}, one per problem
    assert [e["question_id"] for e in entries] == ["abc1_a", "abc2_b", "f/1", "f/2"]
    assert entries[0]["code_list"] == ["print(1)  # lcb/abc1_a reflexion\n", "print(2)  # lcb/abc1_a reflexion\n"]
    assert set(entries[0]) == {"question_id", "code_list"}


def test_the_report_shows_per_kind_lines(tmp_path):
    from harness.report.render import headline, source
    from harness.rundata.folder import load

    view, csv = headline([source(load(mixed_run(tmp_path)))])
    figures = [row[0].text for row in view.rows]
    assert "pass@1 on io tasks (2)" in figures and "pass@1 on function tasks (2)" in figures
    row = next(r for r in view.rows if r[0].text == "pass@1 on io tasks (2)")
    assert row[1].text.startswith("50.0% [")
