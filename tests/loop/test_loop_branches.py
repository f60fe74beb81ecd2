"""The loop's branches, each on its own: oracle feedback, a model error in each role,
no internal tests, per-attempt seeds, self-tests that disagree with the hidden ones,
and an interrupted attempt picked up where it stopped.

Every test runs with both sandboxes (`loop_sandbox`): without Docker the process
sandbox still exercises the loop, extraction and feedback.
"""
from __future__ import annotations

import json
from collections import Counter

import pytest

from harness.models.scripted import ScriptedModel
from harness.rundata import read_errors, read_trials
from tests.loop.helpers import ADD, ADD_TESTS, LESSON, RIGHT_ADD, WRONG_ADD, kind, responder, resume, run

# Internal tests that agree with the wrong code (a - b) and disagree with the right one.
WRONG_TESTS = "```python\nassert add(5, 3) == 2\nassert add(0, 0) == 0\n```"


def model_of(testgen=ADD_TESTS, reflection=LESSON, actor=RIGHT_ADD) -> ScriptedModel:
    return ScriptedModel(responder=responder({
        "testgen": lambda m: testgen, "reflection": lambda m: reflection, "actor": lambda m: actor,
    }))


def records_of(result):
    return sorted(read_trials(result.run_dir / "trials.jsonl"), key=lambda r: (r.strategy, r.attempt, r.trial))


def test_oracle_feedback_uses_the_hidden_tests_openly_and_writes_none(tmp_path, loop_sandbox):
    model = ScriptedModel(responder=responder({
        "testgen": lambda m: pytest.fail("oracle feedback writes no tests"),
        "reflection": lambda m: LESSON,
        "actor": lambda m: WRONG_ADD if len(m) == 1 else RIGHT_ADD,
    }))
    result = run(tmp_path, model, loop_sandbox, strategy="reflexion", trials=3, oracle_feedback=True)
    t1, t2 = records_of(result)
    assert t1.internal_tests == list(ADD.hidden_tests) and t1.testgen == {"oracle_feedback": True, "kept": 3}
    assert t1.internal_passed is False and t2.internal_passed is True and t2.stop_reason == "internal_pass"
    assert t1.oracle_feedback and t2.oracle_feedback
    retry = [c for c in model.calls if kind(c.system) == "actor"][1].prompt
    assert "add(2, 3) == 5" in retry  # a hidden test reached the Actor: that is the ablation
    assert json.loads((result.run_dir / "run.json").read_text())["config"]["oracle_feedback"] is True


@pytest.mark.parametrize("role, trial, kept", [("test_writer", 1, 0), ("actor", 1, 0), ("reflection", 2, 1)])
def test_a_model_error_in_any_role_leaves_the_attempt_incomplete(tmp_path, loop_sandbox, role, trial, kept):
    broken = "!error: HTTP 529 overloaded after 5 retries"
    roles = {"test_writer": "testgen", "actor": "actor", "reflection": "reflection"}
    parts = {"testgen": ADD_TESTS, "reflection": LESSON, "actor": WRONG_ADD, roles[role]: broken}
    result = run(tmp_path, model_of(**parts), loop_sandbox, strategy="reflexion", trials=3)
    records = records_of(result)
    assert [r.trial for r in records] == list(range(1, kept + 1)) and not any(r.final for r in records)
    [error] = read_errors(result.run_dir / "errors.jsonl")
    assert (error["kind"], error["role"], error["trial"], error["attempt"]) == ("model_error", role, trial, 1)
    assert "HTTP 529" in error["error"] and "\n" not in error["error"]
    assert result.failed == {"model_error": 1}


def test_no_internal_tests_stops_after_one_trial_and_says_why(tmp_path, loop_sandbox):
    result = run(tmp_path, model_of(testgen="I will not write tests.", actor=WRONG_ADD), loop_sandbox,
                 strategy="reflexion", trials=3)
    [only] = records_of(result)
    assert only.internal_tests == [] and only.internal_passed is None
    assert only.final and only.stop_reason == "no_internal_tests" and only.hidden_passed is False


def test_each_attempt_has_its_own_seed_for_every_call(tmp_path, loop_sandbox):
    model = model_of()
    run(tmp_path, model, loop_sandbox, strategy="reflexion", trials=2, samples=3, k=(1, 3), seed=10,
        temperature=0.5)
    # Right at once: each attempt makes two calls (tests, code), both with its seed.
    assert Counter(c.seed for c in model.calls) == {10: 2, 11: 2, 12: 2}
    assert {c.temperature for c in model.calls} == {0.5}


def test_internal_pass_stops_even_when_the_hidden_tests_fail(tmp_path, loop_sandbox):
    result = run(tmp_path, model_of(testgen=WRONG_TESTS, actor=WRONG_ADD), loop_sandbox, strategy="reflexion",
                 trials=3)
    [only] = records_of(result)
    assert only.internal_passed is True and only.hidden_passed is False
    assert only.final and only.stop_reason == "internal_pass"


def test_a_hidden_pass_never_stops_the_loop(tmp_path, loop_sandbox):
    model = model_of(testgen=WRONG_TESTS, actor=RIGHT_ADD)
    result = run(tmp_path, model, loop_sandbox, strategy="reflexion", trials=3)
    records = records_of(result)
    assert [(r.trial, r.hidden_passed, r.internal_passed) for r in records] == [
        (1, True, False), (2, True, False), (3, True, False)]
    assert records[-1].stop_reason == "budget"
    for call in model.calls:  # nor did a hidden verdict reach a prompt
        assert "add(2, 3)" not in call.prompt and "hidden" not in call.prompt.lower()


def test_an_interrupted_attempt_continues_after_its_last_recorded_trial(tmp_path, loop_sandbox):
    first = run(tmp_path, model_of(actor=WRONG_ADD), loop_sandbox, strategy="reflexion", trials=3)
    log = first.run_dir / "trials.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    assert len(lines) == 3
    log.write_text(lines[0] + lines[1][: len(lines[1]) // 2])  # killed after trial 1, mid-write of trial 2

    again = model_of(actor=RIGHT_ADD)
    resume(first, again, loop_sandbox)
    records = records_of(first)
    assert [(r.trial, r.final) for r in records] == [(1, False), (2, True)]
    assert records[1].stop_reason == "internal_pass" and records[1].hidden_passed
    assert records[1].internal_tests == records[0].internal_tests  # kept, not written again
    assert [kind(c.system) for c in again.calls] == ["reflection", "actor"]
    retry = again.calls[1].prompt
    assert "return a - b" in retry and "assert add(1, 2) == 3" in retry  # trial 1's code and feedback
