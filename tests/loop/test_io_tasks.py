"""io tasks through the whole loop: the test writer's input/output pairs, the Actor's
whole program, the worker's comparison, feedback, records, resume, hidden tests hidden."""
from __future__ import annotations

from typing import Sequence

from harness.models.base import Message
from harness.models.scripted import ScriptedModel
from harness.rundata import read_trials
from harness.tasks.base import IoTest, Task
from harness.tasks.contest import LCB_PREAMBLE
from tests.loop.helpers import resume, run

SUM = Task(
    task_id="demo/io-sum",
    prompt="Read n, then n integers on one line; print their sum.\n\nExample\nInput:\n3\n1 2 3\nOutput:\n6\n",
    entry_point="",
    hidden_tests=(IoTest("3\n1 2 3\n", "6\n"), IoTest("2\n40 2\n", "42\n"), IoTest("1\n-9\n", "-9\n")),
    public_tests=(IoTest("3\n1 2 3\n", "6\n"),),
    kind="io",
)
WRONG = "```python\nn = int(input())\nprint(max(map(int, input().split())))\n```"
RIGHT = "```python\nimport sys\n\ndef main():\n    n = int(input())\n    print(sum(map(int, input().split())))\n\nif __name__ == '__main__':\n    main()\n```"
TESTS = "```input\n2\n1 1\n```\n```output\n2\n```\n```input\n1\n7\n```\n```output\n7\n```\n```input\nnever answered\n```"
LESSON = "The program prints the largest number; it should print the sum."


def role(system: str | None) -> str:
    s = system or ""
    if "writes test cases" in s:
        return "testgen"
    if "why the program is wrong" in s:
        return "reflection"
    return "actor"


def io_model(actor=lambda m: WRONG if len(m) == 1 else RIGHT) -> ScriptedModel:
    table = {"testgen": lambda m: TESTS, "reflection": lambda m: LESSON, "actor": actor}

    def respond(system: str | None, messages: Sequence[Message]) -> str:
        return table[role(system)](messages)

    return ScriptedModel(responder=respond)


def test_reflexion_on_an_io_task(tmp_path, loop_sandbox):
    model = io_model()
    result = run(tmp_path, model, loop_sandbox, tasks=(SUM,), strategy="both", trials=3)
    records = {(r.strategy, r.trial): r for r in read_trials(result.run_dir / "trials.jsonl")}
    t1, t2, base = records[("reflexion", 1)], records[("reflexion", 2)], records[("baseline", 1)]
    assert t1.task_kind == "io" and base.task_kind == "io"
    assert t1.internal_io_tests == [{"input": "2\n1 1\n", "output": "2\n"}, {"input": "1\n7\n", "output": "7\n"}]
    assert t1.internal_tests == ["stdin: 2\n1 1", "stdin: 1\n7"]
    assert t1.testgen["kept"] == 2 and t1.testgen["dropped_unparseable"] == 1
    assert [r.status for r in t1.internal_results] == ["failed", "passed"]
    assert t1.hidden_passed is False and [r.status for r in t1.hidden_results] == ["failed", "failed", "passed"]
    # Feedback: the input, the expected output and what the program printed.
    assert "Input:\n```\n2\n1 1\n```" in t1.feedback and "Expected output:\n```\n2\n```" in t1.feedback
    assert "Your program printed:\n```\n1\n```" in t1.feedback and "1 test passed." in t1.feedback
    assert t2.code.startswith("import sys") and "if __name__ == '__main__':" in t2.code  # the whole program
    assert t2.internal_passed and t2.hidden_passed and t2.stop_reason == "internal_pass"
    # The prompts were the io ones, and the retry carried the feedback and the lesson.
    retry = [c for c in model.calls if role(c.system) == "actor" and len(c.messages) > 1][0]
    assert "standard input" in retry.system and "Your program printed" in retry.prompt and LESSON in retry.prompt


def test_no_hidden_io_test_reaches_any_prompt(tmp_path, loop_sandbox):
    task = Task(task_id="demo/io-secret", prompt="Read a number and print it twice as large.\n", entry_point="",
                hidden_tests=(IoTest("271828\n", "543656\n"), IoTest("-314159\n", "-628318\n")), kind="io")
    model = io_model(actor=lambda m: "```python\nprint(int(input()) * 3)\n```")
    result = run(tmp_path, model, loop_sandbox, tasks=(task,), strategy="all", trials=3)
    records = read_trials(result.run_dir / "trials.jsonl")
    assert any(r.hidden_results for r in records) and not any(r.hidden_passed for r in records)
    assert len(model.calls) >= 6
    for call in model.calls:
        for secret in ("271828", "543656", "314159", "628318", "815484"):  # inputs, outputs, what it printed
            assert secret not in call.prompt and secret not in (call.system or ""), secret


def test_with_example_uses_the_public_examples_and_records_it(tmp_path, loop_sandbox):
    import dataclasses

    task = dataclasses.replace(SUM, examples_as_internal=True)
    model = io_model()
    result = run(tmp_path, model, loop_sandbox, tasks=(task,), strategy="reflexion", trials=2)
    first = sorted(read_trials(result.run_dir / "trials.jsonl"), key=lambda r: r.trial)[0]
    assert first.testgen == {"from_public_examples": True, "kept": 1}
    assert first.internal_io_tests == [{"input": "3\n1 2 3\n", "output": "6\n"}]
    assert not any(role(c.system) == "testgen" for c in model.calls)  # no test writer call


def test_resume_rebuilds_the_io_tests(tmp_path, loop_sandbox):
    # Trial 2's Actor call fails after the retries: the attempt stops after trial 1.
    broken = io_model(actor=lambda m: WRONG if len(m) == 1 else "!error: HTTP 500 after 5 retries")
    first = run(tmp_path, broken, loop_sandbox, tasks=(SUM,), strategy="reflexion", trials=2)
    assert [r.trial for r in read_trials(first.run_dir / "trials.jsonl")] == [1]
    model = io_model()
    again = resume(first, model, loop_sandbox, tasks=(SUM,))
    records = sorted(read_trials(again.run_dir / "trials.jsonl"), key=lambda r: r.trial)
    assert [r.trial for r in records] == [1, 2]
    # the same tests, read back from trial 1's record, not written again
    assert records[1].tests_written is None and records[1].internal_tests == records[0].internal_tests
    assert not any(role(c.system) == "testgen" for c in model.calls)
    assert [r.status for r in records[1].internal_results] == ["passed", "passed"]


def test_a_leetcode_task_goes_through_the_function_path(tmp_path, loop_sandbox):
    from harness.tasks.contest import call_asserts

    task = Task(
        task_id="lcb/demo", kind="function", entry_point="Solution", preamble=LCB_PREAMBLE,
        prompt="Return the sum of nums.\n\nStarter code:\n```python\nclass Solution:\n    def total(self, nums: List[int]) -> int:\n        \n```\n",
        hidden_tests=call_asserts("Solution().total", [([[1, 2, 3]], 6), ([[]], 0)]),
    )
    answer = "```python\nclass Solution:\n    def total(self, nums: List[int]) -> int:\n        return sum(nums)\n```"
    tuple_answer = "```python\nclass Solution:\n    def pair(self) -> List[int]:\n        return (1, 2)\n```"
    tests = "```python\nassert Solution().total([1, 1]) == 2\n```"
    model = ScriptedModel(responder=lambda system, m: tests if "unit tests" in (system or "") else answer)
    result = run(tmp_path, model, loop_sandbox, tasks=(task,), strategy="reflexion", trials=1)
    [record] = read_trials(result.run_dir / "trials.jsonl")
    assert record.internal_tests == ["assert Solution().total([1, 1]) == 2"]  # Solution() takes no arguments
    assert record.internal_passed and record.hidden_passed  # List works unimported: LCB's imports come first
    # A tuple counts as the list it holds, as LiveCodeBench grades.
    pair = Task(task_id="lcb/pair", entry_point="Solution", preamble=LCB_PREAMBLE, prompt="Return [1, 2].\n",
                hidden_tests=call_asserts("Solution().pair", [([], [1, 2])]))
    model = ScriptedModel(responder=lambda system, m: tests if "unit tests" in (system or "") else tuple_answer)
    result = run(tmp_path / "pair", model, loop_sandbox, tasks=(pair,), strategy="baseline")
    assert read_trials(result.run_dir / "trials.jsonl")[0].hidden_passed


def test_io_tests_are_read_from_the_forms_models_write():
    from harness.text.extract import extract_io_tests

    one_block = "```input\n3\n([]{})\n((\nOutput:\nYES\nNO\n```"
    assert extract_io_tests(one_block, 5).kept == [("3\n([]{})\n((\n", "YES\nNO\n")]
    pairs = "```input\n1 2\n```\n\n```output\n3\n```\n```stdin\n5 5\n```\n```stdout\n10\n```"
    found = extract_io_tests(pairs, 1)
    assert found.kept == [("1 2\n", "3\n")] and found.over_limit == 1
    assert extract_io_tests("```input\n1\n```\n```output\n\n```", 5).empty_output == 1
