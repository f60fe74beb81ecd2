"""A synthetic run folder built from TrialRecord objects, for report tests.

Reflexion, hand-designed per (task, attempt) as trials of (internal, hidden):
  HumanEval/0  a1: (F,F) (T,T) stop internal_pass     a2: (T,T)
  HumanEval/1  a1: (F,F) (F,T) (F,F) budget            a2: (T,F) stop on a false positive
  HumanEval/2  a1: (F,F) (F,F) (T,T)                   a2: (F,F) and no final: incomplete
  HumanEval/3  a1: model error at trial 1              a2: (F,F) x3 budget
  Evil<&>      a1: (T,T)                               a2: (T,T)   (HTML in code, tests, lesson)
HumanEval/2 is left out of every figure: reflexion did not complete both of its
samples there (equal footing), so 4 tasks are compared and 1 excluded.
Hand-computed on /0, /1, /3, Evil: reflexion pass@1 = 2/4 = 0.5; pass@2 = 0.5;
pass@1 by trial = [1.5/4, 2.5/4, 2/4] = [0.375, 0.625, 0.5].
Baseline passes (a1, a2): /0 (T,F), /1 (F,F), /2 (T,F), /3 (F,F), Evil (T,T):
pass@1 = (.5 + 0 + 0 + 1)/4 = 0.375, pass@2 = (1 + 0 + 0 + 1)/4 = 0.5.
Feedback: every attempt (F,F) then (T,T) except /1 and /3, which stay (F,F) x3:
pass@1 by trial [0, 0.5, 0.5].
reflexion - baseline, attempt pairs: fixed 1 (/0 a2), broken 0, both 3, neither 4;
diff = +0.125 on 4 tasks (8 pairs).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import msgspec

from harness.rundata.events import LessonWritten, TestsWritten

from harness.rundata import TestRecord, TrialLog, TrialRecord, write_json
from tests.helpers import cli

RUN_ID = "synthetic-run"
EVIL_TASK = 'Evil<&>"task'
EVIL_CODE = 'def f(x):\n    return "</pre><script>alert(1)</script>" if x < 0 else x & 1\n'
TESTGEN = {"raw_output": "assert f(1) == 1\nassert f(-1) == '<x>'\nnot <a> test", "kept": 2,
           "dropped_unparseable": 1, "dropped_over_limit": 0}
EVIL_LESSON = "Never trust <b>bold</b> & '<script>' tags"

REFLEXION: dict[tuple[str, int], list[tuple[bool | None, bool]]] = {
    ("HumanEval/0", 1): [(False, False), (True, True)],
    ("HumanEval/0", 2): [(True, True)],
    ("HumanEval/1", 1): [(False, False), (False, True), (False, False)],
    ("HumanEval/1", 2): [(True, False)],
    ("HumanEval/2", 1): [(False, False), (False, False), (True, True)],
    ("HumanEval/2", 2): [(False, False)],  # incomplete: no final record
    ("HumanEval/3", 1): [(None, False)],  # model error
    ("HumanEval/3", 2): [(False, False), (False, False), (False, False)],
    (EVIL_TASK, 1): [(True, True)],
    (EVIL_TASK, 2): [(True, True)],
}
BASELINE = {"HumanEval/0": (True, False), "HumanEval/1": (False, False), "HumanEval/2": (True, False),
            "HumanEval/3": (False, False), EVIL_TASK: (True, True)}
TASKS = ["HumanEval/0", "HumanEval/1", "HumanEval/2", "HumanEval/3", EVIL_TASK]


def rec(task_id: str, strategy: str, attempt: int, trial: int, *, final: bool, hidden: bool,
        internal: bool | None = None, stop: str | None = None, code: str | None = None,
        error: str | None = None, lesson: str | None = None, calls: int = 1, feedback: str = "",
        run_id: str = RUN_ID, testgen: dict[str, Any] | None = None) -> TrialRecord:
    tests = ["assert f(1) == 1", "assert f(-1) == '<x>'"] if internal is not None else []
    results = [TestRecord(t, "passed" if internal else "failed", "" if internal else "got 0 & <y>")
               for t in tests]
    return TrialRecord(
        run_id=run_id, task_id=task_id, strategy=strategy, attempt=attempt, trial=trial,
        final=final, stop_reason=stop if final else None,
        code=code if code is not None else f"def f(x):\n    return {trial}  # {strategy} a{attempt}\n",
        raw_output="", internal_tests=tests, internal_results=results, internal_passed=internal,
        hidden_results=[TestRecord("hidden", "passed" if hidden else "failed")], hidden_passed=hidden,
        feedback=feedback, error=error, model_calls=calls, input_tokens=100 * calls,
        output_tokens=20 * calls, cost_usd=0.001 * calls, wall_s=0.5, finished_at="2026-11-30T00:00:00Z",
        events=events_of(trial, tests, lesson, testgen),
    )


def events_of(trial: int, tests: list[str], lesson: str | None, testgen: dict[str, Any] | None) -> list[Any]:
    """The events a reflexion trial's record holds: the tests written (trial 1), the
    lesson written at its start about the trial before."""
    events: list[Any] = []
    if testgen is not None:
        dropped = {k[len("dropped_"):]: v for k, v in testgen.items() if k.startswith("dropped_")}
        events.append(TestsWritten(tests=tests, raw_output=testgen.get("raw_output", ""), kept=testgen.get("kept", 0),
                                   dropped=dropped))
    if lesson:
        events.append(LessonWritten(text=lesson, about_trial=trial - 1))
    return events


def with_lesson(record: TrialRecord, text: str | None) -> TrialRecord:
    """`record` with its lesson's text replaced (or its lesson removed)."""
    others = [e for e in record.events if not isinstance(e, LessonWritten)]
    lessons = [msgspec.structs.replace(e, text=text) for e in record.lessons] if text else []
    return msgspec.structs.replace(record, events=others + lessons)


def iterated(strategy: str, plan: dict[tuple[str, int], list[tuple[bool | None, bool]]],
             budget: int = 3) -> list[TrialRecord]:
    out = []
    for (task, attempt), trials in plan.items():
        complete = not (strategy == "reflexion" and task == "HumanEval/2" and attempt == 2)
        for i, (internal, hidden) in enumerate(trials, 1):
            last = complete and i == len(trials)
            error = "model error: timed out after 5 retries" if internal is None else None
            stop = "error" if error else ("internal_pass" if internal else "budget")
            lesson = None if (internal or last or error) else (
                EVIL_LESSON if task == EVIL_TASK else f"lesson {task} a{attempt} t{i}")
            calls = 2 if i == 1 else (1 if strategy == "feedback" else 2)  # testgen + actor; actor (+ reflection)
            out.append(rec(task, strategy, attempt, i, final=last, hidden=hidden, internal=internal,
                           stop=stop, error=error, lesson=lesson, calls=calls if not error else 0,
                           code=EVIL_CODE if task == EVIL_TASK else None,
                           feedback=f"feedback {strategy} {task} a{attempt} t{i}: <fail> & more",
                           testgen=TESTGEN if i == 1 else None))
    return out


def synthetic_records(run_id: str = RUN_ID) -> list[TrialRecord]:
    feedback_plan = {}
    for task in TASKS:
        for a in (1, 2):
            feedback_plan[(task, a)] = ([(False, False)] * 3 if task in ("HumanEval/1", "HumanEval/3")
                                        else [(False, False), (True, True)])
    records = iterated("reflexion", REFLEXION) + iterated("feedback", feedback_plan)
    for task, passes in BASELINE.items():
        for a, hidden in enumerate(passes, 1):
            records.append(rec(task, "baseline", a, 1, final=True, hidden=hidden, stop="single_sample",
                               code=EVIL_CODE if task == EVIL_TASK else None))
    return [msgspec.structs.replace(r, run_id=run_id) for r in records]


def header(run_id: str = RUN_ID, **config: Any) -> dict[str, Any]:
    cfg = {"strategies": ["reflexion", "feedback", "baseline"], "samples": 2, "k": [1, 2],
           "trials": 3, "model": "scripted:test", "oracle_feedback": False}
    cfg.update(config)
    return {"schema": 1, "run_id": run_id, "created_at": "2026-11-30T00:00:00Z", "config": cfg,
            "tasks": {"spec": "jsonl:tasks.jsonl", "name": "synthetic", "digest": "sha256:abc",
                      "count": len(TASKS), "task_ids": TASKS},
            "versions": {"python": "3.11"}, "git": {"commit": "0" * 40, "dirty": False}}


def write_run(run_dir: Path, head: dict[str, Any], records: list[TrialRecord]) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    write_json(run_dir / "run.json", head)
    (run_dir / "trials.jsonl").unlink(missing_ok=True)
    log = TrialLog(run_dir / "trials.jsonl")
    log.open_for_append()
    for r in records:
        log.append(r)
    log.close()
    return run_dir


def run_command(argv: list[str]) -> int:
    """Runs a sub-command through the real parser; a UsageError propagates."""
    return cli(*argv)
