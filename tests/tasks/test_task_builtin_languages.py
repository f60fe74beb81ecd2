"""The builtin tasks of Rust, Go, C++ and JavaScript in the docker sandbox, graded through
the harness's Evaluator: references pass their hidden tests and stubs fail (the `quick`
tasks and the io task of each language: each program is a compile, and CI's time is
short; `bench/languages.py` grades every reference); a program that does not compile is
the Actor's feedback, with the compiler's first errors."""
from __future__ import annotations

import pytest

from harness.core.evaluator import AGENT, HIDDEN, Evaluator
from harness.text.prompting import Prompts
from harness.tasks.registry import load_tasks

pytestmark = pytest.mark.docker
LANGUAGES = ("rust", "go", "cpp", "javascript")


@pytest.fixture(scope="module")
def evaluator(sandbox_opener):
    sandbox = sandbox_opener("docker", languages=LANGUAGES, workers=1)
    yield Evaluator(sandbox, Prompts(), timeout_s=10.0)
    sandbox.close()


@pytest.mark.parametrize("language", LANGUAGES)
def test_references_pass_and_stubs_fail(evaluator, language):
    tasks = [t for t in load_tasks(f"builtin:{language}").tasks if "quick" in t.tags or t.kind == "io"]
    assert len(tasks) == 4
    for task in tasks:
        graded = evaluator.run(task.canonical_solution, task.hidden_tests, task=task, domain=HIDDEN)
        assert graded.passed, (task.task_id, [r.detail for r in graded.records])
    for task in [t for t in tasks if t.kind == "io"] + [t for t in tasks if t.kind == "function"][:1]:
        graded = evaluator.run(task.meta["stub"], task.hidden_tests, task=task, domain=HIDDEN)
        assert not graded.passed, task.task_id


def test_a_program_that_does_not_compile_is_fed_back_with_its_first_errors(evaluator):
    task = next(t for t in load_tasks("builtin:rust").tasks if t.entry_point == "gcd")
    program = "fn gcd(a: i64, b: i64) -> i64 {\n    let mut x = a;\n    x = \"no\";\n    x\n}\n"
    graded = evaluator.run(program, task.public_tests, task=task, domain=AGENT)
    assert graded.compiled is not None and graded.compiled.status == "compile_error"
    assert [r.status for r in graded.records] == ["compile_error"]
    feedback = evaluator.feedback(graded, task=task)
    assert "did not compile" in feedback and "main.rs:3" in feedback and "mismatched types" in feedback
