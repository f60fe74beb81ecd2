"""The run page of a run that mixes task kinds shows summary.json's pass@1 per kind."""
from __future__ import annotations

import json
from pathlib import Path

from viewruns import get, header, two_strategy_records, write_run


def test_run_page_shows_pass1_by_task_kind(tmp_path: Path, serve):
    root = tmp_path / "results"
    run = write_run(root / "run-k", header("run-k"), two_strategy_records("run-k"))
    summary_path = run / "summary.json"
    summary = json.loads(summary_path.read_text())
    summary["by_kind"] = {"function": {"tasks": 2, "reflexion": {"pass@1": 0.5}, "baseline": {"pass@1": 0.25}},
                          "io": {"tasks": 2, "reflexion": {"pass@1": 0.75}, "baseline": {"pass@1": None}}}
    summary_path.write_text(json.dumps(summary))
    status, html = get(serve(root).url + "runs/run-k")
    assert status == 200
    table = html.split('id="by-kind"')[1].split("</table>")[0]
    assert "pass@1 by task kind" in table and "<td class=\"txt\">io</td>" in table and "75.0%" in table


def test_a_run_of_one_kind_has_no_kind_table(tmp_path: Path, serve):
    root = tmp_path / "results"
    write_run(root / "run-f", header("run-f"), two_strategy_records("run-f"))
    status, html = get(serve(root).url + "runs/run-f")
    assert status == 200 and 'id="by-kind"' not in html
