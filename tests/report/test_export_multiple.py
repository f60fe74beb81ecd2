"""`export --format multipl-e`: MultiPL-E's completion files, one `<name>.json.gz` per
problem, as its evaluator reads them (prompt + completion + "\\n" + tests); and the
record's compile status, end to end on Docker with a scripted model over a small
MultiPL-E fixture of two Rust rows:

  HumanEval_53_add  the model completes the prompt (a body): it compiles and passes
  HumanEval_2_mul   the model writes the whole function, which does not compile
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from harness.core.actor import graded_program
from harness.tasks import load_tasks
from tests.helpers import harness_env, run_harness

ADD = {"name": "HumanEval_53_add", "language": "rs",
       "prompt": "/// Add two numbers x and y\n/// >>> add(2, 3)\n/// 5\nfn add(x: isize, y: isize) -> isize {\n",
       "tests": "}\n\nfn main() {\n    let candidate = add;\n    assert_eq!(candidate(0, 1), 1);\n"
                "    assert_eq!(candidate(2, 3), 5);\n}\n",
       "stop_tokens": ["\n}"]}
MUL = {"name": "HumanEval_2_mul", "language": "rs",
       "prompt": "use std::collections::HashMap;\n\n/// Multiply x by y\nfn mul(x: isize, y: isize) -> isize {\n",
       "tests": "}\n\nfn main() {\n    let candidate = mul;\n    assert_eq!(candidate(2, 3), 6);\n}\n",
       "stop_tokens": ["\n}"]}
ADD_BODY = "    // add x and y\n    x + y\n}\n"  # continues the prompt (names `add`, defines nothing)
MUL_WHOLE = "fn mul(x: isize, y: isize) -> isize {\n    x * y +\n}\n"  # a whole function; does not compile
SCRIPT = [
    {"match": "writes unit tests", "reply": "```rust\nassert_eq!(add(2, 3), 5);\nassert_eq!(mul(2, 3), 6);\n```"},
    {"match": "fn add(", "reply": f"```rust\n{ADD_BODY}```"},
    {"match": "fn mul(", "reply": f"```rust\n{MUL_WHOLE}```"},
]


def fixture(tmp_path: Path) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "humaneval-rs.jsonl").write_text(json.dumps(ADD) + "\n" + json.dumps(MUL) + "\n")
    return f"multipl-e:{tmp_path}:humaneval-rs"


def read_problem(path: Path) -> dict:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def test_the_row_kept_in_meta_leaves_the_task_set_digest_alone(tmp_path):
    spec = fixture(tmp_path)
    tasks = load_tasks(spec)
    add = tasks.tasks[0]
    assert add.meta["multipl_e"] == {**ADD, "stop_tokens": ["\n}"]}
    import dataclasses

    from harness.tasks.base import TaskSet

    bare = TaskSet(tasks.spec, tasks.name, tuple(dataclasses.replace(t, meta={}) for t in tasks.tasks))
    assert bare.digest == tasks.digest


def _synthetic_run(tmp_path: Path, spec: str) -> Path:
    """A run folder as a run writes it (the records' code as the model's answers above)."""
    from harness.rundata import TrialRecord
    from synthrun import write_run

    tasks = load_tasks(spec)
    records = []
    for task, code, passed in ((tasks.tasks[0], ADD_BODY, True), (tasks.tasks[1], MUL_WHOLE, False)):
        for attempt in (1, 2):
            records.append(TrialRecord(run_id="mpe", task_id=task.task_id, strategy="baseline", attempt=attempt,
                                       trial=1, final=True, stop_reason="single_sample", code=code, raw_output="",
                                       hidden_passed=passed, language="rust",
                                       compile_status="ok" if passed else "compile_error"))
    head = {"schema": 3, "run_id": "mpe", "created_at": "2026-12-01T00:00:00Z", "model": "scripted:x",
            "config": {"strategies": ["baseline"], "samples": 2, "k": [1], "trials": 1, "temperature": 0.2,
                       "max_tokens": 512},
            "tasks": {"spec": spec, "name": tasks.name, "digest": tasks.digest, "count": 2,
                      "task_ids": [t.task_id for t in tasks.tasks]}}
    return write_run(tmp_path / "mpe", head, records)


def test_export_writes_multipl_e_completion_files(tmp_path, capsys):
    from synthrun import run_command

    spec = fixture(tmp_path / "data")
    run_dir = _synthetic_run(tmp_path, spec)
    assert run_command(["export", str(run_dir), "--format", "multipl-e"]) == 0
    assert f"{run_dir / 'multipl-e'}: 4 samples, strategy baseline" in capsys.readouterr().out
    folder = run_dir / "multipl-e"
    assert sorted(p.name for p in folder.iterdir()) == ["HumanEval_2_mul.json.gz", "HumanEval_53_add.json.gz"]
    add, mul = read_problem(folder / "HumanEval_53_add.json.gz"), read_problem(folder / "HumanEval_2_mul.json.gz")
    # every field MultiPL-E's completions.py writes, and the harness's own
    assert set(add) == {"name", "language", "temperature", "top_p", "max_tokens", "prompt", "tests", "completions",
                        "stop_tokens", "harness"}
    assert (add["name"], add["language"], add["tests"], add["stop_tokens"]) == (ADD["name"], "rs", ADD["tests"], ["\n}"])
    assert (add["temperature"], add["max_tokens"], add["top_p"]) == (0.2, 512, None)
    assert add["harness"]["attempts"] == [1, 2] and add["harness"]["hidden_passed"] == [True, True]
    # a body: the row's prompt, the completion ends before the brace the tests open with
    assert add["prompt"] == ADD["prompt"] and add["completions"] == ["    // add x and y\n    x + y\n"] * 2
    # a whole function: no prompt, the row's `use` line before it, its last brace left to the tests
    assert mul["prompt"] == "" and mul["completions"] == [
        "use std::collections::HashMap;\n\nfn mul(x: isize, y: isize) -> isize {\n    x * y +\n"] * 2
    assert mul["harness"]["prompt_continued"] is False


def test_export_refuses_a_task_without_a_multipl_e_form(tmp_path):
    from harness.rundata import TrialRecord
    from synthrun import write_run

    tasks = load_tasks("builtin")
    task = tasks.tasks[0]
    head = {"schema": 3, "run_id": "py", "config": {"strategies": ["baseline"], "samples": 1},
            "tasks": {"spec": "builtin", "name": tasks.name, "digest": tasks.digest, "count": len(tasks.tasks)}}
    run_dir = write_run(tmp_path / "py", head, [TrialRecord(
        run_id="py", task_id=task.task_id, strategy="baseline", attempt=1, trial=1, final=True,
        stop_reason="single_sample", code="def f():\n    pass\n", raw_output="")])
    done = run_harness("export", str(run_dir), "--format", "multipl-e", cwd=tmp_path, env=harness_env())
    assert done.returncode == 2 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: --format multipl-e: task {task.task_id!r} is a Python task, not one of MultiPL-E's "
                      "translated rows: its Python problems are HumanEval's and MBPP's own; export it with "
                      "--format humaneval"]
    assert not (run_dir / "multipl-e").exists()


@pytest.mark.docker
def test_a_rust_run_records_compile_status_and_exports_what_it_graded(tmp_path):
    spec = fixture(tmp_path / "data")
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in SCRIPT))
    env = harness_env(HARNESS_CACHE_DIR=str(tmp_path / "cache"))
    done = run_harness("run", "--tasks", spec, "--model", f"scripted:{script}", "--strategy", "baseline,reflexion",
                       "--trials", "1", "--samples", "1", "--out", str(tmp_path / "out"), "--memory-dir",
                       str(tmp_path / "mem"), "--no-cache", cwd=tmp_path, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    (run_dir,) = (tmp_path / "out").iterdir()
    records = [json.loads(line) for line in (run_dir / "trials.jsonl").read_text().splitlines()]
    status = {(r["task_id"].rsplit("/", 1)[1], r["strategy"]): r["compile_status"] for r in records}
    assert status == {("HumanEval_53_add", "baseline"): "ok", ("HumanEval_53_add", "reflexion"): "ok",
                      ("HumanEval_2_mul", "baseline"): "compile_error", ("HumanEval_2_mul", "reflexion"): "compile_error"}
    hidden = {(r["task_id"].rsplit("/", 1)[1], r["strategy"]): r["hidden_passed"] for r in records}
    assert hidden[("HumanEval_53_add", "baseline")] and not hidden[("HumanEval_2_mul", "baseline")]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["languages"] == {"rust": 2} and "by_language" not in summary
    stops = {(r["strategy"], r["stop_reason"]): r["did_not_compile"] for r in summary["stop_reasons"]}
    assert stops[("baseline", "single_sample")] == {"compile_error": 1}
    assert stops[("reflexion", "budget")] == {"compile_error": 1}
    assert "final programs that did not compile: baseline 1 of 2 (compile_error 1); reflexion 1 of 2 " \
           "(compile_error 1)" in done.stdout
    assert "did not compile (final programs)" in (run_dir / "report.html").read_text()

    exported = run_harness("export", str(run_dir), "--format", "multipl-e", "--strategy", "baseline",
                           "--out", str(tmp_path / "mpe"), cwd=tmp_path, env=env)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.strip() == f"{tmp_path / 'mpe'}: 2 samples, strategy baseline"
    tasks = {t.meta["multipl_e"]["name"]: t for t in load_tasks(spec).tasks}
    finals = {r["task_id"]: r for r in records if r["strategy"] == "baseline" and r["final"]}
    for name in ("HumanEval_53_add", "HumanEval_2_mul"):
        problem = read_problem(tmp_path / "mpe" / f"{name}.json.gz")
        task = tasks[name]
        program = graded_program(task, finals[task.task_id]["code"])  # what the harness compiled and graded
        [completion] = problem["completions"]
        assert problem["tests"].startswith("}")  # the tests close the function: the completion ends before it
        header = "" if problem["prompt"] else "use std::collections::HashMap;\n\n" * (name == "HumanEval_2_mul")
        assert problem["prompt"] + completion + "}\n" == header + program
    assert read_problem(tmp_path / "mpe" / "HumanEval_53_add.json.gz")["prompt"] == ADD["prompt"]
