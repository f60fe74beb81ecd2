"""The report's first lines: the comparison's answer, then the caveats that qualify it.

Same wording as `harness view`'s run page (issue 12): one line per pair, e.g.
"reflexion - baseline: +4.3 points [95% CI -1.2, +9.8], McNemar p = 0.21; fixed 9,
broken 2 of 164 tasks; 3.4x the calls", then a caveat for each thing a reader must
know before believing it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import pandas as pd

from harness import metrics
from harness.report.tables import RunFrames
from harness.summary import answer_line

# Below this many compared tasks, or with a CI wider than this, the effect size is shaky.
FEW_TASKS = 30
WIDE_CI = 0.20


@dataclass(frozen=True)
class Caveat:
    key: str  # stable id, for tests and CSS: oracle, few_tasks, excluded, ...
    text: str
    severe: bool = False  # shown in red


@dataclass(frozen=True)
class Answer:
    run: str
    lines: list[str]  # the first is the top line
    caveats: list[Caveat]


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _no_tests(rf: RunFrames) -> int:
    """Compared, complete attempts of test-writing strategies that ran no internal
    test (stop_reason no_internal_tests, or no internal verdict on their first
    trial): their self-test verdict decided nothing."""
    t = rf.shared_trials
    if t.empty:
        return 0
    keys = ["task_id", "strategy", "attempt"]
    ours = t[(t["strategy"] != metrics.BASELINE) & t["complete"]]
    first = ours[(ours["trial"] == 1) & ours["error"].isna() & ours["internal_passed"].isna()]
    stopped = ours[ours["stop_reason"] == "no_internal_tests"]
    return len(pd.concat([first[keys], stopped[keys]]).drop_duplicates())


def _resumed(header: dict[str, Any]) -> int:
    """How many times run.json says the run was resumed (0 when it says nothing)."""
    for key in ("resumes", "resumed", "resumed_at"):
        value = header.get(key)
        if isinstance(value, list):
            return len(value)
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return value
        if value:
            return 1
    return 0


def caveats(rf: RunFrames, pairs: Sequence[dict[str, Any]]) -> list[Caveat]:
    run, out = rf.run, []
    if run.oracle_feedback:
        out.append(Caveat("oracle", "Oracle feedback: the hidden tests fed the trial loop. This is an ablation, "
                          "not a result an agent could reach.", severe=True))
    n_all, shared = len(run.task_ids), len(rf.footing.shared)
    if rf.footing.excluded:
        shown = ", ".join(rf.footing.excluded[:5]) + (", ..." if len(rf.footing.excluded) > 5 else "")
        out.append(Caveat("excluded", f"{_count(len(rf.footing.excluded), 'task')} of {n_all} left out of every "
                          f"figure: not completed by every strategy ({shown}). Figures are on the "
                          f"{shared} shared tasks.", severe=shared == 0))
    incomplete = metrics.incomplete_attempts(rf.trials, run.error_keys)
    if incomplete:
        per = ", ".join(f"{s} {n}" for s, n in incomplete.items())
        out.append(Caveat("incomplete", f"{_count(sum(incomplete.values()), 'incomplete attempt')} ({per}): "
                          "stopped by a harness or model error, never scored as failures. "
                          f"`python -m harness run --resume {run.run_dir}` continues them."))
    if run.errors:
        kinds: dict[str, int] = {}
        for e in run.errors:
            kinds[str(e.get("kind") or "error")] = kinds.get(str(e.get("kind") or "error"), 0) + 1
        per = ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in sorted(kinds.items()))
        out.append(Caveat("errors", f"{_count(len(run.errors), 'harness error')} recorded in errors.jsonl ({per})."))
    if (run.run_dir / "error.log").is_file():
        out.append(Caveat("error_log", "error.log holds the tracebacks of errors this run met (a stopped run, "
                          "or units that failed with an exception)."))
    resumed = _resumed(run.header)
    if resumed:
        out.append(Caveat("resumed", f"Resumed {'once' if resumed == 1 else f'{resumed} times'}: elapsed timings "
                          "cover only the last part."))
    if pairs:
        top = pairs[0]
        lo, hi = top.get("ci_low"), top.get("ci_high")
        width = (hi - lo) if lo is not None and hi is not None else None
        if shared < FEW_TASKS or (width is not None and width > WIDE_CI):
            span = f"; the 95% CI of {top['a']} \u2212 {top['b']} spans {100 * width:.0f} points" if width else ""
            out.append(Caveat("few_tasks", f"Few tasks for the effect size: {shared} compared{span}. "
                              "A smaller difference cannot be told from noise."))
        if rf.run.samples > 1:
            out.append(Caveat("samples", f"{rf.run.samples} samples per task: McNemar's test pairs every attempt "
                              "and treats the pairs as independent; the bootstrap CI resamples whole tasks."))
    no_tests = _no_tests(rf)
    if no_tests:
        out.append(Caveat("no_tests", f"{_count(no_tests, 'attempt')} where the test writer wrote no usable test: "
                          "nothing checked those implementations before they were submitted."))
    return out


def _alone(rf: RunFrames) -> list[str]:
    """Without a pair: each strategy's pass@1 with its CI."""
    lines = []
    for s in rf.strategies:
        est = metrics.estimate(metrics.per_task_pass_at_k(rf.shared_attempts, s, 1))
        if est.tasks:
            lines.append(f"{s}: pass@1 {100 * est.value:.1f}% [95% CI {100 * est.ci_low:.1f}, "
                         f"{100 * est.ci_high:.1f}] on {_count(est.tasks, 'task')}; no other strategy to compare with")
        else:
            lines.append(f"{s}: no task completed yet")
    return lines


def answer(rf: RunFrames, pairs: Sequence[dict[str, Any]]) -> Answer:
    lines = [answer_line(p) for p in pairs] or _alone(rf)
    return Answer(rf.run.label, lines, caveats(rf, pairs))


def across_runs(rfs: Sequence[RunFrames], rows: Sequence[dict[str, Any]]) -> Answer:
    """A comparison of runs: the same strategy in the first run against each later
    one, with warnings when the runs are the same or their task sets differ."""
    out: list[Caveat] = []
    first = rfs[0]
    for other in rfs[1:]:
        if other.run.run_dir.resolve() == first.run.run_dir.resolve():
            out.append(Caveat("same_run", f"{first.run.label} and {other.run.label} are the same run folder: "
                              "their difference is zero by construction.", severe=True))
        a, b = set(first.run.task_ids), set(other.run.task_ids)
        if a != b:
            out.append(Caveat("task_sets", f"{first.run.label} and {other.run.label} ran different task sets "
                              f"({len(a)} and {len(b)} tasks, {len(a & b)} in common): paired figures use the "
                              "common tasks both completed.", severe=not (a & b)))
    return Answer("across runs", [answer_line(r) for r in rows], out)
