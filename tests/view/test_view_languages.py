"""A run that mixes languages: the run page has a line per language (pass@1 with its CI
per strategy), the task list and each task's page name the task's language, and the
stop-reason table counts the final programs that did not compile. A Python run shows
none of these lines.

Of viewruns' two_strategy_run, T/fix and T/none are Rust tasks here (T/none's final
reflexion program did not compile), T/brk and T/both stay Python:
  rust:   reflexion (T/fix pass, T/none fail) 50.0%, baseline (fail, fail) 0.0%
  python: reflexion (T/brk fail, T/both pass) 50.0%, baseline (pass, pass) 100.0%
"""
from __future__ import annotations

from pathlib import Path

from viewruns import get, header, two_strategy_records, write_run

RUST = {"T/fix", "T/none"}


def polyglot_run(root: Path) -> Path:
    records = two_strategy_records("run-p")
    for rec in records:
        if rec["task_id"] in RUST:
            rec["language"] = "rust"
            rec["compile_status"] = "ok"
            if rec["task_id"] == "T/none" and rec["strategy"] == "reflexion" and rec["final"]:
                rec["compile_status"] = "compile_error"
    return write_run(root / "run-p", header("run-p"), records)


def test_run_page_shows_pass1_by_language(tmp_path: Path, serve):
    root = tmp_path / "results"
    polyglot_run(root)
    status, html = get(serve(root).url + "runs/run-p")
    assert status == 200
    table = html.split('id="by-language"')[1].split("</table>")[0]
    rust = table.split('data-language="rust"')[1].split("</tr>")[0]
    python = table.split('data-language="python"')[1].split("</tr>")[0]
    assert "<td>2</td>" in rust and "50.0% [" in rust and "0.0% [0.0%, 65.8%]" in rust  # Wilson: 0 of 2 tasks
    assert "<td>2</td>" in python and "100.0% [34.2%, 100.0%]" in python
    assert '<span class="languages">python 2 · rust 2</span>' in html
    stops = html.split('id="stop-reasons"')[1].split("</table>")[0]
    assert "did not compile" in stops
    reflexion = next(r for r in stops.split("<tr>") if r.startswith('<td class="txt">reflexion</td>'))
    assert '<td class="txt did-not-compile">compile error 1</td>' in reflexion


def test_task_list_and_page_name_the_language(tmp_path: Path, serve):
    root = tmp_path / "results"
    polyglot_run(root)
    server = serve(root)
    status, html = get(server.url + "runs/run-p/tasks")
    assert status == 200
    table = html.split('id="tasks"')[1].split("</table>")[0]
    assert '<th data-sort="text">language</th>' in table
    row = table.split(">T/none</a>")[1].split("</tr>")[0]
    assert row.startswith('</td><td class="txt lang">rust</td>')
    status, html = get(server.url + "runs/run-p/tasks/T/both")
    assert status == 200 and '<small class="lang" id="task-language">python</small>' in html


def test_a_python_run_has_no_language_lines(tmp_path: Path, serve):
    root = tmp_path / "results"
    write_run(root / "run-f", header("run-f"), two_strategy_records("run-f"))
    server = serve(root)
    status, html = get(server.url + "runs/run-f")
    assert status == 200 and 'id="by-language"' not in html and "did not compile" not in html
    assert '<span class="languages">python</span>' in html
    status, html = get(server.url + "runs/run-f/tasks")
    assert status == 200 and '<th data-sort="text">language</th>' not in html
