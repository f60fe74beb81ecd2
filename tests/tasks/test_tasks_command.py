"""`python -m harness tasks list|show`."""
from __future__ import annotations

import json

from harness.cli import main
from harness.tasks import load_tasks
from tests.helpers import run_harness as run_cli


def test_list_prints_one_line_per_task_and_a_total(capsys):
    assert main(["tasks", "list", "builtin"]) == 0
    lines = capsys.readouterr().out.splitlines()
    ts = load_tasks("builtin")
    assert lines[0].split() == ["task", "tags", "hidden", "tests"]
    assert len(lines) == len(ts.tasks) + 2
    for line, task in zip(lines[1:], ts.tasks):
        task_id, tags, count = line.split()
        assert (task_id, tags, int(count)) == (task.task_id, ",".join(task.tags), len(task.hidden_tests))
    total = sum(len(t.hidden_tests) for t in ts.tasks)
    assert lines[-1] == f"{len(ts.tasks)} tasks, {total} hidden tests in builtin ({ts.digest})"


def test_show_prints_prompt_entry_point_hidden_tests_and_solution(capsys):
    assert main(["tasks", "show", "builtin", "builtin/roman_to_int"]) == 0
    out = capsys.readouterr().out
    task = load_tasks("builtin").select(task_ids=["builtin/roman_to_int"]).tasks[0]
    assert "entry point: roman_to_int" in out
    assert task.prompt.rstrip() in out and task.canonical_solution.rstrip() in out
    for i, test in enumerate(task.hidden_tests, start=1):
        assert f"--- hidden test {i} of {len(task.hidden_tests)} ---\n{test.rstrip()}\n" in out


def test_a_task_file_given_by_path(tmp_path, capsys):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"task_id": "t/1", "prompt": "def f():\n    pass\n", "entry_point": "f", "tests": "assert f() is None"}) + "\n")
    assert main(["tasks", "list", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["t/1", "-", "1"]
    assert lines[2].startswith(f"1 task, 1 hidden test in jsonl:{path} (sha256:")
    assert main(["tasks", "show", str(path), "t/1"]) == 0
    assert "--- canonical solution ---\n(none)" in capsys.readouterr().out


def test_unknown_spec_is_a_usage_error():
    done = run_cli("tasks", "list", "humaneva")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: unknown task set 'humaneva'; known forms: builtin")
    assert len(done.stderr.splitlines()) == 1


def test_unknown_task_id_is_a_usage_error_with_suggestions():
    done = run_cli("tasks", "show", "builtin", "roman")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "error: no task 'roman' in builtin; did you mean: builtin/roman_to_int, builtin/io/roman_to_int\n"
    done = run_cli("tasks", "show", "humaneval", "zzz")
    assert done.stderr == "error: no task 'zzz' in humaneval; see: python -m harness tasks list humaneval\n"
