"""`builtin`: the project's own problems, checked in the sandbox."""
from __future__ import annotations

import ast
from collections import Counter

import pytest

from harness.tasks import DEFAULT_TASKS, TaskError, load_tasks

DIFFICULTIES = ("easy", "medium", "hard")
TOPICS = ("string", "list", "math", "parsing", "data-structure", "algorithm")
KINDS = ("io", "leetcode")  # whole programs on stdin/stdout; `class Solution` methods


def functions(task_set):
    """The function tasks with a signature-and-docstring prompt (not io, not LeetCode-style)."""
    return [t for t in task_set.tasks if not set(t.tags) & set(KINDS)]


@pytest.fixture(scope="module")
def builtin():
    return load_tasks("builtin")


def difficulty(task) -> str:
    [level] = [t for t in task.tags if t in DIFFICULTIES]
    return level


def test_default_task_set_is_builtin_and_needs_no_network():
    assert DEFAULT_TASKS == "builtin:quick"
    default = load_tasks(DEFAULT_TASKS)
    assert len(default.tasks) == 12
    assert {"easy", "medium", "hard"} <= {tag for task in default.tasks for tag in task.tags}


def test_size_and_graded_difficulty(builtin):
    assert len(builtin.tasks) >= 40
    levels = Counter(difficulty(t) for t in builtin.tasks)
    assert levels["easy"] >= 13 and levels["medium"] >= 13 and levels["hard"] >= 10, levels
    topics = Counter(tag for t in builtin.tasks for tag in t.tags if tag in TOPICS)
    assert all(topics[topic] >= 5 for topic in TOPICS), topics
    assert all(set(t.tags) <= set(DIFFICULTIES + TOPICS + KINDS + ("quick",)) for t in builtin.tasks)
    assert all(any(tag in TOPICS for tag in t.tags) for t in builtin.tasks)


def test_every_task_is_complete(builtin):
    for t in functions(builtin):
        assert t.task_id == f"builtin/{t.entry_point}"
        assert len(t.hidden_tests) >= 5, t.task_id
        [function] = [n for n in ast.parse(t.prompt).body if isinstance(n, ast.FunctionDef)]
        assert function.name == t.entry_point
        doc = ast.get_docstring(function)
        assert doc and ">>> " + t.entry_point + "(" in doc, t.task_id
        assert t.canonical_solution and t.canonical_solution.startswith(t.prompt), t.task_id
        # The prompt holds no hidden test verbatim.
        assert not any(test.strip() in t.prompt for test in t.hidden_tests), t.task_id


def test_the_first_tasks_and_the_quick_subset_are_a_mix(builtin):
    first = builtin.tasks[:9]
    assert {difficulty(t) for t in first} == set(DIFFICULTIES)
    quick = load_tasks("builtin:quick")
    assert quick.name == "builtin:quick" and 10 <= len(quick.tasks) <= 14
    assert Counter(difficulty(t) for t in quick.tasks)["hard"] >= 2
    assert {difficulty(t) for t in quick.tasks} == set(DIFFICULTIES)
    assert quick.digest != builtin.digest


def test_an_unknown_tag_lists_the_tags():
    with pytest.raises(TaskError, match=r"no builtin task has the tag 'nope'; tags: .*quick"):
        load_tasks("builtin:nope")


@pytest.mark.docker
def test_canonical_solutions_pass_and_stubs_fail_in_the_sandbox(builtin, canonical_passes_stub_fails):
    canonical_passes_stub_fails(builtin.tasks)


def test_io_and_leetcode_tasks_are_complete(builtin):
    io = [t for t in builtin.tasks if t.kind == "io"]
    leetcode = [t for t in builtin.tasks if "leetcode" in t.tags]
    assert len(io) >= 10 and len(leetcode) >= 3
    assert {difficulty(t) for t in io} == set(DIFFICULTIES)
    for t in io:
        assert "io" in t.tags and t.task_id.startswith("builtin/io/") and t.entry_point == ""
        assert len(t.hidden_tests) >= 5 and t.canonical_solution and t.public_tests, t.task_id
        assert t.public_tests[0] in t.hidden_tests  # the example is graded too, as in LiveCodeBench
        example = t.public_tests[0]
        assert example.input.strip() in t.prompt and example.output.strip() in t.prompt, t.task_id
        # No hidden test beyond the examples is in the prompt.
        assert not any(f"Input:\n{h.input}" in t.prompt for h in t.hidden_tests if h not in t.public_tests), t.task_id
    for t in leetcode:
        assert t.kind == "function" and t.entry_point == "Solution" and t.task_id.startswith("builtin/leetcode/")
        assert t.prompt.count("class Solution:") == 1 and len(t.hidden_tests) >= 5 and t.public_tests


def test_with_example_uses_the_public_examples_as_internal_tests():
    task_set = load_tasks("builtin:io:with-example")
    assert all(t.examples_as_internal and t.public_tests for t in task_set.tasks)
    assert task_set.digest != load_tasks("builtin:io").digest
    assert "public examples are the internal tests" in task_set.prompt_form
    with pytest.raises(TaskError, match="have none"):
        load_tasks("builtin:quick:with-example")


def test_quick_set_stays_as_it_was():
    # The main job's quick set keeps its tasks (and so its time and digest).
    quick = load_tasks("builtin:quick")
    assert all(t.kind == "function" for t in quick.tasks)
    assert quick.digest == "sha256:a9d8557dfcdf7c50cc61479eb36d42be73897d25f7c27d1eb33a752597eac10f"
