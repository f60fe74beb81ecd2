"""LaTeX tables (booktabs) of a run's or a study's numbers, for a paper.

They render summary.json / study_summary.json and compute nothing: a rate is printed
in percent with one decimal, a difference in points with one decimal and a sign, a
p-value with three significant digits, exactly as `number`, `points` and `p_text` say
(tests/report/test_latex.py reads every number back and checks it against the
document). The preamble needs `\\usepackage{booktabs}`.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def escape(text: Any) -> str:
    return "".join(_SPECIAL.get(ch, ch) for ch in str(text))


def _ok(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def number(x: Any) -> str:
    """A rate in percent, one decimal; -- when unknown."""
    return f"{100 * x:.1f}" if _ok(x) else "--"


def points(x: Any) -> str:
    """A difference of rates in points, one decimal, signed."""
    return f"{100 * x:+.1f}".replace("-", "$-$") if _ok(x) else "--"


def p_text(p: Any) -> str:
    return f"{p:.3g}" if _ok(p) else "--"


def interval(ci: Sequence[Any] | None, fmt: Any = number) -> str:
    lo, hi = (list(ci) + [None, None])[:2] if ci else (None, None)
    return f"[{fmt(lo)}, {fmt(hi)}]" if _ok(lo) and _ok(hi) else "--"


def table(columns: Sequence[str], align: str, rows: Sequence[Sequence[str]], caption: str, label: str) -> str:
    head = " & ".join(columns) + r" \\"
    body = "\n".join(" & ".join(row) + r" \\" for row in rows) or r"\multicolumn{%d}{c}{no data} \\" % len(columns)
    return "\n".join([r"\begin{table}[t]", r"\centering", rf"\caption{{{caption}}}", rf"\label{{{label}}}",
                      rf"\begin{{tabular}}{{{align}}}", r"\toprule", head, r"\midrule", body, r"\bottomrule",
                      r"\end{tabular}", r"\end{table}", ""])


def _method(doc: Mapping[str, Any], key: str) -> str:
    return escape((doc.get("intervals") or {}).get(key) or "")


def pass_table(doc: Mapping[str, Any], label: str = "tab:pass1") -> str:
    rows = [[escape(s), number(v.get("pass@1")), interval(v.get("pass@1_ci95")), str(v.get("tasks_scored") or 0)]
            for s, v in doc["strategies"].items()]
    caption = (f"pass@1 (\\%) per strategy on the {doc.get('tasks_compared', 0)} tasks every strategy completed, "
               f"with its 95\\% CI: {_method(doc, 'rate')}.")
    return table(["Strategy", "pass@1", "95\\% CI", "Tasks"], "lrcr", rows, caption, label)


def effect_rows(effects: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    return [[escape(f"{e['a']} \u2212 {e['b']}").replace("\u2212", "$-$"), points(e.get("diff")),
             interval([e.get("ci_low"), e.get("ci_high")], points), p_text(e.get("p_value")),
             str(e.get("fixed", 0)), str(e.get("broken", 0))] for e in effects]


def effects_table(doc: Mapping[str, Any], label: str = "tab:effects") -> str:
    effects = doc.get("effects") or doc.get("paired") or []
    caption = ("Paired differences in pass@1 (points) with their 95\\% CI: "
               f"{_method(doc, 'paired')}; p: McNemar's exact two-sided test; fixed / broken: attempt pairs where "
               "only the first / only the second passed.")
    return table(["Comparison", "$\\Delta$ pass@1", "95\\% CI", "$p$", "Fixed", "Broken"], "lrcrrr",
                 effect_rows(effects), caption, label)


def run_tex(doc: Mapping[str, Any]) -> str:
    """tables.tex of a run: pass@1 per strategy, then the paired effects."""
    return "% needs \\usepackage{booktabs}\n" + pass_table(doc) + "\n" + effects_table(doc)


def study_tex(doc: Mapping[str, Any]) -> str:
    """tables.tex of a study: each cell's pass@1 per strategy, then each cell's effects."""
    intervals = next((c.get("intervals") for c in doc["cells"] if c.get("intervals")), {}) or {}
    rows = []
    for c in doc["cells"]:
        for s, v in c["strategies"].items():
            rows.append([escape(c.get("model_label") or c["model"]), escape(c.get("tasks_label") or c["tasks"]),
                         escape(s), number(v.get("pass@1")), interval(v.get("pass@1_ci95")),
                         str(v.get("tasks_scored") or 0)])
    first = table(["Model", "Tasks", "Strategy", "pass@1", "95\\% CI", "Tasks"], "lllrcr", rows,
                  "pass@1 (\\%) per model, task set and strategy, each cell on the tasks every strategy completed "
                  f"there, with its 95\\% CI: {escape(intervals.get('rate', ''))}.", "tab:study-pass1")
    eff = []
    for c in doc["cells"]:
        for row in effect_rows(c["effects"]):
            eff.append([escape(c.get("model_label") or c["model"]), escape(c.get("tasks_label") or c["tasks"]), *row])
    second = table(["Model", "Tasks", "Comparison", "$\\Delta$ pass@1", "95\\% CI", "$p$", "Fixed", "Broken"],
                   "lllrcrrr", eff, "Each cell's effects: paired differences in pass@1 (points) with their 95\\% CI: "
                   f"{escape(intervals.get('paired', ''))}; p: McNemar's exact test.", "tab:study-effects")
    out = "% needs \\usepackage{booktabs}\n" + first + "\n" + second
    if doc.get("repeats"):
        rows = [[escape(r["model_label"]), escape(r["tasks_label"]), escape(r["strategy"]), str(r["repeats"]),
                 number(r["mean"]), number(r["sd"]), interval(r["ci95"])] for r in doc["repeats"]]
        out += "\n" + table(["Model", "Tasks", "Strategy", "Repeats", "Mean pass@1", "SD", "95\\% CI"], "lllrrrc",
                            rows, f"pass@1 (\\%) across repeats (seeds): {escape(doc.get('repeats_method', ''))}.",
                            "tab:study-repeats")
    return out
