"""Which self-tests are wrong: each attempt's internal tests run against the task's
reference solution, in the sandbox.

A self-test that the reference solution fails asks for the wrong behaviour: an
implementation that passes it is wrong, and feedback from it misleads the Actor.
Records do not say this, so `python -m harness view --check-self-tests` computes it
once per run and writes `self_tests.jsonl` into the run folder (derived, like
summary.json): one line per (task, strategy, attempt, test) with the reference
solution's verdict, graded by the same Evaluator as the run's own tests.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from harness.view.index import TrialIndex

FILE = "self_tests.jsonl"


def attempt_tests(index: TrialIndex) -> dict[tuple[str, str, int], list[str]]:
    """(task, strategy, attempt) -> its internal tests, read from each attempt's first trial."""
    frame = index.frame()
    if frame.empty:
        return {}
    first = frame[frame["n_internal"] > 0].sort_values("trial").drop_duplicates(["task_id", "strategy", "attempt"])
    out: dict[tuple[str, str, int], list[str]] = {}
    for rec in index.read_records(list(zip(first["offset"].astype(int), first["length"].astype(int)))):
        tests: list[Any] = list(rec.internal_tests)
        if rec.internal_io_tests:  # an io task's tests are data: run those, not their labels
            from harness.tasks.base import IoTest

            tests = [IoTest.from_dict(t) for t in rec.internal_io_tests]
        if tests and not rec.oracle_feedback:
            out[(rec.task_id, rec.strategy, rec.attempt)] = tests
    return out


def check_run(run_dir: Path, sandbox: Any, *, timeout_s: float = 5.0) -> tuple[int, int, str]:
    """Writes run_dir/self_tests.jsonl; returns (tests checked, wrong, note)."""
    from harness.core.evaluator import AGENT, Evaluator
    from harness.text.prompting import Prompts
    from harness.tasks import TaskError, load_tasks

    header = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    spec = str((header.get("tasks") or {}).get("spec") or "")
    try:
        tasks = {t.task_id: t for t in load_tasks(spec).tasks}
    except (TaskError, OSError, ValueError) as exc:
        return 0, 0, f"task set {spec!r} not loaded: {exc}"
    mode = str((header.get("config") or {}).get("io_compare") or "strict")
    evaluator = Evaluator(sandbox, Prompts(), timeout_s=timeout_s, compare_mode=mode)  # graded as the run graded them
    index = TrialIndex(run_dir / "trials.jsonl")
    index.refresh()
    rows: list[dict[str, Any]] = []
    skipped = 0
    for (task_id, strategy, attempt), tests in sorted(attempt_tests(index).items()):
        task = tasks.get(task_id)
        if task is None or not task.canonical_solution:
            skipped += 1
            continue
        # The model's own tests: the agent's domain (its containers never score hidden tests).
        for o in evaluator.run(task.canonical_solution, tests, task=task, domain=AGENT, timeout_s=task.timeout_s).records:
            rows.append({"task_id": task_id, "strategy": strategy, "attempt": attempt, "test": o.test,
                         "status": o.status, "detail": o.detail})
    tmp = run_dir / (FILE + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8", errors="backslashreplace")
    tmp.replace(run_dir / FILE)
    wrong = sum(1 for r in rows if r["status"] != "passed")
    note = f"; {skipped} attempt(s) skipped: no reference solution" if skipped else ""
    return len(rows), wrong, note


def read_checks(run_dir: Path) -> dict[tuple[str, str, int], dict[str, str]] | None:
    """(task, strategy, attempt) -> {test: reference verdict}; None when never checked."""
    path = run_dir / FILE
    if not path.is_file():
        return None
    out: dict[tuple[str, str, int], dict[str, str]] = {}
    for line in path.read_text(encoding="utf-8").split("\n"):
        try:
            r = json.loads(line)
            out.setdefault((str(r["task_id"]), str(r["strategy"]), int(r["attempt"])), {})[str(r["test"])] = \
                str(r["status"])
        except (ValueError, KeyError, TypeError):
            continue
    return out


def wrong_task_ids(checks: dict[tuple[str, str, int], dict[str, str]]) -> set[str]:
    return {k[0] for k, verdicts in checks.items() if any(v != "passed" for v in verdicts.values())}


def iter_runs(root: Path) -> Iterable[Path]:
    if (root / "run.json").is_file():
        yield root
        return
    for p in sorted(root.iterdir()):
        if (p / "run.json").is_file() and (p / "trials.jsonl").is_file():
            yield p
