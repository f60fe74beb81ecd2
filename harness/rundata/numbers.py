"""A run's numbers, computed once: summary.json is their serialised form.

`compute` takes a run's header, its trial frame and errors.jsonl's lines and returns
one JSON-ready document; the CLI table, the static report and the view render it and
compute no statistic of their own. Schema 2 of summary.json (schema 1's fields kept,
with the same meaning; fields may be added, never renamed or removed)::

    schema, run_id, tasks (the run's task count), tasks_compared (tasks every strategy
    completed: every figure uses these), tasks_excluded, excluded_tasks (ids), samples,
    trials (budget), k, oracle_feedback, harness_errors (lines of errors.jsonl but a budget's cuts),
    trial_record_schema, intervals: {rate, paired, mean} (each CI's method, in words),
    strategies: {name: {pass@<k>, pass@<k>_ci95, pass^<k>, pass^<k>_ci95, pass@1_by_trial, pass@1_by_trial_ci95,
        model_calls, cached_calls, input_tokens, output_tokens, tokens, cost_usd,
        cached_cost_usd, errors (trials whose answer held no usable code: unusable
        answers), model_errors, unit_errors and sandbox_errors (attempts errors.jsonl says a
        model error, an unexpected exception, or a sandbox fault a control job met too, stopped), summed_s (= wall_s: trial time summed over
        workers), calls_per_attempt, tasks_scored, tasks_completed, attempts,
        incomplete_attempts, no_tests}},
    paired: [{a, b, diff, ci_low, ci_high, p_value, fixed, broken, both, neither, pairs,
        tasks, excluded, calls_ratio, tokens_ratio}],
    answer: [the answer line, one per pair: the headline strategy's effects first, each led
        by what it measures, the one that isolates its idea first (harness.rundata.effects)],
    effects: [the pairs that measure an effect: paired's fields + effect (isolates | rival |
        total), label], headline (the strategy whose effects lead, or None),
    categories: [{key, label}] (the per-task filters, each saying what it counts),
    caveats: [{key, level, text}],
    status: {state (running | complete | incomplete | interrupted | budget: a --max-calls or
        --max-cost stopped it), text, resume_command, budget_stop ({kind, flag, limit, spent, cut, at[,
        refused_usd]}), expected_attempts, complete_attempts, resumes, errors_redone, errors_open,
        budget_cut (unfinished attempts a budget cut mid-way: errors.jsonl's kind "budget")},
    time: {elapsed_s, summed_s, sessions, text},
    compute: {elapsed_s, model_s (every model call's own time added up), output_tokens,
        tokens_per_s (output tokens over model time), dollars (0 for a local model, None when
        a price is unknown), local, dollars_text, text},
    cost_points (accuracy against cost: per strategy pass@1, usd and tokens per task, each
        with its CI, priced, pareto), cost_axis (dollars | tokens: tokens when a price is unknown),
    by_trial, pass_at_k, compute_curve (kind agent | oracle), compute_matched, self_test,
    stopped_fp, resources, per_task: tables, one dict a row (per_task's categories by the
        first pair, effect_categories by the headline's isolating and compute-matched effects,
        language: the task's, as its records say),
    agents: per strategy whose trials have agent turns: {strategy, episodes, turns,
        turns_per_episode, tool_calls, tool_calls_by_tool: {tool: n}, tool_calls_not_ok,
        episode_stops: {stop reason: episodes}} (harness/rundata/agents.py),
    stop_reasons: [{strategy, stop_reason, attempts, did_not_compile: {compile status: attempts}}]:
        complete attempts by their final trial's stop reason, and those whose final program
        did not compile (compile_error, compile_timeout, compile_memory),
    not_compiled: {strategy: {finals, total, by_status: {compile status: attempts}}}: per
        strategy, its complete attempts and those whose final program did not compile,
    by_kind: {kind: {tasks, <strategy>: {pass@1, pass@1_ci95}}} (only when the run mixes
        task kinds: function, io),
    sandbox_faults: [task ids] (only when an attempt is open on a sandbox_error: the sandbox
        failed a known-good control job too, so the harness is at fault; not scored),
    languages: {language: tasks} (the languages of the tasks the run has records of: python,
        rust, go, cpp, javascript),
    by_language: [{language, strategy, pass@1, pass@1_ci95, tasks, attempts}] (only when the
        run mixes languages: per language and strategy, on the shared tasks of that language),
    io_compare: {mode, tests, tests_changed, attempts, attempts_changed, passed_only_by_source}
        (only when graded with io_compare "source": over the final trials of complete
        attempts, the hidden-test verdicts and final verdicts the sources' own rules
        changed against the strict rule, and the attempts that pass only by them),
    model: {latency_s: {calls, p50, p90, p99, max, mean, basis}, retries: {total,
        by_status: {status code: count}, recorded_trials}} (harness.rundata.modelcalls),
    estimate_check: {complete, figures: {calls, input_tokens, output_tokens, usd: {fewest,
        most, actual, share_of_most, within}}, text} (when run.json holds the estimate made
        before the run: how far off it was),
    session: {ended_at, trials, exit[, budget_stop]} (written by the run when a session ends),
    timings: the last session's own timings (load_s, trials_s, ...; from the run).

Definitions: only complete attempts are scored, by their final trial's hidden verdict;
rates are per task over its attempts, then over tasks; pass@k is the unbiased
estimator and pass^k (all k samples pass) its unbiased counterpart C(c, k)/C(n, k)
from the same samples; `intervals` says in words how each 95% CI was made
(harness.rundata.metrics.INTERVALS: Wilson's score interval over tasks for a rate,
Newcombe's paired score interval for a difference, a bootstrap over tasks for a mean
cost); McNemar's test is exact over attempt pairs. Counts and spend cover every recorded trial (incomplete attempts
too, plus what unfinished trials had spent: errors.jsonl's `spent`).
"""
from __future__ import annotations

import datetime as _dt
import math
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from harness.rundata import frames as fr
from harness.rundata import agents, effects, folder, metrics, modelcalls, wording
from harness.rundata.frames import KEYS, Frames
from harness.rundata import roles
from harness.rundata.records import SCHEMA_VERSION

SUMMARY_SCHEMA = 2
CATEGORIES = ("fixed", "broken", "both_pass", "both_fail", "false_positive", "wrong_tests", "error")


def _num(x: Any) -> Any:
    """JSON-ready: NaN and None become None, numpy scalars plain numbers."""
    if x is None:
        return None
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return None if math.isnan(x) else float(x)
    return x


def _rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: _num(v) for k, v in row.items()} for row in df.to_dict("records")]


def _time(stamp: Any) -> _dt.datetime | None:
    if not stamp:
        return None
    try:
        t = _dt.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)


def resume_command(run_dir: Path | str | None) -> str:
    return f"python -m harness run --resume {run_dir if run_dir is not None else '<run folder>'}"


def _no_tests(f: Frames) -> dict[str, int]:
    """Compared, complete attempts of test-writing strategies (by their traits: a
    strategy that writes no tests, such as a tool-using agent that runs its own
    scripts, is never counted) that ran no internal test (stop_reason
    no_internal_tests, or no internal verdict on their first trial)."""
    t = f.shared_trials
    if t.empty:
        return {}
    ours = t[t["strategy"].map(roles.writes_tests).astype(bool) & t["complete"]]
    first = ours[(ours["trial"] == 1) & ours["error"].isna() & ours["internal_passed"].isna()]
    stopped = ours[ours["stop_reason"] == "no_internal_tests"]
    keys = pd.concat([first[KEYS], stopped[KEYS]]).drop_duplicates()
    counts = keys.groupby("strategy").size()
    return {s: int(counts[s]) for s in f.strategies if s in counts.index}


def _strategy(f: Frames, s: str, spend: pd.Series, no_tests: dict[str, int]) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    for k in f.ks:
        est = metrics.estimate(metrics.per_task_pass_at_k(f.shared_attempts, s, k))
        entry[f"pass@{k}"] = _num(est.value)
        entry[f"pass@{k}_ci95"] = [_num(est.ci_low), _num(est.ci_high)]
        hat = metrics.estimate(metrics.per_task_pass_hat_k(f.shared_attempts, s, k))
        entry[f"pass^{k}"] = _num(hat.value)
        entry[f"pass^{k}_ci95"] = [_num(hat.ci_low), _num(hat.ci_high)]
    by_trial = metrics.pass1_by_trial_table(f.shared_trials, [s], f.budget)
    entry["pass@1_by_trial"] = [_num(x) for x in by_trial["pass"]]
    entry["pass@1_by_trial_ci95"] = [[_num(lo), _num(hi)] for lo, hi in zip(by_trial["ci_low"], by_trial["ci_high"])]
    for name in ("model_calls", "cached_calls", "input_tokens", "output_tokens", "errors", "attempts",
                 "incomplete_attempts"):
        entry[name] = int(spend[name])
    entry["tokens"] = entry["input_tokens"] + entry["output_tokens"]
    for name in ("cost_usd", "cached_cost_usd"):
        v = _num(spend[name])
        entry[name] = None if v is None else round(v, 6)
    entry["summed_s"] = entry["wall_s"] = round(float(spend["summed_s"]), 3)
    att = f.shared_attempts[f.shared_attempts["strategy"] == s]
    entry["calls_per_attempt"] = _num(float(att.groupby("task_id")["calls"].mean().mean())) if not att.empty else None
    entry["tasks_scored"] = int(att["task_id"].nunique())
    entry["tasks_completed"] = len(fr.complete_tasks(f.attempts, s, f.samples))
    entry["no_tests"] = no_tests.get(s, 0)
    # Attempts a harness error stopped (errors.jsonl, one line each; a resumed session
    # may have finished them since): by a model error that outlived its retries, or by
    # an unexpected exception. `errors` above counts something else: unusable answers.
    kinds = [e.get("kind") for e in f.errors if isinstance(e, dict) and e.get("strategy") == s]
    entry["model_errors"] = kinds.count("model_error")
    entry["unit_errors"] = kinds.count("unit_exception")
    entry["sandbox_errors"] = kinds.count("sandbox_error")
    return entry


def paired_dict(p: metrics.Paired, attempts: pd.DataFrame) -> dict[str, Any]:
    return {"a": p.a, "b": p.b, "diff": _num(p.diff), "ci_low": _num(p.ci_low), "ci_high": _num(p.ci_high),
            "p_value": _num(p.p_value), "fixed": p.fixed, "broken": p.broken, "both": p.both,
            "neither": p.neither, "pairs": p.pairs, "tasks": p.tasks, "excluded": p.excluded,
            "calls_ratio": _num(metrics.spend_ratio(attempts, p.a, p.b, "calls")),
            "tokens_ratio": _num(metrics.spend_ratio(attempts, p.a, p.b, "tokens"))}


def _majority_category(ca: dict[str, Any] | None, cb: dict[str, Any] | None) -> str | None:
    """fixed | broken | both_pass | both_fail of a against b on one task, by the majority
    of each one's attempts; None when either has none."""
    if not (ca and cb and ca["attempts"] and cb["attempts"]):
        return None
    sa, sb = ca["passed"] * 2 > ca["attempts"], cb["passed"] * 2 > cb["attempts"]
    return "fixed" if sa and not sb else "broken" if sb and not sa else "both_pass" if sa else "both_fail"


def _per_task(f: Frames, pairs: Sequence[dict[str, Any]], wrong: Iterable[str] = (),
              effect_pairs: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """One row per task (run's list and any task seen): per strategy passed / attempts /
    incomplete / errors, whether it is compared, and the categories it falls in (fixed,
    broken, both_pass, both_fail by the first pair's per-task rates; stopped on a false
    positive; wrong self-tests; an error or an incomplete attempt)."""
    t, a = f.trials, f.attempts
    missing = fr.incomplete_keys(t, f.error_keys)
    tasks = sorted(set(f.task_ids) | (set(t["task_id"]) if not t.empty else set()) | {k[0] for k in missing})
    shared = set(f.footing.shared)
    per: dict[str, dict[str, dict[str, Any]]] = {task: {} for task in tasks}
    if not a.empty:
        g = a.groupby(["task_id", "strategy"]).agg(attempts=("passed", "size"), passed=("passed", "sum"),
                                                    mean_trials=("trials", "mean"), mean_calls=("calls", "mean"))
        for (task, s), row in zip(g.index, g.itertuples(index=False)):
            per[task][s] = {"passed": int(row.passed), "attempts": int(row.attempts),
                            "mean_trials": float(row.mean_trials), "mean_calls": float(row.mean_calls),
                            "incomplete": 0, "errors": 0}
    blank = {"passed": 0, "attempts": 0, "mean_trials": None, "mean_calls": None, "incomplete": 0, "errors": 0}
    for task, s, _ in missing:
        per[task].setdefault(s, dict(blank))["incomplete"] += 1
    if not t.empty:
        errs = t[t["error"].notna()].groupby(["task_id", "strategy"]).size()
        for (task, s), n in errs.items():
            per[task].setdefault(s, dict(blank))["errors"] = int(n)
    final = t[t["final"] & t["complete"]] if not t.empty else t
    fp = set(final.loc[(final["stop_reason"] == "internal_pass") & ~final["hidden_passed"], "task_id"]) \
        if not t.empty else set()
    wrong = set(wrong) | (set(t.loc[t["wrong_tests"] > 0, "task_id"]) if not t.empty else set())
    err = {k[0] for k in missing} | (set(t.loc[t["error"].notna(), "task_id"]) if not t.empty else set())
    top = (pairs[0]["a"], pairs[0]["b"]) if pairs else None
    order = {s: i for i, s in enumerate(f.strategies)}
    languages = _task_languages(f)
    out = []
    for task in tasks:
        cells = per[task]
        cats = []
        if top is not None:
            cat = _majority_category(cells.get(top[0]), cells.get(top[1]))
            if cat is not None:
                cats.append(cat)
        more = []
        for e in effect_pairs:
            cat = _majority_category(cells.get(e["a"]), cells.get(e["b"]))
            if cat in ("fixed", "broken"):
                more.append(f"{cat}_{e['effect']}")
        if task in fp:
            cats.append("false_positive")
        if task in wrong:
            cats.append("wrong_tests")
        if task in err:
            cats.append("error")
        out.append({"task_id": task, "language": languages.get(task), "compared": task in shared,
                    "categories": cats, "effect_categories": more,
                    "strategies": {s: {**c, "pass_rate": c["passed"] / c["attempts"] if c["attempts"] else None}
                                   for s, c in sorted(cells.items(), key=lambda kv: (order.get(kv[0], 99), kv[0]))}})
    return out


def _by_kind(f: Frames) -> dict[str, Any]:
    """Where a run mixes task kinds (function, io): pass@1 with its CI per kind and
    strategy, on the shared tasks of that kind; {} for a run of one kind."""
    t = f.trials
    kinds = dict(zip(t["task_id"], t["task_kind"])) if not t.empty else {}
    if len(set(kinds.values())) < 2:
        return {}
    out: dict[str, Any] = {}
    for kind in sorted(set(kinds.values())):
        sub = f.shared_attempts[f.shared_attempts["task_id"].isin({k for k, v in kinds.items() if v == kind})]
        entry: dict[str, Any] = {"tasks": int(sub["task_id"].nunique())}
        for s in f.strategies:
            est = metrics.estimate(metrics.per_task_pass_at_k(sub, s, 1))
            entry[s] = {"pass@1": _num(est.value), "pass@1_ci95": [_num(est.ci_low), _num(est.ci_high)]}
        out[kind] = entry
    return out


def _task_languages(f: Frames) -> dict[str, str]:
    """Each task's language, as its records say (a task without a record: unknown)."""
    t = f.trials
    if t.empty or "language" not in t.columns:
        return {}
    return {str(k): str(v) for k, v in zip(t["task_id"], t["language"].fillna("python"))}


def _languages(f: Frames) -> dict[str, int]:
    """{language: tasks} over the tasks the run has records of, in name order."""
    counts: dict[str, int] = {}
    for language in _task_languages(f).values():
        counts[language] = counts.get(language, 0) + 1
    return dict(sorted(counts.items()))


def _by_language(f: Frames) -> list[dict[str, Any]]:
    """Where a run mixes languages: one row per language x strategy with pass@1 and its
    CI on the shared tasks of that language, how many of them the strategy scored, and
    its complete attempts there; [] for a run of one language."""
    languages = _task_languages(f)
    if len(set(languages.values())) < 2:
        return []
    rows = []
    for language in sorted(set(languages.values())):
        sub = f.shared_attempts[f.shared_attempts["task_id"].isin({t for t, v in languages.items() if v == language})]
        for s in f.strategies:
            mine = sub[sub["strategy"] == s]
            est = metrics.estimate(metrics.per_task_pass_at_k(sub, s, 1))
            rows.append({"language": language, "strategy": s, "pass@1": _num(est.value),
                         "pass@1_ci95": [_num(est.ci_low), _num(est.ci_high)],
                         "tasks": int(mine["task_id"].nunique()), "attempts": int(len(mine))})
    return rows


def _io_compare(f: Frames) -> dict[str, Any]:
    """What io_compare "source" changed against the strict rule ({} in strict mode)."""
    mode = str(f.config.get("io_compare") or "strict")
    if mode == "strict":
        return {}
    t = f.trials
    final = t[t["final"] & t["complete"]] if not t.empty else t
    changed = final["hidden_passed"] != final["strict_passed"].astype(bool) if not final.empty else final
    return {"mode": mode, "tests": int(final["n_hidden"].sum()) if not final.empty else 0,
            "tests_changed": int(final["strict_changed"].sum()) if not final.empty else 0,
            "attempts": len(final), "attempts_changed": int(changed.sum()) if not final.empty else 0,
            "passed_only_by_source": int((changed & final["hidden_passed"]).sum()) if not final.empty else 0}
def _estimate_check(header: dict[str, Any], strategies: dict[str, dict[str, Any]], complete: bool
                    ) -> dict[str, Any] | None:
    """The estimate made before the run (run.json's "estimate", harness/run/budget.py) beside
    what the run spent: per figure the estimate's fewest and most, the actual, and the
    actual as a share of the most. Calls count cache hits (the estimate counts calls
    asked for); dollars are at list price (cache-served answers included)."""
    est = header.get("estimate")
    if not isinstance(est, dict) or not isinstance(est.get("total"), dict):
        return None
    fewest, most = est["total"].get("fewest") or {}, est["total"].get("most") or {}
    calls = sum(int(s.get("model_calls") or 0) for s in strategies.values())
    inp = sum(int(s.get("input_tokens") or 0) for s in strategies.values())
    out = sum(int(s.get("output_tokens") or 0) for s in strategies.values())
    costs = [(s.get("cost_usd"), s.get("cached_cost_usd")) for s in strategies.values()]
    priced = [a is not None or b is not None for a, b in costs]
    usd = sum((a or 0.0) + (b or 0.0) for a, b in costs) if priced and all(priced) else None
    rows = {}
    for key, actual in (("calls", calls), ("input_tokens", inp), ("output_tokens", out), ("usd", usd)):
        lo, hi = fewest.get(key), most.get(key)
        rows[key] = {"fewest": lo, "most": hi, "actual": _num(actual),
                     "share_of_most": _num(actual / hi) if actual is not None and hi else None,
                     "within": None if actual is None or lo is None or hi is None else bool(lo <= actual <= hi)}
    return {"complete": complete, "figures": rows, "basis": est.get("basis", "")}


def _model(trials: pd.DataFrame) -> dict[str, Any]:
    """The model's latency percentiles per call and its retries by status code, over
    every recorded trial (harness.rundata.modelcalls says what each record gives)."""
    if trials.empty:
        return {"latency_s": modelcalls.latency_summary([], []), "retries": modelcalls.retry_summary([], [])}
    latencies = [x for xs in trials["call_latencies"] for x in xs]
    return {"latency_s": modelcalls.latency_summary(latencies, trials["latency_basis"]),
            "retries": modelcalls.retry_summary(trials["call_retries"], trials["retries_recorded"])}


def _status(f: Frames, *, live: bool, session: dict[str, Any] | None, n_records: int, resumes: int,
            run_dir: Any) -> dict[str, Any]:
    n_tasks = len(f.task_ids)
    expected = n_tasks * len(f.strategies) * f.samples
    a = f.attempts
    wanted = a[a["task_id"].isin(set(f.task_ids)) & a["strategy"].isin(f.strategies) & (a["attempt"] <= f.samples)] \
        if not a.empty else a
    complete = len(wanted)
    done = set(a[KEYS].itertuples(index=False, name=None)) if not a.empty else set()
    keyed = [e for e in f.errors if fr.error_keys([e])]
    # a budget's cut is no harness error, whether a later session finished its attempt or not
    redone = sum(1 for e, k in zip(keyed, f.error_keys) if k in done and e.get("kind") != "budget")
    open_kinds: dict[str, int] = {}
    cut: set[Any] = set()  # unfinished attempts a budget stopped mid-way (their calls are counted)
    for e, k in zip(keyed, f.error_keys):
        if k not in done:
            kind = str(e.get("kind") or "error")
            if kind == "budget":  # the budget stopped it mid-way: not a harness error
                cut.add(k)
                continue
            open_kinds[kind] = open_kinds.get(kind, 0) + 1
    ended = isinstance(session, dict) and int(session.get("trials", -1)) == n_records
    if live and not ended:  # a session is still writing (maybe its summary and report)
        state = "running"
    elif expected and complete >= expected:
        state = "complete"
    elif ended and session.get("budget_stop"):
        state = "budget"
    elif ended:
        state = "incomplete"
    else:
        state = "interrupted"
    command = resume_command(run_dir)
    return {"state": state, "expected_attempts": expected, "complete_attempts": complete, "resumes": resumes,
            "errors_redone": redone, "errors_open": open_kinds, "budget_cut": len(cut),
            "resume_command": command if state in ("incomplete", "interrupted", "budget") else None,
            "budget_stop": session.get("budget_stop") if state == "budget" else None,
            "text": wording.status_text(state, complete=complete, expected=expected, resumes=resumes,
                                        errors_redone=redone, resume_command=command,
                                        budget_stop=session.get("budget_stop") if state == "budget" else None,
                                        cut=len(cut))}


def _resumes(header: dict[str, Any]) -> int:
    value = header.get("resumes")
    if isinstance(value, list):
        return len(value)
    return 1 if header.get("resumed") else 0


def compute(header: dict[str, Any], trials: pd.DataFrame, errors: Sequence[dict[str, Any]] = (), *,
            run_dir: Path | str | None = None, live: bool = False, session: dict[str, Any] | None = None,
            timings: dict[str, Any] | None = None, bad_lines: int = 0, error_log: str | None = None,
            wrong_tasks: Iterable[str] = (), prepared: Frames | None = None) -> dict[str, Any]:
    """Every number of one run (the module's docstring gives the document).

    `trials`: frames.trials_frame of its records; `errors`: errors.jsonl's lines;
    `live`: a session is writing the run now (only the view can tell); `session`: the
    last ended session as summary.json recorded it; `bad_lines`: unreadable lines the
    reader skipped; `error_log`: folder.error_log_kind of the run folder; `prepared`: the frames,
    when the caller already made them with frames.prepare."""
    f = prepared if prepared is not None else fr.prepare(header, trials, errors)
    cfg = f.config
    spend = metrics.resources(f.trials, f.strategies, f.error_keys, metrics.unfinished_spend(f.errors)) \
        .set_index("strategy")
    no_tests = _no_tests(f)
    strategies = {s: _strategy(f, s, spend.loc[s], no_tests) for s in f.strategies}
    pairs = [paired_dict(metrics.paired_comparison(f.shared_attempts, a, b, tasks=f.footing.shared,
                                                   all_tasks=f.task_ids), f.shared_attempts)
             for a, b in metrics.default_pairs(f.strategies)]
    effect_rows = effects.effects(f.strategies, pairs)
    lead_pairs = effects.effect_pairs(pairs, effect_rows, f.strategies)
    tasks_info = header.get("tasks") if isinstance(header.get("tasks"), dict) else {}
    n_tasks = tasks_info.get("count")
    n_tasks = n_tasks if isinstance(n_tasks, int) and not isinstance(n_tasks, bool) and n_tasks >= 0 \
        else len(f.task_ids)
    resumes = _resumes(header)
    n_records = int(len(trials))
    status = _status(f, live=live, session=session, n_records=n_records, resumes=resumes, run_dir=run_dir)
    last = trials["finished_at"][trials["finished_at"].astype(bool)].max() if not trials.empty else None
    start, end = _time(header.get("created_at")) or _time(trials["finished_at"].min() if n_records else None), \
        _time(last)
    elapsed = max(0.0, (end - start).total_seconds()) if start and end else None
    summed = round(float(trials["wall_s"].sum()), 3) if n_records else 0.0
    sessions = 1 + resumes
    incomplete = {s: e["incomplete_attempts"] for s, e in strategies.items() if e["incomplete_attempts"]}
    unusable = {s: e["errors"] for s, e in strategies.items() if e["errors"]}
    by_kind = _by_kind(f)
    by_trial = metrics.pass1_by_trial_table(f.shared_trials, f.strategies, f.budget)
    curve = pd.concat([metrics.compute_curve(f.shared_trials, f.shared_attempts, s, f.budget)
                       for s in f.strategies] or [pd.DataFrame()], ignore_index=True)
    doc: dict[str, Any] = {
        "schema": SUMMARY_SCHEMA,
        "run_id": header.get("run_id"),
        "tasks": n_tasks,
        "tasks_compared": len(f.footing.shared),
        "tasks_excluded": len(f.footing.excluded),
        "excluded_tasks": list(f.footing.excluded),
        "samples": f.samples,
        "trials": f.budget,
        "k": f.ks,
        "oracle_feedback": bool(cfg.get("oracle_feedback", False)) or bool(
            n_records and trials["oracle_feedback"].astype(bool).any()),
        "harness_errors": sum(1 for e in errors if e.get("kind") != "budget"),
        "trial_record_schema": SCHEMA_VERSION,
        "intervals": dict(metrics.INTERVALS),
        "strategies": strategies,
        "paired": pairs,
        "answer": effects.answer(f.strategies, strategies, pairs, effect_rows),
        "effects": effect_rows,
        "headline": effects.headline(f.strategies, effect_rows),
        "categories": effects.categories(pairs, effect_rows, f.strategies),
        "status": status,
        "time": {"elapsed_s": None if elapsed is None else round(elapsed, 3), "summed_s": summed,
                 "sessions": sessions, "text": wording.time_line(elapsed, summed, sessions)},
        "by_trial": _rows(by_trial),
        "pass_at_k": _rows(metrics.pass_at_k_table(f.shared_attempts, f.strategies, f.ks)
                           .assign(excluded=len(f.footing.excluded))),
        "compute_curve": _rows(curve),
        "compute_matched": _rows(metrics.compute_matched(f.shared_attempts, f.strategies)),
        "self_test": _rows(metrics.self_test_quality(f.shared_trials, f.strategies)),
        "stopped_fp": _rows(metrics.stopped_on_false_positive(f.shared_attempts, f.strategies)),
        "resources": _rows(spend.reset_index()),
        "per_task": _per_task(f, pairs, wrong_tasks, lead_pairs),
        "agents": agents.agent_table(f.trials, f.strategies),
        "stop_reasons": (stops := agents.stop_table(f.trials, f.strategies)),
        "not_compiled": agents.not_compiled(stops),
        "model": _model(f.trials),
    }
    doc["compute"] = _compute(cfg, trials, strategies, elapsed)
    points, axis = metrics.cost_points(f.shared_attempts, f.strategies)
    doc["cost_points"], doc["cost_axis"] = _rows(points), axis
    check = _estimate_check(header, strategies, status["state"] == "complete")
    if check is not None:
        check["text"] = wording.estimate_lines(check)
        doc["estimate_check"] = check
    if status["state"] == "budget" and status.get("budget_stop"):
        doc["answer"] = [wording.budget_answer(status["budget_stop"], status["complete_attempts"],
                                               status["expected_attempts"]) + doc["answer"][0], *doc["answer"][1:]]
    doc["caveats"] = wording.caveats(
        oracle=doc["oracle_feedback"], pairs=pairs, shared=len(f.footing.shared), excluded=f.footing.excluded,
        n_tasks=len(f.task_ids), samples=f.samples, incomplete=incomplete, no_tests=no_tests,
        unusable=unusable, errors_open=status["errors_open"], errors_redone=status["errors_redone"],
        error_log=error_log, resumes=resumes, bad_lines=bad_lines, resume_command=resume_command(run_dir),
        task_check=header.get("task_check") if isinstance(header.get("task_check"), dict) else None)
    if faulted := _sandbox_faults(f):
        doc["sandbox_faults"] = faulted
        doc["caveats"].append(wording.caveat("sandbox_faults", "warn", (
            f"The sandbox failed to grade {wording.count(len(faulted), 'task')} even on a known-good control job run "
            f"right after (the harness's fault, not the program's; those attempts are not scored): "
            f"{', '.join(faulted[:5])}{', ...' if len(faulted) > 5 else ''}. `{resume_command(run_dir)}` grades "
            "them again.")))
    in_process = _in_process_verdicts(header, f)
    if in_process:
        doc["caveats"].append(wording.caveat("in_process_verdicts", "warn", (
            f"{wording.count(len(in_process), 'task')} of {len(f.task_ids)} graded by their own test file run "
            "with the language's test runner in the program's process (Exercism's layout), each paired test checked "
            "against a twin with its literals shuffled: a test with no pair, or a program that recognises the public "
            "test file, can still forge its verdict "
            f"(docs/tasks.md; {', '.join(in_process[:3])}{', ...' if len(in_process) > 3 else ''})")))
    if by_kind:
        doc["by_kind"] = by_kind
    doc["languages"] = _languages(f)
    if by_language := _by_language(f):
        doc["by_language"] = by_language
    if io_cmp := _io_compare(f):
        doc["io_compare"] = io_cmp
        doc["caveats"].append(wording.caveat("io_compare", "warn", (
            f"io_compare {io_cmp['mode']!r}: hidden tests were judged by each source's own rule, lenient ones "
            f"included; against the strict rule that changed {io_cmp['tests_changed']} of "
            f"{wording.count(io_cmp['tests'], 'hidden-test verdict')} and {io_cmp['attempts_changed']} of "
            f"{wording.count(io_cmp['attempts'], 'final verdict')} ({io_cmp['passed_only_by_source']} pass only "
            "by the source's rule)")))
    if session is not None:
        doc["session"] = session
    if timings is not None:
        doc["timings"] = timings
    return doc


def _sandbox_faults(f: Frames) -> list[str]:
    """The tasks with an attempt still open on a sandbox fault (errors.jsonl kind
    sandbox_error: the sandbox failed a known-good control job too, harness/core/evaluator.py)."""
    done = set(f.attempts[KEYS].itertuples(index=False, name=None)) if not f.attempts.empty else set()
    return sorted({k[0] for e, k in zip([e for e in f.errors if fr.error_keys([e])], f.error_keys)
                   if k not in done and isinstance(e, dict) and e.get("kind") == "sandbox_error"})


def _compute(cfg: Mapping[str, Any], trials: pd.DataFrame, strategies: Mapping[str, Any],
             elapsed: float | None) -> dict[str, Any]:
    """Wall time, model time and tokens/s beside the dollars, for every model: a local
    model's dollars are $0 and said to be, an unpriced model's unknown (never $0)."""
    model_s = round(float(trials["model_s"].sum()), 3) if not trials.empty else 0.0
    out_tokens = sum(int(s["output_tokens"]) for s in strategies.values())
    costs = [s["cost_usd"] for s in strategies.values()]
    local = str(cfg.get("model") or "").partition(":")[0] == "local"
    known = [c for c in costs if c is not None]
    dollars = round(sum(known), 6) if known and len(known) == len(costs) else None
    if local:
        text = "$0: the local model runs on this machine (its cost is the compute above)"
    elif dollars is None:
        text = "unknown: no price for this model (give --price IN/OUT or a price table), never counted as $0"
    else:
        text = f"{wording.money(dollars)} at list price"
    doc = {"elapsed_s": None if elapsed is None else round(elapsed, 3), "model_s": model_s,
           "output_tokens": out_tokens, "tokens_per_s": round(out_tokens / model_s, 2) if model_s > 0 else None,
           "dollars": 0.0 if local else dollars, "local": local, "dollars_text": text}
    doc["text"] = wording.compute_line(doc)
    return doc


def _in_process_verdicts(header: Mapping[str, Any], f: Frames) -> list[str]:
    """The run's tasks whose verdict is taken in the program's process (run.json's
    tasks.in_process_verdicts), those with records."""
    tasks = header.get("tasks") if isinstance(header.get("tasks"), Mapping) else {}
    listed = tasks.get("in_process_verdicts") if isinstance(tasks, Mapping) else None
    if not isinstance(listed, list):
        return []
    ran = set(f.task_ids)
    return sorted(str(t) for t in listed if str(t) in ran)


# ------------------------------------------------------------------ comparisons of runs

def compare(runs: Sequence[tuple[str, Path, Frames]]) -> dict[str, Any]:
    """The same strategy in the first run against each later run, on the tasks both
    runs completed (each run's equal footing): pairs, their answer lines, caveats.
    `runs`: (label, run folder, frames) each."""
    pairs: list[dict[str, Any]] = []
    same, differ = [], []
    first_label, first_dir, first = runs[0]
    for label, run_dir, other in runs[1:]:
        if Path(run_dir).resolve() == Path(first_dir).resolve():
            same.append((first_label, label))
        ta, tb = set(first.task_ids), set(other.task_ids)
        if ta != tb:
            differ.append((first_label, label, len(ta), len(tb), len(ta & tb)))
        both = pd.concat([first.shared_attempts.assign(strategy=first.shared_attempts["strategy"] + "@A"),
                          other.shared_attempts.assign(strategy=other.shared_attempts["strategy"] + "@B")],
                         ignore_index=True)
        tasks = set(first.footing.shared) & set(other.footing.shared)
        for s in first.strategies:
            if s not in other.strategies:
                continue
            p = metrics.paired_comparison(both, f"{s}@A", f"{s}@B", tasks=tasks, all_tasks=ta | tb)
            row = paired_dict(p, both)
            row.update(a=f"{s} ({first_label})", b=f"{s} ({label})", runs=f"{first_label} vs {label}")
            pairs.append(row)
    return {"paired": pairs, "answer": [wording.answer_line(p) for p in pairs],
            "caveats": wording.across_runs(same=same, differ=differ)}


# ------------------------------------------------------------------ from a folder

def of_folder(run: folder.RunFolder, *, session: dict[str, Any] | None = None,
              timings: dict[str, Any] | None = None, trials: pd.DataFrame | None = None) -> dict[str, Any]:
    """The numbers of a run folder read whole. What only the run knew (the session it
    ended, its timings) is kept from the summary.json already there unless given."""
    old = folder.read_summary(run.run_dir) or {}
    if session is None and isinstance(old.get("session"), dict):
        session = old["session"]
    if timings is None and isinstance(old.get("timings"), dict):
        timings = old["timings"]
    return compute(run.header, trials if trials is not None else fr.trials_frame(run.records), run.errors,
                   run_dir=run.run_dir, session=session, timings=timings,
                   live=folder.session_live(run.run_dir) is True,
                   error_log=folder.error_log_kind(run.run_dir))


def end_session(run_dir: Path, *, exit_code: int, timings: dict[str, Any] | None = None,
                budget_stop: dict[str, Any] | None = None) -> dict[str, Any]:
    """Called by the run as a session ends: computes the numbers with the session's
    end recorded (so that status can tell an ended run from an interrupted one) and
    writes summary.json, once. Returns the numbers."""
    run = folder.load(Path(run_dir), need_trials=False)
    trials = fr.trials_frame(run.records)
    session = {"ended_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
               "trials": len(trials), "exit": int(exit_code)}  # trials as scored (a repeated line once)
    if budget_stop:
        session["budget_stop"] = dict(budget_stop)  # {kind, flag, limit, spent, at}
    doc = of_folder(run, session=session, timings=timings, trials=trials)
    folder.write_summary(run.run_dir, doc)
    return doc


def of_records(header: dict[str, Any], records: Sequence[Any], errors: Sequence[dict[str, Any]] = (),
               **kwargs: Any) -> dict[str, Any]:
    """`compute` over trial records (the frame built here)."""
    return compute(header, fr.trials_frame(records), errors, **kwargs)
