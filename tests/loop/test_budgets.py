"""Budgets before spending (`run --estimate`, harness/run/budget.py), budgets that stop a run
cleanly (--max-calls, --max-cost) and the task check before a run (`tasks check`,
`run --check-tasks`), as a user meets them: the scripted model, a real sandbox."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

import harness.strategies as registry
from harness.run import budget
from harness.text.prompting import Prompts
from harness.strategies import traits_of
from harness.tasks import load_tasks
from tests.helpers import run_harness

SANDBOXES = ["process", pytest.param("docker", marks=pytest.mark.docker)]
N_TASKS = 4


def write_inputs(folder: Path) -> tuple[Path, Path]:
    """mul/i returns n * i; the model gets even i right at once, odd i after feedback."""
    tasks, rules = [], [{"match": "what should the next implementation do differently", "reply": "Multiply."}]
    for i in range(N_TASKS):
        tasks.append({"task_id": f"mul/{i}", "prompt": f'def f{i}(n: int) -> int:\n    """Return n times {i}."""\n',
                      "entry_point": f"f{i}", "tests": [f"assert f{i}(3) == {3 * i}", f"assert f{i}(-2) == {-2 * i}"],
                      "canonical_solution": f"def f{i}(n: int) -> int:\n    return n * {i}\n"})
        right = f"```python\ndef f{i}(n):\n    return n * {i}\n```"
        wrong = f"```python\ndef f{i}(n):\n    return n + {i}\n```"
        rules.append({"match": f"unit tests for the function `f{i}`", "reply": f"```python\nassert f{i}(1) == {i}\n```"})
        rules.append({"match": f"improved implementation of `f{i}`", "reply": right})
        rules.append({"match": f"Implement the function `f{i}`", "reply": right if i % 2 == 0 else wrong})
    task_file, script = folder / "tasks.jsonl", folder / "script.jsonl"
    task_file.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    script.write_text("".join(json.dumps(r) + "\n" for r in rules))
    return task_file, script


def harness(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return run_harness(*args, cwd=folder, timeout=300)


def run_args(folder: Path, tasks: Path, script: Path, sandbox: str, *extra: str) -> list[str]:
    return ["run", "--tasks", f"jsonl:{tasks}", "--model", f"scripted:{script}", "--strategy", "all",
            "--trials", "3", "--sandbox", sandbox, "--out", str(folder / "out"), "--memory-dir", str(folder / "mem"),
            "--no-cache", "--workers", "2", *extra]


# ------------------------------------------------------------------ the estimate

def test_the_call_structure_comes_from_the_traits():
    assert budget.calls_from_traits(traits_of("reflexion"), 3) == (
        budget.CallCount("test_writer", 1, 1), budget.CallCount("actor", 1, 3), budget.CallCount("reflection", 0, 2))
    assert budget.calls_from_traits(traits_of("feedback"), 3) == (
        budget.CallCount("test_writer", 1, 1), budget.CallCount("actor", 1, 3))
    # resample samples afresh: its later Actor prompts are the first one's, not a retry's
    assert budget.calls_from_traits(traits_of("resample"), 3) == (
        budget.CallCount("test_writer", 1, 1), budget.CallCount("actor", 1, 3, later="first"))
    assert budget.calls_from_traits(traits_of("baseline"), 3) == (budget.CallCount("actor", 1, 1, later="first"),)
    agent = SimpleNamespace(name="agent", uses_tools=True, iterates=True, writes_tests=False, writes_lessons=False)
    with pytest.raises(budget.NoEstimate, match="estimate_calls"):
        budget.calls_from_traits(agent, 3)


def test_a_strategy_s_own_hook_beats_its_traits(monkeypatch):
    class Fresh:
        @staticmethod
        def estimate_calls(trials):
            return [budget.CallCount("actor", 2, 2 * trials, later="first")]

    monkeypatch.setattr(registry, "get_strategy", lambda name: Fresh(), raising=False)
    assert budget.call_structure("resample", 3) == (budget.CallCount("actor", 2, 6, "first"),)


def test_the_estimate_renders_each_task_s_prompts():
    tasks = load_tasks("builtin:quick").tasks[:3]
    settings = {"trials": 3, "samples": 2, "max_tokens": 100, "max_tokens_tests": 50, "max_tokens_lesson": 20,
                "memory_window": 3, "max_internal_tests": 6}
    prompts = Prompts()
    doc = budget.estimate(tasks, ["reflexion", "baseline"], settings, prompts, None)
    sizes = [budget.prompt_sizes(t, prompts, settings) for t in tasks]
    base = doc["strategies"]["baseline"]
    assert base["fewest"] == base["most"]
    assert base["most"]["calls"] == 3 * 2
    assert base["most"]["input_tokens"] == 2 * sum(s.actor_first for s in sizes)
    assert base["most"]["output_tokens"] == 6 * 100 and base["most"]["usd"] is None
    refl = doc["strategies"]["reflexion"]
    assert (refl["fewest"]["calls"], refl["most"]["calls"]) == (2 * 3 * 2, 6 * 3 * 2)
    assert refl["most"]["input_tokens"] == 2 * sum(s.test_writer + s.actor_first + 2 * s.actor_later
                                                   + 2 * s.reflection for s in sizes)
    assert all(s.actor_later > s.actor_first for s in sizes)  # the previous answer, its feedback, lessons
    assert doc["total"]["most"]["calls"] == refl["most"]["calls"] + base["most"]["calls"]
    priced = budget.estimate(tasks, ["baseline"], settings, prompts, budget.Price(1.0, 10.0))
    b = priced["strategies"]["baseline"]["most"]
    assert b["usd"] == pytest.approx((b["input_tokens"] + 10 * b["output_tokens"]) / 1e6)


def test_run_estimate_calls_no_model_and_writes_no_folder(tmp_path: Path):
    tasks, _ = write_inputs(tmp_path)
    missing = tmp_path / "no-such-script.jsonl"  # a model that cannot even be opened
    done = harness(tmp_path, *run_args(tmp_path, tasks, missing, "process", "--estimate", "--price", "1/2"))
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "out").exists()
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"estimate: {N_TASKS} tasks from jsonl:")
    total = next(line for line in lines if line.startswith("total "))
    # 4 tasks: reflexion 8..24 calls, feedback and resample 8..16, baseline 4
    assert " 28 .. 60 " in total and "$" in total
    assert "price: $1 in / $2 out per million tokens (--price)" in done.stdout
    assert "No model was called." in done.stdout
    done = harness(tmp_path, *run_args(tmp_path, tasks, missing, "process", "--estimate"))
    assert "price: unknown for this model" in done.stdout and "unknown .. unknown" in done.stdout


# ------------------------------------------------------------------ budgets

def _spent(run: Path) -> tuple[int, float]:
    """The run's model calls and dollars: its trial records and what the unfinished trials
    spent (errors.jsonl's `spent`)."""
    rows = [r for r in map(json.loads, (run / "trials.jsonl").read_text().splitlines())]
    errors = run / "errors.jsonl"
    rows += [e["spent"] for e in map(json.loads, errors.read_text().splitlines()) if e.get("spent")] \
        if errors.exists() else []
    return (sum(r["model_calls"] - r["cached_calls"] for r in rows), sum(r.get("cost_usd") or 0.0 for r in rows))


def _keys(run: Path) -> list[tuple]:
    return [(r["task_id"], r["strategy"], r["attempt"], r["trial"])
            for r in map(json.loads, (run / "trials.jsonl").read_text().splitlines())]


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_max_calls_stops_cleanly_and_a_higher_budget_resumes(tmp_path: Path, sandbox: str):
    tasks, script = write_inputs(tmp_path)
    done = harness(tmp_path, *run_args(tmp_path, tasks, script, sandbox, "--max-calls", "10"))
    assert done.returncode == 3, done.stderr
    (run,) = list((tmp_path / "out").iterdir())
    doc = json.loads((run / "summary.json").read_text())
    st = doc["status"]
    assert st["state"] == "budget" and st["budget_stop"]["kind"] == "max_calls"
    assert st["text"].startswith("stopped by its budget: --max-calls 10 reached (")
    assert f"--resume {run} --max-calls N" in st["text"]
    assert doc["answer"][0].startswith("[stopped by its budget: --max-calls 10 reached")
    assert "budget: stopped by its budget" in done.stderr
    calls, _ = _spent(run)
    assert calls == 10  # a cap: the 11th call was refused before it started; the cut attempts' calls count
    assert st["budget_stop"]["spent"] == 10 and st["budget_cut"] == st["budget_stop"]["cut"]
    assert "harness error" not in json.dumps(doc["caveats"])  # a budget's cut is no error
    assert st["complete_attempts"] < st["expected_attempts"]
    before = _keys(run)
    assert len(before) == len(set(before))

    # the same budget: spent already, nothing more runs
    again = harness(tmp_path, "run", "--resume", str(run), "--max-calls", "10")
    assert again.returncode == 3, again.stderr
    assert _keys(run) == before
    # a higher one: the run goes on where it stopped and completes
    more = harness(tmp_path, "run", "--resume", str(run), "--max-calls", "1000")
    assert more.returncode == 0, more.stderr
    after = _keys(run)
    assert after[:len(before)] == before and len(after) == len(set(after))
    doc = json.loads((run / "summary.json").read_text())
    assert doc["status"]["state"] == "complete"
    assert not doc["answer"][0].startswith("[stopped")
    check = doc["estimate_check"]
    assert check["complete"] and check["figures"]["calls"]["within"] is True
    assert any(line.startswith("model calls: estimated ") for line in check["text"])
    assert "estimate: model calls: estimated" in more.stdout


def test_max_cost_needs_a_price_and_stops_at_it(tmp_path: Path):
    tasks, script = write_inputs(tmp_path)
    done = harness(tmp_path, *run_args(tmp_path, tasks, script, "process", "--max-cost", "0.01"))
    assert done.returncode == 2
    assert "--max-cost counts dollars" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
    # 1,000 dollars per million tokens: one call's worst case (its input and its whole
    # max_tokens) passes one cent, so no call starts
    done = harness(tmp_path, *run_args(tmp_path, tasks, script, "process", "--max-cost", "0.01", "--price", "1000/1000"))
    assert done.returncode == 3, done.stderr
    assert "budget: stopped by its budget: --max-cost $0.0100 reached ($0.0000 spent; the next call could have cost up to $" \
        in done.stderr
    (run,) = list((tmp_path / "out").iterdir())
    assert not (run / "trials.jsonl").read_text() and not (run / "errors.jsonl").exists()
    # 10 dollars per million input tokens: a call costs about a fifth of a cent; the run stops before 2 cents
    done = harness(tmp_path, *run_args(tmp_path, tasks, script, "process", "--max-cost", "0.02", "--price", "10/1",
                                       "--out", str(tmp_path / "out2")))
    assert done.returncode == 3, done.stderr
    (run,) = list((tmp_path / "out2").iterdir())
    doc = json.loads((run / "summary.json").read_text())
    assert doc["status"]["budget_stop"]["kind"] == "max_cost" and 0 < doc["status"]["budget_stop"]["spent"] <= 0.02
    assert 0 < _spent(run)[1] <= 0.02  # a cap: no call started that could have passed it
    assert "--max-cost $0.0200 reached" in doc["status"]["text"]


# ------------------------------------------------------------------ the task check

def write_checked_tasks(folder: Path) -> Path:
    rows = [
        {"task_id": "ok/double", "prompt": 'def double(n: int) -> int:\n    """Return 2n."""\n', "entry_point": "double",
         "tests": ["assert double(2) == 4", "assert double(-1) == -2"],
         "canonical_solution": "def double(n: int) -> int:\n    return 2 * n\n"},
        {"task_id": "bad/reference", "prompt": 'def triple(n: int) -> int:\n    """Return 3n."""\n',
         "entry_point": "triple", "tests": ["assert triple(2) == 6", "assert triple(1) == 4"],
         "canonical_solution": "def triple(n: int) -> int:\n    return 3 * n\n"},
        {"task_id": "bad/vacuous", "prompt": 'def log(msg: str) -> None:\n    """Print msg."""\n', "entry_point": "log",
         "tests": ["assert log('x') is None"], "canonical_solution": "def log(msg: str) -> None:\n    print(msg)\n"},
        {"task_id": "no/reference", "prompt": 'def neg(n: int) -> int:\n    """Return -n."""\n', "entry_point": "neg",
         "tests": ["assert neg(1) == -1"]},
        {"task_id": "io/ok", "kind": "io", "prompt": "Print the sum of two integers.\n",
         "tests": [{"input": "1 2\n", "output": "3\n"}], "canonical_solution": "a, b = map(int, input().split())\nprint(a + b)\n"},
        {"task_id": "io/wrong", "kind": "io", "prompt": "Print the product of two integers.\n",
         "tests": [{"input": "2 3\n", "output": "6\n"}], "canonical_solution": "a, b = map(int, input().split())\nprint(a + b)\n"},
    ]
    path = folder / "checked.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_tasks_check_prints_the_broken_tasks_and_exits_1(tmp_path: Path, sandbox: str):
    path = write_checked_tasks(tmp_path)
    done = harness(tmp_path, "tasks", "check", f"jsonl:{path}", "--sandbox", sandbox)
    assert done.returncode == 1, done.stderr
    out = done.stdout.splitlines()
    broken = {line.split(":", 1)[0].removeprefix("BROKEN "): line for line in out if line.startswith("BROKEN ")}
    assert set(broken) == {"bad/reference", "bad/vacuous", "io/wrong"}
    assert "the reference solution fails 1 of 2 hidden tests; first: assert triple(1) == 4" in broken["bad/reference"]
    assert "a log that returns None passes every hidden test" in broken["bad/vacuous"]
    assert "the reference solution fails 1 of 1 hidden tests; first: stdin: 2 3 (failed" in broken["io/wrong"]
    assert any(line.startswith("not checked no/reference: no reference solution") for line in out)
    assert out[-1].startswith("6 task(s) checked: 2 ok, 3 broken, 1 without a reference solution (not checked)")
    fine = harness(tmp_path, "tasks", "check", f"jsonl:{path}", "--sandbox", sandbox, "--task-ids", "ok/double,io/ok")
    assert fine.returncode == 0, fine.stderr
    assert fine.stdout.splitlines()[-1].startswith("2 task(s) checked: 2 ok, 0 broken in ")


def test_run_check_tasks_leaves_broken_tasks_out_and_says_so(tmp_path: Path):
    path = write_checked_tasks(tmp_path)
    rules = [{"match": "Implement the function", "reply": "```python\ndef double(n):\n    return 2 * n\n```"},
             {"match": "", "reply": "```python\nprint(3)\n```"}]
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in rules))
    done = harness(tmp_path, "run", "--tasks", f"jsonl:{path}", "--model", f"scripted:{script}", "--strategy",
                   "baseline", "--sandbox", "process", "--out", str(tmp_path / "out"), "--memory-dir",
                   str(tmp_path / "mem"), "--no-cache", "--check-tasks")
    assert done.returncode == 0, done.stderr
    assert "--check-tasks: left out bad/reference: the reference solution fails" in done.stderr
    (run,) = list((tmp_path / "out").iterdir())
    header = json.loads((run / "run.json").read_text())
    assert header["tasks"]["task_ids"] == ["ok/double", "no/reference", "io/ok"]
    assert {v["task_id"] for v in header["task_check"]["left_out"]} == {"bad/reference", "bad/vacuous", "io/wrong"}
    doc = json.loads((run / "summary.json").read_text())
    (cav,) = [c for c in doc["caveats"] if c["key"] == "task_check"]
    assert cav["text"].startswith("3 tasks left out before the run by --check-tasks")
    assert "1 task without a reference solution could not be checked" in cav["text"]
    assert doc["tasks"] == 3
    assert "task check: 6 tasks checked before the run" in (run / "report.md").read_text()
    # a resume keeps them out, checked once: the task set is the one the run started with
    again = harness(tmp_path, "run", "--resume", str(run))
    assert again.returncode == 0, again.stderr
    assert "--check-tasks" not in again.stderr


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_an_io_task_a_silent_program_passes_is_broken(request, sandbox: str):
    from harness.tasks.base import IoTest, Task
    from harness.run.taskcheck import BROKEN, OK, check_tasks

    box = request.getfixturevalue(f"{sandbox}_sandbox")
    silent = Task("io/silent", "Print nothing.\n", "", (IoTest("1\n", ""),), kind="io", canonical_solution="pass\n")
    echo = Task("io/echo", "Print the input.\n", "", (IoTest("7\n", "7\n"),), kind="io",
                canonical_solution="print(input())\n")
    empty = Task("fn/none", "def f():\n    pass\n", "f", (), canonical_solution="def f():\n    return 1\n")
    verdicts = check_tasks([silent, echo, empty], box, timeout_s=5.0)
    assert [(v.task_id, v.status) for v in verdicts] == [("io/silent", BROKEN), ("io/echo", OK), ("fn/none", BROKEN)]
    assert "a program that prints nothing passes every hidden test" in verdicts[0].reason
    assert verdicts[2].reason == "no hidden tests: every answer would pass"


@pytest.mark.docker
def test_a_task_in_another_language_is_checked_with_its_own_stub(sandbox_opener):
    import dataclasses

    from harness.run.taskcheck import BROKEN, OK, check_tasks

    task = next(t for t in load_tasks("builtin:rust").tasks if t.kind == "function")
    vacuous = dataclasses.replace(task, task_id="rust/vacuous", meta={**task.meta, "stub": task.canonical_solution})
    box = sandbox_opener("docker", languages=("rust",), workers=1)
    try:
        verdicts = check_tasks([task, vacuous], box, timeout_s=10.0, workers=1)
    finally:
        box.close()
    assert [(v.task_id, v.status) for v in verdicts] == [(task.task_id, OK), ("rust/vacuous", BROKEN)]
    assert "the task's own stub passes every hidden test" in verdicts[1].reason
