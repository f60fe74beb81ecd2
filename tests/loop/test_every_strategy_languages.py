"""Every strategy runs unchanged on a task in another language: one `python -m harness run`
of every registered strategy on a Rust task, the scripted model answering in Rust.

The Actor's first answer does not compile (the compiler's message is the feedback, the
record says `compile_error`), its retry is right; the agents try a program that does not
compile with their `run` tool, read the compiler's message, run a right one, and submit
the function in Rust."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.rundata import read_trials
from harness.rundata.events import ToolCallRun
from harness.strategies import strategy_names, traits_of
from tests.helpers import run_harness

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RIGHT = "fn sum_of_digits(n: i64) -> i64 {\n    n.abs().to_string().chars().map(|c| c.to_digit(10).unwrap() as i64).sum()\n}\n"
WRONG = "fn sum_of_digits(n: i64) -> i64 {\n    let unused_marker: i64 = \"x\";\n    n\n}\n"


def _call(name: str, code: str) -> dict:
    return {"name": name, "arguments": {"code": code}}


RULES = [
    # Self-Reflection (reflexion's and the agents' templates both ask this)
    {"match": "In at most three sentences", "reply": "LESSON: return the sum of the digits of |n|, as an i64."},
    # the test writer, in the language's assert form
    {"match": "Write up to", "reply": "```rust\nassert_eq!(sum_of_digits(123), 6);\nassert_eq!(sum_of_digits(-45), 9);\n```"},
    # the agents: a program that does not compile, then a right one, then the function
    {"match": "SMOKE-RAN-OK", "reply": "It works.", "tool_calls": [_call("submit", "```rust\n" + RIGHT + "```")]},
    {"match": "The program did not compile", "reply": "Fix the type.",
     "tool_calls": [_call("run", RIGHT + "fn main() {\n    println!(\"SMOKE-RAN-OK {}\", sum_of_digits(-45));\n}\n")]},
    {"match": "described below, in Rust", "reply": "Let me try it.",
     "tool_calls": [_call("run", "fn main() {\n    let agent_marker: i64 = \"x\";\n}\n")]},
    # the Actor: wrong (it does not compile) at first, right once it has seen feedback or a lesson
    {"match": "Your implementation was", "reply": "```rust\n" + RIGHT + "```"},
    {"match": "LESSON:", "reply": "```rust\n" + RIGHT + "```"},
    {"match": "Implement the Rust function `sum_of_digits`", "reply": "```rust\n" + WRONG + "```"},
]


def test_every_strategy_runs_unchanged_on_a_rust_task(tmp_path: Path) -> None:
    strategies = [s for s in strategy_names() if not traits_of(s).recalls]  # recall needs a pool: tested apart
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in RULES))
    proc = run_harness("run", "--tasks", "builtin:rust", "--task-ids", "builtin-rust/sum_of_digits",
                       "--model", f"scripted:{script}", "--strategy", ",".join(strategies), "--trials", "2",
                       "--workers", "2", "--out", str(tmp_path / "out"), "--memory-dir", str(tmp_path / "mem"),
                       "--no-report", "--no-cache", cwd=tmp_path, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]  # 1: some attempt failed (baseline's does)
    (run_dir,) = list((tmp_path / "out").iterdir())
    records = read_trials(run_dir / "trials.jsonl")
    assert {r.strategy for r in records} == set(strategies)
    assert all(r.language == "rust" for r in records)
    finals = {r.strategy: r for r in records if r.final}
    assert set(finals) == set(strategies), "every strategy finished its attempt"
    for strategy in strategies:
        traits = traits_of(strategy)
        final = finals[strategy]
        if traits.uses_tools:
            runs = [e for r in records if r.strategy == strategy for e in r.events if isinstance(e, ToolCallRun)]
            by_name = [e.name for e in runs]
            assert by_name[:3] == ["run", "run", "submit"], (strategy, by_name)
            assert "The program did not compile" in runs[0].result and "mismatched types" in runs[0].result
            assert "SMOKE-RAN-OK 9" in runs[1].result
            assert final.hidden_passed and final.compile_status == "ok", strategy
        elif traits.iterates and (traits.sees_previous or traits.writes_lessons):
            first = next(r for r in records if r.strategy == strategy and r.trial == 1)
            assert first.compile_status == "compile_error" and "mismatched types" in first.feedback, strategy
            assert final.hidden_passed, strategy
        else:  # independent samples of the same prompt: the same answer, which does not compile
            assert final.compile_status == "compile_error" and not final.hidden_passed, strategy
