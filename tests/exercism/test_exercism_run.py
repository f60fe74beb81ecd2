"""`python -m harness run` on Exercism tasks with the scripted model: reflexion and
baseline run unchanged on a runner task (the Rust fixture), the test writer's file is the
agent's tests, and the records say where the verdict was taken."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import run_harness

DATA = Path(__file__).resolve().parents[1] / "data" / "exercism"

WRONG = "```rust\n// first try: safe-divide\npub fn divide(a: i64, b: i64) -> Option<i64> {\n    Some(a / b)\n}\n```"
RIGHT = "```rust\npub fn divide(a: i64, b: i64) -> Option<i64> {\n    a.checked_div(b)\n}\n```"
TESTS = ("```rust\nuse safe_divide::*;\n\n#[test]\nfn halves() {\n    assert_eq!(divide(8, 2), Some(4));\n}\n\n"
         "#[test]\nfn zero_is_none() {\n    assert_eq!(divide(3, 0), None);\n}\n```")


@pytest.mark.docker
@pytest.mark.slow
def test_reflexion_and_baseline_run_on_an_exercise(tmp_path):
    rules = [
        {"match": "what is wrong with this solution", "reply": "Dividing by zero must give None: use checked_div."},
        {"match": "as the test file `tests/safe-divide.rs`", "reply": TESTS},
        {"match": "// first try: safe-divide", "reply": RIGHT},  # the retry, which shows the first answer
        {"match": "Divide two integers", "reply": WRONG},
    ]
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in rules))
    exercises = tmp_path / "practice"
    shutil.copytree(DATA / "rust" / "exercises" / "practice" / "safe-divide", exercises / "safe-divide")
    proc = run_harness("run", "--tasks", f"exercism:{exercises}:rust", "--model", f"scripted:{script}",
                       "--strategy", "reflexion,baseline", "--trials", "2", "--workers", "1", "--out", str(tmp_path / "out"),
                       "--memory-dir", str(tmp_path / "mem"), "--no-report", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = list((tmp_path / "out").iterdir())
    records = [json.loads(line) for line in (run_dir / "trials.jsonl").read_text().splitlines()]
    by = {(r["strategy"], r["trial"]): r for r in records}
    assert all(r["task_kind"] == "runner" and r["language"] == "rust" for r in records)
    first, second = by[("reflexion", 1)], by[("reflexion", 2)]
    # Trial 1: the agent's own tests (its file, run by the runner) catch the division by zero.
    written = next(e for e in first["events"] if e["type"] == "tests_written")
    assert written["tests"] == ["halves", "zero_is_none"]
    assert {r["test"]: r["status"] for r in first["internal_results"]} == {"halves": "passed", "zero_is_none": "failed"}
    assert "zero_is_none  # panicked at lib.rs:3:10:\nattempt to divide by zero" in first["feedback"]
    assert not first["hidden_passed"] and second["hidden_passed"]
    lesson = next(e for e in second["events"] if e["type"] == "lesson")
    assert lesson["text"].startswith("Dividing by zero") and lesson["about_trial"] == 1
    # The hidden tests never reached a prompt: none of their names is in any model call.
    calls = json.dumps([e for r in records for e in r["events"] if e["type"] == "model_call"])
    assert "Divide two integers" in calls
    assert "exact_division" not in calls and "rounds_toward_zero" not in calls
    assert not by[("baseline", 1)]["hidden_passed"]
    header = json.loads((run_dir / "run.json").read_text())
    assert "in-process runner verdict" in json.dumps(header)
    assert header["tasks"]["in_process_verdicts"] == ["exercism/rust/safe-divide"]
    summary = json.loads((run_dir / "summary.json").read_text())
    (caveat,) = [c for c in summary["caveats"] if c["key"] == "in_process_verdicts"]
    assert caveat["text"].startswith("1 task of 1 graded by their own test file") and "forge" in caveat["text"]
