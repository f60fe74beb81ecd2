"""Plots of a run's numbers (matplotlib's object API, no pyplot: no global figure state).
The report and the view draw the same figures from the same tables. Figures carry no
title (the report's caption says what they show, and a paper gives its own), use
fonts of at least PAPER_FONT points at the size they are drawn, and a legend lists only
what is drawn. `write_figure` writes a figure as SVG, PDF and PNG side by side."""
from __future__ import annotations

import io
import re
from pathlib import Path

import matplotlib
import matplotlib.lines
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

import pandas as pd

from harness.rundata.roles import is_reference, plot_style

PAPER_FONT = 9
_RC = {"font.size": PAPER_FONT, "axes.labelsize": PAPER_FONT, "xtick.labelsize": PAPER_FONT - 1,
       "ytick.labelsize": PAPER_FONT - 1, "legend.fontsize": PAPER_FONT - 1, "axes.titlesize": PAPER_FONT}
_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
_ORACLE_COLOR = "#888888"
_FRONT_COLOR = "#555555"


def _style(run: str, strategy: str, runs: list[str], strategies: list[str]) -> tuple[str, str, str]:
    """(color, linestyle, marker): one colour per strategy for one run; with several
    runs one colour per run and one line style per strategy."""
    color = _COLORS[(runs.index(run) if len(runs) > 1 else strategies.index(strategy)) % len(_COLORS)]
    line, marker = plot_style(strategy)
    return color, line, marker


def _label(run: str, strategy: str, many_runs: bool) -> str:
    text = f"{strategy} ({run})" if many_runs else strategy
    return text.replace("$", r"\$")  # a bare $ would start matplotlib mathtext


def svg(fig: Figure, salt: str) -> str:
    """A figure as SVG text, the same bytes for the same figure and salt."""
    FigureCanvasAgg(fig)
    buf = io.StringIO()
    # Fixed salt and no date: the same run gives the same SVG; distinct salts keep
    # element ids distinct when several SVGs are inlined in one page.
    with matplotlib.rc_context({**_RC, "svg.hashsalt": salt, "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buf.getvalue()


def write_figure(fig: Figure, out_dir: Path, stem: str, salt: str = "") -> str:
    """Writes <stem>.svg, .pdf and .png (300 dpi) into out_dir, each reproducible byte
    for byte (no dates); returns the SVG text."""
    text = svg(fig, salt or stem)
    (out_dir / f"{stem}.svg").write_text(text, encoding="utf-8", errors="backslashreplace")
    with matplotlib.rc_context({**_RC, "pdf.fonttype": 42}):
        fig.savefig(out_dir / f"{stem}.pdf", format="pdf", bbox_inches="tight",
                    metadata={"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None})
        fig.savefig(out_dir / f"{stem}.png", format="png", dpi=300, bbox_inches="tight", metadata={"Software": None})
    return text


def inline(svg: str) -> str:
    """The <svg> element alone (no XML prolog or doctype), sized to its container."""
    start = svg.index("<svg")
    body = svg[start:]
    return re.sub(r'<svg([^>]*?)\swidth="[^"]*"\s+height="[^"]*"', r'<svg\1 width="100%"', body, count=1)


def _numeric(table: pd.DataFrame, columns: tuple[str, ...], needed: str) -> pd.DataFrame:
    """`table` with `columns` as floats (None: NaN) and the rows without `needed` left
    out: a strategy that scored no task yet has nothing to draw."""
    if table.empty:
        return table
    table = table.assign(**{c: pd.to_numeric(table[c], errors="coerce") for c in columns if c in table.columns})
    return table[table[needed].notna()] if needed in table.columns else table


def pass1_by_trial_svg(table: pd.DataFrame, salt: str = "") -> str:
    return svg(pass1_by_trial_figure(table), f"pass1-by-trial{salt}")


def pass1_by_trial_figure(table: pd.DataFrame) -> Figure:
    """pass@1 against trial for iterating strategies, with 95% CI bands; the
    baseline's pass@1 as a dashed reference line."""
    with matplotlib.rc_context(_RC):
        return _pass1_by_trial(table)


def _pass1_by_trial(table: pd.DataFrame) -> Figure:
    fig = Figure(figsize=(5.0, 3.2))
    ax = fig.add_subplot()
    if "run" not in table.columns:
        table = table.assign(run="")
    top = int(pd.to_numeric(table["trial"], errors="coerce").max()) if not table.empty and \
        pd.to_numeric(table["trial"], errors="coerce").notna().any() else 1
    table = _numeric(table, ("trial", "pass", "ci_low", "ci_high"), "pass")
    runs = list(dict.fromkeys(table["run"])) if not table.empty else []
    strategies = list(dict.fromkeys(table["strategy"])) if not table.empty else []
    many = len(runs) > 1
    for (run, strategy), g in (table.groupby(["run", "strategy"], sort=False) if not table.empty else []):
        color, line, marker = _style(run, strategy, runs, strategies)
        label = _label(run, strategy, many)
        if is_reference(strategy):
            last = g.iloc[-1]
            if last["pass"] is None or pd.isna(last["pass"]):
                continue  # no complete sample yet
            ax.axhline(float(last["pass"]), color=color, linestyle=line, linewidth=1.5, label=f"{label} pass@1")
            if pd.notna(last["ci_low"]) and pd.notna(last["ci_high"]):
                ax.axhspan(float(last["ci_low"]), float(last["ci_high"]), color=color,
                           alpha=0.06 if many else 0.10, linewidth=0)
            continue
        # no complete attempt yet (a run stopped early): None, drawn as nothing
        num = {c: pd.to_numeric(g[c], errors="coerce").astype(float) for c in ("trial", "pass", "ci_low", "ci_high")}
        ax.plot(num["trial"], num["pass"], marker=marker, linestyle=line, color=color, label=label)
        ax.fill_between(num["trial"], num["ci_low"], num["ci_high"], color=color, alpha=0.08 if many else 0.15,
                        linewidth=0)
    ax.set_xlabel("trial t")
    ax.set_ylabel("pass@1 (hidden tests)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xticks(range(1, top + 1))
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower right")
    else:
        ax.text(0.5, 0.5, "no task scored yet", ha="center", va="center", transform=ax.transAxes, color="#888888")
    return fig


def compute_svg(curve: pd.DataFrame, salt: str = "") -> str:
    return svg(compute_figure(curve), f"compute{salt}")


def compute_figure(curve: pd.DataFrame) -> Figure:
    """Pass rate against mean model calls and mean tokens per task."""
    with matplotlib.rc_context(_RC):
        return _compute(curve)


def _compute(curve: pd.DataFrame) -> Figure:
    fig = Figure(figsize=(7.0, 3.0), layout="constrained")
    axes = fig.subplots(1, 2)
    if "run" not in curve.columns:
        curve = curve.assign(run="")
    curve = _numeric(curve, ("calls", "tokens", "pass"), "pass")
    runs = list(dict.fromkeys(curve["run"])) if not curve.empty else []
    strategies = list(dict.fromkeys(curve["strategy"])) if not curve.empty else []
    many = len(runs) > 1
    for (run, strategy), g in (curve.groupby(["run", "strategy"], sort=False) if not curve.empty else []):
        color, style, marker = _style(run, strategy, runs, strategies)
        label = _label(run, strategy, many)
        kind = g["kind"] if "kind" in g else pd.Series(["agent"] * len(g), index=g.index)
        agent = g[kind == "agent"]
        for ax, x in zip(axes, ("calls", "tokens")):
            ax.plot(agent[x], agent["pass"], linestyle=style, marker=marker, color=color,
                    label=label if not is_reference(strategy) else f"{label} (k=1)")
            if is_reference(strategy) and (kind == "oracle").any():
                # from k=1 on, so the oracle line starts at the baseline's own point
                ax.plot(g[x], g["pass"], linestyle=":", marker=".", color=_ORACLE_COLOR if not many else color,
                        label=f"{label}, best of k (oracle)")
    for ax, x in zip(axes, ("calls per task", "tokens per task")):
        ax.set_xlabel(x)
        ax.set_ylabel("pass rate")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    if axes[0].get_legend_handles_labels()[0]:
        axes[0].legend(loc="lower right")
    else:
        for ax in axes:
            ax.text(0.5, 0.5, "no task scored yet", ha="center", va="center", transform=ax.transAxes, color="#888888")
    return fig


AXIS_LABELS = {
    "dollars": "US dollars per task",
    "tokens": "tokens per task",
    "seconds": "model seconds per task",
}


def cost_svg(panels: list[tuple[str, pd.DataFrame, str]], salt: str = "") -> str:
    return svg(cost_figure(panels), f"cost{salt}")


def cost_figure(panels: list[tuple[str, pd.DataFrame, str]]) -> Figure:
    """Accuracy against cost: per panel (short label, the numbers' cost_points, axis) each
    strategy a point with its 95% CIs (pass@1 up and down, cost sideways) and the Pareto
    front (nothing cheaper is as accurate) drawn as a step line through its points."""
    with matplotlib.rc_context(_RC):
        return _cost(panels)


def _cost(panels: list[tuple[str, pd.DataFrame, str]]) -> Figure:
    n = max(1, len(panels))
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig = Figure(figsize=(3.6 * cols, 3.0 * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    order: list[str] = list(dict.fromkeys(s for _, df, _ in panels if not df.empty for s in df["strategy"]))
    for ax, (title, df, axis) in zip(axes, panels or [("", pd.DataFrame(), "tokens")]):
        x, lo, hi = {"dollars": ("usd", "usd_ci_low", "usd_ci_high"),
                     "seconds": ("model_s", "model_s_ci_low", "model_s_ci_high")}.get(
            axis, ("tokens", "tokens_ci_low", "tokens_ci_high"))
        if x not in df.columns:
            x, lo, hi, axis = "tokens", "tokens_ci_low", "tokens_ci_high", "tokens"
        if not df.empty:
            for r in df.to_dict("records"):
                if r[x] is None or pd.isna(r[x]) or r["pass"] is None or pd.isna(r["pass"]):
                    continue
                color = _COLORS[order.index(r["strategy"]) % len(_COLORS)]
                _, marker = plot_style(r["strategy"])
                xerr = [[max(0.0, r[x] - r[lo]) if pd.notna(r[lo]) else 0.0],
                        [max(0.0, r[hi] - r[x]) if pd.notna(r[hi]) else 0.0]]
                yerr = [[max(0.0, r["pass"] - r["ci_low"]) if pd.notna(r["ci_low"]) else 0.0],
                        [max(0.0, r["ci_high"] - r["pass"]) if pd.notna(r["ci_high"]) else 0.0]]
                ax.errorbar([r[x]], [r["pass"]], xerr=xerr, yerr=yerr, marker=marker, color=color, capsize=3,
                            linestyle="none", label=_label("", r["strategy"], False))
            front = df[df["pareto"].astype(bool)].sort_values(x) if "pareto" in df else df.iloc[0:0]
            if len(front):
                xs, ys = list(front[x].astype(float)), list(front["pass"].astype(float))
                ax.step(xs, ys, where="post", color=_FRONT_COLOR, linestyle="--", linewidth=1,
                        label="Pareto front", zorder=0)
        ax.set_xlabel(AXIS_LABELS.get(axis, axis))
        ax.set_ylabel("pass@1")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
        if title:  # a panel's short label (one panel per study cell), not a figure title
            ax.set_title(title.replace("$", r"\$"))
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="lower right")
    for ax in axes[len(panels or [None]):]:
        ax.set_visible(False)
    return fig


_EFFECT_STYLE = {"isolates": ("#d62728", "o"), "rival": ("#1f77b4", "s"), "total": ("#555555", "^")}
_EFFECT_NAMES = {"isolates": "isolates the idea", "rival": "compute-matched", "total": "total (vs. baseline)"}


def forest_svg(effects: pd.DataFrame, salt: str = "") -> str:
    return svg(forest_figure(effects), f"forest{salt}")


def forest_figure(effects: pd.DataFrame) -> Figure:
    """A forest plot of paired effects: one row per (cell, effect), the difference in
    pass@1 in points with its paired 95% CI, McNemar's p at the right, 0 marked; the
    legend names only the kinds of effect drawn."""
    with matplotlib.rc_context(_RC):
        return _forest(effects)


def _forest(effects: pd.DataFrame) -> Figure:
    rows = effects.to_dict("records") if not effects.empty else []
    fig = Figure(figsize=(6.5, 0.32 * max(3, len(rows)) + 1.1))
    ax = fig.add_subplot()
    labels = []
    for i, r in enumerate(reversed(rows)):
        y = i
        color, marker = _EFFECT_STYLE.get(str(r.get("effect")), (_FRONT_COLOR, "d"))
        diff, lo, hi = (r.get(k) for k in ("diff", "ci_low", "ci_high"))
        if diff is not None and pd.notna(diff):
            xerr = [[100 * (diff - lo)] if lo is not None and pd.notna(lo) else [0.0],
                    [100 * (hi - diff)] if hi is not None and pd.notna(hi) else [0.0]]
            ax.errorbar([100 * diff], [y], xerr=xerr, marker=marker, color=color, capsize=3, linestyle="none")
        p = r.get("p_value")
        ax.annotate(f"p = {p:.2g}" if p is not None and pd.notna(p) else "", xy=(1.01, y), xycoords=("axes fraction", "data"),
                    va="center")
        labels.append(f"{r.get('cell', '')}: {r.get('a')} \u2212 {r.get('b')}".replace("$", r"\$"))
    ax.axvline(0.0, color="#999999", linewidth=1)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels)
    ax.set_ylim(-0.7, max(len(labels), 1) - 0.3)
    ax.set_xlabel("difference in pass@1 (points)")
    ax.grid(alpha=0.3, axis="x")
    drawn = [k for k in _EFFECT_STYLE if any(str(r.get("effect")) == k for r in rows)]
    if drawn:
        handles = [matplotlib.lines.Line2D([], [], color=_EFFECT_STYLE[k][0], marker=_EFFECT_STYLE[k][1],
                                           linestyle="none", label=_EFFECT_NAMES[k]) for k in drawn]
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.5 / max(3, len(rows)) - 0.12),
                  ncol=len(drawn))
    return fig
