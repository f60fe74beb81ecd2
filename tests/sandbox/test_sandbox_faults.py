"""The sandbox's own failures are never a program's verdict, and a program cannot drop
its test from the score by breaking its grading: a worker that fails inside itself,
declines a job on two fresh workers, or answers out of protocol is weighed by a control
job (a trivial known-good job of the same kind, right after, in the same domain). If the
control fails too, `run` raises SandboxFault (the harness records it as its own error);
if it passes, the test is the program's error. What a program can cause (its worker
dying or hanging, its zygote killed under it) stays its outcome."""
from __future__ import annotations

import itertools
import json

import pytest

from sandbox import IoCase, Limits, RunRequest, SandboxFault
from sandbox.base import Call, CallCase
from sandbox._pool import WorkerPool, _Channel
from tests.sandbox.test_sandbox_conformance import assert_healthy
from tests.sandbox.test_sandbox_io_hostile import observe

GOOD = {"status": "passed", "detail": "", "duration_s": 0.01, "output": ""}
INTERNAL = {"status": "error", "detail": "sandbox worker: RuntimeError: a bug", "duration_s": 0.0, "output": "",
            "internal": True, "retire": "internal error: RuntimeError: a bug"}
DECLINED = {"not_run": True, "during": False, "retire": "the zygote is gone"}
DURING = {"not_run": True, "during": True, "retire": "the zygote died"}
BROKEN = {"status": "maybe"}
FAILED = {"status": "failed", "detail": "assert f() == 1", "duration_s": 0.01, "output": ""}


class ScriptedChannel(_Channel):
    """A worker that answers each job with the next scripted answer (LOST: it dies)."""

    def __init__(self, answers, sent: list | None = None) -> None:
        super().__init__()
        self.answers = answers
        self.sent = sent if sent is not None else []
        self._lines.put(json.dumps({"ready": True, "protocol": _protocol()}).encode())

    def _send(self, data: bytes) -> None:
        job = json.loads(data)
        self.sent.append(job)
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
@pytest.mark.parametrize("control", [INTERNAL, DECLINED, BROKEN, "LOST", FAILED])
def test_the_sandbox_s_own_failure_twice_and_a_failed_control_raises_instead_of_a_verdict(answers, why, control):
    with pytest.raises(SandboxFault, match="could not grade the test 'assert True' on two workers in a row") as caught:
        grade(pool_answering(*answers, control))
    assert why in str(caught.value) and "a known-good control job failed too" in str(caught.value)


@pytest.mark.parametrize("answers", [(INTERNAL, INTERNAL), (DECLINED, DECLINED), (BROKEN, BROKEN), (DECLINED, INTERNAL)])
def test_a_failure_only_the_program_s_job_meets_is_the_program_s_error(answers):
    """Two faults in a row and a control job that passes right after: nothing but this
    program's job fails, so it is its error, scored as one (never a dropped test)."""
    [outcome] = grade(pool_answering(*answers, GOOD))
    assert outcome.status == "error" and "a known-good job graded right after passed" in outcome.detail


def test_the_control_job_is_of_the_faulting_job_s_kind_and_domain():
    sent = []
    script = itertools.chain([INTERNAL, INTERNAL], itertools.repeat(GOOD))
    pool = WorkerPool(lambda: ScriptedChannel(script, sent), size=1, limits=Limits(), jobs_per_worker=100)
    [outcome] = pool.run(RunRequest("print(2)\n", [IoCase("", "2\n")], compare="codecontests", compare_mode="source",
                                    domain="hidden", blind=True))
    assert outcome.status == "error"
    control = sent[-1]
    assert control["kind"] == "io" and control["program"] == "print(1)\n" and control["expected"] == "1\n"
    assert (control["compare"], control["compare_mode"], control["blind"]) == ("codecontests", "source", True)
    assert pool._domains["hidden"].slots[0].channel.domain == "hidden"
    [python] = grade(pool_answering(INTERNAL, INTERNAL, GOOD))
    assert python.status == "error"


def test_an_expected_value_the_worker_cannot_read_is_the_task_s_fault():
    pool = pool_answering()
    case = CallCase((Call("[1]", "1" * 5000, "f(1) == 111..."),))
    with pytest.raises(SandboxFault, match="has expected value the sandbox cannot take"):
        pool.run(RunRequest("", [case]), native={"files": {}, "argv": []})
    surrogate = CallCase((Call('["\ud800"]', "1", "f(?) == 1"),))
    with pytest.raises(SandboxFault, match="has arguments the sandbox cannot take .not Unicode text"):
        pool.run(RunRequest("", [surrogate]), native={"files": {}, "argv": []})
    with pytest.raises(SandboxFault, match="expected output that is not Unicode text"):
        pool.run(RunRequest("print(1)\n", [IoCase("", "\ud800\n")]))
    assert pool.replacements == 0


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
