"""resample, incomplete attempts, unit exceptions, memory hygiene, prompt sets,
temperatures: a scripted model through the real sandbox."""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from harness.core import LoopSettings
from harness.core.memory import Lesson, MemoryStore
from harness.models.base import Message
from harness.models.cache import CachedModel
from harness.models.scripted import ScriptedModel
from harness.text.prompting import Prompts, PromptSetError
from harness.rundata import SCHEMA_VERSION, read_errors, read_trials
from harness.run.units import check_prompts
from harness.tasks.base import Task
from sandbox import RunRequest

from tests.loop.helpers import ADD, ADD_TESTS, LESSON, NEG, RIGHT_ADD, WRONG_ADD, add_model, kind, responder, resume, run



def sequence(*replies: str):
    """A responder part that answers with each reply in turn, then the last forever."""
    it = itertools.chain(replies, itertools.repeat(replies[-1]))
    return lambda m: next(it)


def test_resample_draws_fresh_samples_checked_by_its_own_tests(tmp_path, loop_sandbox):
    model = ScriptedModel(responder=responder({
        "testgen": lambda m: ADD_TESTS,
        "reflection": lambda m: pytest.fail("resample writes no lesson"),
        "actor": sequence(WRONG_ADD, WRONG_ADD, RIGHT_ADD),
    }))
    result = run(tmp_path, model, loop_sandbox, strategy="resample", trials=4)
    records = sorted(read_trials(result.run_dir / "trials.jsonl"), key=lambda r: r.trial)
    assert [r.trial for r in records] == [1, 2, 3]
    assert [r.internal_passed for r in records] == [False, False, True]
    assert records[-1].final and records[-1].stop_reason == "internal_pass" and records[-1].hidden_passed
    assert all(r.lesson is None and r.memory_shown == [] for r in records)
    assert records[0].internal_tests == records[2].internal_tests  # written once, at trial 1
    assert [r.model_calls for r in records] == [2, 1, 1]  # the test writer is charged to trial 1

    actor = [c for c in model.calls if kind(c.system) == "actor"]
    assert len([c for c in model.calls if kind(c.system) == "testgen"]) == 1
    # Independent samples: the same one-message prompt each time, no code or feedback shown...
    assert all(len(c.messages) == 1 and c.messages == actor[0].messages for c in actor)
    assert all("return a - b" not in c.prompt and "Tests failed" not in c.prompt for c in actor)
    # ...each with its own seed; trial 1 at the run's temperature (0), the rest above 0.
    assert len({c.seed for c in actor}) == 3
    assert [c.temperature for c in actor] == [0.0, 0.8, 0.8]
    assert [r.temperature_used for r in records] == [0.0, 0.8, 0.8]


def test_resample_seeds_and_temperatures():
    s = LoopSettings(
        trials=4, samples=3, max_internal_tests=6, memory_window=3, max_tokens=100, max_tokens_tests=100,
        max_tokens_lesson=100, test_timeout_s=5.0, temperature=0.0, resample_temperature=0.7, seed=10,
        oracle_feedback=False,
    )
    seeds = {s.fresh_sample(a, t).seed for a in range(1, 4) for t in range(1, 5)}
    assert len(seeds) == 12  # distinct for every (attempt, trial)
    assert s.fresh_sample(2, 1) == s.first_call(2)  # trial 1 is every strategy's first answer
    assert s.fresh_sample(2, 3).temperature == 0.7
    warm = LoopSettings(**{**s.__dict__, "temperature": 0.4})
    assert warm.fresh_sample(1, 2).temperature == 0.4


def test_a_model_error_leaves_the_attempt_incomplete_and_resume_continues_it(tmp_path, loop_sandbox):
    broken = ScriptedModel(responder=responder({
        "testgen": lambda m: ADD_TESTS,
        "reflection": lambda m: "!error: HTTP 529 overloaded after 5 retries",
        "actor": lambda m: WRONG_ADD,
    }))
    first = run(tmp_path, broken, loop_sandbox, strategy="reflexion", trials=3)
    records = read_trials(first.run_dir / "trials.jsonl")
    assert [(r.trial, r.final) for r in records] == [(1, False)]  # trial 1 kept, no final: incomplete
    (line,) = read_errors(first.run_dir / "errors.jsonl")
    assert line["kind"] == "model_error" and line["role"] == "reflection" and line["trial"] == 2
    assert line["schema"] == 1 and "HTTP 529" in line["error"] and line["at"]
    assert first.failed == {"model_error": 1}

    fixed = add_model()
    second = resume(first, fixed, loop_sandbox)
    records = sorted(read_trials(second.run_dir / "trials.jsonl"), key=lambda r: r.trial)
    assert [(r.trial, r.final) for r in records] == [(1, False), (2, True)]
    assert second.failed == {}
    assert not any(kind(c.system) == "testgen" for c in fixed.calls)  # trial 1 not done again
    # Trial 2 starts with the lesson on trial 1's code, rebuilt from its record.
    (reflection,) = [c for c in fixed.calls if kind(c.system) == "reflection"]
    assert "return a - b" in reflection.prompt and "# got -1" in reflection.prompt
    assert records[1].lesson == LESSON and records[1].hidden_passed


class FailingSandbox:
    """Raises for programs holding `needle`; passes everything else to the real sandbox."""

    def __init__(self, inner, needle: str) -> None:
        self.inner, self.needle = inner, needle

    def run(self, request: RunRequest):
        if self.needle in request.program:
            raise RuntimeError(f"sandbox bug on purpose ({self.needle})")
        return self.inner.run(request)

    def close(self) -> None:
        pass


def test_an_exception_in_one_unit_is_recorded_and_the_run_goes_on(tmp_path, loop_sandbox):
    model = ScriptedModel(responder=responder({
        "testgen": lambda m: ADD_TESTS if "add" in m[0].content else "```\nassert negate(1) == -1\n```",
        "reflection": lambda m: LESSON,
        "actor": lambda m: RIGHT_ADD if "add" in m[0].content else "```\ndef negate(x):\n    return -x\n```",
    }))
    result = run(tmp_path, model, FailingSandbox(loop_sandbox, "return -x"), tasks=(NEG, ADD), strategy="both")
    records = read_trials(result.run_dir / "trials.jsonl")
    assert sorted((r.task_id, r.strategy) for r in records) == [("demo/add", "baseline"), ("demo/add", "reflexion")]
    assert result.failed == {"unit_exception": 2}
    lines = read_errors(result.run_dir / "errors.jsonl")
    assert sorted(line["strategy"] for line in lines) == ["baseline", "reflexion"]
    assert all(line["kind"] == "unit_exception" and line["role"] is None and line["trial"] == 1 for line in lines)
    assert all("RuntimeError: sandbox bug on purpose" in line["error"] for line in lines)
    log = (result.run_dir / "error.log").read_text()
    assert log.count("Traceback (most recent call last)") == 2 and "demo/negate" in log


def test_lessons_record_their_origin_and_oracle_lessons_stay_out_of_normal_runs(tmp_path, loop_sandbox):
    always_wrong = {"testgen": lambda m: ADD_TESTS, "reflection": lambda m: "ORACLE LESSON", "actor": lambda m: WRONG_ADD}
    oracle = run(tmp_path, ScriptedModel(responder=responder(always_wrong)), loop_sandbox,
                 strategy="reflexion", trials=2, memory_namespace="shared", oracle_feedback=True)
    store = MemoryStore(tmp_path / "reflections", "shared")
    (written,) = store.lessons("demo/add")
    assert (written.run_id, written.strategy, written.model, written.oracle_feedback, written.trial) == (
        oracle.header["run_id"], "reflexion", "scripted:inline", True, 1)
    # A normal run sharing the namespace: the oracle lesson is never shown...
    store.add(Lesson("earlier-normal-run", "demo/add", "reflexion", 1, 1, "Check the sign.", model="m"))
    model = add_model()
    normal = run(tmp_path, model, loop_sandbox, strategy="reflexion", trials=2, memory_namespace="shared")
    assert normal.header["memory"] == {
        "namespace": "shared", "shared": True, "earlier": {"lessons": 2, "runs": 2, "oracle_feedback": 1},
    }
    assert all("ORACLE LESSON" not in call.prompt for call in model.calls)
    # ...while an earlier normal run's lesson is, from trial 1 on.
    first_actor = next(c for c in model.calls if kind(c.system) == "actor")
    assert "Check the sign." in first_actor.prompt
    t1 = next(r for r in read_trials(normal.run_dir / "trials.jsonl") if r.trial == 1)
    assert t1.memory_shown == ["Check the sign."] and t1.oracle_feedback is False


def test_recall_keeps_oracle_lessons_for_oracle_runs_only(tmp_path):
    store = MemoryStore(tmp_path, "ns")
    store.add(Lesson("old", "t", "reflexion", 1, 1, "normal", model="m"))
    store.add(Lesson("old", "t", "reflexion", 1, 2, "oracle", model="m", oracle_feedback=True))
    store.add(Lesson("now", "t", "reflexion", 2, 1, "other attempt", model="m"))
    ask = dict(run_id="now", strategy="reflexion", attempt=1)
    assert store.recall("t", **ask, window=5) == ["normal"]
    assert store.recall("t", **ask, window=5, oracle_feedback=True) == ["normal", "oracle"]
    assert store.recall("t", **ask, window=0, oracle_feedback=True) == []
    (tmp_path / "ns" / "t.jsonl").open("a").write('{"run_id": "torn", "te')
    assert store.recall("t", **ask, window=1, oracle_feedback=True) == ["oracle"]


def test_a_prompt_set_overrides_templates_by_name(tmp_path, loop_sandbox):
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "actor_system.j2").write_text("PAPER-STYLE system prompt. Write Python in a ```python block.")
    prompts = Prompts(folder)
    assert prompts.overridden() == ["actor_system"] and prompts.digest() != Prompts().digest()
    check_prompts(prompts)  # every template, strategies' own with their declared samples
    model = ScriptedModel(responder=lambda system, messages: RIGHT_ADD if "PAPER-STYLE" in (system or "") else "no")
    result = run(tmp_path, model, loop_sandbox, strategy="baseline", prompts=folder)
    assert result.header["prompts"] == {"digest": prompts.digest(), "folder": str(folder), "overridden": ["actor_system"]}
    (record,) = read_trials(result.run_dir / "trials.jsonl")
    assert record.hidden_passed
    (folder / "actor_sytem.j2").write_text("typo")
    with pytest.raises(PromptSetError, match="actor_sytem.j2"):
        Prompts(folder)
    (folder / "actor_sytem.j2").unlink()
    (folder / "actor_task.j2").write_text("{{ no_such_variable }}")
    with pytest.raises(PromptSetError, match="no_such_variable"):
        check_prompts(Prompts(folder))


def test_no_call_has_a_stop_sequence(tmp_path, loop_sandbox):
    model = add_model()
    run(tmp_path, model, loop_sandbox, strategy="all", trials=2)
    assert len(model.calls) >= 6 and all(c.stop is None for c in model.calls)


def test_a_model_that_ignores_the_temperature_is_recorded_so_and_not_cached(tmp_path, loop_sandbox):
    ignoring = ScriptedModel(responder=responder({"actor": lambda m: RIGHT_ADD}), accepts_temperature=False)
    result = run(tmp_path, ignoring, loop_sandbox, strategy="baseline")
    (record,) = read_trials(result.run_dir / "trials.jsonl")
    assert record.temperature_used is None

    for accepts, expected_calls in ((True, 1), (False, 2)):
        inner = ScriptedModel(replies=["a", "b"], accepts_temperature=accepts)
        cached = CachedModel(inner, tmp_path / f"cache-{accepts}")
        for _ in range(2):
            cached.complete([Message("user", "hi")], temperature=0.0)
        assert len(inner.calls) == expected_calls
    # The record says which temperature a model that honours it used.
    honest = run(tmp_path, add_model(), loop_sandbox, strategy="baseline", temperature=0.3)
    (record,) = read_trials(honest.run_dir / "trials.jsonl")
    assert record.temperature_used == 0.3


def test_run_json_records_what_a_reviewer_needs(tmp_path, loop_sandbox):
    result = run(tmp_path, add_model(), loop_sandbox, strategy="all", trials=2)
    header = json.loads((result.run_dir / "run.json").read_text())
    assert header["schema"] == SCHEMA_VERSION
    assert header["config"]["strategies"] == ["reflexion", "feedback", "resample", "baseline"]
    assert header["config"]["resample_temperature"] == 0.8
    assert header["prompts"]["digest"] == Prompts().digest() and header["prompts"]["overridden"] == []
    assert header["tasks"]["prompt_form"] == "as published"
    assert header["memory"]["shared"] is False and header["memory"]["earlier"]["lessons"] == 0


HELPER_TASK = Task(
    task_id="demo/palindrome",
    prompt=(
        "def is_palindrome(s: str) -> bool:\n    return s == s[::-1]\n\n\n"
        'def longest_palindrome_prefix(s: str) -> str:\n    """The longest prefix of s that is a palindrome."""\n'
    ),
    entry_point="longest_palindrome_prefix",
    hidden_tests=("assert longest_palindrome_prefix('abac') == 'aba'", "assert longest_palindrome_prefix('') == ''"),
)
# As models answer: prose, an untagged fence, only the entry point's def (using the
# prompt's helper), then example usage that must not run in the graded program.
HELPER_ANSWER = (
    "Here is the implementation:\n\n```\ndef longest_palindrome_prefix(s: str) -> str:\n"
    "    for end in range(len(s), 0, -1):\n        if is_palindrome(s[:end]):\n            return s[:end]\n"
    "    return ''\n\nprint(longest_palindrome_prefix(input()))\n```\n\nThis checks prefixes from the longest down."
)
HELPER_TESTS = (
    "```\nassert longest_palindrome_prefix('abac') == 'aba'\nassert callable(longest_palindrome_prefix)\n"
    "assert True\n```"
)


def test_answers_shaped_as_models_write_them_pass_through_every_strategy(tmp_path, loop_sandbox):
    model = ScriptedModel(responder=responder({
        "testgen": lambda m: HELPER_TESTS, "reflection": lambda m: LESSON, "actor": lambda m: HELPER_ANSWER,
    }))
    result = run(tmp_path, model, loop_sandbox, tasks=(HELPER_TASK,), strategy="all", trials=2)
    records = read_trials(result.run_dir / "trials.jsonl")
    assert sorted(r.strategy for r in records) == ["baseline", "feedback", "reflexion", "resample"]
    for r in records:
        assert r.hidden_passed and r.final, (r.strategy, r.error, r.hidden_results)
        assert "input()" not in r.code and "print(" not in r.code
    for r in (r for r in records if r.strategy != "baseline"):
        assert r.internal_tests == ["assert longest_palindrome_prefix('abac') == 'aba'"]
        assert r.testgen["dropped_no_call"] == 2 and r.stop_reason == "internal_pass"
