"""The sandbox's own failures are never a program's verdict: a worker that fails inside
itself, declines a job on two fresh workers, or answers out of protocol makes `run`
raise SandboxFault (the harness records it as its own error), while what a program can
cause (its worker dying or hanging, its zygote killed under it) stays its outcome."""
from __future__ import annotations

import itertools
import json

import pytest

from sandbox import IoCase, Limits, RunRequest, SandboxFault
from sandbox._pool import WorkerPool, _Channel
from tests.sandbox.test_sandbox_conformance import assert_healthy
from tests.sandbox.test_sandbox_io_hostile import observe

GOOD = {"status": "passed", "detail": "", "duration_s": 0.01, "output": ""}
INTERNAL = {"status": "error", "detail": "sandbox worker: RuntimeError: a bug", "duration_s": 0.0, "output": "",
            "internal": True, "retire": "internal error: RuntimeError: a bug"}
DECLINED = {"not_run": True, "during": False, "retire": "the zygote is gone"}
DURING = {"not_run": True, "during": True, "retire": "the zygote died"}
BROKEN = {"status": "maybe"}


class ScriptedChannel(_Channel):
    """A worker that answers each job with the next scripted answer (LOST: it dies)."""

    def __init__(self, answers) -> None:
        super().__init__()
        self.answers = answers
        self._lines.put(json.dumps({"ready": True, "protocol": _protocol()}).encode())

    def _send(self, data: bytes) -> None:
        job = json.loads(data)
        answer = next(self.answers)
        if answer == "LOST":
            self.ended = True
            raise OSError("gone")
        self._lines.put(json.dumps(dict(answer, id=job["id"])).encode())

    def close(self) -> None:
        pass


def _protocol() -> int:
    from sandbox.worker.protocol import PROTOCOL

    return PROTOCOL


def pool_answering(*answers) -> WorkerPool:
    script = itertools.chain(answers, itertools.repeat(GOOD))
    return WorkerPool(lambda: ScriptedChannel(script), size=1, limits=Limits(), jobs_per_worker=100)


def grade(pool: WorkerPool):
    return pool.run(RunRequest("def f():\n    pass\n", ["assert True"]))


@pytest.mark.parametrize("answers, why", [
    ((INTERNAL, INTERNAL), "the worker failed inside itself"),
    ((DECLINED, DECLINED), "the worker declined it"),
    ((BROKEN, BROKEN), "out of protocol"),
    ((DECLINED, INTERNAL), "declined it (the zygote is gone); then the worker failed inside itself"),
])
def test_the_sandbox_s_own_failure_twice_raises_instead_of_a_verdict(answers, why):
    with pytest.raises(SandboxFault, match="could not grade the test 'assert True' on two workers in a row") as caught:
        grade(pool_answering(*answers))
    assert why in str(caught.value)


@pytest.mark.parametrize("first", [INTERNAL, DECLINED, BROKEN, DURING, "LOST"])
def test_one_failure_is_rerun_and_the_rerun_s_verdict_counts(first):
    [outcome] = grade(pool_answering(first, GOOD))
    assert outcome.status == "passed"


def test_what_a_program_can_cause_stays_its_outcome():
    [lost] = grade(pool_answering("LOST", "LOST"))  # its worker died twice (the program can kill it)
    assert lost.status == "error" and "the sandbox worker stopped reading jobs" in lost.detail
    [during] = grade(pool_answering(DURING, DURING))  # the zygote died under the job twice
    assert during.status == "error" and "could not finish the test" in during.detail
    [mixed] = grade(pool_answering("LOST", INTERNAL))  # the program's failure first: its outcome
    assert mixed.status == "error" and "stopped reading jobs" in mixed.detail


def test_a_worker_s_internal_failure_in_judging_raises_and_retires_no_worker(backend, make_sandbox):
    """A real worker whose comparison fails (a rule it does not know: the caller's bug,
    never the program's) answers an internal error twice; `run` raises, and the next job
    runs on the same worker: a comparison's failure changes nothing of a worker's state."""
    sandbox = make_sandbox(workers=1)
    worker, _ = observe(sandbox)
    with pytest.raises(SandboxFault, match="the worker failed inside itself .*unknown comparison rule 'fuzzy'"):
        sandbox.run(RunRequest("print(6)\n", [IoCase("", "6\n")], compare="fuzzy"))
    assert observe(sandbox)[0] == worker
    assert sandbox.replacements == 0 and sandbox._pool.retired == []
    assert_healthy(sandbox)
