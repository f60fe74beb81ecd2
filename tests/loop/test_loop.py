"""The trial loop end to end: a scripted model, a real sandbox, the records it writes."""
from __future__ import annotations

import json

import pytest

from harness.core.memory import Lesson, MemoryStore
from harness.models.scripted import ScriptedModel
from harness.rundata import SCHEMA_VERSION, read_errors, read_trials

from tests.loop.helpers import ADD, ADD_TESTS, LESSON, NEG, RIGHT_ADD, WRONG_ADD, add_model, kind, responder, run



def by_key(records):
    return {(r.task_id, r.strategy, r.attempt, r.trial): r for r in records}


def test_reflexion_fixes_the_bug_the_baseline_keeps(tmp_path, loop_sandbox):
    model = add_model()
    result = run(tmp_path, model, loop_sandbox, strategy="both", trials=3)
    records = read_trials(result.run_dir / "trials.jsonl")
    got = by_key(records)
    assert sorted(got) == [
        ("demo/add", "baseline", 1, 1),
        ("demo/add", "reflexion", 1, 1),
        ("demo/add", "reflexion", 1, 2),
    ]
    t1, t2 = got[("demo/add", "reflexion", 1, 1)], got[("demo/add", "reflexion", 1, 2)]
    base = got[("demo/add", "baseline", 1, 1)]

    # Trial 1: wrong code fails its own tests and the hidden ones.
    assert t1.internal_tests == ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]
    assert t1.testgen["dropped_unparseable"] == 1 and t1.testgen["kept"] == 2
    assert [r.status for r in t1.internal_results] == ["failed", "passed"]
    assert t1.internal_passed is False and t1.hidden_passed is False
    assert "# got -1" in t1.feedback
    assert t1.lesson is None and not t1.final and t1.stop_reason is None
    assert t1.model_calls == 2  # tests, code

    # Trial 2 opens with the lesson about trial 1 (charged here), then right code,
    # internal pass, hidden pass, stop.
    assert t2.internal_passed is True and t2.hidden_passed is True
    assert t2.final and t2.stop_reason == "internal_pass"
    assert t2.memory_shown == [LESSON] and t2.lesson == LESSON
    assert t2.model_calls == 2  # lesson, code

    # Baseline: one sample, no tests, no feedback, no memory.
    assert base.final and base.stop_reason == "single_sample"
    assert base.internal_passed is None and base.internal_tests == [] and base.hidden_passed is False

    # The Actor's trial-2 prompt carries its previous code, the feedback and the lesson.
    actor_calls = [c for c in model.calls if kind(c.system) == "actor" and len(c.messages) > 1]
    assert len(actor_calls) == 1
    retry = actor_calls[0].prompt
    assert "return a - b" in retry and "assert add(1, 2) == 3  # got -1" in retry and LESSON in retry

    # Long-term memory holds the lesson under the run's namespace.
    store = MemoryStore(tmp_path / "reflections", result.header["run_id"])
    assert [lesson.text for lesson in store.lessons("demo/add")] == [LESSON]


def _hidden_lines_absent(model, tasks=(ADD, NEG)):
    hidden = [line.strip() for task in tasks for test in task.hidden_tests for line in test.splitlines() if line.strip()]
    assert len(model.calls) >= 10
    for call in model.calls:
        for test in hidden:
            assert test not in call.prompt, f"hidden test {test!r} leaked into a prompt"
        # Nor do hidden verdicts: the hidden tests' calls and results are absent too.
        assert "add(2, 3)" not in call.prompt and "negate(-8)" not in call.prompt


def test_no_hidden_test_reaches_any_prompt_through_recall(tmp_path, loop_sandbox):
    """Recall's pool holds lessons that quote this run's hidden tests, come from a task
    with the same hidden tests, or from oracle feedback: none reaches a prompt; a clean
    lesson from another task does."""
    source_file = tmp_path / "other.jsonl"
    rows = [
        {"task_id": "other/plus", "prompt": 'def plus(x, y):\n    """Return the sum of x and y."""\n',
         "entry_point": "plus", "tests": ["assert plus(1, 1) == 2"]},
        {"task_id": "other/add_copy", "prompt": 'def add_numbers(a, b):\n    """Sum."""\n', "entry_point": "add_numbers",
         "tests": ["assert add_numbers(2, 3) == 5"]},
        {"task_id": "other/neg", "prompt": 'def neg(v):\n    """Minus v."""\n', "entry_point": "neg",
         "tests": ["assert neg(1) == -1"]},
    ]
    source_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = f"jsonl:{source_file}"
    pool = MemoryStore(tmp_path / "reflections", "pool")
    clean = "Clean lesson: return the sum of the arguments, and negate with a unary minus."
    hostile = [
        ("other/plus", "Sum of a and b: check that assert add(2, 3) == 5 holds.", False),  # quotes ADD's hidden test
        ("other/neg", "Negate x: make negate(-8) == 8 and negate(3) == -3 true.", False),  # quotes NEG's
        ("other/add_copy", "Sum of a and b negate x: a task whose hidden tests are ADD's.", False),
        ("other/plus", "Sum of a and b negate x: ORACLE lesson from hidden tests.", True),
    ]
    for trial, (task_id, text, oracle) in enumerate([("other/plus", clean, False), *hostile], 1):
        pool.add(Lesson("old", task_id, "reflexion", 1, trial, text, oracle_feedback=oracle, task_set=spec))
    model = ScriptedModel(
        responder=responder(
            {
                "testgen": lambda m: ADD_TESTS if "add" in m[0].content else "assert negate(1) == -1",
                "reflection": lambda m: LESSON,
                "actor": lambda m: (WRONG_ADD if "add" in m[0].content else "def negate(x):\n    return x\n"),
            }
        )
    )
    result = run(tmp_path, model, loop_sandbox, tasks=(ADD, NEG), strategy="recall", trials=3,
                 recall_from="namespace:pool", recall_k=5)
    records = read_trials(result.run_dir / "trials.jsonl")
    shown = {task: {x["lesson"] for r in records if r.task_id == task for x in r.recalled} for task in ("demo/add", "demo/negate")}
    assert shown["demo/add"] == {clean}  # recall ran, and showed the clean lesson only
    # NEG may see the lesson of ADD's twin (its own hidden tests are not the twin's).
    assert shown["demo/negate"] == {clean, hostile[2][1]}
    assert any(clean in c.prompt for c in model.calls)
    for _, text, _ in [hostile[0], hostile[1], hostile[3]]:
        assert all(text not in c.prompt for c in model.calls)
    add_prompts = [c.prompt for c in model.calls if "add" in c.messages[0].content]
    assert add_prompts and all(hostile[2][1] not in p for p in add_prompts)
    _hidden_lines_absent(model)


def test_no_hidden_test_reaches_any_prompt(tmp_path, loop_sandbox):
    model = ScriptedModel(
        responder=responder(
            {
                "testgen": lambda m: ADD_TESTS if "add" in m[0].content else "assert negate(1) == -1",
                "reflection": lambda m: LESSON,
                "actor": lambda m: (WRONG_ADD if "add" in m[0].content else "def negate(x):\n    return x\n"),
            }
        )
    )
    result = run(tmp_path, model, loop_sandbox, tasks=(ADD, NEG), strategy="all", trials=3)
    records = read_trials(result.run_dir / "trials.jsonl")
    assert any(r.hidden_results for r in records)  # hidden tests did run
    assert {r.strategy for r in records} == {"reflexion", "feedback", "resample", "baseline"}
    assert sum(r.strategy == "resample" for r in records) >= 4  # resample sampled more than once
    _hidden_lines_absent(model)


def test_feedback_strategy_retries_without_lessons(tmp_path, loop_sandbox):
    model = add_model()
    result = run(tmp_path, model, loop_sandbox, strategy="feedback", trials=3)
    records = sorted(read_trials(result.run_dir / "trials.jsonl"), key=lambda r: r.trial)
    assert [r.trial for r in records] == [1, 2]
    assert all(r.lesson is None and r.memory_shown == [] for r in records)
    assert not any(kind(c.system) == "reflection" for c in model.calls)
    assert records[-1].hidden_passed and records[-1].stop_reason == "internal_pass"


def test_budget_spent_and_final_trial_is_what_counts(tmp_path, loop_sandbox):
    # Always wrong: every trial fails; the attempt ends on budget.
    model = ScriptedModel(responder=responder({"testgen": lambda m: ADD_TESTS, "reflection": lambda m: LESSON, "actor": lambda m: WRONG_ADD}))
    result = run(tmp_path, model, loop_sandbox, strategy="reflexion", trials=3)
    records = sorted(read_trials(result.run_dir / "trials.jsonl"), key=lambda r: r.trial)
    assert [r.trial for r in records] == [1, 2, 3]
    assert [r.final for r in records] == [False, False, True]
    assert records[-1].stop_reason == "budget"
    assert [r.lesson for r in records] == [None, LESSON, LESSON]  # each about the trial before
    assert [r.model_calls for r in records] == [2, 2, 2]
    assert [len(r.memory_shown) for r in records] == [0, 1, 2]


def test_model_error_and_unparseable_output_are_recorded_and_the_run_goes_on(tmp_path, loop_sandbox):
    def actor(messages):
        if "negate" in messages[0].content:
            return "!error: HTTP 500 after 5 retries"
        return "I cannot do this." if len(messages) == 1 else RIGHT_ADD

    model = ScriptedModel(responder=responder({"testgen": lambda m: ADD_TESTS, "reflection": lambda m: LESSON, "actor": actor}))
    result = run(tmp_path, model, loop_sandbox, tasks=(NEG, ADD), strategy="reflexion", trials=3)
    got = by_key(read_trials(result.run_dir / "trials.jsonl"))
    # The model error leaves the attempt incomplete: no record, a line in errors.jsonl.
    assert not any(key[0] == "demo/negate" for key in got)
    (line,) = read_errors(result.run_dir / "errors.jsonl")
    assert line["kind"] == "model_error" and line["role"] == "actor" and line["trial"] == 1
    assert line["task_id"] == "demo/negate" and "HTTP 500" in line["error"]
    assert result.failed == {"model_error": 1}
    bad = got[("demo/add", "reflexion", 1, 1)]
    assert bad.error.startswith("unparseable answer") and bad.internal_passed is False and not bad.final
    assert "could not be tested" in bad.feedback
    good = got[("demo/add", "reflexion", 1, 2)]
    assert good.hidden_passed and good.final


def test_records_are_complete_json_lines_with_schema(tmp_path, loop_sandbox):
    result = run(tmp_path, add_model(), loop_sandbox, strategy="both", trials=2)
    lines = (result.run_dir / "trials.jsonl").read_text().splitlines()
    assert len(lines) == 3
    for line in lines:
        row = json.loads(line)
        assert row["schema"] == SCHEMA_VERSION and row["run_id"] == result.header["run_id"]
        assert {"task_id", "strategy", "attempt", "trial", "code", "hidden_passed", "wall_s"} <= set(row)
    header = json.loads((result.run_dir / "run.json").read_text())
    assert header["tasks"]["digest"].startswith("sha256:") and header["config"]["trials"] == 2
