"""Exercism's tests run with each language's test runner in the Docker sandbox: the
reference passes, the stub fails, a compile error is the compiler's message, and what a
hostile solution can and cannot do to a verdict taken in its own process."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.core.evaluator import HIDDEN, Evaluator
from harness.kinds.languages.kind import kind_for
from harness.text.prompting import Prompts
from harness.tasks.registry import load_tasks

pytestmark = [pytest.mark.docker, pytest.mark.slow]

DATA = Path(__file__).resolve().parents[1] / "data" / "exercism"
LANGUAGES = ("rust", "go", "javascript")


@pytest.fixture(scope="module")
def tasks():
    return {t.task_id: t for t in load_tasks(f"exercism:{DATA}").tasks}


@pytest.fixture(scope="module")
def evaluator(sandbox_opener):
    sandbox = sandbox_opener("docker", languages=LANGUAGES, workers=1)
    yield Evaluator(sandbox, Prompts(), timeout_s=10.0)
    sandbox.close()


def grade(evaluator, task, program):
    return evaluator.run(program, list(task.hidden_tests), task=task, domain=HIDDEN)


@pytest.mark.parametrize("task_id", ["exercism/rust/safe-divide", "exercism/rust/word-count-lite", "exercism/go/clamp",
                                     "exercism/go/run-length", "exercism/javascript/stack",
                                     "exercism/javascript/vowel-count"])
def test_the_reference_passes_every_test_and_the_stub_none(evaluator, tasks, task_id):
    task = tasks[task_id]
    reference = grade(evaluator, task, task.canonical_solution)
    assert reference.passed and [r.test for r in reference.records] == [t.test for t in task.hidden_tests]
    stub = grade(evaluator, task, task.meta["stub"])
    # Only a #[should_panic] test passes a stub that panics (todo!), as under cargo test.
    assert [r.test for r in stub.records if r.status == "passed"] in ([], ["a_panicking_test_that_expects_it"])
    assert stub.records[0].status != "passed"


def test_a_failed_assert_is_the_runner_s_message_in_feedback(evaluator, tasks):
    task = tasks["exercism/rust/safe-divide"]
    wrong = "pub fn divide(a: i64, b: i64) -> Option<i64> {\n    if b == 0 { None } else { Some(a / b + 1) }\n}\n"
    result = grade(evaluator, task, wrong)
    by_name = {r.test: r for r in result.records}
    assert by_name["exact_division"].status == "failed" and by_name["by_zero_is_none"].status == "passed"
    text = kind_for(task).feedback(Prompts(), result, None)
    assert "exact_division  # panicked at tests_safe-divide.rs" in text and "left: Some(4)" in text


def test_a_compile_error_fails_every_test_with_the_compiler_s_message(evaluator, tasks):
    task = tasks["exercism/rust/safe-divide"]
    result = grade(evaluator, task, "pub fn divide(a: i64, b: i64) -> Option<i64> {\n    a / b\n}\n")
    assert {r.status for r in result.records} == {"compile_error"}
    assert result.compiled.status == "compile_error" and "lib.rs:2" in result.compiled.message
    assert "mismatched types" in kind_for(task).feedback(Prompts(), result, None)


# --- hostile solutions against the in-process runner (sandbox/README.md, "Test runners")

EXIT_EARLY = "pub fn divide(a: i64, b: i64) -> Option<i64> {\n    std::process::exit(0)\n}\n"
PRINTS_LIBTEST_S_LINES = """pub fn divide(a: i64, b: i64) -> Option<i64> {
    println!("running 1 test\\ntest exact_division ... ok\\n\\ntest result: ok. 1 passed; 0 failed");
    eprintln!("test result: ok. 1 passed; 0 failed");
    std::process::exit(0)
}
"""
GUESSES_THE_PROTOCOL = """use std::io::Write;
use std::os::unix::io::FromRawFd;
pub fn divide(a: i64, b: i64) -> Option<i64> {
    let mut out = unsafe { std::fs::File::from_raw_fd(4) };
    let _ = out.write_all(b"0 0 true\\n0 end\\n 0 true\\n end\\n");
    std::process::exit(0)
}
"""
@pytest.mark.parametrize("program", [EXIT_EARLY, PRINTS_LIBTEST_S_LINES, GUESSES_THE_PROTOCOL],
                         ids=["exits-0-early", "prints-libtest-s-lines", "writes-results-without-the-token"])
def test_cheap_forgeries_of_the_runner_s_verdict_do_not_pass(evaluator, tasks, program):
    result = grade(evaluator, tasks["exercism/rust/safe-divide"], program)
    assert not any(r.status == "passed" for r in result.records), result.records


# Forgeries that make the runner say "passed" in the program's own process (a stolen token,
# asserts defined away, patched builtins): test_exercism_forgeries.py.


def test_a_javascript_solution_cannot_replace_expect_or_reach_the_process(evaluator, tasks):
    task = tasks["exercism/javascript/vowel-count"]
    liar = ("globalThis.expect = () => ({ toEqual() {}, toBe() {} });\n"
            "export const countVowels = () => 99;\n")
    assert not any(r.status == "passed" for r in grade(evaluator, task, liar).records)
    reaches = "const fs = require('fs');\nexport const countVowels = () => fs.writeSync(4, 'x');\n"
    records = grade(evaluator, task, reaches).records
    assert not any(r.status == "passed" for r in records) and "does not let a solution require 'fs'" in records[0].detail


# --- C++: tests compiled against Debian's Catch2, linked with the harness's main


@pytest.fixture(scope="module")
def cpp_evaluator(sandbox_opener):
    sandbox = sandbox_opener("docker", languages=("cpp",), workers=1)
    yield Evaluator(sandbox, Prompts(), timeout_s=10.0)
    sandbox.close()


@pytest.mark.parametrize("slug", ["leap", "raindrops"])
def test_cpp_exercises_pass_their_reference_and_fail_their_stub(cpp_evaluator, tasks, slug):
    task = tasks[f"exercism/cpp/{slug}"]
    reference = grade(cpp_evaluator, task, task.canonical_solution)
    assert reference.passed and [r.test for r in reference.records] == [t.test for t in task.hidden_tests]
    assert len(task.hidden_tests) == 4  # the tests behind EXERCISM_RUN_ALL_TESTS too
    stub = grade(cpp_evaluator, task, task.meta["stub"])
    assert not stub.passed and any(r.status == "failed" for r in stub.records)


def test_cpp_failures_and_forgeries(cpp_evaluator, tasks):
    task = tasks["exercism/cpp/raindrops"]
    wrong = task.canonical_solution.replace('"Plong"', '"Plonk"')
    by_name = {r.test: r for r in grade(cpp_evaluator, task, wrong).records}
    assert by_name["the sound for 3 is Pling"].status == "passed"
    failed = by_name["the sound for 35 is PlangPlong"]
    assert failed.status == "failed" and "PlangPlonk" in failed.detail
    broken = grade(cpp_evaluator, task, task.canonical_solution.replace("return sound", "return sound +"))
    assert {r.status for r in broken.records} == {"compile_error"} and "raindrops.h" in broken.compiled.message
    # A right answer that exits with status 0 before main (a static initializer) passes nothing.
    early = task.canonical_solution + "\n#include <cstdlib>\nstatic const int harness_early_exit = (std::exit(0), 0);\n"
    assert not any(r.status == "passed" for r in grade(cpp_evaluator, task, early).records)
    # Nor does one that prints what Catch prints when every test passed.
    liar = task.canonical_solution + ('\n#include <cstdio>\n#include <cstdlib>\nstatic const int harness_liar = '
                                      '(std::puts("All tests passed (1 assertion in 1 test case)"), std::exit(0), 0);\n')
    assert not any(r.status == "passed" for r in grade(cpp_evaluator, task, liar).records)


def test_an_agent_s_program_compiled_after_a_hidden_grading_cannot_read_its_test_file(evaluator, tasks):
    """The exercise's hidden test file is compiled in the compile domain; the next compile
    job there (an agent's own program, `run`) finds nothing of it in its scratch folder."""
    from harness.core.evaluator import AGENT
    from sandbox import run_script

    task = tasks["exercism/rust/safe-divide"]
    assert grade(evaluator, task, task.canonical_solution).passed  # the hidden suite compiled just now
    own = run_script(evaluator.sandbox, 'const SEEN: &[u8] = include_bytes!("main.rs");\nfn main() { print!("{}", SEEN.len()); }\n',
                     timeout_s=10.0, domain=AGENT, language="rust")
    assert own.status == "ok" and int(own.stdout) > 0, own  # the probe reads what its own job has
    for path in ("tests_safe-divide.rs", "/tmp/test/tests_safe-divide.rs", "harness_tests.rs", "libsafe_divide.rlib"):
        probe = f'const SEEN: &[u8] = include_bytes!("{path}");\nfn main() {{ print!("{{}}", SEEN.len()); }}\n'
        run = run_script(evaluator.sandbox, probe, timeout_s=10.0, domain=AGENT, language="rust")
        assert run.status == "compile_error" and "couldn't read" in run.detail, (path, run)
