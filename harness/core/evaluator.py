"""Turns sandbox results into feedback text and verdicts.

A function task's tests are asserts run against the program's functions; an io task's
are (input, expected output) pairs: the program is run whole on each input and the
sandbox's worker compares what it printed (sandbox/worker/io_compare.py). Feedback for
an io test shows its input, the expected output and what the program printed, cut to a
few lines each, or the error's last lines.
"""
from __future__ import annotations

import ast
import json
import threading
import time
from typing import Sequence

from harness.kinds import kind_of
from harness.kinds.languages.kind import kind_for
from harness.kinds.runner_twins import Twins
from harness.kinds.base import Evaluation, IoFailure, cut, feedback_line  # noqa: F401  (re-exported)
from harness.text.parsing import try_parse
from harness.text.prompting import Prompts
from harness.rundata import TestRecord
from harness.tasks.base import IoTest, Task
from sandbox import IoCase, RunRequest, Sandbox, SandboxFault, ScriptRun, TestOutcome, run_script
from sandbox.base import Call, CallCase, RunnerCase, TestSuite

# Sandbox domains (RunRequest.domain): a container serves one for its whole life, so
# whatever a program could leave in a container that the worker's clean-up misses never
# passes between them. Chosen by where a grading's result goes, not by whose tests run.
# AGENT: every grading whose result can reach a prompt or a stop decision (internal
# tests, public examples, the oracle-feedback ablation's hidden tests used as internal
# ones). Its containers run model-written tests, so they never run a hidden test for
# scoring, and their results never carry what a hidden-test job left behind.
AGENT = "agent"
# HIDDEN: scoring on the task's hidden tests, for measurement only; its results reach
# only the record.
HIDDEN = "hidden"
DOMAINS = (AGENT, HIDDEN)
# Graded verdict-blind (RunRequest.blind): every domain but AGENT, whose verdicts reach
# the agent anyway (there the first failed assert ends a test, as in one interpreter).
BLIND_DOMAINS = tuple(domain for domain in DOMAINS if domain != AGENT)



class GradingError(RuntimeError):
    """The sandbox could not grade a program (SandboxFault: it failed on two workers in a
    row and on a known-good control job right after, so the fault is the harness's, never
    the program's; a fault only the program's job meets is that test's error verdict). It
    ends the unit as a harness error (errors.jsonl `sandbox_error`, named in the report,
    redone by --resume), never a test's verdict."""


def _call_label(task: Task, call) -> str:
    """How feedback names a call the test gave no label: `f(1, 2) == 3`."""
    args = ", ".join(json.dumps(arg) for arg in call.args)
    return f"{task.entry_point}({args}) == {json.dumps(call.expected)}"


def _to_records(outcomes: Sequence[TestOutcome]) -> list[TestRecord]:
    return [TestRecord(o.test, o.status, o.detail, o.strict_status, round(o.duration_s, 4)) for o in outcomes]

def grading_prelude(prompt: str, entry_point: str) -> str:
    """The task's own code the test may rely on: the prompt without the entry point.

    Imports, helper functions (HumanEval's `poly`, `encode_cyclic`, `is_palindrome`)
    and constants stay; the entry point's stub goes, so the test sees the program's.
    A prompt that is not Python (MBPP's text) gives no prelude.
    """
    tree = try_parse(prompt)
    if tree is None:
        return ""
    lines = prompt.splitlines(keepends=True)
    drop: set[int] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == entry_point:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            drop.update(range(first - 1, node.end_lineno or node.lineno))
    return "".join(line for number, line in enumerate(lines) if number not in drop)


class Evaluator:
    def __init__(self, sandbox: Sandbox, prompts: Prompts, *, timeout_s: float, compare_mode: str = "strict",
                 twin_seed: int | None = None) -> None:
        """`compare_mode`: the run's io_compare, "strict" or "source" (RunRequest.compare_mode;
        for function tasks, whether a task's `source_tests` are graded beside its hidden tests).
        `twin_seed`: the seed of runner tasks' twins (None: drawn at random, as in a run)."""
        self.sandbox = sandbox
        self.prompts = prompts
        self.timeout_s = timeout_s
        self.compare_mode = compare_mode
        self._preludes: dict[str, str] = {}  # task_id -> prelude: parsed once per task
        self._lock = threading.Lock()
        self._twins = Twins(twin_seed)  # the twins of runner tasks' hidden tests, drawn for this evaluator

    def _prelude(self, task: Task) -> str:
        with self._lock:
            if task.task_id not in self._preludes:
                self._preludes[task.task_id] = grading_prelude(task.prompt, task.entry_point)
            return self._preludes[task.task_id]

    def run(self, program: str, tests: Sequence[str], *, task: Task, domain: str,
            timeout_s: float | None = None) -> Evaluation:
        """Grade `program` on `tests` (hidden or internal: the sandbox treats both alike)
        in containers of `domain` (AGENT or HIDDEN: no default, each caller says where
        its result goes); verdict-blind in every domain but AGENT (RunRequest.blind).

        The test's process runs the task's prelude (its prompt's imports, helpers and
        constants) and sees the program's `task.entry_point`; see sandbox/README.md.
        """
        if domain not in DOMAINS:
            raise ValueError(f"Evaluator.run: domain must be one of {DOMAINS}, got {domain!r}")
        if not tests:
            return Evaluation([], True, 0.0)
        try:
            return kind_for(task).run(self, program, tests, task, timeout_s, domain)
        except SandboxFault as exc:
            raise GradingError(f"task {task.task_id}, {domain} tests: {exc}") from exc

    def run_asserts(self, program: str, tests: Sequence[str], task: Task, timeout_s: float | None,
                    domain: str) -> Evaluation:
        """A function task's job: asserts against the program's entry point."""
        start = time.perf_counter()
        # Hidden grading in io_compare "source": the source's own form of each hidden test
        # too (APPS's call-based check), every one of both run (which ran tells nothing).
        # The record keeps the source's verdict, and the strict one beside it.
        source = list(task.source_tests) if (
            self.compare_mode == "source" and domain == HIDDEN and task.source_tests
            and len(task.source_tests) == len(task.hidden_tests) and list(tests) == list(task.hidden_tests)) else []
        request = RunRequest(
            program, list(tests) + source, timeout_s or self.timeout_s,
            prelude=self._prelude(task), entry_point=task.entry_point, domain=domain, blind=domain in BLIND_DOMAINS,
        )
        outcomes = self.sandbox.run(request)
        records = _to_records(outcomes)
        if source:
            strict, lenient = records[:len(tests)], records[len(tests):]
            records = [TestRecord(s.test, lenient_.status, lenient_.detail, s.status)
                       for s, lenient_ in zip(strict, lenient)]
        return Evaluation(records, all(r.status == "passed" for r in records), time.perf_counter() - start)

    def run_io(self, program: str, tests: Sequence[IoTest], task: Task, timeout_s: float | None,
               domain: str) -> Evaluation:
        """An io task's job: the program run whole on each input, its output compared."""
        start = time.perf_counter()
        cases = [IoCase(t.input, t.output, label=t.label()) for t in tests]
        request = RunRequest(program, cases, timeout_s or self.timeout_s, compare=task.compare,
                             compare_mode=self.compare_mode, domain=domain, blind=domain in BLIND_DOMAINS)
        outcomes = self.sandbox.run(request)
        records = _to_records(outcomes)
        failures = tuple(
            IoFailure(t.input, t.output, o.output, o.status, o.detail)
            for t, o in zip(tests, outcomes) if o.status != "passed"
        )
        passed = all(r.status == "passed" for r in records)
        return Evaluation(records, passed, time.perf_counter() - start, failures)

    def run_script(self, program: str, stdin: str = "", *, timeout_s: float | None = None,
                   language: str = "python") -> ScriptRun:
        """An agent's own script (its `python` tool) or whole program of another language
        (its `run` tool) run on `stdin`: always in the AGENT domain, whose workers never
        run a hidden test."""
        return run_script(self.sandbox, program, stdin, timeout_s=timeout_s or self.timeout_s, domain=AGENT,
                          language=language)

    def feedback(self, evaluation: Evaluation | None, *, error: str | None = None, kind: str = "function",
                 task: Task | None = None) -> str:
        """The text the Actor and Self-Reflection see about an implementation's tests
        (`task`: its language's kind, when it is not Python's)."""
        return (kind_for(task) if task is not None else kind_of(kind)).feedback(self.prompts, evaluation, error)

    def run_language(self, program: str, tests: Sequence, task: Task, timeout_s: float | None,
                     domain: str, *, io: bool) -> Evaluation:
        """Another language's job (sandbox/toolchains/): the program compiled once (the
        sandbox keeps the artifact for the trial's other gradings), then each test: an io
        test (`io`), or a CallTest on the driver."""
        start = time.perf_counter()
        if io:
            cases: list = [IoCase(t.input, t.output, label=t.label()) for t in tests]
        else:
            cases = [CallCase(tuple(Call(json.dumps(list(c.args)), json.dumps(c.expected), c.label or _call_label(task, c))
                                    for c in t.calls), t.label, t.tolerance) for t in tests]
        request = RunRequest(program, cases, timeout_s or self.timeout_s, entry_point=task.entry_point or None,
                             compare=task.compare, compare_mode=self.compare_mode, domain=domain,
                             blind=domain in BLIND_DOMAINS, language=task.language)
        compiled = self._compile(request)
        outcomes = self.sandbox.run(request)
        records = _to_records(outcomes)
        failures = tuple(IoFailure(t.input, t.output, o.output, o.status, o.detail)
                         for t, o in zip(tests, outcomes) if o.status != "passed") if io else ()
        passed = all(r.status == "passed" for r in records)
        return Evaluation(records, passed, time.perf_counter() - start, failures, compiled)

    def _compile(self, request: RunRequest):
        """How the request's program compiled (once, before its tests), where the sandbox
        compiles programs (another language's); None for one that does not."""
        return self.sandbox.compile(request) if hasattr(self.sandbox, "compile") else None

    def run_runner(self, program: str, tests: Sequence, task: Task, timeout_s: float | None,
                   domain: str) -> Evaluation:
        """An exercise's own tests (harness/kinds/runner.py): the program built with the
        suite's files and the language's test runner, compiled once, then each test by
        name in its own process; the verdict is the runner's, in the program's process,
        and on the hidden tests each paired test's is checked against its twin's
        (harness/kinds/runner_twins.py)."""
        suites = {t.suite.digest: t.suite for t in tests}
        if len(suites) != 1:
            raise ValueError(f"task {task.task_id}: the tests of one grading come from one test file")

        def grade(code: str, suite, names: Sequence[str]) -> Evaluation:
            return self._run_suite(code, suite, names, task, timeout_s, domain)

        if domain == HIDDEN:
            return self._twins.graded(grade, program, tests, task)
        return grade(program, next(iter(suites.values())), [t.test for t in tests])

    def _run_suite(self, program: str, suite, names: Sequence[str], task: Task, timeout_s: float | None,
                   domain: str) -> Evaluation:
        start = time.perf_counter()
        request = RunRequest(program, [RunnerCase(name) for name in names], timeout_s or self.timeout_s,
                             domain=domain, blind=domain in BLIND_DOMAINS, language=task.language,
                             suite=TestSuite(suite.program_path, suite.files))
        compiled = self._compile(request)
        outcomes = self.sandbox.run(request)
        records = _to_records(outcomes)
        return Evaluation(records, all(r.status == "passed" for r in records), time.perf_counter() - start,
                          (), compiled)
