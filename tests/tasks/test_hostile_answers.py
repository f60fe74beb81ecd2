"""Hostile answers to the sources' tasks, loaded from files in each source's format and
graded as a run grades them (Evaluator, hidden domain) on every backend: APPS and
LeetCode call-based answers and io programs that a lenient rule would pass. None passes
under the strict rule (the default); the sources' own rules (io_compare = "source") are
kept for comparability, and every record keeps the strict verdict beside theirs."""
from __future__ import annotations

import json

import pytest

from harness.core.evaluator import HIDDEN, Evaluator
from harness.text.prompting import Prompts
from harness.tasks import load_tasks
from tests.tasks.test_task_contest import apps_row, lcb_row, write_jsonl


@pytest.fixture(params=[pytest.param("process", id="process"),
                        pytest.param("docker", id="docker", marks=pytest.mark.docker)])
def sandbox(request):
    return request.getfixturevalue(f"{request.param}_sandbox")


def graded(sandbox, task, program: str, mode: str = "strict"):
    evaluation = Evaluator(sandbox, Prompts(), timeout_s=10.0, compare_mode=mode).run(
        program, task.hidden_tests, task=task, domain=HIDDEN)
    return evaluation, [(r.status, r.strict_status) for r in evaluation.records]


@pytest.fixture
def apps_tasks(tmp_path):
    sort = "def sort_list(xs):\n    "
    rows = [
        # APPS's usual form: each return value wrapped in a list of one
        apps_row(1, {"fn_name": "sort_list", "inputs": [[[3, 1, 2]], [[5, 4, 9, 1]]],
                     "outputs": [[[1, 2, 3]], [[1, 4, 5, 9]]]}, starter=sort),
        # the bare form: the return values themselves
        apps_row(2, {"fn_name": "sort_list", "inputs": [[[3, 1, 2]], [[5, 4, 9, 1]]],
                     "outputs": [[1, 2, 3], [1, 4, 5, 9]]}, starter=sort),
        # LeetCode style, in `class Solution`
        apps_row(3, {"fn_name": "sortList", "inputs": [[[3, 1, 2]], [[5, 4, 9, 1]]], "outputs": [[[1, 2, 3]], [[1, 4, 5, 9]]]},
                 starter="class Solution:\n    def sortList(self, xs):\n        "),
        # standard input: a sort and a multi-query YES/NO problem
        apps_row(4, {"inputs": ["5\n3 1 2 5 4\n", "3\n2 2 1\n"], "outputs": ["1 2 3 4 5\n", "1 2 2\n"]}),
        apps_row(5, {"inputs": ["4\n2\n3\n9\n10\n"], "outputs": ["YES\nNO\nNO\nYES\n"]}),
    ]
    write_jsonl(tmp_path / "test.jsonl", rows)
    return {t.task_id: t for t in load_tasks(f"apps:{tmp_path}").tasks}


def method(body: str) -> str:
    return "class Solution:\n    def sortList(self, xs):\n        " + body + "\n"


CALL_ANSWERS = {
    # (program for apps/1 and apps/2, program for apps/3): each a wrong answer
    "the smallest item": ("def sort_list(xs):\n    return min(xs)\n", method("return min(xs)")),
    "the stored form of the answer (a list of one list)": ("def sort_list(xs):\n    return [sorted(xs)]\n",
                                                           method("return [sorted(xs)]")),
    "the input unsorted": ("def sort_list(xs):\n    return xs\n", method("return xs")),
    "the items, reversed": ("def sort_list(xs):\n    return sorted(xs, reverse=True)\n", method("return sorted(xs)[::-1]")),
    "an iterator of the items": ("def sort_list(xs):\n    return iter(sorted(xs))\n", method("return iter(sorted(xs))")),
    "an object equal to everything": ("class Yes:\n    def __eq__(self, other):\n        return True\n"
                                      "def sort_list(xs):\n    return Yes()\n",
                                      "class Yes:\n    def __eq__(self, other):\n        return True\n" + method("return Yes()")),
    "a list subclass equal to everything": ("class L(list):\n    def __eq__(self, other):\n        return True\n"
                                            "def sort_list(xs):\n    return L()\n",
                                            "class L(list):\n    def __eq__(self, other):\n        return True\n"
                                            + method("return L()")),
}


@pytest.mark.parametrize("name", list(CALL_ANSWERS))
def test_hostile_call_based_answers_fail(sandbox, apps_tasks, name):
    function, solution = CALL_ANSWERS[name]
    for task_id, program in (("apps/1", function), ("apps/2", function), ("apps/3", solution)):
        evaluation, verdicts = graded(sandbox, apps_tasks[task_id], program)
        assert not evaluation.passed, (task_id, verdicts)
        assert all(status in ("failed", "error") for status, _ in verdicts), (task_id, verdicts)


def test_honest_call_based_answers_pass_in_both_forms(sandbox, apps_tasks):
    for task_id, program in (("apps/1", "def sort_list(xs):\n    return sorted(xs)\n"),
                             ("apps/2", "def sort_list(xs):\n    return tuple(sorted(xs))\n"),  # a tuple is the list it holds
                             ("apps/3", method("return sorted(xs)"))):
        for mode in ("strict", "source"):
            evaluation, verdicts = graded(sandbox, apps_tasks[task_id], program, mode)
            assert evaluation.passed, (task_id, mode, verdicts)


def test_apps_s_own_call_check_is_graded_only_in_source_mode_with_the_strict_verdict_kept(sandbox, apps_tasks):
    smallest = CALL_ANSWERS["the smallest item"][0]
    evaluation, verdicts = graded(sandbox, apps_tasks["apps/2"], smallest, "source")
    assert evaluation.passed and verdicts == [("passed", "failed"), ("passed", "failed")]  # APPS takes expected[0]
    stored = CALL_ANSWERS["the stored form of the answer (a list of one list)"][0]
    evaluation, verdicts = graded(sandbox, apps_tasks["apps/1"], stored, "source")
    assert evaluation.passed and verdicts == [("passed", "failed"), ("passed", "failed")]  # APPS takes the list itself
    evaluation, verdicts = graded(sandbox, apps_tasks["apps/2"], smallest, "strict")
    assert not evaluation.passed and verdicts == [("failed", None), ("failed", None)]


IO_ANSWERS = {
    "apps/4": {"the input echoed unsorted": "input()\nprint(input())\n",
               "the input echoed, one item a line": "input()\nprint('\\n'.join(input().split()))\n"},
    "apps/5": {"YES and NO": "print('YES')\nprint('NO')\n",
               "NO and YES, twice over": "print('NO\\nYES\\nNO\\nYES')\n"},
}


@pytest.mark.parametrize("task_id", list(IO_ANSWERS))
def test_hostile_io_answers_to_apps_fail_strict_and_pass_only_apps_s_own_rule(sandbox, apps_tasks, task_id):
    task = apps_tasks[task_id]
    for name, program in IO_ANSWERS[task_id].items():
        evaluation, verdicts = graded(sandbox, task, program)
        assert not evaluation.passed and all(v == ("failed", None) for v in verdicts), (name, verdicts)
        lenient, verdicts = graded(sandbox, task, program, "source")
        assert all(strict == "failed" for _, strict in verdicts), (name, verdicts)


def test_leetcode_functional_answers(sandbox, tmp_path):
    folder = tmp_path / "code_generation_lite"
    folder.mkdir()
    write_jsonl(folder / "test.jsonl", [lcb_row("2831", "2023-06-10", platform="leetcode", functional=True)])
    [task] = load_tasks(f"livecodebench:{folder}").tasks
    head = "class Solution:\n    def addUp(self, nums, k):\n        "
    answer = "{(1, 2, 3): 5, (4,): 4}[tuple(nums)]"  # the row's two cases
    right = head + f"return {answer}\n"
    assert graded(sandbox, task, right)[0].passed and graded(sandbox, task, right, "source")[0].passed
    wrong = {
        "the expected value's text": head + f"return str({answer})\n",
        "the first argument": head + "return nums\n",
        "a float near the answer": head + f"return {answer} + 1e-9\n",
        "the answer and its neighbour in a list": head + f"return [{answer}, {answer} + 1]\n",
        "an object equal to everything": "class Yes:\n    def __eq__(self, other):\n        return True\n" + head + "return Yes()\n",
        "a huge integer": head + "return 10 ** 5000\n",
        "NaN": head + "return float('nan')\n",
    }
    for name, program in wrong.items():
        for mode in ("strict", "source"):
            evaluation, verdicts = graded(sandbox, task, program, mode)
            assert not evaluation.passed, (name, mode, verdicts)
            assert all(status in ("failed", "error") for status, _ in verdicts), (name, verdicts)


def test_the_task_set_digest_covers_the_source_tests(apps_tasks, tmp_path):
    task = apps_tasks["apps/2"]
    assert json.dumps(task.digest_fields()["source_tests"]) and task.source_tests != task.hidden_tests
