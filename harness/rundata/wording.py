"""The words around a run's numbers: one format for each kind of number, one set of
sentences for the answer line, the caveats, the status and the times.

harness.rundata.numbers stores the sentences in the run's numbers (summary.json), so
the CLI, the report and the view print the very same text.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

MINUS = "\u2212"
TIMES = "\u00d7"
DASH = "\u2013"  # a number that is not defined
# Below this many compared tasks, or with a CI wider than this, the effect size is shaky.
FEW_TASKS = 30
WIDE_CI = 0.20


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def pct(x: Any) -> str:
    """A rate as a percentage: 66.7%."""
    return f"{100 * x:.1f}%" if _finite(x) else DASH


def ci(lo: Any, hi: Any) -> str:
    """A 95% CI of a rate: [0.0%, 100.0%]."""
    return f"[{pct(lo)}, {pct(hi)}]"


def rate_with_ci(x: Any, lo: Any, hi: Any) -> str:
    return f"{pct(x)} {ci(lo, hi)}"


def points(x: Any) -> str:
    """A difference of rates in percentage points, signed: +4.3, −1.2 (U+2212)."""
    if not _finite(x):
        return DASH
    return f"{'+' if x >= 0 else MINUS}{abs(100 * x):.1f}"


def pvalue(p: Any) -> str:
    """A p-value: two significant digits, "< 0.001" below that."""
    if not _finite(p):
        return DASH
    return f"{p:.2g}" if p >= 0.001 else "< 0.001"


def ratio(x: Any) -> str:
    return f"{x:.1f}{TIMES}" if _finite(x) else DASH


def count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def duration(seconds: Any) -> str:
    """A time span: 42 s, 12.5 min, 3.1 h."""
    if not _finite(seconds):
        return DASH
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


UNKNOWN = "unknown"  # a cost without a price: never shown as 0


def money(x: Any) -> str:
    return f"${x:,.4f}" if _finite(x) else UNKNOWN


def seconds(x: Any) -> str:
    """A model call's latency: 0.84 s, 12.3 s."""
    if not _finite(x):
        return DASH
    return f"{x:.2f} s" if x < 10 else f"{x:.1f} s"


def model_line(model: dict[str, Any] | None) -> str:
    """The model's latency percentiles per call and its retries by status code, saying
    what they were measured on."""
    if not model:
        return ""
    lat = model.get("latency_s") or {}
    basis = lat.get("basis")
    if lat.get("calls"):
        on = ("every model call" if basis == "events" else
              "trials with exactly one model call (their model time; other trials do not time calls one by one)")
        text = (f"model latency per call: p50 {seconds(lat.get('p50'))}, p90 {seconds(lat.get('p90'))}, "
                f"p99 {seconds(lat.get('p99'))}, max {seconds(lat.get('max'))} over {count(lat['calls'], 'call')} "
                f"({on})")
    else:
        text = "model latency per call: not recorded (every answer came from the response cache, or no call was timed)"
    ret = model.get("retries") or {}
    if ret.get("total"):
        by = ", ".join(f"{k}: {v}" for k, v in (ret.get("by_status") or {}).items())
        text += f"; {count(ret['total'], 'retried call failure')} by status ({by})"
    elif ret.get("recorded_trials"):
        text += "; no retries"
    else:
        text += "; retries: not recorded by these records"
    return text


# ------------------------------------------------------------------ the answer

def answer_line(p: dict[str, Any]) -> str:
    """One pair in one line, e.g. "reflexion − baseline: +4.3 points [95% CI −1.2, +9.8],
    McNemar p = 0.21; fixed 9, broken 2 of 164 tasks; 3.4× the calls"."""
    head = f"{p['a']} {MINUS} {p['b']}: "
    if not p.get("tasks"):
        return head + f"no task completed by both ({p.get('excluded', 0)} left out)"
    text = head + f"{points(p['diff'])} points [95% CI {points(p['ci_low'])}, {points(p['ci_high'])}]"
    text += f", McNemar p = {pvalue(p['p_value'])}"
    of = f"{p['pairs']} tasks" if p["pairs"] == p["tasks"] else f"{p['pairs']} attempt pairs on {p['tasks']} tasks"
    text += f"; fixed {p['fixed']}, broken {p['broken']} of {of}"
    if _finite(p.get("calls_ratio")):
        text += f"; {ratio(p['calls_ratio'])} the calls"
    return text


def alone_line(name: str, s: dict[str, Any]) -> str:
    """A strategy without a rival: its pass@1 with its CI."""
    if not s.get("tasks_scored"):
        return f"{name}: no task completed yet"
    lo, hi = s.get("pass@1_ci95") or [None, None]
    return (f"{name}: pass@1 {rate_with_ci(s.get('pass@1'), lo, hi)} on {count(s['tasks_scored'], 'task')}; "
            "no other strategy to compare with")


def answer_lines(strategies: dict[str, dict[str, Any]], pairs: Sequence[dict[str, Any]]) -> list[str]:
    return [answer_line(p) for p in pairs] or [alone_line(n, s) for n, s in strategies.items()]


# ------------------------------------------------------------------ caveats

def caveat(key: str, level: str, text: str) -> dict[str, str]:
    """level: red (the answer is not what it seems) | warn | info."""
    return {"key": key, "level": level, "text": text}


def effect_size(top: dict[str, Any], shared: int) -> dict[str, str] | None:
    """Given when fewer than FEW_TASKS tasks are compared or the top pair's 95% CI is
    wider than WIDE_CI, saying which of the two it is."""
    lo, hi = top.get("ci_low"), top.get("ci_high")
    width = hi - lo if _finite(lo) and _finite(hi) else None
    few, wide = shared < FEW_TASKS, width is not None and width > WIDE_CI
    if not (few or wide):
        return None
    if shared == 0:
        return caveat("few_tasks", "warn", "No task was completed by every strategy: there is no difference "
                      "to estimate.")
    span = f"the 95% CI of {top['a']} {MINUS} {top['b']} spans {round(100 * width)} points" if width else ""
    if not few:
        return caveat("few_tasks", "warn", f"Wide 95% CI: on {count(shared, 'shared task')}, {span}. "
                      "A smaller difference cannot be told from chance.")
    if width is not None and round(100 * width) >= 1:
        return caveat("few_tasks", "warn", f"Few tasks for the effect size: {count(shared, 'shared task')}; {span}. "
                      "A smaller difference cannot be told from chance.")
    flat = ""
    if width is not None:  # a CI of no width is no sign of certainty here
        flat = (" (a CI from a single task has no width)" if shared == 1 else
                " (its 95% CI has no width only because every task shows the same difference)")
    return caveat("few_tasks", "warn", f"Few tasks for the effect size: {count(shared, 'shared task')}{flat}. "
                  f"On fewer than {FEW_TASKS} tasks a difference of a few points cannot be told from chance.")


def per_strategy(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {s}" for s, n in counts.items())


def caveats(*, oracle: bool, pairs: Sequence[dict[str, Any]], shared: int, excluded: Sequence[str], n_tasks: int,
            samples: int, incomplete: dict[str, int], no_tests: dict[str, int], unusable: dict[str, int],
            errors_open: dict[str, int], errors_redone: int, error_log: str | None, resumes: int, bad_lines: int,
            resume_command: str, task_check: dict[str, Any] | None = None) -> list[dict[str, str]]:
    """What a reader must know before believing the answer, most serious first."""
    out = []
    if oracle:
        out.append(caveat("oracle", "red", "Oracle feedback: the hidden tests fed the trial loop as its internal "
                          "tests. This is an ablation, not a result an agent could reach."))
    if pairs:
        effect = effect_size(pairs[0], shared)
        if effect is not None:
            out.append(effect)
    if excluded:
        shown = ", ".join(excluded[:5]) + (", \u2026" if len(excluded) > 5 else "")
        out.append(caveat("excluded", "red" if shared == 0 else "warn",
                          f"{count(len(excluded), 'task')} of {n_tasks} left out of every figure: not completed by "
                          f"every strategy ({shown}). Figures are on the {shared} shared tasks."))
    if isinstance(task_check, dict):
        left = [v for v in task_check.get("left_out") or [] if isinstance(v, dict)]
        unchecked = len(task_check.get("unchecked") or [])
        not_checked = f" {count(unchecked, 'task')} without a reference solution could not be checked." \
            if unchecked else ""
        if left:
            shown = "; ".join(f"{v.get('task_id')}: {v.get('reason')}" for v in left[:3]) + ("; \u2026" if len(left) > 3 else "")
            out.append(caveat("task_check", "warn", f"{count(len(left), 'task')} left out before the run by "
                              f"--check-tasks: a reference solution that fails its hidden tests, or hidden tests a "
                              f"stub passes, would count against every strategy alike ({shown}).{not_checked}"))
        else:
            out.append(caveat("task_check", "info", "Tasks checked before the run (--check-tasks): every reference "
                              f"solution passed its hidden tests and every stub failed them.{not_checked}"))
    if incomplete:
        out.append(caveat("incomplete", "warn", f"{count(sum(incomplete.values()), 'incomplete attempt')} "
                          f"({per_strategy(incomplete)}): never scored as failures. `{resume_command}` continues them."))
    if samples > 1 and pairs:
        out.append(caveat("samples", "info", f"{samples} samples per task: McNemar's test pairs every attempt and "
                          "treats the pairs as independent; the paired CI counts each task once (the shares of its attempt pairs)."))
    if no_tests:
        out.append(caveat("no_tests", "warn", f"{count(sum(no_tests.values()), 'compared attempt')} where the test "
                          f"writer kept no usable test ({per_strategy(no_tests)}): nothing checked those "
                          "implementations before they were submitted."))
    if unusable:
        out.append(caveat("unusable_answers", "warn", f"{count(sum(unusable.values()), 'trial')} whose answer held "
                          f"no usable code ({per_strategy(unusable)}): scored as the failures they are."))
    if errors_open:
        kinds = ", ".join(f"{k.replace('_', ' ')}: {n}" for k, n in sorted(errors_open.items()))
        out.append(caveat("errors", "warn", f"{count(sum(errors_open.values()), 'harness error')} in errors.jsonl "
                          f"left attempts unfinished ({kinds})."))
    if errors_redone:
        out.append(caveat("errors_redone", "info", f"{count(errors_redone, 'harness error')} in errors.jsonl "
                          "stopped attempts that a resumed session then finished: they are scored."))
    if error_log == "stopped":
        out.append(caveat("error_log", "warn", "The run stopped on an error at least once (error.log holds the "
                          "traceback)."))
    elif error_log:
        out.append(caveat("error_log", "info", "error.log holds the tracebacks of units that failed with an "
                          "exception; the run went on."))
    if resumes:
        out.append(caveat("resumed", "info", f"Resumed {'once' if resumes == 1 else f'{resumes} times'}: its trials "
                          "come from more than one session, and the elapsed time includes the time between them."))
    if bad_lines:
        out.append(caveat("bad_lines", "warn", f"{count(bad_lines, 'line')} of trials.jsonl could not be read and "
                          "are left out."))
    return out


def across_runs(*, same: Sequence[tuple[str, str]], differ: Sequence[tuple[str, str, int, int, int]]
                ) -> list[dict[str, str]]:
    """Caveats of a comparison of runs: the same folder twice; different task sets
    (label a, label b, tasks of a, tasks of b, tasks in common)."""
    out = []
    for a, b in same:
        out.append(caveat("same_run", "red", f"{a} and {b} are the same run folder: their difference is zero by "
                          "construction."))
    for a, b, na, nb, common in differ:
        out.append(caveat("task_sets", "red" if not common else "warn", f"{a} and {b} ran different task sets "
                          f"({na} and {nb} tasks, {common} in common): paired figures use the common tasks both "
                          "completed."))
    return out


# ------------------------------------------------------------------ status and time

def budget_text(stop: dict[str, Any]) -> str:
    """What the budget was and what had been spent: "--max-calls 20 reached (21 calls)"."""
    if stop.get("kind") == "max_cost":
        worst = stop.get("refused_usd")
        more = f"; the next call could have cost up to {money(worst)}" if isinstance(worst, (int, float)) else ""
        return f"--max-cost {money(stop.get('limit'))} reached ({money(stop.get('spent'))} spent{more})"
    return f"--max-calls {stop.get('limit')} reached ({count(int(stop.get('spent') or 0), 'model call')} made)"


def status_text(state: str, *, complete: int, expected: int, resumes: int, errors_redone: int,
                resume_command: str, budget_stop: dict[str, Any] | None = None, cut: int = 0) -> str:
    """running | complete | incomplete | interrupted | budget, in one sentence."""
    done = f"{complete} of {expected} attempts complete"
    if state == "budget" and budget_stop:
        flag = str(budget_stop.get("flag") or "--max-calls")
        cut_text = (f"{count(cut, 'attempt')} cut mid-way (the calls they made are counted, in errors.jsonl)"
                    if cut else "no attempt cut mid-way")
        return (f"stopped by its budget: {budget_text(budget_stop)}; {done}, {cut_text}. "
                f"Continue with a higher budget: {resume_command} {flag} N")
    if state == "complete":
        extra = ""
        if resumes:
            extra = f"; resumed {'once' if resumes == 1 else f'{resumes} times'}"
            if errors_redone:
                extra += f", {count(errors_redone, 'harness error')} redone"
        return f"complete: {done}{extra}"
    if state == "running":
        return f"running: {done} so far"
    if state == "incomplete":
        return f"incomplete: {done}; the run ended with attempts unfinished. Resume with: {resume_command}"
    return f"interrupted: {done}; the run stopped before its end. Resume with: {resume_command}"


def time_line(elapsed_s: Any, summed_s: Any, sessions: int) -> str:
    """Elapsed time and time summed over workers, named so that neither passes for the other."""
    span = "from the run's start to its last trial" + (f", over {sessions} sessions" if sessions > 1 else "")
    return (f"elapsed {duration(elapsed_s)} ({span}); trial time summed over workers {duration(summed_s)} "
            "(every trial's own time added up: trials that ran side by side each count)")


def compute_line(c: dict[str, Any]) -> str:
    """The compute a run took beside its dollars, each said for what it is."""
    rate = f"{c['tokens_per_s']:.1f} output tokens/s per call" if _finite(c.get("tokens_per_s")) else DASH
    return (f"compute: {duration(c.get('elapsed_s'))} wall time, {duration(c.get('model_s'))} of model time "
            f"(every call's own time added up), {c.get('output_tokens', 0):,} output tokens at {rate}; "
            f"dollars: {c['dollars_text']}")


# ------------------------------------------------------------------ budgets and estimates

def budget_answer(stop: dict[str, Any], complete: int, expected: int) -> str:
    """The head of the answer line of a run its budget stopped."""
    return f"[stopped by its budget: {budget_text(stop)}; on {complete} of {expected} attempts] "


_FIGURES = {"calls": "model calls", "input_tokens": "input tokens", "output_tokens": "output tokens", "usd": "dollars"}


def estimate_lines(check: dict[str, Any]) -> list[str]:
    """How far the estimate made before the run was off, one line per figure."""
    out = []
    so_far = "" if check.get("complete") else " so far (the run is not complete)"
    for key, label in _FIGURES.items():
        f = (check.get("figures") or {}).get(key) or {}
        lo, hi, actual = f.get("fewest"), f.get("most"), f.get("actual")
        fmt = money if key == "usd" else (lambda x: f"{x:,.0f}" if _finite(x) else DASH)
        if lo is None or hi is None:
            out.append(f"{label}: no estimate (the model's price was unknown)" if key == "usd" else
                       f"{label}: no estimate")
            continue
        if actual is None:
            out.append(f"{label}: estimated {fmt(lo)} .. {fmt(hi)}; actual unknown (no price)")
            continue
        share = f"; {pct(actual / hi)} of its most" if hi else ""
        if key in ("output_tokens", "usd"):  # every answer counted at its whole max_tokens: bounds from above
            where = f"above its most by {fmt(actual - hi)}" if actual > hi else "within its most"
            out.append(f"{label}: estimated at most {fmt(lo)} .. {fmt(hi)} (every answer at its whole max_tokens), "
                       f"actual {fmt(actual)}{so_far}: {where}{share}")
            continue
        where = ("within the estimate" if lo <= actual <= hi else
                 f"below its fewest by {fmt(lo - actual)}" if actual < lo else f"above its most by {fmt(actual - hi)}")
        out.append(f"{label}: estimated {fmt(lo)} .. {fmt(hi)}, actual {fmt(actual)}{so_far}: {where}{share}")
    return out


def trials_phrase(trials: Any, strategies: Sequence[str]) -> str:
    """The trial budget as the strategies' traits declare it: "up to 3 trials" for those
    that iterate, "1 trial" for those that make one (the baseline, a single agent
    episode), naming which is which when the run has both."""
    from harness.rundata.roles import iterates

    loop = [s for s in strategies if iterates(s)]
    once = [s for s in strategies if not iterates(s)]
    many = f"up to {trials} trial{'s' if trials != 1 else ''}"
    if not once:
        return many
    if not loop:
        return "1 trial each"
    return f"{many} ({', '.join(loop)}), 1 trial ({', '.join(once)})"
