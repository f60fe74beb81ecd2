"""Answers shaped to make the harness's own parsing slow: fences that never close, a
megabyte of `assert (` lines, a huge unfenced answer. Reading an answer takes time about
linear in its size; before, each of these held the process (and its parse lock, which
every worker shares) for minutes to an hour."""
from __future__ import annotations

import json
import time
from pathlib import Path

from harness.text.extract import extract_code, extract_io_tests, extract_program, extract_tests, UnparseableOutput
from harness.models.scripted import ScriptedModel
from harness.rundata import read_errors
from tests.helpers import cpu_unit_s, cpu_units
from tests.loop.helpers import RIGHT_ADD, responder, run

MB = 1_000_000
# "```" with no line break anywhere: every one of them is an opening fence to try.
OPENERS_NO_NEWLINE = "```" * (300_000 // 3)
# io openers in the middle of lines and no closing fence at the start of any line.
IO_OPENERS_NO_CLOSE = "x```input\n1\n" * (300_000 // 12)


def _within(units: float, fn, *args):
    """fn(*args) within a CPU budget in tests.helpers.cpu_units' machine-relative units
    (about ten times what each read was measured at; a super-linear read of these
    answers takes thousands of times as long)."""
    result, spent = cpu_units(fn, *args, catch=UnparseableOutput)
    assert spent < units, f"{fn.__name__} took {spent:.0f} CPU units (budget {units})"
    return result


def test_fences_that_never_close_are_read_in_linear_time():
    assert isinstance(_within(20, extract_code, OPENERS_NO_NEWLINE, "add"), UnparseableOutput)
    assert isinstance(_within(20, extract_program, OPENERS_NO_NEWLINE), UnparseableOutput)
    assert _within(20, extract_tests, OPENERS_NO_NEWLINE, "add", 10).kept == []
    assert _within(20, extract_io_tests, IO_OPENERS_NO_CLOSE, 10).kept == []


def test_a_megabyte_of_broken_asserts_is_read_in_seconds():
    text = "```python\n" + "assert (\n" * (MB // 9) + "```"
    found = _within(60, extract_tests, text, "add", 10)
    assert found.kept == [] and found.unparseable == 1000 and found.over_limit == MB // 9 - 1000


def test_a_huge_unfenced_answer_is_not_parsed_two_hundred_times():
    text = "def add(a, b):\n" + "    x = 1\n" * 100_000 + "That was the code.\n" * 300
    assert isinstance(_within(600, extract_code, text, "add"), UnparseableOutput)


def test_fences_still_read_as_before():
    assert extract_code("Here:\n```python\ndef add(a, b):\n    return a + b\n```\nDone.", "add") == \
        "def add(a, b):\n    return a + b\n"
    assert extract_code("```py\ndef add(a, b):\n    return a + b", "add") == "def add(a, b):\n    return a + b\n"  # cut off
    assert extract_code("```js\nno\n```\n```\ndef add(a, b):\n    return a+b\n```", "add") == "def add(a, b):\n    return a+b\n"
    pairs = extract_io_tests("```input\n1 2\n```\n```output\n3\n```\n````stdin\n5\n```\n```STDOUT\n5\n```", 10)
    assert pairs.kept == [("1 2\n", "3\n"), ("5\n", "5\n")]


def test_a_megabyte_answer_is_a_failed_trial_and_the_run_goes_on(tmp_path: Path, process_sandbox):
    bomb = "```" * (MB // 3)
    model = ScriptedModel(responder=responder({
        "testgen": lambda m: "```python\nassert add(1, 2) == 3\n" + "assert (\n" * (MB // 9) + "```",
        "reflection": lambda m: "```" * 1000,
        "actor": lambda m: bomb if len(m) == 1 else RIGHT_ADD,
    }))
    # The harness's own CPU (every thread of this process: the parse happens here), in
    # tests.helpers.cpu_units' machine-relative units, never wall clock.
    start = time.process_time()
    result = run(tmp_path, model, process_sandbox, strategy="reflexion", trials=2)
    spent = (time.process_time() - start) / cpu_unit_s()
    assert spent < 100, f"{spent:.0f} CPU units"  # measured at about 7
    assert result.failed == {} and read_errors(result.run_dir / "errors.jsonl") == []
    first, second = sorted(result.records, key=lambda r: r.trial)
    assert first.hidden_passed is False and "does not parse" in (first.error or "")
    assert first.internal_tests == ["assert add(1, 2) == 3"] and first.testgen["dropped_unparseable"] == 999
    assert second.hidden_passed is True
    lines = (result.run_dir / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["trial"] for line in lines] == [1, 2]
