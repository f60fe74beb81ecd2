"""JSONL task files: schema, validation (file, line, field), folders, all-or-nothing."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.tasks import known_forms, TaskError, load_tasks

REPO = Path(__file__).resolve().parents[2]


def task(task_id: str = "t/1", **fields) -> dict:
    record = {
        "task_id": task_id,
        "prompt": "def inc(x: int) -> int:\n    \"\"\"Return x + 1.\"\"\"\n",
        "entry_point": "inc",
        "tests": ["assert inc(1) == 2", "assert inc(-1) == 0"],
    }
    record.update(fields)
    return record


def write(path: Path, *lines: dict | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n" for ln in lines))
    return path


def error_of(spec: str) -> str:
    with pytest.raises(TaskError) as info:
        load_tasks(spec)
    return str(info.value)


def test_a_valid_file_loads_every_field(tmp_path):
    path = write(
        tmp_path / "mine.jsonl",
        task("t/1", canonical_solution="def inc(x):\n    return x + 1\n", tags=["easy", "math"], timeout_s=2,
             meta={"origin": "hand"}),
        "",  # blank lines are allowed
        task("t/2", tests="assert inc(0) == 1\nassert inc(9) == 10\n"),
    )
    ts = load_tasks(f"jsonl:{path}")
    assert ts.spec == f"jsonl:{path}" and ts.name == f"jsonl:{path}"
    first, second = ts.tasks
    assert first.task_id == "t/1" and first.entry_point == "inc"
    assert first.hidden_tests == ("assert inc(1) == 2", "assert inc(-1) == 0")
    assert first.canonical_solution.startswith("def inc") and first.tags == ("easy", "math")
    assert first.timeout_s == 2.0 and first.meta["origin"] == "hand"
    assert second.hidden_tests == ("assert inc(0) == 1\nassert inc(9) == 10\n",)
    assert second.canonical_solution is None and second.tags == () and second.timeout_s is None


def test_a_bare_path_means_jsonl(tmp_path):
    path = write(tmp_path / "mine.jsonl", task())
    assert load_tasks(str(path)).tasks == load_tasks(f"jsonl:{path}").tasks


def test_a_check_function_string_gets_called_with_the_entry_point(tmp_path):
    check = "def check(candidate):\n    assert candidate(1) == 2\n"
    path = write(tmp_path / "t.jsonl", task(tests=check))
    [hidden] = load_tasks(str(path)).tasks[0].hidden_tests
    assert hidden == check + "\ncheck(inc)"
    # Already called: left alone.
    called = check + "\ncheck(inc)\n"
    path = write(tmp_path / "u.jsonl", task(tests=called))
    assert load_tasks(str(path)).tasks[0].hidden_tests == (called,)


BAD_LINES = [
    (task(entry_point="my func"), "entry_point", "not a Python name"),
    (task(entry_point="class"), "entry_point", "not a Python name"),
    (task(task_id=""), "task_id", "non-empty string"),
    (task(task_id=7), "task_id", "non-empty string"),
    (task(prompt="  "), "prompt", "non-empty string"),
    (task(tests=[]), "tests", "non-empty list"),
    (task(tests=["assert inc(1) == 2", "assert inc(("]), "tests[1]", "not valid Python"),
    (task(tests=["assert True", 3]), "tests[1]", "non-empty string"),
    (task(tests="assert (("), "tests", "not valid Python"),
    (task(canonical_solution="def inc(x) return x"), "canonical_solution", "not valid Python"),
    (task(canonical_solution="def other(x):\n    return x\n"), "canonical_solution", "does not define the entry point 'inc'"),
    (task(tags="easy"), "tags", "list of non-empty strings"),
    (task(tags=["easy", ""]), "tags", "list of non-empty strings"),
    (task(timeout_s=0), "timeout_s", "positive number"),
    (task(timeout_s="5"), "timeout_s", "positive number"),
    (task(timeout_s=True), "timeout_s", "positive number"),
    (task(meta=[1]), "meta", "JSON object"),
    (task(test=["assert True"]), "test", "unknown field"),
    ({k: v for k, v in task().items() if k != "entry_point"}, "entry_point", "missing"),
]


@pytest.mark.parametrize("record, field, why", BAD_LINES, ids=[f"{f}-{i}" for i, (_, f, _) in enumerate(BAD_LINES)])
def test_every_error_names_file_line_and_field(tmp_path, record, field, why):
    path = write(tmp_path / "bad.jsonl", task("ok/1"), task("ok/2"), record)
    message = error_of(str(path))
    assert message.startswith(f"{path}:3: field {field!r}: "), message
    assert why in message


@pytest.mark.parametrize(
    "line, why",
    [("{not json", "not valid JSON"), ("[1, 2]", "expected a JSON object"), ('"text"', "expected a JSON object")],
)
def test_a_line_that_is_no_json_object_names_file_and_line(tmp_path, line, why):
    path = write(tmp_path / "bad.jsonl", task(), line)
    message = error_of(str(path))
    assert message.startswith(f"{path}:2: ") and why in message


def test_all_problems_are_reported_at_once_and_nothing_is_half_loaded(tmp_path):
    path = write(tmp_path / "bad.jsonl", task("a"), task("b", entry_point="1x"), task("c"), task("d", tests=[]))
    message = error_of(str(path))
    assert message.splitlines()[0].startswith("2 problems in task files")
    assert f"{path}:2: field 'entry_point'" in message and f"{path}:4: field 'tests'" in message
    # Fixing the file makes it load whole: the good lines were never the problem.
    write(path, task("a"), task("b"), task("c"), task("d"))
    assert [t.task_id for t in load_tasks(str(path)).tasks] == ["a", "b", "c", "d"]


def test_duplicate_ids_in_one_file_are_rejected(tmp_path):
    path = write(tmp_path / "dup.jsonl", task("x"), task("y"), task("x"))
    message = error_of(str(path))
    assert message == f"{path}:3: field 'task_id': duplicate 'x', first defined at {path}:1"


def test_a_folder_loads_its_files_in_name_order(tmp_path):
    write(tmp_path / "set" / "b.jsonl", task("b/1"), task("b/2"))
    write(tmp_path / "set" / "a.jsonl", task("a/1"))
    (tmp_path / "set" / "notes.txt").write_text("not a task file")
    ts = load_tasks(str(tmp_path / "set"))
    assert [t.task_id for t in ts.tasks] == ["a/1", "b/1", "b/2"]


def test_duplicate_ids_across_files_of_a_folder_are_rejected(tmp_path):
    write(tmp_path / "set" / "a.jsonl", task("same"))
    write(tmp_path / "set" / "b.jsonl", task("other"), task("same"))
    message = error_of(f"jsonl:{tmp_path / 'set'}")
    a, b = tmp_path / "set" / "a.jsonl", tmp_path / "set" / "b.jsonl"
    assert message == f"{b}:2: field 'task_id': duplicate 'same', first defined at {a}:1"


def test_a_bad_file_in_a_folder_loads_nothing(tmp_path):
    write(tmp_path / "set" / "a.jsonl", task("a/1"))
    write(tmp_path / "set" / "b.jsonl", task("b/1", prompt=""))
    message = error_of(str(tmp_path / "set"))
    assert f"{tmp_path / 'set' / 'b.jsonl'}:1: field 'prompt'" in message


def test_empty_files_folders_and_missing_paths_are_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    assert "holds no .jsonl task files" in error_of(str(tmp_path / "empty"))
    write(tmp_path / "blank.jsonl", "", "  ")
    assert "holds no tasks" in error_of(str(tmp_path / "blank.jsonl"))
    assert "no such file or folder" in error_of(str(tmp_path / "missing.jsonl"))
    assert "no such file or folder" in error_of(f"jsonl:{tmp_path / 'missing'}")
    assert "needs a path" in error_of("jsonl:")


def test_an_unknown_spec_lists_the_known_forms():
    message = error_of("humaneva")
    assert message.startswith("unknown task set 'humaneva'; known forms: ")
    for form in known_forms():
        assert form in message


def test_the_schema_example_in_tasks_readme_loads(tmp_path):
    readme = (REPO / "tasks" / "README.md").read_text()
    example = re.search(r"```json\n(.*?)\n```", readme, re.S).group(1)
    path = write(tmp_path / "example.jsonl", example)
    [t] = load_tasks(str(path)).tasks
    assert t.entry_point == "clamp" and len(t.hidden_tests) == 3 and t.timeout_s == 2.0
    # Every field the README's table names is one the loader accepts, and no other.
    from harness.tasks.jsonl import OPTIONAL_FIELDS, REQUIRED_FIELDS

    table_fields = re.findall(r"^\| `(\w+)` \|", readme, re.M)
    assert sorted(table_fields) == sorted(REQUIRED_FIELDS + OPTIONAL_FIELDS)
