"""Hidden-test scoring and the agent's gradings never share a sandbox worker, and only
hidden tests are graded verdict-blind.

A scripted Actor writes a program that answers every call with the name of the worker
running it (a container's hostname, a process worker's PID), so each failure detail
says where that grading ran. The pool has one worker per domain; asked directly after
the run, each domain names its own. Every hidden grading must have run on the hidden
domain's worker and every grading the agent saw (internal tests, the oracle ablation's
hidden tests used as internal ones, an io task's tests) on the agent's.
"""
from __future__ import annotations

import re

import pytest

from harness.core.evaluator import AGENT, HIDDEN
from harness.models.scripted import ScriptedModel
from harness.rundata import read_trials
from harness.tasks.base import IoTest, Task
from sandbox import RunRequest
from tests.loop.helpers import ADD, ADD_TESTS, LESSON, kind, run
from tests.loop.test_io_tasks import role

# The worker running this process: the container's hostname is its id; a process
# worker is the program's grandparent (the worker forks a zygote, which forks it), the
# leader of the zygote's process group (no /proc: a container's job cannot read it).
WORKER = (
    "import os, socket\n"
    "def worker():\n"
    "    zygote = os.getppid()\n"
    "    pid = os.getpgid(zygote)\n"
    "    return socket.gethostname() if pid == 1 else str(pid)\n"
)
TELLS = f"```python\n{WORKER}def add(a, b):\n    return 'WORKER=' + worker()\n```"
GOT = re.compile(r"WORKER=(\w+)")

ECHO = Task(
    task_id="demo/io-echo",
    prompt="Read a line; print it.\n",
    entry_point="",
    hidden_tests=(IoTest("a\n", "a\n"), IoTest("b\n", "b\n")),
    kind="io",
)
IO_TESTS = "```input\nx\n```\n```output\nx\n```\n```input\ny\n```\n```output\ny\n```"
# An io program's failure shows in the record as its stderr's last lines.
IO_TELLS = f"```python\n{WORKER}raise SystemExit('WORKER=' + worker())\n```"


@pytest.fixture(params=[
    pytest.param("process", id="process"),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
])
def one_per_domain(request, sandbox_opener):
    """A pool with one worker per domain, so each domain's worker can be asked its name."""
    sandbox = sandbox_opener(request.param, workers=1)
    yield sandbox
    sandbox.close()


def worker_of(sandbox, domain: str) -> str:
    [outcome] = sandbox.run(RunRequest(WORKER + "print(worker())\n", ["pass"], domain=domain))
    assert outcome.status == "passed", outcome
    return outcome.output.strip()


class Recording:
    """The sandbox under test, keeping each request's domain and whether it was blind."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.requests: list[tuple[str, bool]] = []

    def run(self, request: RunRequest):
        self.requests.append((request.domain, request.blind))
        return self.inner.run(request)

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


def workers_named(results) -> set[str]:
    """The workers a grading's failure details name (each detail must name one)."""
    named = set()
    for result in results:
        found = GOT.findall(result.detail)
        assert found, result
        named.update(found)
    return named


CASES = {
    "internal tests": (ADD, {"testgen": lambda m: ADD_TESTS}, TELLS, {}),
    "oracle feedback": (ADD, {"testgen": lambda m: pytest.fail("the oracle writes no tests")}, TELLS,
                        {"oracle_feedback": True}),
    "io task": (ECHO, {"testgen": lambda m: IO_TESTS}, IO_TELLS, {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hidden_scoring_and_agent_gradings_run_on_workers_of_their_own(case, tmp_path, one_per_domain):
    task, table, program, config = CASES[case]
    table = {**table, "reflection": lambda m: LESSON, "actor": lambda m: program}
    step = role if task.kind == "io" else kind  # which agent step a system prompt is, by task kind
    model = ScriptedModel(responder=lambda system, messages: table[step(system)](messages))
    recording = Recording(one_per_domain)
    result = run(tmp_path, model, recording, tasks=(task,), strategy="reflexion", trials=3, samples=2, **config)
    records = read_trials(result.run_dir / "trials.jsonl")
    assert len(records) == 6 and result.failed == {}
    internal = workers_named(r for rec in records for r in rec.internal_results)
    hidden = workers_named(r for rec in records for r in rec.hidden_results)
    agent_worker, hidden_worker = worker_of(one_per_domain, AGENT), worker_of(one_per_domain, HIDDEN)
    assert internal.isdisjoint(hidden), (internal, hidden)
    assert agent_worker not in hidden and hidden_worker not in internal
    if one_per_domain.replacements == 0:  # each domain had one worker all along: the one it names now
        assert (internal, hidden) == ({agent_worker}, {hidden_worker})
    # (A process worker sometimes retires itself after an io job, an internal EBADF of its
    # own; its replacement serves the same domain, but is not the worker named before.)
    # What the agent saw names only the agent's workers.
    assert all(GOT.findall(rec.feedback) and set(GOT.findall(rec.feedback)) <= internal for rec in records)
    assert result.header["sandbox_identity"]["domains"] == [AGENT, HIDDEN]
    # Hidden tests are graded verdict-blind; what the agent sees stops at its first failure.
    assert set(recording.requests) == {(AGENT, False), (HIDDEN, True)}, recording.requests
    assert result.header["sandbox_identity"]["blind_domains"] == [HIDDEN]
