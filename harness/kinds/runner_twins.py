"""A runner task's hidden tests graded with twins, so that a verdict forged in the
program's process does not pass.

A runner test's verdict is taken in the program's process (harness/kinds/runner.py):
code that runs before the runner (a Rust `.init_array` entry, Go's `init`, a C++ static
initializer, a JavaScript solution patching a builtin) can write "passed" whatever the
test finds. So each hidden test that can be is graded twice: on the exercise's test
files, and on their twin (harness/kinds/languages/twins.py: the same tests, names and
order, with the literals shuffled among their places), each a build and a job of its
own, in a random order. The twin is made once per task and run, and kept only where the
task's reference solution passes a test and fails its twin: those tests are *paired*.

A paired test passes when the program passes it and fails its twin. A program that
passes a paired test's twin as well (pass/pass: it said "passed" without looking, or
its asserts were made to hold for any value) is forged: every test of that grading
fails. To pass, a program must tell a test from its twin inside one job, which is
knowing which inputs go with which expected values. What remains (docs/tasks.md): a
test with no pair (its twin made the reference pass too, or the task has no reference)
keeps the in-process verdict alone, and a program that recognises the public test file
itself (it memorised it) can answer right for it.
"""
from __future__ import annotations

import random
import secrets
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from harness.kinds.base import Evaluation
from harness.kinds.languages.twins import KINDS, twin_suite

if TYPE_CHECKING:
    from harness.kinds.languages.runner import Suite
    from harness.tasks.base import Task

# grade(program, suite, test names) -> the runner's Evaluation of those tests
Grade = Callable[[str, "Suite", Sequence[str]], Evaluation]
FORGED = "forged verdict"  # how a forged grading's records begin


@dataclass(frozen=True)
class Twin:
    suite: "Suite"
    paired: tuple[str, ...]  # tests the reference passes on the suite and fails on the twin


class Twins:
    """The twins of one run's runner tasks, made on first use (thread safe), from a
    random seed drawn for the run: a twin cannot be known before the run starts."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(secrets.randbits(128) if seed is None else seed)
        self._made: dict[str, Twin | None] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def twin(self, grade: Grade, task: "Task", suite: "Suite") -> Twin | None:
        key = f"{task.task_id}\0{suite.digest}"
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._made:
                self._made[key] = self._make(grade, task, suite)
            return self._made[key]

    def _make(self, grade: Grade, task: "Task", suite: "Suite") -> Twin | None:
        reference = task.canonical_solution
        names = [t.test for t in task.hidden_tests if getattr(getattr(t, "suite", None), "digest", None) == suite.digest]
        if not reference or not names:
            return None
        passes = {r.test for r in grade(reference, suite, names).records if r.status == "passed"}
        if not passes:  # a reference that passes nothing pairs nothing
            return None
        # Both kinds of literal shuffled; one kind only when that twin does not build; a
        # few draws, until one pairs a test.
        for kinds in (KINDS, *((kind,) for kind in KINDS), KINDS, KINDS):
            with self._lock:
                seed = self._rng.randrange(2 ** 64)
            twin, moved = twin_suite(suite, task.language, random.Random(seed), kinds)
            if not moved:
                continue
            result = grade(reference, twin, names)
            if result.compiled is not None and not result.compiled.ok:
                continue
            failed = {r.test for r in result.records if r.status != "passed"}
            paired = tuple(name for name in names if name in passes and name in failed)
            if paired:
                return Twin(twin, paired)
        return None

    def graded(self, grade: Grade, program: str, tests: Sequence, task: "Task") -> Evaluation:
        """The hidden tests' Evaluation of `program`: the runner's verdicts, each paired
        test's checked against its twin's."""
        suite = tests[0].suite
        names = [t.test for t in tests]
        twin = self.twin(grade, task, suite)
        if twin is None:
            return grade(program, suite, names)
        paired = [name for name in names if name in twin.paired]
        if not paired:
            return grade(program, suite, names)
        with self._lock:
            twin_first = self._rng.random() < 0.5
        if twin_first:
            shadow = grade(program, twin.suite, paired)
            original = grade(program, suite, names)
        else:
            original = grade(program, suite, names)
            shadow = grade(program, twin.suite, paired)
        return judged(original, shadow, paired)


def judged(original: Evaluation, shadow: Evaluation, paired: Sequence[str]) -> Evaluation:
    """The original's records, unless a paired test passed both itself and its twin:
    then every test fails, the records saying which test's twin passed."""
    passed = {r.test for r in original.records if r.status == "passed"}
    forged = [r.test for r in shadow.records if r.status == "passed" and r.test in passed and r.test in paired]
    if not forged:
        return original
    from msgspec.structs import replace

    why = (f"{FORGED}: {forged[0]!r} passed with its expected values shuffled too (its twin: the same test, "
           f"its literals moved); every test of this program fails")
    records = [replace(r, status="failed", detail=why, strict_status=None) for r in original.records]
    return Evaluation(records, False, original.seconds + shadow.seconds, original.io_failures, original.compiled)


__all__ = ["FORGED", "Twin", "Twins", "judged"]
