"""Replies a model can send that must stay the model's own result, never the harness's
failure: text that is not valid UTF-8, and code nested too deeply to parse. Each one
used to end its attempt as a harness error (not scored, its calls not counted), which a
model could use to drop the tasks it fails from pass@1."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.models.scripted import ScriptedModel
from harness.rundata import read_errors
from tests.loop.helpers import ADD, RIGHT_ADD, run, responder

WRONG_WITH_SURROGATE = "```python\ndef add(a, b):\n    return a - b  # \ud800\n```"
TESTS = "```python\nassert add(1, 2) == 3\n```"
# About 3,000 unary minuses make CPython's parser give up with RecursionError or
# MemoryError instead of SyntaxError: a 3 KB answer.
PARSE_BOMB = "```python\ndef add(a, b):\n    return a + b\nX = " + "-" * 5000 + "1\n```"
TEST_BOMB = "```python\nassert add(1, 2) == " + "-" * 5000 + "3\nassert add(2, 2) == 4\n```"


def _model(actor, testgen=lambda m: TESTS, lesson=lambda m: "Add, do not subtract.") -> ScriptedModel:
    return ScriptedModel(responder=responder({"testgen": testgen, "reflection": lesson, "actor": actor}))


def _records_on_disk(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "trials.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("where", ["actor", "testgen", "lesson"])
def test_a_lone_surrogate_in_a_reply_is_stored_and_scored(tmp_path: Path, loop_sandbox, where: str) -> None:
    wrong = WRONG_WITH_SURROGATE if where == "actor" else WRONG_WITH_SURROGATE.replace("  # \ud800", "")
    model = _model(
        lambda m: wrong if len(m) == 1 else RIGHT_ADD,  # right once the Actor has seen feedback
        testgen=(lambda m: TESTS + "\n\ud800") if where == "testgen" else (lambda m: TESTS),
        lesson=(lambda m: "Add, do not subtract \udcff.") if where == "lesson" else (lambda m: "Add."),
    )
    result = run(tmp_path, model, loop_sandbox, strategy="reflexion", trials=2)

    assert result.failed == {}, result.failed
    assert read_errors(result.run_dir / "errors.jsonl") == []
    stored = _records_on_disk(result.run_dir)
    assert [(r["trial"], r["hidden_passed"]) for r in stored] == [(1, False), (2, True)]
    assert sum(r["model_calls"] for r in stored) == len(model.calls)  # every call is counted
    text = (result.run_dir / "trials.jsonl").read_text(encoding="utf-8")  # strict UTF-8 reads it
    assert "\\ud800" in text or "\\udcff" in text  # kept, as an escape


def test_a_parse_bomb_is_a_failed_trial_not_a_harness_error(tmp_path: Path, loop_sandbox) -> None:
    model = _model(lambda m: PARSE_BOMB if len(m) == 1 else RIGHT_ADD, testgen=lambda m: TEST_BOMB)
    result = run(tmp_path, model, loop_sandbox, strategy="reflexion", trials=2)

    assert result.failed == {}, result.failed
    first, second = sorted(result.records, key=lambda r: r.trial)
    assert first.hidden_passed is False and "nests too deeply" in (first.error or ""), first.error
    assert second.hidden_passed is True
    # The test writer's unparseable assert is dropped; the parseable one is kept.
    assert first.internal_tests == ["assert add(2, 2) == 4"], first.internal_tests


# Between the two: about 900 unary minuses parse, but a tree that deep is too deep for
# the recursive walks after the parser (ast.unparse, the compiler).
DEEP_CODE = "```python\ndef add(a, b):\n    return a - b + " + "-" * 900 + "0\n```"
DEEP_TEST = "```python\nassert add(1, 2) == " + "-" * 900 + "-3\nassert add(2, 2) == 4\n```"


def test_code_that_parses_but_nests_too_deeply_for_the_rest_is_the_model_s_result(tmp_path: Path,
                                                                                  loop_sandbox) -> None:
    model = _model(lambda m: DEEP_CODE if len(m) == 1 else RIGHT_ADD, testgen=lambda m: DEEP_TEST)
    result = run(tmp_path, model, loop_sandbox, strategy="reflexion", trials=2)

    assert result.failed == {}, result.failed
    assert read_errors(result.run_dir / "errors.jsonl") == []
    first, second = sorted(result.records, key=lambda r: r.trial)
    assert first.hidden_passed is False and second.hidden_passed is True
    assert first.internal_tests == ["assert add(2, 2) == 4"], first.internal_tests
    assert sum(r.model_calls for r in result.records) == len(model.calls)


def test_a_parse_bomb_in_the_baseline_is_scored_as_a_failure(tmp_path: Path, loop_sandbox) -> None:
    model = _model(lambda m: PARSE_BOMB)
    result = run(tmp_path, model, loop_sandbox, tasks=(ADD,), strategy="baseline")

    assert result.failed == {}
    (record,) = result.records
    assert record.final and not record.hidden_passed


def test_every_writer_stores_text_that_is_not_valid_utf8(tmp_path: Path) -> None:
    """Task files can carry lone surrogates too (JSON's "\\ud800"): records, errors and
    memory store them as escapes and read them back, instead of stopping the run."""
    from harness.core.memory import Lesson, MemoryStore
    from harness.rundata import append_error, write_json

    write_json(tmp_path / "run.json", {"prompt": "a\ud800b"})
    assert json.loads((tmp_path / "run.json").read_text(encoding="utf-8")) == {"prompt": "a\ud800b"}
    append_error(tmp_path / "errors.jsonl", {"error": "boom \udcff"})
    assert read_errors(tmp_path / "errors.jsonl")[0]["error"] == "boom \udcff"
    store = MemoryStore(tmp_path / "reflections", "ns")
    store.add(Lesson(task_id="t/1", text="lesson \ud800", run_id="r", model="m", strategy="reflexion",
                     attempt=1, trial=1))
    assert [lesson.text for lesson in store.lessons("t/1")] == ["lesson \ud800"]


def test_memory_show_prints_a_lesson_s_escape_sequences_as_text(tmp_path: Path, capsys) -> None:
    """A lesson is model text: printed raw, `ESC ] 0 ; ... BEL` retitles the user's
    terminal and `ESC [ 2 J` clears it."""
    from harness.cli import main
    from harness.core.memory import Lesson, MemoryStore

    MemoryStore(tmp_path, "ns").add(Lesson(run_id="r", task_id="t/1", strategy="reflexion", attempt=1, trial=1,
                                           text="Use a set.\x1b]0;PWNED\x07\x1b[2J\u202eevil"))
    assert main(["memory", "show", "t/1", "--memory-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "Use a set.\\x1b]0;PWNED\\x07\\x1b[2J\\u202eevil" in out


def test_memory_show_prints_a_foreign_lessons_file_s_escapes_as_text(tmp_path: Path, capsys) -> None:
    """A shared memory folder may come from someone else: its namespace, run ids and
    model names are printed as well as the lesson, and are as hostile."""
    from harness.cli import main
    from harness.core.memory import Lesson, MemoryStore

    MemoryStore(tmp_path, "ns\x1b[2J").add(Lesson(run_id="r\x1b]0;PWNED\x07", task_id="t/1", strategy="reflexion",
                                                 attempt=1, trial=1, model="m\x1b[31m", text="Use a set.",
                                                 time="\x9b2J"))
    assert main(["memory", "show", "t/1", "--memory-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "[ns\\x1b[2J]" in out and "run r\\x1b]0;PWNED\\x07" in out and "model m\\x1b[31m" in out


def test_what_an_unfinished_trial_spent_is_in_the_run_s_totals(tmp_path: Path, loop_sandbox) -> None:
    """Trial 2's lesson call succeeds, then its Actor call fails past the retries: the
    attempt is incomplete, but both calls were made (and the lesson's tokens spent)."""
    from harness.rundata.numbers import of_records as build_summary

    model = _model(lambda m: WRONG_WITH_SURROGATE if len(m) == 1 else "!error: backend down")
    result = run(tmp_path, model, loop_sandbox, strategy="reflexion", trials=3)

    assert result.failed == {"model_error": 1}
    (row,) = read_errors(result.run_dir / "errors.jsonl")
    assert (row["trial"], row["role"]) == (2, "actor")
    assert row["spent"]["model_calls"] == 2 and row["spent"]["output_tokens"] > 0, row["spent"]
    summary = build_summary(result.header, result.records, [row])
    recorded = sum(r.model_calls for r in result.records)
    assert recorded == len(model.calls) - 2  # the test writer and trial 1's Actor
    assert summary["strategies"]["reflexion"]["model_calls"] == len(model.calls)
    tokens = sum(r.output_tokens for r in result.records) + row["spent"]["output_tokens"]
    assert summary["strategies"]["reflexion"]["output_tokens"] == tokens


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_lesson_holding_a_unicode_line_separator_is_remembered(tmp_path: Path, separator: str) -> None:
    """JSON keeps U+2028, U+2029 and U+0085 raw inside a string, and str.splitlines() breaks
    lines there: a lessons file read that way lost such a lesson as a "torn line". (The
    reflection step folds white space, so the harness's own lessons hold none; a shared
    memory folder may hold lessons written by anything.)"""
    from harness.core.memory import Lesson, MemoryStore

    store = MemoryStore(tmp_path, "shared")
    texts = ["plain", f"Add,{separator}do not subtract."]
    for trial, text in enumerate(texts, start=1):
        store.add(Lesson(run_id="other", task_id="t/1", strategy="reflexion", attempt=1, trial=trial, text=text))
    assert [x.text for x in store.lessons("t/1")] == texts
    assert store.earlier_runs("this")["lessons"] == 2
    assert store.recall("t/1", run_id="this", strategy="reflexion", attempt=1, window=5) == texts


def test_a_script_file_reply_holding_a_unicode_line_separator_is_one_reply(tmp_path: Path) -> None:
    path = tmp_path / "replies.jsonl"
    replies = ["```python\ndef add(a, b):\n    return a + b  # \u2028 \u2029 \x85\n```", "second"]
    path.write_text("".join(json.dumps({"reply": r}, ensure_ascii=False) + "\n" for r in replies), encoding="utf-8")
    model = ScriptedModel.from_file(path)
    assert list(model._queue) == replies
