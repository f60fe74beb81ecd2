"""One task's attempts as timelines of trials, read from the records' own lines.

Only the lines of the asked task are read (by byte range from the index). Records
of schema 1 and 2 are both shown as the Actor lived them:

* the feedback a trial's Actor saw is the previous trial's `feedback`;
* the lessons it saw are its `memory_shown`, and those recalled from other tasks
  (reflexion+recall) its `recalled`, each with its BM25 score and source task;
* the lesson *written*: schema 2 stores in trial t+1 the lesson written at its start
  about trial t; schema 1 stored it in trial t itself (written after trial t failed).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from harness.view.index import TrialIndex


@dataclass(frozen=True)
class TestLine:
    test: str
    status: str
    detail: str
    wrong: bool = False  # the reference solution fails this self-test


@dataclass(frozen=True)
class DiffLine:
    kind: str  # add | del | ctx | hunk
    text: str


@dataclass
class TrialView:
    trial: int
    final: bool
    stop_reason: str | None
    hidden_passed: bool
    internal_passed: bool | None
    error: str | None
    code: str
    raw_output: str
    diff: list[DiffLine]
    unchanged: bool
    internal: list[TestLine]
    hidden: list[TestLine]
    feedback_seen: str  # the feedback in this trial's prompt (previous trial's)
    lessons_seen: list[str]
    lesson_written: str | None
    lesson_about: int | None  # the trial the written lesson is about
    testgen: dict[str, Any] | None
    spend: dict[str, Any]
    finished_at: str
    schema: int
    oracle_feedback: bool
    temperature_used: float | None
    # reflexion+recall: [{lesson, source_task, source_run, score, rank, id}], best first
    recalled: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class AttemptView:
    strategy: str
    attempt: int
    complete: bool
    passed: bool | None  # final trial's hidden verdict; None when incomplete
    stop_reason: str | None
    trials: list[TrialView] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)  # errors.jsonl lines of this attempt

    @property
    def anchor(self) -> str:
        return f"{self.strategy}-{self.attempt}"


def _tests(results: Any, reference: dict[str, str] | None = None) -> list[TestLine]:
    out = []
    for r in results if isinstance(results, list) else []:
        if not isinstance(r, dict):
            continue
        test = str(r.get("test", ""))
        wrong = reference is not None and reference.get(test, "passed") != "passed"
        out.append(TestLine(test, str(r.get("status", "?")), str(r.get("detail") or ""), wrong))
    return out


def _internal(rec: dict[str, Any], checked: dict[str, str] | None = None) -> list[TestLine]:
    """Each internal test with its verdict; tests that did not run say so. A test is
    wrong when the reference solution fails it (the record's `internal_reference`, or
    self_tests.jsonl from `harness view --check-self-tests`)."""
    ref_rows = rec.get("internal_reference")
    reference = checked
    if isinstance(ref_rows, list):
        reference = {str(r.get("test")): str(r.get("status")) for r in ref_rows if isinstance(r, dict)}
    results = {t.test: t for t in _tests(rec.get("internal_results"), reference)}
    tests = [str(t) for t in rec.get("internal_tests") or []]
    out = [results.get(t) or TestLine(t, "not run", "", bool(reference and reference.get(t, "passed") != "passed"))
           for t in tests]
    out += [r for name, r in results.items() if name not in set(tests)]
    return out


def _diff(before: str, after: str) -> list[DiffLine]:
    out = []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), "previous trial", "this trial",
                                     lineterm="", n=3):
        if line.startswith(("---", "+++")):
            continue
        kind = "hunk" if line.startswith("@@") else "add" if line.startswith("+") else \
            "del" if line.startswith("-") else "ctx"
        out.append(DiffLine(kind, line))
    return out


def _spend(rec: dict[str, Any]) -> dict[str, Any]:
    keys = ("model_calls", "cached_calls", "input_tokens", "output_tokens", "cache_read_tokens",
            "cache_write_tokens", "cost_usd", "model_s", "sandbox_s", "wall_s")
    return {k: rec.get(k) for k in keys}


def attempts_for(index: TrialIndex, frame: pd.DataFrame, task_id: str, strategies: list[str],
                 errors: list[dict[str, Any]],
                 checks: dict[tuple[str, str, int], dict[str, str]] | None = None) -> list[AttemptView]:
    """Every attempt of one task, strategies in run order, each trial read in full."""
    rows = frame[frame["task_id"] == task_id] if not frame.empty else frame
    records = index.read_records(list(zip(rows["offset"].astype(int), rows["length"].astype(int)))) \
        if not rows.empty else []
    by_attempt: dict[tuple[str, int], dict[int, dict[str, Any]]] = {}
    for rec in records:
        try:
            key = (str(rec.get("strategy")), int(rec.get("attempt") or 0))
            by_attempt.setdefault(key, {})[int(rec.get("trial") or 0)] = rec  # last line of a trial wins
        except (TypeError, ValueError):
            continue
    for e in errors:  # attempts a harness or model error stopped before their first trial
        if e.get("task_id") == task_id:
            try:
                by_attempt.setdefault((str(e.get("strategy")), int(e.get("attempt") or 0)), {})
            except (TypeError, ValueError):
                continue
    order = {s: i for i, s in enumerate(strategies)}
    out = []
    for (strategy, attempt), trials in sorted(by_attempt.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1])):
        recs = [trials[t] for t in sorted(trials)]  # may be empty: see errors
        final_at = next((i for i, r in enumerate(recs) if r.get("final")), None)
        if final_at is not None:
            recs = recs[:final_at + 1]
        views: list[TrialView] = []
        prev: dict[str, Any] | None = None
        checked = (checks or {}).get((task_id, strategy, attempt))
        for rec in recs:
            views.append(_trial(rec, prev, checked))
            prev = rec
        final = recs[final_at] if final_at is not None else None
        att_errors = [e for e in errors if e.get("task_id") == task_id and e.get("strategy") == strategy
                      and e.get("attempt") == attempt]
        out.append(AttemptView(strategy, attempt, final is not None,
                               bool(final.get("hidden_passed")) if final is not None else None,
                               final.get("stop_reason") if final else None, views, att_errors))
    return out


def _trial(rec: dict[str, Any], prev: dict[str, Any] | None, checked: dict[str, str] | None = None) -> TrialView:
    schema = int(rec.get("schema") or 1)
    trial = int(rec.get("trial") or 0)
    code = str(rec.get("code") or "")
    before = str(prev.get("code") or "") if prev else None
    lesson = rec.get("lesson") or None
    if lesson and schema >= 2:
        about = trial - 1 if trial > 1 else None
    else:
        about = trial if lesson else None
    testgen = rec.get("testgen") if isinstance(rec.get("testgen"), dict) else None
    oracle = rec.get("oracle_feedback")
    if oracle is None:
        oracle = bool((testgen or {}).get("oracle_feedback", False))
    temp = rec.get("temperature_used")
    return TrialView(
        trial=trial, final=bool(rec.get("final")), stop_reason=rec.get("stop_reason"),
        hidden_passed=bool(rec.get("hidden_passed")), internal_passed=rec.get("internal_passed"),
        error=rec.get("error"), code=code, raw_output=str(rec.get("raw_output") or ""),
        diff=_diff(before, code) if before is not None else [],
        unchanged=before is not None and before.strip() == code.strip(),
        internal=_internal(rec, checked), hidden=_tests(rec.get("hidden_results")),
        feedback_seen=str(prev.get("feedback") or "") if prev else "",
        lessons_seen=[str(x) for x in rec.get("memory_shown") or []],
        lesson_written=str(lesson) if lesson else None, lesson_about=about, testgen=testgen,
        spend=_spend(rec), finished_at=str(rec.get("finished_at") or ""), schema=schema,
        oracle_feedback=bool(oracle), temperature_used=float(temp) if isinstance(temp, (int, float)) else None,
        recalled=[x for x in rec.get("recalled") or [] if isinstance(x, dict)],
    )
