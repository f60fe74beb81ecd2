"""Turns sandbox results into feedback text and verdicts."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

from harness.prompting import Prompts
from harness.results import TestRecord
from sandbox import RunRequest, Sandbox, TestOutcome

MAX_FEEDBACK_LINE = 300


@dataclass(frozen=True)
class Evaluation:
    records: list[TestRecord]
    passed: bool  # every test passed (vacuously true for no tests)
    seconds: float


def _to_records(outcomes: Sequence[TestOutcome]) -> list[TestRecord]:
    return [TestRecord(o.test, o.status, o.detail) for o in outcomes]


def _feedback_line(rec: TestRecord) -> str:
    if rec.status == "timeout":
        line = f"{rec.test}  # timed out"
    elif rec.detail.startswith("assert"):
        line = rec.detail  # e.g. "assert add(1, 2) == 4  # got 3"
    elif rec.detail:
        line = f"{rec.test}  # {rec.detail}"
    else:
        line = f"{rec.test}  # failed"
    return line if len(line) <= MAX_FEEDBACK_LINE else line[: MAX_FEEDBACK_LINE - 3] + "..."


class Evaluator:
    def __init__(self, sandbox: Sandbox, prompts: Prompts, *, timeout_s: float) -> None:
        self.sandbox = sandbox
        self.prompts = prompts
        self.timeout_s = timeout_s

    def run(
        self, program: str, tests: Sequence[str], *, trusted: bool, timeout_s: float | None = None
    ) -> Evaluation:
        """`trusted`: the tests are the task's (hidden) tests, not the model's own."""
        if not tests:
            return Evaluation([], True, 0.0)
        start = time.perf_counter()
        request = RunRequest(program, list(tests), timeout_s or self.timeout_s, tests_trusted=trusted)
        outcomes = self.sandbox.run(request)
        records = _to_records(outcomes)
        return Evaluation(records, all(r.status == "passed" for r in records), time.perf_counter() - start)

    def feedback(self, evaluation: Evaluation | None, *, error: str | None = None) -> str:
        """The text the Actor and Self-Reflection see about an implementation's tests."""
        if error is not None or evaluation is None:
            return self.prompts.render("feedback", error=error or "no evaluation", passed=[], failed=[])
        passed = [r.test for r in evaluation.records if r.status == "passed"]
        failed = [_feedback_line(r) for r in evaluation.records if r.status != "passed"]
        return self.prompts.render("feedback", error=None, passed=passed, failed=failed)
