"""Recall over every task kind: its hygiene on io tests (shared hidden tests, quoting),
and a whole recall run over a set that mixes function and io tasks."""
from __future__ import annotations

import json
from pathlib import Path

from harness.core.memory import Lesson, MemoryStore
from harness.models.scripted import ScriptedModel
from harness.core.recall import Recall, freeze
from harness.rundata import read_trials
from harness.tasks import load_tasks
from harness.tasks.base import IoTest, Task, TaskSet

from tests.loop.test_recall import _pool_config, run_spec

BIG = "1000000000000000000 999999999999999999"
SUM_IO = Task(
    task_id="io/sum", kind="io", entry_point="", compare="exact",
    prompt="Read two integers on one line and print their sum.\n",
    hidden_tests=(IoTest("1 2\n", "3\n"), IoTest(f"{BIG}\n", "1999999999999999999\n"), IoTest("-4 4\n", "0\n")),
)
SUM_FN = Task(task_id="fn/add", prompt='def add(a: int, b: int) -> int:\n    """Return a + b."""\n', entry_point="add",
              hidden_tests=("assert add(2, 3) == 5", "assert add(-7, 7) == 0"))


def _source_file(folder: Path) -> Path:
    """A source set mixing kinds: an io copy of io/sum's big test under another problem,
    an unrelated io problem, and a function task."""
    rows = [
        {"task_id": "src/io_copy", "kind": "io", "prompt": "Add two numbers (a copy from another contest).\n",
         "tests": [{"input": f"{BIG}\n", "output": "1999999999999999999\n"}]},
        {"task_id": "src/io_max", "kind": "io", "prompt": "Read n numbers and print the largest one.\n",
         "tests": [{"input": "3\n5 9 2\n", "output": "9\n"}]},
        {"task_id": "src/io_same", "kind": "io", "prompt": SUM_IO.prompt, "tests": [{"input": "5 5\n", "output": "10\n"}]},
        {"task_id": "src/upper", "prompt": 'def upper(s: str) -> str:\n    """Return s in upper case."""\n',
         "entry_point": "upper", "tests": ["assert upper('ab') == 'AB'"]},
    ]
    path = folder / "mixed_source.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_io_hygiene_on_a_mixed_set_shared_tests_quoting_and_same_task(tmp_path):
    spec = f"jsonl:{_source_file(tmp_path)}"
    store = MemoryStore(tmp_path / "reflections", "pool")
    lessons = {
        "fine": ("src/io_max", "Read every number of the second line, then print the largest with max().", False),
        "shared": ("src/io_copy", "Python integers do not overflow: read both with int() and add them.", False),
        "quotes": ("src/upper", f"For input {BIG} the sum has 19 digits; print it without a float.", False),
        "same": ("src/io_same", "Sum the two integers on the line.", False),
        "fn": ("src/upper", "Call str.upper on the argument and return it.", False),
    }
    for trial, (task_id, text, oracle) in enumerate(lessons.values(), 1):
        store.add(Lesson("old", task_id, "reflexion", 1, trial, text, oracle_feedback=oracle, task_set=spec))
    targets = TaskSet("test", "test", (SUM_FN, SUM_IO))
    pool = freeze(_pool_config(tmp_path, "namespace:pool"), targets)

    ids = {text: x.id for x in pool.lessons for key, (_, text, _) in lessons.items() if x.text == text}
    by_key = {key: ids[text] for key, (_, text, _) in lessons.items()}
    io_reasons, fn_reasons = pool.excluded["io/sum"], pool.excluded["fn/add"]
    assert io_reasons == {by_key["shared"]: "shared_hidden_tests", by_key["quotes"]: "quotes_hidden_tests",
                          by_key["same"]: "same_task"}
    assert fn_reasons == {by_key["quotes"]: "quotes_hidden_tests"}  # a quote of any task's hidden test: shown to none
    assert pool.counts["shared_hidden_tests"] == 1 and pool.counts["same_task"] == 1
    assert pool.counts["quotes_hidden_tests"] == 2

    recall = Recall.from_pool(pool, k=10)
    shown_io = {r.source_task for r in recall.for_trial(SUM_IO, "Test failed: wrong answer on the largest numbers")}
    assert shown_io <= {"src/io_max", "src/upper"} and "src/io_copy" not in shown_io
    shown_fn = {r.lesson for r in recall.for_trial(SUM_FN, "the sum of the integers is wrong, print the largest")}
    assert lessons["quotes"][1] not in shown_fn
    text = json.dumps(pool.to_json())  # no hidden-test text in the frozen pool but what a lesson itself wrote
    assert "1999999999999999999" not in text and "-4 4" not in text


def test_io_lines_short_or_found_in_many_tasks_say_nothing(tmp_path):
    # "YES", or an input line in the tests of several problems: no lesson is kept out for it.
    rows = [{"task_id": f"src/yes{i}", "kind": "io", "prompt": f"Problem {i}: answer YES or NO.\n",
             "tests": [{"input": "1 2 3 4 5 6 7 8\n", "output": "YES\n"}]} for i in range(3)]
    path = tmp_path / "src.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    store = MemoryStore(tmp_path / "reflections", "pool")
    for i in range(3):
        store.add(Lesson("old", f"src/yes{i}", "reflexion", 1, 1, f"Print YES when 1 2 3 4 5 6 7 8 holds ({i}).",
                         task_set=f"jsonl:{path}"))
    target = Task(task_id="io/t", kind="io", entry_point="", prompt="Print YES.\n",
                  hidden_tests=(IoTest("1 2 3 4 5 6 7 8\n", "YES\n"),))
    pool = freeze(_pool_config(tmp_path, "namespace:pool"), TaskSet("t", "t", (target,)))
    assert pool.excluded == {}  # the input line is boilerplate: four tasks hold it
    target = Task(task_id="io/t", kind="io", entry_point="", prompt="Print YES.\n",
                  hidden_tests=(IoTest("8 7 6 5 4 3 2 1\n", "YES\n"),))
    pool = freeze(_pool_config(tmp_path, "namespace:pool"), TaskSet("t", "t", (target,)))
    assert pool.excluded == {}  # "YES" alone is too short to say anything


def _mixed_tasks_file(folder: Path) -> Path:
    rows = [
        {"task_id": "mix/plus", "prompt": 'def plus(x: int, y: int) -> int:\n    """Return the sum of x and y."""\n',
         "entry_point": "plus", "tests": ["assert plus(4, 4) == 8", "assert plus(1, -1) == 0"]},
        {"task_id": "mix/io_sum", "kind": "io", "prompt": "Read two integers and print their sum.\n",
         "tests": [{"input": "4 4\n", "output": "8\n"}, {"input": "12345678901 1\n", "output": "12345678902\n"}]},
    ]
    path = folder / "mixed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _mixed_model() -> ScriptedModel:
    """Wrong at trial 1 on both kinds, right after one lesson."""
    def respond(system, messages):
        s = system or ""
        io = "standard input" in s or "test cases" in s
        if "writes unit tests" in s:
            return "```python\nassert plus(4, 4) == 8\n```"
        if "writes test cases" in s:
            return "```input\n4 4\n```\n```output\n8\n```"
        if "Explain in a few sentences" in s:
            return "Sum: read both integers and add them; never print a constant."
        if io:
            return "```python\nprint(0)\n```" if len(messages) == 1 else "```python\nprint(sum(map(int, input().split())))\n```"
        return "```python\ndef plus(x, y):\n    return 0\n```" if len(messages) == 1 else \
            "```python\ndef plus(x, y):\n    return x + y\n```"

    return ScriptedModel(responder=respond)


def test_reflexion_recall_runs_over_a_set_mixing_function_and_io_tasks(tmp_path, process_sandbox):
    spec = f"jsonl:{_mixed_tasks_file(tmp_path)}"
    source = run_spec(tmp_path, spec, _mixed_model(), process_sandbox, "source", strategy="reflexion").run_dir
    assert len([r for r in read_trials(source / "trials.jsonl") if r.lesson]) == 2
    assert load_tasks(spec).tasks[1].kind == "io"
    result = run_spec(tmp_path, spec, _mixed_model(), process_sandbox, "recall", strategy="recall",
                      recall_from=str(source), trials=2)
    records = read_trials(result.run_dir / "trials.jsonl")
    finals = {(r.task_id, r.strategy): r.hidden_passed for r in records if r.final}
    assert finals == {(t, s): True for t in ("mix/plus", "mix/io_sum") for s in ("reflexion", "reflexion+recall")}
    recalling = [r for r in records if r.strategy == "reflexion+recall"]
    # Each task recalls the other task's lesson (never its own), across kinds.
    assert {r.task_id: {x["source_task"] for x in r.recalled} for r in recalling if r.trial == 1} == {
        "mix/plus": {"mix/io_sum"}, "mix/io_sum": {"mix/plus"}}
    assert result.header["recall"]["hygiene"]["excluded"]["same_task"] == 2
