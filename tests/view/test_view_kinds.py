"""The run page of a run that mixes task kinds shows pass@1 per kind."""
from __future__ import annotations

from pathlib import Path

from viewruns import get, header, two_strategy_records, write_run


def test_run_page_shows_pass1_by_task_kind(tmp_path: Path, serve):
    root = tmp_path / "results"
    records = two_strategy_records("run-k")
    for rec in records:  # T/both is an io task here; the others stay functions
        if rec["task_id"] == "T/both":
            rec["task_kind"] = "io"
    write_run(root / "run-k", header("run-k"), records)
    status, html = get(serve(root).url + "runs/run-k")
    assert status == 200
    table = html.split('id="by-kind"')[1].split("</table>")[0]
    assert "pass@1 by task kind" in table and '<td class="txt">io</td>' in table
    assert "100.0%" in table  # T/both passes under both strategies


def test_a_run_of_one_kind_has_no_kind_table(tmp_path: Path, serve):
    root = tmp_path / "results"
    write_run(root / "run-f", header("run-f"), two_strategy_records("run-f"))
    status, html = get(serve(root).url + "runs/run-f")
    assert status == 200 and 'id="by-kind"' not in html
