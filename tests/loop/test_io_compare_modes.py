"""Through the loop: a sandbox that cannot grade ends the unit as a harness error
(errors.jsonl, redone by --resume), never a failed test; and io_compare = "source"
grades by each source's own rule while records keep the strict verdict, which the
run's numbers count against it."""
from __future__ import annotations

import dataclasses
import json

from harness.core.evaluator import HIDDEN
from harness.rundata import folder, numbers, read_errors, read_trials
from harness.tasks.base import IoTest, Task
from harness.tasks.contest import call_asserts
from sandbox import RunRequest
from tests.loop.helpers import resume, run
from tests.loop.test_io_tasks import RIGHT, SUM, io_model


class UnknownRuleWhenHidden:
    """The real sandbox, except that hidden io grading names a rule no worker knows: the
    worker fails inside itself (a bug of the caller's, never the program's)."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def run(self, request: RunRequest):
        if request.domain == HIDDEN:
            request = dataclasses.replace(request, compare="fuzzy")
        return self.inner.run(request)

    def close(self) -> None:
        pass


def test_a_sandbox_that_cannot_grade_is_a_harness_error_and_resume_redoes_it(tmp_path, loop_sandbox):
    retired = list(loop_sandbox._pool.retired)
    first = run(tmp_path, io_model(actor=lambda m: RIGHT), UnknownRuleWhenHidden(loop_sandbox), tasks=(SUM,),
                strategy="reflexion", trials=2)
    assert first.failed == {"sandbox_error": 1}
    assert read_trials(first.run_dir / "trials.jsonl") == []  # no verdict recorded, no test failed
    [line] = read_errors(first.run_dir / "errors.jsonl")
    assert line["kind"] == "sandbox_error" and line["trial"] == 1 and line["task_id"] == "demo/io-sum"
    assert "GradingError" not in line["error"] and "hidden tests: the sandbox could not grade the test" in line["error"]
    assert "unknown comparison rule 'fuzzy'" in line["error"]
    assert loop_sandbox._pool.retired == retired  # judging failed; no worker retired for it

    again = resume(first, io_model(actor=lambda m: RIGHT), loop_sandbox, tasks=(SUM,))
    [record] = read_trials(again.run_dir / "trials.jsonl")
    assert record.final and record.hidden_passed and again.failed == {}


SORT_IO = Task(
    task_id="demo/io-sort", prompt="Read n, then n integers; print them sorted, on one line.\n", entry_point="",
    hidden_tests=(IoTest("5\n3 1 2 5 4\n", "1 2 3 4 5\n"), IoTest("3\n2 2 1\n", "1 2 2\n")), kind="io",
    compare="apps",
)
ECHO = "```python\ninput()\nprint(input())\n```"  # APPS's set of token sets takes the echo for sorted
SORT_CALL = Task(
    task_id="demo/call-sort", prompt="def sort_list(xs):\n    '''xs sorted'''\n", entry_point="sort_list",
    hidden_tests=call_asserts("sort_list", [([[3, 1, 2]], [1, 2, 3]), ([[9, 8]], [8, 9])]),
    source_tests=call_asserts("sort_list", [([[3, 1, 2]], [1, 2, 3]), ([[9, 8]], [8, 9])], first_item_too=True),
)
SMALLEST = "```python\ndef sort_list(xs):\n    return min(xs)\n```"  # APPS's own check takes expected[0]


def _numbers(run_dir):
    return numbers.of_folder(folder.load(run_dir))


def test_the_sources_own_rules_grade_in_source_mode_and_the_strict_verdict_is_counted(tmp_path, loop_sandbox):
    def model():
        return io_model(actor=lambda m: SMALLEST if "sort_list" in m[0].content else ECHO)

    strict = run(tmp_path, model(), loop_sandbox, tasks=(SORT_IO, SORT_CALL), strategy="baseline")
    assert not any(r.hidden_passed for r in read_trials(strict.run_dir / "trials.jsonl"))
    assert all(h.strict_status is None for r in read_trials(strict.run_dir / "trials.jsonl") for h in r.hidden_results)
    assert "io_compare" not in _numbers(strict.run_dir)

    lenient = run(tmp_path, model(), loop_sandbox, tasks=(SORT_IO, SORT_CALL), strategy="baseline",
                  io_compare="source")
    header = json.loads((lenient.run_dir / "run.json").read_text())
    assert header["config"]["io_compare"] == "source"
    rules = header["sandbox_identity"]["io_compare"]  # which tolerance each source's rule used
    assert rules["default_mode"] == "strict" and "1e-5" in rules["strict"]["codecontests"]
    assert "allclose" not in rules["strict"]["apps"] and "1e-8 + 1e-5" in rules["strict"]["apps"]
    records = {r.task_id: r for r in read_trials(lenient.run_dir / "trials.jsonl")}
    for task_id in ("demo/io-sort", "demo/call-sort"):
        record = records[task_id]
        assert record.hidden_passed, task_id  # the source's rule passes the forgery...
        assert [(h.status, h.strict_status) for h in record.hidden_results] == [("passed", "failed")] * 2  # ...strict does not
    doc = _numbers(lenient.run_dir)
    assert doc["io_compare"] == {"mode": "source", "tests": 4, "tests_changed": 4, "attempts": 2,
                                 "attempts_changed": 2, "passed_only_by_source": 2}
    [caveat] = [c for c in doc["caveats"] if c["key"] == "io_compare"]
    assert "changed 4 of 4 hidden-test verdicts and 2 of 2 final verdicts (2 pass only" in caveat["text"]
