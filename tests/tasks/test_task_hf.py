"""Hugging Face task sets, exercised with `datasets` on small local copies.

A folder named like a Hub dataset (e.g. `google-research-datasets/mbpp/`, with the
same configs and files as on the Hub) is what `datasets.load_dataset` reads for that
name when it exists under the working directory, so `hf:<name>` and `mbpp` run here
exactly as they do against the Hub: same call, same adapter.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.tasks import TaskError, load_tasks
from harness.tasks.hf import HfSpec
from sandbox import RunRequest

datasets = pytest.importorskip("datasets")
REPO = Path(__file__).resolve().parents[2]

HUMANEVAL_ROW = {
    "task_id": "HumanEval/0",
    "prompt": 'def add(a: int, b: int) -> int:\n    """Return a + b.\n    >>> add(1, 2)\n    3\n    """\n',
    "canonical_solution": "    return a + b\n",
    "test": "\n\nMETADATA = {}\n\n\ndef check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n",
    "entry_point": "add",
}
# EvalPlus's style: a numeric-aware `assertion` over many inputs, inside check().
PLUS_TEST = '''
import numpy as np

def is_floats(x) -> bool:
    return isinstance(x, float) or (isinstance(x, (list, tuple)) and all(isinstance(i, float) for i in x))

def assertion(out, exp, atol):
    exact_match = out == exp
    if atol == 0 and is_floats(exp):
        atol = 1e-6
    if not exact_match and atol != 0:
        np.testing.assert_allclose(out, exp, atol=atol)
    else:
        assert exact_match

def check(candidate):
    inputs = [[1, 2], [0, 0], [-5, 3], [10 ** 12, 1]]
    results = [3, 0, -2, 10 ** 12 + 1]
    for i, (inp, exp) in enumerate(zip(inputs, results)):
        assertion(candidate(*inp), exp, 0)
'''
HUMANEVALPLUS_ROW = {**HUMANEVAL_ROW, "test": PLUS_TEST}
MBPP_FULL_ROW = {
    "task_id": 11,
    "text": "Write a function to count the even numbers in a list.",
    # The tested function first, a helper after it; MBPP's files use CRLF.
    "code": "def count_evens(nums):\r\n    return sum(1 for n in nums if _is_even(n))\r\ndef _is_even(n):\r\n    return n % 2 == 0",
    "test_list": [
        "assert count_evens([1, 2, 4]) == 2",
        "assert count_evens([]) == 0",
        "assert count_evens([-2, 3]) == 1",
    ],
    "test_setup_code": "",
    "challenge_test_list": [],
}
MBPP_SANITIZED_ROW = {
    "source_file": "Benchmark Questions Verification V2.ipynb",
    "task_id": 12,
    "prompt": "Write a function to find the area of a circle of radius r.",
    "code": "import math\ndef circle_area(r):\n  return math.pi * r * r",
    "test_imports": ["import math"],
    "test_list": [
        "assert math.isclose(circle_area(1), 3.14159, rel_tol=1e-3)",
        "assert math.isclose(circle_area(2), 12.566, rel_tol=1e-3)",
        "assert circle_area(0) == 0",
    ],
}
MBPPPLUS_ROW = {
    "task_id": 2,
    "code": "def shared(a, b):\n    return tuple(set(a) & set(b))\n",
    "prompt": '"""\nWrite a function to find the elements shared by two tuples.\n'
    'assert set(shared((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))\n"""\n',
    "source_file": "Benchmark Questions Verification V2.ipynb",
    "test_imports": [],
    "test_list": ["assert set(shared((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))"],
    "test": "inputs = [[(3, 4, 5, 6), (5, 7, 4, 10)], [(1, 2), (3, 4)], [(), (1,)]]\n"
    "results = [{4, 5}, set(), set()]\n"
    "for i, (inp, exp) in enumerate(zip(inputs, results)):\n"
    "    assert set(shared(*inp)) == exp, i\n",
}
MBPP_README = """---
configs:
- config_name: full
  data_files:
  - split: train
    path: full/train-*
  - split: test
    path: full/test-*
  default: true
- config_name: sanitized
  data_files:
  - split: test
    path: sanitized/test-*
---
"""


def save(rows: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows).to_parquet(str(path))


@pytest.fixture
def hub_copies(tmp_path, monkeypatch):
    """Local copies of the Hub datasets, laid out as on the Hub, in the working dir."""
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    monkeypatch.chdir(tmp_path)
    save([HUMANEVAL_ROW], tmp_path / "openai_humaneval" / "openai_humaneval" / "test-00000-of-00001.parquet")
    save([HUMANEVALPLUS_ROW], tmp_path / "evalplus" / "humanevalplus" / "data" / "test-00000-of-00001.parquet")
    save([MBPPPLUS_ROW], tmp_path / "evalplus" / "mbppplus" / "data" / "test-00000-of-00001.parquet")
    mbpp = tmp_path / "google-research-datasets" / "mbpp"
    save([MBPP_FULL_ROW], mbpp / "full" / "test-00000-of-00001.parquet")
    save([{**MBPP_FULL_ROW, "task_id": 601}], mbpp / "full" / "train-00000-of-00001.parquet")
    save([MBPP_SANITIZED_ROW], mbpp / "sanitized" / "test-00000-of-00001.parquet")
    (mbpp / "README.md").write_text(MBPP_README)
    return tmp_path


@pytest.mark.parametrize(
    "arg, expected",
    [
        ("openai_humaneval", HfSpec("openai_humaneval")),
        ("openai_humaneval:test", HfSpec("openai_humaneval", None, "test")),
        ("google-research-datasets/mbpp:sanitized", HfSpec("google-research-datasets/mbpp", "sanitized")),
        ("google-research-datasets/mbpp:full:train", HfSpec("google-research-datasets/mbpp", "full", "train")),
        ("mbpp::test[:10]", HfSpec("mbpp", None, "test[:10]")),
        ("mbpp:test[:10]", HfSpec("mbpp", None, "test[:10]")),
    ],
)
def test_spec_parsing(arg, expected):
    assert HfSpec.parse(arg) == expected


def test_openai_humaneval_matches_the_bundled_format(hub_copies):
    ts = load_tasks("hf:openai_humaneval")
    assert ts.name == "hf:openai_humaneval:test" and ts.spec == "hf:openai_humaneval"
    [t] = ts.tasks
    assert t.task_id == "HumanEval/0" and t.entry_point == "add" and t.prompt == HUMANEVAL_ROW["prompt"]
    assert t.hidden_tests == (HUMANEVAL_ROW["test"] + "\ncheck(add)",)
    assert t.canonical_solution == HUMANEVAL_ROW["prompt"] + HUMANEVAL_ROW["canonical_solution"]


def test_humanevalplus_keeps_evalplus_tests_hidden(hub_copies):
    [t] = load_tasks("hf:evalplus/humanevalplus").tasks
    assert t.hidden_tests == (PLUS_TEST + "\ncheck(add)",)
    assert "inputs" not in t.prompt


def test_mbpp_sanitized_is_the_default(hub_copies):
    ts = load_tasks("mbpp")
    assert ts.name == "mbpp"
    [t] = ts.tasks
    assert t.task_id == "Mbpp/12" and t.entry_point == "circle_area"
    assert t.prompt == 'def circle_area(r):\n    """Write a function to find the area of a circle of radius r."""\n'
    # The test imports go with every hidden test; the agent sees no test.
    assert t.hidden_tests == tuple("import math\n" + a for a in MBPP_SANITIZED_ROW["test_list"])
    assert "assert" not in t.prompt and "isclose" not in t.prompt
    assert t.canonical_solution == MBPP_SANITIZED_ROW["code"]


def test_mbpp_full_takes_the_signature_of_the_tested_function(hub_copies):
    ts = load_tasks("mbpp:full")
    assert ts.name == "mbpp:full"
    [t] = ts.tasks
    assert t.task_id == "Mbpp/11" and t.entry_point == "count_evens"  # not the helper _is_even
    assert t.prompt == 'def count_evens(nums):\n    """Write a function to count the even numbers in a list."""\n'
    assert t.hidden_tests == tuple(MBPP_FULL_ROW["test_list"])
    assert "\r" not in t.canonical_solution
    assert load_tasks("hf:google-research-datasets/mbpp:full:test").tasks == ts.tasks
    assert [t.task_id for t in load_tasks("hf:google-research-datasets/mbpp:full:train").tasks] == ["Mbpp/601"]


def test_mbppplus_prompt_drops_the_example_assert(hub_copies):
    [t] = load_tasks("hf:evalplus/mbppplus").tasks
    assert t.task_id == "Mbpp/2" and t.entry_point == "shared"
    assert t.prompt == 'def shared(a, b):\n    """Write a function to find the elements shared by two tuples."""\n'
    assert t.hidden_tests == (MBPPPLUS_ROW["test"],)


def test_a_local_file_or_folder_is_matched_by_its_columns(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    save([MBPP_SANITIZED_ROW], tmp_path / "mine.parquet")
    [t] = load_tasks(f"hf:{tmp_path / 'mine.parquet'}").tasks
    assert t.entry_point == "circle_area" and len(t.hidden_tests) == 3
    save([HUMANEVAL_ROW], tmp_path / "he" / "test.parquet")
    [t] = load_tasks(f"hf:{tmp_path / 'he'}").tasks
    assert t.hidden_tests == (HUMANEVAL_ROW["test"] + "\ncheck(add)",)


def test_a_reference_solution_python3_cannot_parse_still_gives_a_signature(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    row = {
        **MBPP_FULL_ROW,
        "text": 'Write a function that says "hi" \\o/',
        "code": 'def shout(s):\r\n    print "py2"\r\ndef greet(name, punct="!"):\r\n    return "hi " + name',
        "test_list": ['assert greet("bo") == "hi bo"', 'assert greet("") == "hi "'],
    }
    save([row], tmp_path / "old.parquet")
    [t] = load_tasks(f"hf:{tmp_path / 'old.parquet'}").tasks
    assert t.entry_point == "greet"
    [function] = ast.parse(t.prompt).body
    assert function.name == "greet" and [a.arg for a in function.args.args] == ["name", "punct"]
    assert ast.get_docstring(function) == 'Write a function that says "hi" \\o/'


def test_columns_that_match_no_format_are_named(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    save([{"question": "q", "answer": "a"}], tmp_path / "qa.parquet")
    with pytest.raises(TaskError, match=r"has columns \['answer', 'question'\], which match no known format"):
        load_tasks(f"hf:{tmp_path / 'qa.parquet'}")


def test_a_known_dataset_without_its_columns_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    monkeypatch.chdir(tmp_path)
    save([{"task_id": 1, "code": "def f(): pass", "test_list": ["assert f() is None"]}], tmp_path / "openai_humaneval" / "test.parquet")
    with pytest.raises(TaskError, match=r"'openai_humaneval' .* lacks the columns \['canonical_solution', 'entry_point', 'prompt', 'test'\]"):
        load_tasks("hf:openai_humaneval")


def test_bad_specs():
    with pytest.raises(TaskError, match=r"expected mbpp\[:sanitized\|:full\]\[:with-example\]"):
        load_tasks("mbpp:plus")
    with pytest.raises(TaskError, match=r"expected hf:<dataset>\[:<config>\]\[:<split>\]"):
        load_tasks("hf:")
    with pytest.raises(TaskError, match=r"expected hf:<dataset>"):
        load_tasks("hf:a:b:c:d")


@pytest.mark.parametrize("spec, dataset", [("hf:openai_humaneval", "openai_humaneval"), ("mbpp", "google-research-datasets/mbpp")])
def test_offline_without_a_local_copy_says_how_to_use_one(tmp_path, spec, dataset):
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "empty-hf-home"),
        "PYTHONPATH": str(REPO),
    }
    env.pop("HF_DATASETS_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-m", "harness", "tasks", "list", spec],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2, done.stderr
    [error] = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert f"'{dataset}'" in error
    assert "HF_DATASETS_OFFLINE=1" in error and "Hugging Face cache" in error and "hf:<folder>" in error
    assert done.stdout == ""


@pytest.mark.docker
def test_adapted_tasks_run_in_the_sandbox(hub_copies, docker_sandbox):
    """Imports, check() calls and signatures the adapters produce work for real."""
    specs = ["hf:openai_humaneval", "hf:evalplus/humanevalplus", "mbpp", "mbpp:full", "hf:evalplus/mbppplus"]
    tasks = [t for spec in specs for t in load_tasks(spec).tasks]

    def grade(task):
        good = docker_sandbox.run(RunRequest(task.canonical_solution, task.hidden_tests))
        stub = docker_sandbox.run(RunRequest(task.prompt + "    return None\n", task.hidden_tests))
        return [o.status for o in good], [o.status for o in stub]

    with ThreadPoolExecutor(4) as pool:
        results = dict(zip([t.task_id + " " + t.meta["source"] for t in tasks], pool.map(grade, tasks)))
    assert len(results) == 5
    for key, (good, stub) in results.items():
        assert set(good) == {"passed"}, (key, good)
        assert "passed" not in stub or set(stub) != {"passed"}, (key, stub)


def test_mbpp_with_example_shows_the_first_assert_as_the_original_does(hub_copies):
    plain = load_tasks("mbpp")
    shown = load_tasks("mbpp:with-example")
    assert shown.name == "mbpp:with-example" and "example" in shown.prompt_form and "no example" in plain.prompt_form
    [t], [p] = shown.tasks, plain.tasks
    first = MBPP_SANITIZED_ROW["test_list"][0]
    assert first in t.prompt and first not in p.prompt
    assert t.hidden_tests == p.hidden_tests  # graded the same way: only the prompt differs
    assert t.entry_point == p.entry_point
    [f] = load_tasks("mbpp:full:with-example").tasks
    assert MBPP_FULL_ROW["test_list"][0] in f.prompt


@pytest.mark.parametrize(
    "row, name",
    [
        ({**MBPP_SANITIZED_ROW, "test_list": []}, "mbpp"),
        ({**MBPP_SANITIZED_ROW, "test_list": ["  "]}, "mbpp"),
        ({**HUMANEVAL_ROW, "test": "\n"}, "humaneval"),
    ],
)
def test_hf_rows_without_hidden_tests_are_rejected(tmp_path, monkeypatch, row, name):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    save([row], tmp_path / f"{name}.parquet")
    with pytest.raises(TaskError, match="hidden tests|empty"):
        load_tasks(f"hf:{tmp_path / (name + '.parquet')}")
