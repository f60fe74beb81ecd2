"""LaTeX tables for a paper: booktabs structure, and every number read back equals the
run's summary.json (or the study's study_summary.json)."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.report import latex
from harness.report.render import write_report


def tables(tex: str) -> list[dict[str, Any]]:
    """Each tabular: its column spec, header cells and body rows (cells as text)."""
    out = []
    for m in re.finditer(r"\\begin\{tabular\}\{([lrc]+)\}\n(.*?)\\end\{tabular\}", tex, re.S):
        spec, body = m.group(1), m.group(2).splitlines()
        assert body[0] == r"\toprule" and body[2] == r"\midrule" and body[-1] == r"\bottomrule", body
        rows = [[c.strip() for c in line.removesuffix(r" \\").split(" & ")] for line in body[3:-1]]
        head = [c.strip() for c in body[1].removesuffix(r" \\").split(" & ")]
        assert len(head) == len(spec) and all(len(r) == len(spec) for r in rows), (spec, head, rows)
        out.append({"spec": spec, "head": head, "rows": rows})
    assert tex.count(r"\begin{table}") == tex.count(r"\end{table}") == len(out)
    return out


def num(cell: str) -> float:
    return float(cell.replace("$-$", "-"))


def ci(cell: str) -> tuple[float, float]:
    lo, hi = cell.strip("[]").split(", ")
    return num(lo), num(hi)


def same(shown: float, value: float, scale: float = 100.0) -> bool:
    return abs(shown - scale * value) <= 0.05 + 1e-9  # one decimal, rounded


def check_pass_rows(rows: list[list[str]], strategies: dict[str, Any]) -> None:
    by_name = {latex.escape(s): v for s, v in strategies.items()}
    assert sorted(r[0] for r in rows) == sorted(by_name)
    for r in rows:
        v = by_name[r[0]]
        lo, hi = ci(r[2])
        assert same(num(r[1]), v["pass@1"]) and same(lo, v["pass@1_ci95"][0]) and same(hi, v["pass@1_ci95"][1])
        assert int(r[3]) == v["tasks_scored"]


def check_effect_rows(rows: list[list[str]], effects: list[dict[str, Any]]) -> None:
    assert len(rows) == len(effects) > 0
    for r, e in zip(rows, effects):
        assert r[0] == f"{e['a']} $-$ {e['b']}"
        lo, hi = ci(r[2])
        assert same(num(r[1]), e["diff"]) and same(lo, e["ci_low"]) and same(hi, e["ci_high"])
        assert float(r[3]) == pytest.approx(e["p_value"], rel=5e-3) and (int(r[4]), int(r[5])) == (e["fixed"], e["broken"])


def test_run_tables_are_booktabs_and_hold_summary_numbers(run_dir: Path):
    write_report(run_dir)
    doc = json.loads((run_dir / "summary.json").read_text())
    tex = (run_dir / "tables.tex").read_text()
    assert "booktabs" in tex.splitlines()[0]
    pass_t, effects_t = tables(tex)[:2]
    check_pass_rows(pass_t["rows"], doc["strategies"])
    check_effect_rows(effects_t["rows"], doc["effects"] or doc["paired"])
    assert "Wilson" in tex and "Newcombe" in tex  # the captions say which interval
    for stem in ("pass1_by_trial", "compute", "cost"):  # paper figures beside the SVG
        assert (run_dir / f"{stem}.pdf").read_bytes().startswith(b"%PDF")
        assert (run_dir / f"{stem}.png").read_bytes().startswith(b"\x89PNG")


def test_latex_escapes_and_formats():
    assert latex.escape("a_b & 50% $x#{y}") == r"a\_b \& 50\% \$x\#\{y\}"
    assert latex.points(-0.123) == "$-$12.3" and latex.points(0.5) == "+50.0" and latex.number(None) == "--"
    assert latex.interval([0.7225, 1.0]) == "[72.2, 100.0]"


def check_study_tables(tex: str, doc: dict[str, Any]) -> None:
    pass_t, effects_t = tables(tex)[:2]
    expected = {(latex.escape(c["model_label"]), latex.escape(c["tasks_label"]), latex.escape(s)): (s, v)
                for c in doc["cells"] for s, v in c["strategies"].items()}
    assert sorted(tuple(r[:3]) for r in pass_t["rows"]) == sorted(expected)
    for r in pass_t["rows"]:
        s, v = expected[tuple(r[:3])]
        check_pass_rows([r[2:]], {s: v})
    effects = [e for c in doc["cells"] for e in c["effects"]]
    check_effect_rows([r[2:] for r in effects_t["rows"]], effects)
