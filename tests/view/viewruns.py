"""Run folders for view tests, written as a run writes them (JSON lines, schema 2).

`two_strategy_run` (4 tasks, reflexion + baseline, 1 sample, budget 3):

  task   reflexion trials (internal, hidden)           baseline   category
  T/fix  (F,F) (T,T) stop internal_pass                F          fixed
  T/brk  (T,F) stop on a false positive                T          broken, false_positive
  T/both (T,T)                                         T          both_pass
  T/none (F,F) (F,F) (F,F), trial 3's code unchanged   F          both_fail

Trial 2 of T/fix holds the lesson written about trial 1 (schema 2), and trial 1 of
T/none has a self-test the reference solution contradicts (`internal_reference`).
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

TASKS = ["T/fix", "T/brk", "T/both", "T/none"]
CODE_V1 = "def f(x):\n    return x - 1\n"
CODE_V2 = "def f(x):\n    return x + 1\n"


def trial(task: str, strategy: str, t: int, *, final: bool, internal: bool | None, hidden: bool,
          code: str = CODE_V1, lesson: str | None = None, stop: str | None = None, attempt: int = 1,
          run_id: str = "run-a", **extra: Any) -> dict[str, Any]:
    tests = ["assert f(1) == 2", "assert f(0) == 1"] if internal is not None else []
    rec = {
        "schema": 2, "run_id": run_id, "task_id": task, "strategy": strategy, "attempt": attempt, "trial": t,
        "final": final, "stop_reason": stop if final else None, "code": code,
        "raw_output": f"```python\n{code}```", "internal_tests": tests,
        "internal_results": [{"test": x, "status": "passed" if internal else "failed",
                              "detail": "" if internal else "got 0"} for x in tests],
        "internal_passed": internal,
        "hidden_results": [{"test": "assert f(5) == 6", "status": "passed" if hidden else "failed",
                            "detail": "" if hidden else "AssertionError: got 4"}],
        "hidden_passed": hidden, "feedback": "" if internal else f"assert f(1) == 2  # got 0 (trial {t})",
        "lesson": lesson, "memory_shown": [lesson] if lesson else [], "testgen": None, "error": None,
        "model_calls": 2 if strategy != "baseline" else 1, "cached_calls": 0, "input_tokens": 100,
        "output_tokens": 30, "cache_read_tokens": 0, "cache_write_tokens": 0, "cost_usd": None,
        "model_s": 1.0, "sandbox_s": 0.1, "wall_s": 1.2, "finished_at": f"2026-12-01T00:0{t}:00+00:00",
        "oracle_feedback": False, "temperature_used": 0.0,
    }
    rec.update(extra)
    return rec


def two_strategy_records(run_id: str = "run-a") -> list[dict[str, Any]]:
    r: list[dict[str, Any]] = []
    ref_wrong = [{"test": "assert f(1) == 2", "status": "passed"}, {"test": "assert f(0) == 1", "status": "failed"}]
    r.append(trial("T/fix", "reflexion", 1, final=False, internal=False, hidden=False, run_id=run_id))
    r.append(trial("T/fix", "reflexion", 2, final=True, internal=True, hidden=True, code=CODE_V2,
                   lesson="It subtracts; it must add one.", stop="internal_pass", run_id=run_id))
    r.append(trial("T/fix", "baseline", 1, final=True, internal=None, hidden=False, stop="single_sample", run_id=run_id))
    r.append(trial("T/brk", "reflexion", 1, final=True, internal=True, hidden=False, stop="internal_pass", run_id=run_id))
    r.append(trial("T/brk", "baseline", 1, final=True, internal=None, hidden=True, stop="single_sample", run_id=run_id))
    r.append(trial("T/both", "reflexion", 1, final=True, internal=True, hidden=True, code=CODE_V2,
                   stop="internal_pass", run_id=run_id))
    r.append(trial("T/both", "baseline", 1, final=True, internal=None, hidden=True, code=CODE_V2,
                   stop="single_sample", run_id=run_id))
    r.append(trial("T/none", "reflexion", 1, final=False, internal=False, hidden=False, run_id=run_id,
                   internal_reference=ref_wrong))
    r.append(trial("T/none", "reflexion", 2, final=False, internal=False, hidden=False, code=CODE_V2,
                   lesson="try adding", run_id=run_id))
    r.append(trial("T/none", "reflexion", 3, final=True, internal=False, hidden=False, code=CODE_V2,
                   lesson="still wrong", stop="budget", run_id=run_id))
    r.append(trial("T/none", "baseline", 1, final=True, internal=None, hidden=False, stop="single_sample", run_id=run_id))
    return r


def header(run_id: str = "run-a", *, tasks: list[str] | None = None, digest: str = "sha256:view-test",
           created_at: str = "2026-12-01T00:00:00+00:00", **config: Any) -> dict[str, Any]:
    cfg = {"strategy": "both", "strategies": ["reflexion", "baseline"], "samples": 1, "k": [1], "trials": 3,
           "model": "scripted:test", "tasks": "jsonl:none.jsonl", "oracle_feedback": False}
    cfg.update(config)
    ids = tasks or TASKS
    return {"schema": 2, "run_id": run_id, "created_at": created_at, "model": cfg["model"], "config": cfg,
            "tasks": {"spec": "jsonl:none.jsonl", "name": "view-test", "digest": digest, "count": len(ids),
                      "task_ids": ids}}


def write_run(folder: Path, head: dict[str, Any], records: list[dict[str, Any]], *, summary: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.json").write_text(json.dumps(head), encoding="utf-8")
    with (folder / "trials.jsonl").open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, sort_keys=True) + "\n")
    if summary:
        (folder / "summary.json").write_text(json.dumps({"schema": 1, "run_id": head["run_id"]}), encoding="utf-8")
    return folder


def append(folder: Path, records: list[dict[str, Any]]) -> None:
    with (folder / "trials.jsonl").open("a", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, sort_keys=True) + "\n")


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """(status, body) of a GET; `headers` are sent as given (e.g. the view's token)."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=120) as resp:  # a hang guard: a loaded machine answers slowly
            return resp.status, resp.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8")
