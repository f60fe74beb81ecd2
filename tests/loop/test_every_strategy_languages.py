"""Every strategy runs unchanged on a task in every other language: per language, one
`python -m harness run` of every registered strategy on that language's builtin
`sum_of_digits`, the scripted model answering in the language.

The Actor's first answer is broken (it does not compile; JavaScript's does not parse),
and the compiler's or the runtime's message is the feedback; its retry is right. The
agents try a broken program with their `run` tool, read what went wrong, run a right
one, and submit the function in the task's language."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.rundata import read_trials
from harness.rundata.events import ToolCallRun
from harness.strategies import strategy_names, traits_of
from harness.tasks import load_tasks
from sandbox.toolchains import toolchain
from tests.helpers import run_harness

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@dataclass(frozen=True)
class Case:
    display: str  # as the prompts name the language
    fence: str
    wrong: str  # the Actor's first answer: broken
    broken: str  # the agent's first program: broken
    main: str  # appended to the right function: a program that prints SMOKE-RAN-OK and the sum of -45's digits
    tests: str  # the test writer's lines
    says: str  # in the compiler's (or runtime's) message about `wrong`


CASES = {
    "rust": Case("Rust", "rust", "fn sum_of_digits(n: i64) -> i64 {\n    let unused_marker: i64 = \"x\";\n    n\n}\n",
                 "fn main() {\n    let agent_marker: i64 = \"x\";\n}\n",
                 "fn main() {\n    println!(\"SMOKE-RAN-OK {}\", sum_of_digits(-45));\n}\n",
                 "assert_eq!(sum_of_digits(123), 6);\nassert_eq!(sum_of_digits(-45), 9);", "mismatched types"),
    "go": Case("Go", "go", "func sum_of_digits(n int64) int64 {\n\tvar unused_marker int64 = \"x\"\n\t_ = unused_marker\n\treturn n\n}\n",
               "package main\n\nfunc main() {\n\tvar agent_marker int64 = \"x\"\n\t_ = agent_marker\n}\n",
               "\nfunc main() {\n\tprintln(\"SMOKE-RAN-OK\", sum_of_digits(-45))\n}\n",
               "assert(sum_of_digits(123) == 6)\nassert(sum_of_digits(-45) == 9)", "cannot use"),
    "cpp": Case("C++", "cpp", "long long sum_of_digits(long long n) {\n    long long unused_marker = \"x\";\n    return n;\n}\n",
                "int main() {\n    long long agent_marker = \"x\";\n}\n",
                "int main() {\n    std::cout << \"SMOKE-RAN-OK \" << sum_of_digits(-45) << std::endl;\n}\n",
                "assert(sum_of_digits(123) == 6);\nassert(sum_of_digits(-45) == 9);", "invalid conversion"),
    "javascript": Case("JavaScript", "javascript", "function sum_of_digits(n) {\n  return n +;\n}\n",
                       "console.log(agent_marker +);\n",
                       "console.log('SMOKE-RAN-OK ' + sum_of_digits(-45));\n",
                       "assert.deepStrictEqual(sum_of_digits(123), 6);\nassert.deepStrictEqual(sum_of_digits(-45), 9);",
                       "SyntaxError"),
}


def _call(name: str, code: str) -> dict:
    return {"name": name, "arguments": {"code": code}}


def _rules(case: Case, right: str, compiles: bool) -> list[dict]:
    block = f"```{case.fence}\n{right}```"
    program = right + case.main
    went_wrong = "The program did not compile" if compiles else "The program failed"
    return [
        # Self-Reflection (reflexion's and the agents' templates both ask this)
        {"match": "In at most three sentences", "reply": "LESSON: return the sum of the digits of |n|."},
        # the test writer, in the language's assert form
        {"match": "Write up to", "reply": f"```{case.fence}\n{case.tests}\n```"},
        # the agents: a broken program, then a right one, then the function
        {"match": "SMOKE-RAN-OK", "reply": "It works.", "tool_calls": [_call("submit", block)]},
        {"match": went_wrong, "reply": "Fix it.", "tool_calls": [_call("run", program)]},
        {"match": f"described below, in {case.display}", "reply": "Let me try it.",
         "tool_calls": [_call("run", case.broken)]},
        # the Actor: broken at first, right once it has seen feedback or a lesson
        {"match": "Your implementation was", "reply": block},
        {"match": "LESSON:", "reply": block},
        {"match": f"Implement the {case.display} function `sum_of_digits`", "reply": f"```{case.fence}\n{case.wrong}```"},
    ]


@pytest.mark.parametrize("language", list(CASES))
def test_every_strategy_runs_unchanged_on_a_task_of_another_language(tmp_path: Path, language: str) -> None:
    case = CASES[language]
    task = next(t for t in load_tasks(f"builtin:{language}").tasks if t.entry_point == "sum_of_digits")
    right = task.canonical_solution if task.canonical_solution.endswith("\n") else task.canonical_solution + "\n"
    compiles = toolchain(language).compiles
    strategies = [s for s in strategy_names() if not traits_of(s).recalls]  # recall needs a pool: tested apart
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in _rules(case, right, compiles)))
    proc = run_harness("run", "--tasks", f"builtin:{language}", "--task-ids", task.task_id,
                       "--model", f"scripted:{script}", "--strategy", ",".join(strategies), "--trials", "2",
                       "--workers", "2", "--out", str(tmp_path / "out"), "--memory-dir", str(tmp_path / "mem"),
                       "--no-report", "--no-cache", cwd=tmp_path, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]  # 1: some attempt failed (baseline's does)
    (run_dir,) = list((tmp_path / "out").iterdir())
    records = read_trials(run_dir / "trials.jsonl")
    assert {r.strategy for r in records} == set(strategies)
    assert all(r.language == language for r in records)
    finals = {r.strategy: r for r in records if r.final}
    assert set(finals) == set(strategies), "every strategy finished its attempt"
    for strategy in strategies:
        traits = traits_of(strategy)
        final = finals[strategy]
        if traits.uses_tools:
            runs = [e for r in records if r.strategy == strategy for e in r.events if isinstance(e, ToolCallRun)]
            assert [e.name for e in runs][:3] == ["run", "run", "submit"], (strategy, runs)
            assert ("The program did not compile" if compiles else "The program failed") in runs[0].result, runs[0]
            assert "SMOKE-RAN-OK 9" in runs[1].result, runs[1]
            assert final.hidden_passed and final.compile_status == ("ok" if compiles else None), (strategy, final)
        elif traits.iterates and (traits.sees_previous or traits.writes_lessons):
            first = next(r for r in records if r.strategy == strategy and r.trial == 1)
            assert not first.hidden_passed and case.says in first.feedback, (strategy, first.feedback)
            assert first.compile_status == ("compile_error" if compiles else None), strategy
            assert final.hidden_passed, strategy
        else:  # independent samples of the same prompt: the same broken answer
            assert not final.hidden_passed and final.compile_status == ("compile_error" if compiles else None), strategy
