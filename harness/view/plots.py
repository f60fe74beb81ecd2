"""The run page's plots, drawn on the server as inline SVG (matplotlib, no pyplot)."""
from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from harness.metrics import BASELINE
from harness.report import plots as report_plots

_STYLE = {"reflexion": ("#1f77b4", "-", "o"), "feedback": ("#2ca02c", "-.", "^"),
          "resample": ("#9467bd", ":", "d"), BASELINE: ("#d62728", "--", "s")}
_OTHER = ["#ff7f0e", "#8c564b", "#e377c2", "#17becf"]


def _style(strategy: str, i: int) -> tuple[str, str, str]:
    return _STYLE.get(strategy, (_OTHER[i % len(_OTHER)], "-", "v"))


def by_trial_svg(table: pd.DataFrame, salt: str) -> str:
    """pass@1 against trial for every strategy with its 95% CI band; the baseline
    (one trial) as a level line with its band across the whole axis."""
    fig = Figure(figsize=(6.4, 3.6))
    ax = fig.add_subplot()
    top = int(table["trial"].max()) if not table.empty else 1
    for i, (strategy, g) in enumerate(table.groupby("strategy", sort=False)):
        color, line, marker = _style(str(strategy), i)
        label = str(strategy).replace("$", r"\$")
        if strategy == BASELINE or len(g) == 1 and top > 1:
            row = g.iloc[-1]
            xs = [1, top]
            ax.plot(xs, [row["pass"]] * 2, color=color, linestyle=line, label=f"{label} (one trial)")
            ax.fill_between(xs, [row["ci_low"]] * 2, [row["ci_high"]] * 2, color=color, alpha=0.12, linewidth=0)
            continue
        ax.plot(g["trial"], g["pass"], color=color, linestyle=line, marker=marker, label=label)
        ax.fill_between(g["trial"], g["ci_low"], g["ci_high"], color=color, alpha=0.15, linewidth=0)
    ax.set_xlabel("trial (an attempt that stopped earlier counts with its last trial)")
    ax.set_ylabel("pass@1 on hidden tests")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xticks(range(1, top + 1))
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower right", fontsize=8)
    ax.set_title("pass@1 by trial, with 95% CI bands", fontsize=10)
    return report_plots.inline(report_plots._svg(fig, f"view-trial-{salt}"))


def compute_svg(curve: pd.DataFrame, salt: str) -> str:
    """Pass rate against mean model calls and mean tokens per task."""
    fig = Figure(figsize=(8.4, 3.4))
    axes = fig.subplots(1, 2)
    for i, (strategy, g) in enumerate(curve.groupby("strategy", sort=False)):
        color, line, marker = _style(str(strategy), i)
        label = str(strategy).replace("$", r"\$") + (" (pass@k, k samples)" if strategy == BASELINE else "")
        for ax, x in zip(axes, ("calls", "tokens")):
            ax.plot(g[x], g["pass"], color=color, linestyle=line, marker=marker, label=label)
    for ax, x in zip(axes, ("model calls per task", "tokens per task")):
        ax.set_xlabel(f"mean {x}")
        ax.set_ylabel("pass rate on hidden tests")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    if axes[0].get_legend_handles_labels()[0]:
        axes[0].legend(loc="lower right", fontsize=7)
    fig.suptitle("Pass rate against compute: one point per trial budget (or per k samples)", fontsize=10)
    return report_plots.inline(report_plots._svg(fig, f"view-compute-{salt}"))
