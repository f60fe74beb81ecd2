"""Domains: a worker serves the requests of one domain for its whole life.

Whatever a job could leave in a worker that the clean-up misses (a kernel counter
nobody listed, say), it can reach only later jobs of the same domain. So the tests
observe identity, not channels: every job names the worker that ran it (a container's
hostname; a process worker's PID), and no worker may appear under two domains, across
many jobs from many threads, worn-out workers, retired ones and killed ones.
"""
from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter

import pytest

from sandbox import Limits, RunRequest
from sandbox._pool import WorkerPool, _Channel
from sandbox.worker.protocol import PROTOCOL
from tests.helpers import run_in_threads, wait_until

# Prints the worker that runs it: the container's hostname is its id; a process worker
# is the program's grandparent (the worker forks a zygote, which forks the program), found
# as the leader of the zygote's process group (no /proc: a container's job cannot read it).
WHO = (
    "import os, socket\n"
    "zygote = os.getppid()\n"
    "worker = os.getpgid(zygote)\n"
    "print(socket.gethostname() if worker == 1 else worker)\n"
)
# Test texts, all run against WHO. Each names its worker on stdout (the program's own
# print, at import); some also end their worker's life in a way the pool must survive.
NAME = "pass"
# docker: forks move the container's PID counter, which the worker cannot wipe: it retires.
RETIRE = "import os\nfor _ in range(5):\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n    os.waitpid(pid, 0)\n"
# process: the test kills its worker (a container's PID 1 cannot be killed from inside).
KILL = (
    "import os, signal\n"
    "zygote = os.getppid()\n"
    "worker = os.getpgid(zygote)\n"
    "os.kill(worker, signal.SIGKILL)\n"
)


def test_no_worker_ever_serves_two_domains(backend, make_sandbox):
    sandbox = make_sandbox(workers=2, jobs_per_container=4)
    ender = RETIRE if backend == "docker" else KILL
    seen: list[tuple[str, str]] = []  # (domain, worker) per job
    lock = threading.Lock()

    def client(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(8):
            domain = rng.choice(["hidden", "agent"])
            tests = [NAME, ender, NAME] if rng.random() < 0.25 else [NAME, NAME]
            for outcome in sandbox.run(RunRequest(WHO, tests, timeout_s=5.0, domain=domain)):
                worker = outcome.output.strip()
                if worker:  # a killed worker's job has no output (its rerun's is the same story)
                    with lock:
                        seen.append((domain, worker))

    errors = run_in_threads(client, [(seed,) for seed in range(6)], timeout_s=300)
    assert not errors, errors
    by_domain = {d: {w for dd, w in seen if dd == d} for d in ("hidden", "agent")}
    assert by_domain["hidden"] and by_domain["agent"], by_domain
    assert by_domain["hidden"].isdisjoint(by_domain["agent"]), by_domain
    # The workers did change under the jobs: worn out, retired or killed, and replaced.
    assert sandbox.replacements >= 4, sandbox.replacements
    assert min(len(workers) for workers in by_domain.values()) >= 2, by_domain


def test_the_first_domains_take_the_started_workers_and_stay_apart(backend, make_sandbox):
    """The workers started with the pool serve whichever domain comes first; a worker
    that ran a job of one domain is never handed to another, even when that one is
    idle and the other's jobs wait."""
    sandbox = make_sandbox(workers=1)

    def worker_of(domain: str) -> str:
        [outcome] = sandbox.run(RunRequest(WHO, [NAME], domain=domain))
        assert outcome.status == "passed", outcome
        return outcome.output.strip()

    first = worker_of("b")
    assert [worker_of("b") for _ in range(3)] == [first] * 3  # one domain, one worker: reused
    other = worker_of("a")
    assert other != first
    assert [worker_of(d) for d in ("b", "a", "b", "a")] == [first, other, first, other], (
        sandbox._pool.retired, sandbox.replacements)
    assert sandbox.replacements == 0  # a domain's first worker replaces nothing


def test_a_domain_must_be_a_name(backend, make_sandbox):
    sandbox = make_sandbox(workers=1)
    for bad in ("", None, 3):
        with pytest.raises(ValueError, match="RunRequest.domain must be a non-empty string"):
            sandbox.run(RunRequest(WHO, [NAME], domain=bad))  # type: ignore[arg-type]


# --- the pool's own bookkeeping, on workers that only pretend (no Docker, no processes)


class PretendWorker(_Channel):
    """Answers every job "passed" after `job_s`, naming itself in the output; counts how
    many jobs run at once across all pretend workers of a test."""

    def __init__(self, made: list["PretendWorker"], running: Counter, lock: threading.Lock,
                 start_s: float = 0.0, job_s: float = 0.0) -> None:
        super().__init__()
        time.sleep(start_s)  # starting, as a container takes about a second
        self.running, self.lock, self.job_s = running, lock, job_s
        self.closed = False
        with lock:
            self.name = f"w{len(made)}"
            made.append(self)
        self._lines.put(json.dumps({"ready": True, "protocol": PROTOCOL}).encode())

    def _send(self, data: bytes) -> None:
        job = json.loads(data)
        with self.lock:
            self.running["now"] += 1
            self.running["most"] = max(self.running["most"], self.running["now"])
        time.sleep(self.job_s)
        with self.lock:
            self.running["now"] -= 1
        self._lines.put(json.dumps({"id": job["id"], "status": "passed", "output": self.name}).encode())

    def close(self) -> None:
        self.closed = True


def pretend_pool(size: int, **timing: float) -> tuple[WorkerPool, list[PretendWorker], Counter]:
    made: list[PretendWorker] = []
    running: Counter = Counter()
    lock = threading.Lock()
    pool = WorkerPool(lambda: PretendWorker(made, running, lock, **timing), size=size, limits=Limits(),
                      jobs_per_worker=3)
    return pool, made, running


def test_calls_at_once_stay_at_the_pool_size_across_domains():
    pool, made, running = pretend_pool(2, job_s=0.01)
    seen: list[tuple[str, str]] = []

    def client(domain: str) -> None:
        for _ in range(10):
            [outcome] = pool.run(RunRequest("", ["pass"], domain=domain))
            seen.append((domain, outcome.output))

    threads = [threading.Thread(target=client, args=(d,)) for d in ("a", "b", "c") * 3]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    pool.close()
    assert len(seen) == 90 and running["most"] == 2  # 9 clients, 2 at once
    by_domain = {d: {w for dd, w in seen if dd == d} for d in "abc"}
    assert not (by_domain["a"] & by_domain["b"]) and not (by_domain["a"] & by_domain["c"]) \
        and not (by_domain["b"] & by_domain["c"]), by_domain


def test_spares_start_in_the_background_and_none_outlives_the_pool():
    pool, made, _ = pretend_pool(2, start_s=0.2)
    assert len(made) == 2  # the spares started with the pool
    [first] = pool.run(RunRequest("", ["pass"], domain="a"))
    assert len(made) == 2  # one spare left, for a's other slot: the next domain finds it ready
    [second] = pool.run(RunRequest("", ["pass"], domain="b"))
    assert first.output != second.output and second.output in {w.name for w in made[:2]}
    # "b" took the last spare: spares start in the background for the two slots without a worker.
    wait_until(lambda: len(made) == 4, "spares to start in the background")
    pool.close()  # while they are being started
    wait_until(lambda: pool._starting == 0, "background starts to end")
    assert all(worker.closed for worker in made), [(w.name, w.closed) for w in made]


def test_closing_the_pool_waits_for_spares_still_starting():
    """A harness that closes its pool and exits (a refused resume, say) must not leave a
    spare that was still starting: its thread would die with the interpreter, and the
    worker (a container, a host folder) would outlive the run."""
    pool, made, _ = pretend_pool(2, start_s=0.3)
    pool.run(RunRequest("", ["pass"], domain="a"))
    pool.run(RunRequest("", ["pass"], domain="b"))  # two slots without a worker: spares start
    assert pool._starting > 0
    pool.close()
    assert pool._starting == 0  # close() returned after them, not before
    assert len(made) == 4 and all(worker.closed for worker in made), [(w.name, w.closed) for w in made]


def test_domains_named_at_open_have_a_worker_before_the_first_call(backend, sandbox_opener):
    """SandboxConfig.domains: each gets a worker at open (one trivial job), and spares
    start in the background for the domains' next calls."""
    sandbox = sandbox_opener(backend, workers=2, domains=("hidden", "agent"))
    try:
        pool = sandbox._pool
        for name in ("hidden", "agent"):
            bound = [slot.channel for slot in pool._domains[name].slots if slot.channel is not None]
            assert len(bound) == 1 and bound[0].domain == name and bound[0].jobs_done == 1, name
        wait_until(lambda: len(pool._spares) == 2, "two spares to start in the background")
    finally:
        sandbox.close()


def test_no_spare_starts_once_every_slot_has_its_worker():
    """A container per slot, and no more: once every slot of every domain seen has a
    worker, nothing starts in the background (each start costs CPU the jobs share)."""
    pool, made, _ = pretend_pool(1, start_s=0.05)
    for domain in ("a", "b", "a", "b"):
        pool.run(RunRequest("", ["pass"], domain=domain))
    for starter in list(pool._starters):  # every background start begun, were there one, has ended
        starter.join(timeout=60)
    assert len(made) == 2 and pool._starting == 0 and not pool._spares
    pool.close()
