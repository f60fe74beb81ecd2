"""Host side shared by both backends: a pool of resident workers speaking JSON lines.

A `_Channel` is one worker (a container, or a host subprocess) that answers one job at
a time. The pool hands a channel to each `run` call (calls beyond the pool size queue),
keeps a guard timeout per job, and replaces a worker that died, hung, or has run its
share of jobs.

Domains: every request names one (`RunRequest.domain`), and a worker serves one domain
for its whole life. Each domain has `size` slots of its own; a worker is bound to a
slot, and so to its domain, at its first job, and never moves; a replacement is started
for the slot it replaces. So no channel a worker could leak through (files, kernel
counters, timing: whatever the worker's clean-up misses) ever joins two domains: the
harness puts scoring on hidden tests in one domain and everything whose result reaches
the agent in another (sandbox/README.md, "Domains").
"""
from __future__ import annotations

import json
import os
import queue
import re
import stat
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Iterator

from sandbox._prepared import PreparedTests
from sandbox.base import CallCase, IoCase, RunnerCase, Limits, RunRequest, SandboxFault, SandboxUnavailable, TestOutcome
from sandbox.worker import values
from sandbox.worker.protocol import PROTOCOL

STARTUP_TIMEOUT_S = 60.0
# The worker's own clean-up after a test (killing leftovers, wiping /tmp) is bounded;
# the guard only fires when the worker itself is stuck.
GUARD_MARGIN_S = 15.0
_EOF = object()


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID runs on this machine (any user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale_folders(prefix: str, root: str | None = None) -> list[str]:
    """This user's folders `<prefix>-<pid>-*` in `root` (the temporary folder) whose
    harness process (`pid`) no longer runs: a run killed with SIGKILL could not remove
    its own. Folders of live processes, links and any other name are left out."""
    root = root or tempfile.gettempdir()
    pattern = re.compile(re.escape(prefix) + r"-(\d+)-[^/]+")
    try:
        names = os.listdir(root)
    except OSError:
        return []
    stale = []
    for name in names:
        match = pattern.fullmatch(name)
        if match is None or int(match.group(1)) == os.getpid() or pid_alive(int(match.group(1))):
            continue
        path = os.path.join(root, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid():
            stale.append(path)
    return stale


def valid_text(text: str) -> str:
    """`text` as valid UTF-8: lone surrogates from the sandbox become \\udXXX escapes."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


_STATUSES = ("passed", "failed", "error", "timeout")
# The control job run after a job faults on two workers (WorkerPool._run_test): trivial,
# known to pass on a sound worker.
CONTROL_PROGRAM = "def f():\n    return 1\n"
CONTROL_TEST = "assert f() == 1"
CONTROL_IO_PROGRAM = "print(1)\n"
CONTROL_IO = IoCase("", "1\n")


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def _check_expected(test: CallCase) -> None:
    """SandboxFault when the test holds what the worker cannot take (arguments or an
    expected value that is not JSON it reads, text that is not Unicode): the task's
    fault, which no program could pass and the control job would not meet, so it must
    never be weighed as the program's."""
    for index, call in enumerate(test.calls):
        label = valid_text(call.label or f"call {index + 1}")[:120]
        for what, text in (("arguments", call.args), ("expected value", call.expected)):
            try:
                text.encode("utf-8")
                values.parse(text)
            except (UnicodeEncodeError, values.NotAValue) as exc:
                why = "not Unicode text" if isinstance(exc, UnicodeEncodeError) else str(exc)
                raise SandboxFault(f"the test {label!r} has {what} the sandbox cannot take ({why}): "
                                   f"fix the task") from None


def _check_io(test: IoCase) -> None:
    """SandboxFault when an io test's input or expected output is not Unicode text (a
    lone surrogate from a JSON escape): the task's fault (see _check_expected)."""
    for what, text in (("input", test.input), ("expected output", test.expected)):
        try:
            if text is not None:
                text.encode("utf-8")
        except UnicodeEncodeError:
            raise SandboxFault(f"the test {valid_text(test.name())[:120]!r} has an {what} that is not Unicode "
                               "text (a lone surrogate): fix the task") from None


@dataclass(frozen=True)
class _WorkerFailed:
    """A worker failed instead of answering; `outcome` is what the job gets if the rerun
    fails too (None: it declined the job before running it). `fault`: why the failure
    is the sandbox's own (the worker failed inside itself, declined the job, answered
    out of protocol), which no program can cause; then it is never the job's outcome."""

    outcome: TestOutcome | None
    fault: str | None = None


class WorkerLost(Exception):
    """The worker died or stopped answering; `hung` tells which."""

    def __init__(self, reason: str, hung: bool) -> None:
        super().__init__(reason)
        self.hung = hung


class _Channel:
    """One resident worker. Subclasses start it, feed `_lines`, and implement `_send`."""

    def __init__(self) -> None:
        self._lines: queue.Queue = queue.Queue()
        self.jobs_done = 0
        self._next_id = 0
        self.broken = False  # failed a job: replace before the next one
        self.ended = False  # its output stream closed: the worker is gone
        self.domain: str | None = None  # set once, by the pool, before its first job
        # Digests of the artifacts (another language's compiled programs) this worker was
        # sent whole: it keeps them (worker/native.py), so later jobs name them only.
        self.artifacts: list[str] = []

    # --- for subclasses
    def _send(self, data: bytes) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def describe_death(self) -> str:
        """Why the worker is gone, as far as the host can tell."""
        return "exited"

    def _pump(self, chunks: Iterator[bytes]) -> None:
        """Reader thread body: split a byte stream into lines for `_receive`."""
        pending = b""
        try:
            for chunk in chunks:
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    self._lines.put(line)
        except Exception:
            pass
        finally:
            self.ended = True
            self._lines.put(_EOF)

    def _start_reader(self, chunks: Iterator[bytes], name: str) -> None:
        threading.Thread(target=self._pump, args=(chunks,), name=name, daemon=True).start()

    def _receive(self, deadline: float) -> dict:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerLost("did not answer in time", hung=True)
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                raise WorkerLost("did not answer in time", hung=True) from None
            if line is _EOF:
                self._lines.put(_EOF)
                raise WorkerLost(self.describe_death(), hung=False)
            try:
                message = json.loads(line)
            except ValueError:
                continue  # not a protocol line (there should be none)
            if isinstance(message, dict):
                return message

    # --- for the pool
    def wait_ready(self, timeout: float = STARTUP_TIMEOUT_S) -> dict:
        """The worker's greeting, once it is ready."""
        message = self._receive(time.monotonic() + timeout)
        if not message.get("ready") or message.get("protocol") != PROTOCOL:
            raise WorkerLost(f"sent an unexpected greeting {str(message)[:300]!r}", hung=False)
        return message

    def request(self, job: dict, guard_s: float) -> dict:
        self._next_id += 1
        job = dict(job, id=self._next_id)
        try:
            self._send(json.dumps(job).encode() + b"\n")
        except OSError as exc:
            raise WorkerLost(f"stopped reading jobs ({exc})", hung=False) from None
        deadline = time.monotonic() + guard_s
        while True:
            answer = self._receive(deadline)
            if answer.get("id") == job["id"]:
                self.jobs_done += 1
                return answer


ARTIFACTS_KEPT = 4  # per worker (native.ARTIFACTS_KEPT)


def _artifacts_known(channel: _Channel, native: dict) -> dict:
    """`native` with each artifact this worker already holds named by its digest only
    (sent whole once per worker: a few MB of base64 in every job line cost more than the job)."""
    files = {}
    for name, item in native["files"].items():
        digest = item.get("sha")
        if digest and "b64" in item:
            if digest in channel.artifacts:
                item = {key: value for key, value in item.items() if key != "b64"}
            else:
                channel.artifacts = (channel.artifacts + [digest])[-ARTIFACTS_KEPT:]
        files[name] = item
    return dict(native, files=files)


@dataclass
class _Slot:
    domain: str  # the only domain whose jobs this slot's workers ever run
    channel: _Channel | None = None


@dataclass
class _Domain:
    """One domain's slots; `idle` holds those no job holds now."""

    slots: list[_Slot]
    idle: queue.LifoQueue[_Slot]


class WorkerPool:
    """Resident workers made by `start_worker`, `size` slots per domain; thread safe.

    A call holds a slot of its domain (a domain's calls beyond `size` queue) and, while
    its tests run, one of `size` permits, so `size` calls run at once across all
    domains (the cores they share). The `size` workers started with the pool are
    spares, bound to no domain until their first job: a worker that has run no job
    carries nothing from one. A slot without a worker (a domain's first calls, a
    replacement) takes a spare, and another spare starts in the background; with none
    ready it starts one itself, before taking a permit, so other calls go on meanwhile.
    """

    def __init__(
        self,
        start_worker: Callable[[], _Channel],
        size: int,
        limits: Limits,
        jobs_per_worker: int,
        check_greeting: Callable[[dict], str | None] | None = None,
    ) -> None:
        """`check_greeting`: what is wrong with a new worker's greeting, or None (a
        worker it finds wrong never runs a job, and the pool does not start)."""
        if size < 1:
            raise ValueError(f"sandbox workers must be >= 1, got {size}")
        self._start_worker = start_worker
        self._check_greeting = check_greeting
        self._limits = limits
        self._jobs_per_worker = max(1, jobs_per_worker)
        self._size = size
        # Calls at once, whatever their domains (the cores they share); each also holds a
        # slot of its domain, taken first, so a permit is only ever held with a slot.
        self._permits = threading.BoundedSemaphore(size)
        self._domains: dict[str, _Domain] = {}
        self._spares: list[_Channel] = []  # started, never given a job: bound to no domain
        self._starting = 0  # spares being started in the background
        self._starters: list[threading.Thread] = []  # their threads, which close() waits for
        self._closed = False
        self._lock = threading.Lock()
        self.replacements = 0  # workers started to replace a dead, hung or worn one
        self.retired: list[str] = []  # why workers asked to be replaced
        self.prepared = PreparedTests()  # each test's text for the worker, made once
        with ThreadPoolExecutor(max_workers=size) as starter:
            futures = [starter.submit(self._start) for _ in range(size)]
            errors = []
            for future in futures:
                try:
                    self._spares.append(future.result())
                except Exception as exc:
                    errors.append(exc)
        if errors:
            self.close()
            first = errors[0]
            if isinstance(first, SandboxUnavailable):
                raise first
            raise SandboxUnavailable(f"the sandbox worker did not start: {first}") from first

    def _start(self) -> _Channel:
        channel = self._start_worker()
        try:
            greeting = channel.wait_ready()
        except WorkerLost as exc:
            channel.close()
            raise SandboxUnavailable(f"the sandbox worker did not start: it {exc}") from None
        problem = self._check_greeting(greeting) if self._check_greeting is not None else None
        if problem:
            channel.close()
            raise SandboxUnavailable(f"the sandbox worker cannot be used: {problem}")
        return channel

    def _domain(self, name: object) -> _Domain:
        """The domain's slots, made at its first request (they start empty)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"RunRequest.domain must be a non-empty string, got {name!r}")
        with self._lock:
            domain = self._domains.get(name)
            if domain is None:
                slots = [_Slot(name) for _ in range(self._size)]
                # Last in, first out: the slot that ran the last job (its worker up) goes
                # first, so a domain starts more workers only when its jobs overlap.
                idle: queue.LifoQueue[_Slot] = queue.LifoQueue()
                for slot in slots:
                    idle.put(slot)
                domain = self._domains[name] = _Domain(slots, idle)
            return domain

    def run(self, request: RunRequest, native: dict | None = None) -> list[TestOutcome]:
        """One outcome per test. `native`: the program of another language, as a test job
        runs it (files, argv, environment: sandbox/worker/native.py), instead of
        `request.program`."""
        if self._closed:
            raise RuntimeError("this sandbox is closed")
        timeout = request.timeout_s if request.timeout_s is not None else self._limits.timeout_s
        domain = self._domain(request.domain)
        slot = domain.idle.get()  # this domain's calls beyond the pool size wait here
        try:
            if request.tests:
                # Outside the permits: a worker starting (about a second) runs no job, and
                # holding a permit meanwhile would stall every domain's calls.
                self._ready_worker(slot, request.domain)
            with self._permits:  # calls beyond the pool size, all domains together, wait here
                return [self._run_test(slot, request, test, timeout, native) for test in request.tests]
        finally:
            domain.idle.put(slot)

    def run_job(self, domain_name: str, job: dict, guard_s: float) -> dict:
        """One job of the pool's own kind (a compile job), on a worker of `domain_name`,
        run once more on a fresh worker when the first fails instead of answering (as a
        test job is); the worker's answer, or {"status": "error", "detail": why}."""
        if self._closed:
            raise RuntimeError("this sandbox is closed")
        domain = self._domain(domain_name)
        slot = domain.idle.get()
        try:
            self._ready_worker(slot, domain_name)
            with self._permits:
                why = ""
                for _ in range(2):
                    channel = self._ready_worker(slot, domain_name)
                    try:
                        answer = channel.request(job, guard_s=guard_s)
                    except WorkerLost as exc:
                        channel.broken = True
                        channel.close()
                        why = f"the sandbox worker {exc}; it was replaced"
                        continue
                    if answer.get("retire"):
                        channel.broken = True
                        with self._lock:
                            self.retired.append(valid_text(str(answer["retire"]))[:400])
                    if answer.get("not_run") or answer.get("internal"):
                        why = valid_text(str(answer.get("retire") or answer.get("detail") or "declined"))[:400]
                        continue
                    return answer
                return {"status": "error", "detail": f"two sandbox workers in a row could not run the job ({why})"}
        finally:
            domain.idle.put(slot)

    def _run_test(self, slot: _Slot, request: RunRequest, test: str | IoCase | CallCase | RunnerCase, timeout: float,
                  native: dict | None = None) -> TestOutcome:
        """The job's outcome. When the worker fails rather than answers (it declines the
        job, dies, hangs or fails inside itself), it is replaced (unless it failed only
        in judging, which changed nothing of its state) and the job runs once more: an
        earlier job may have damaged it, and a verdict never comes from a damaged worker.
        A second failure is the job's outcome when it is one a program can cause (its
        worker died or hung, its zygote died under it). Any other (the sandbox's own, as
        far as it can tell) is weighed by a control job (`_control`): a trivial
        known-good job of the same kind, run right after in the same domain. If the
        control passes, nothing but this program's job fails: the program's error, so a
        program cannot drop its own test from the score by breaking its grading. If the
        control fails too, the sandbox is at fault: SandboxFault, never a verdict."""
        first = self._run_test_once(slot, request, test, timeout, native)
        if isinstance(first, TestOutcome):
            return first
        second = self._run_test_once(slot, request, test, timeout, native)
        if isinstance(second, TestOutcome):
            return second
        for failure in (second, first):
            if failure.outcome is not None and failure.fault is None:
                return failure.outcome
        name = valid_text(test if isinstance(test, str) else test.name())
        why = "; then ".join(dict.fromkeys(f.fault or "it failed" for f in (first, second)))
        control = self._control(slot, request)
        if control is None:
            return TestOutcome(test=name, status="error", detail=one_line(
                f"the sandbox could not grade this test on two workers in a row ({why}), while a known-good "
                f"job graded right after passed: the program's failure"), duration_s=0.0)
        raise SandboxFault(f"the sandbox could not grade the test {name[:120]!r} on two workers in a row: {why}; "
                           f"a known-good control job failed too ({control})")

    def _control(self, slot: _Slot, request: RunRequest) -> str | None:
        """Run the control job of `request` (CONTROL_*: the same kind of job, a trivial
        program that passes it, the request's domain, blindness and io comparison)
        right after a job faulted; None when it passed, else what went wrong."""
        if any(isinstance(test, str) for test in request.tests):
            control = RunRequest(CONTROL_PROGRAM, [CONTROL_TEST], entry_point="f", domain=request.domain,
                                 blind=request.blind)
        else:  # an io job, or another language's (whose control is an io job: no compile needed)
            io = any(isinstance(test, IoCase) for test in request.tests)
            control = RunRequest(CONTROL_IO_PROGRAM, [CONTROL_IO], domain=request.domain, blind=request.blind,
                                 compare=request.compare if io else "lcb",
                                 compare_mode=request.compare_mode if io else "strict")
        outcome = self._run_test_once(slot, control, control.tests[0], self._limits.timeout_s)
        if isinstance(outcome, TestOutcome) and outcome.status == "passed":
            return None
        if isinstance(outcome, TestOutcome):
            return f"{outcome.status}: {outcome.detail}"[:300]
        return outcome.fault or (outcome.outcome.detail if outcome.outcome is not None else "it failed")

    def _run_test_once(
        self, slot: _Slot, request: RunRequest, test: str | IoCase | CallCase, timeout: float,
        native: dict | None = None,
    ) -> TestOutcome | _WorkerFailed:
        return self._exchange(self._ready_worker(slot, request.domain), request, test, timeout, native)

    def _ready_worker(self, slot: _Slot, domain: str) -> _Channel:
        """The slot's worker, replaced first when it is gone, failed, retired or worn out."""
        channel = slot.channel
        worn_out = channel is not None and channel.jobs_done >= self._jobs_per_worker
        if channel is None or channel.broken or channel.ended or worn_out:
            slot.channel = None
            if channel is not None:
                channel.close()
            channel = self._fresh_worker(replacing=channel is not None)
            channel.domain = slot.domain  # bound for its whole life
            slot.channel = channel
        if channel.domain != domain:  # cannot happen; checked because it must never
            raise RuntimeError(f"sandbox pool: a job of domain {domain!r} reached a worker "
                               f"bound to domain {channel.domain!r}")
        return channel

    def _exchange(
        self, channel: _Channel, request: RunRequest, test: str | IoCase | CallCase, timeout: float,
        native: dict | None = None,
    ) -> TestOutcome | _WorkerFailed:
        """One job on a ready worker: send it, read the answer, mark the worker for
        replacement when it failed or asked to retire."""
        limits = self._limits
        job = {
            "program": request.program,
            "timeout_s": timeout,
            "memory_mb": limits.memory_mb,
            "max_output_bytes": limits.max_output_bytes,
            "max_file_mb": limits.max_file_mb,
            "pids": limits.pids,
            "blind": request.blind,
        }
        if native is not None:  # another language's program (worker/native.py)
            job["exec"] = _artifacts_known(channel, native)
            job["memory_mb"] = max(limits.memory_mb, int(native.get("memory_mb") or 0))
        if isinstance(test, IoCase):  # a whole program on stdin/stdout (worker/io_job.py)
            _check_io(test)
            job.update(kind="io", stdin=test.input, expected=test.expected, compare=request.compare,
                       compare_mode=request.compare_mode)
            test = test.name()
        elif isinstance(test, CallCase):  # a function test on the driver (worker/native.py)
            if native is None:
                return TestOutcome(test=valid_text(test.name()), status="error",
                                   detail="a call test needs a program of another language than Python")
            _check_expected(test)
            job.update(kind="call", calls=[call.args for call in test.calls],
                       expected=[call.expected for call in test.calls],
                       labels=[call.label or f"call {index + 1}" for index, call in enumerate(test.calls)],
                       tolerance=test.tolerance)
            test = test.name()
        elif isinstance(test, RunnerCase):  # one test of the exercise's own runner (toolchains/base.py)
            if native is None:
                return TestOutcome(test=valid_text(test.name()), status="error",
                                   detail="a test runner's test needs a program of another language than Python")
            # The runner speaks the driver's protocol: the test's name is its one call,
            # and `true` (it ran and passed) the one result W accepts.
            job.update(kind="call", calls=[json.dumps([test.test])], expected=["true"], labels=[test.name()],
                       tolerance=None)
            test = test.name()
        elif native is not None:
            return TestOutcome(test=valid_text(test), status="error",
                               detail="a program of another language than Python takes call tests or io tests")
        else:
            job.update(test=test, prelude=request.prelude, entry_point=request.entry_point)
            prepared = self.prepared.get(test, request.blind)
            if prepared is not None:  # else the worker rewrites the test itself
                job["prepared"] = prepared
        started = time.monotonic()
        try:
            answer = channel.request(job, guard_s=timeout * 1.5 + GUARD_MARGIN_S)
        except WorkerLost as exc:
            channel.broken = True  # replaced before its next job
            channel.close()
            status = "timeout" if exc.hung else "error"
            return _WorkerFailed(TestOutcome(
                test=valid_text(test),
                status=status,
                detail=f"the sandbox worker {exc}; it was replaced",
                duration_s=time.monotonic() - started,
            ))
        if answer.get("retire"):  # it could not restore a clean state: never reuse it
            channel.broken = True
            with self._lock:
                self.retired.append(valid_text(str(answer["retire"]))[:400])
        reason = valid_text(str(answer.get("retire") or answer.get("detail") or ""))[:400]
        if answer.get("not_run"):
            if answer.get("during"):  # its zygote died under the job: the program may have done it
                return _WorkerFailed(TestOutcome(
                    test=valid_text(test), status="error",
                    detail=f"the sandbox worker could not finish the test ({reason}); it was replaced",
                    duration_s=time.monotonic() - started))
            return _WorkerFailed(None, fault=f"the worker declined it ({reason})")
        status = answer.get("status")
        if status not in _STATUSES:
            channel.broken = True
            return _WorkerFailed(None, fault=f"the worker answered out of protocol: {str(answer)[:300]!r}")
        strict = answer.get("strict_status")
        outcome = TestOutcome(
            test=valid_text(test),
            status=status,
            detail=valid_text(str(answer.get("detail", ""))),
            duration_s=float(answer.get("duration_s", 0.0)),
            output=valid_text(str(answer.get("output", ""))),
            strict_status=strict if strict in _STATUSES else None,
            stderr=valid_text(str(answer.get("stderr", ""))),
            exit_code=answer["exit_code"] if type(answer.get("exit_code")) is int else None,
        )
        if answer.get("internal"):  # the worker failed inside itself, not the test
            return _WorkerFailed(outcome, fault=f"the worker failed inside itself ({reason})")
        return outcome

    def _fresh_worker(self, *, replacing: bool) -> _Channel:
        """A worker that has run no job: a live spare (and another spare starts in the
        background, as the zygote forks the next blank child ahead), else a new one."""
        spare, dead = None, []
        with self._lock:
            if self._closed:
                raise RuntimeError("this sandbox is closed")
            if replacing:
                self.replacements += 1
            while self._spares and spare is None:
                candidate = self._spares.pop()
                if candidate.ended:
                    dead.append(candidate)  # died while it waited: it never ran a job, nothing is lost
                else:
                    spare = candidate
            self._refill(binding=1)
        for channel in dead:
            channel.close()
        if spare is not None:
            return spare
        channel = self._start()
        if self._closed:  # closed while this worker started: do not leak it
            channel.close()
            raise RuntimeError("this sandbox is closed")
        return channel

    def _refill(self, binding: int = 0) -> None:
        """Starts spares in the background until there are as many, ready or starting, as
        slots of the domains seen so far have no worker (at most `size`; `size` before any
        domain is seen), not counting the `binding` slots about to take one (caller holds
        the lock). So a domain's first calls mostly find a worker ready instead of waiting
        about a second for one, and once every slot has its worker no container starts
        for nothing (on 2 cores, 4 local Ray nodes paid ~2 spare starts each)."""
        if self._domains:
            unbound = sum(slot.channel is None for domain in self._domains.values() for slot in domain.slots)
            wanted = min(self._size, max(0, unbound - binding))
        else:
            wanted = self._size
        while len(self._spares) + self._starting < wanted:
            self._starting += 1
            starter = threading.Thread(target=self._start_spare, name="sandbox-spare", daemon=True)
            self._starters = [thread for thread in self._starters if thread.is_alive()] + [starter]
            starter.start()

    def _start_spare(self) -> None:
        channel = None
        try:
            channel = self._start()
        except Exception:
            pass  # the engine failed: a slot that finds no spare starts its own, and says why
        with self._lock:
            self._starting -= 1
            if channel is not None and not self._closed:
                self._spares.append(channel)
                return
        if channel is not None:  # the pool closed while it started: do not leak it
            channel.close()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            channels = [slot.channel for domain in self._domains.values() for slot in domain.slots]
            channels += self._spares
            self._spares = []
            starters, self._starters = self._starters, []
        for channel in channels:
            if channel is not None:
                try:
                    channel.close()
                except Exception:
                    pass
        # A spare still starting closes itself once started (the pool is closed): wait
        # for it, or the interpreter's exit would cut its thread short and leave the
        # worker (a container, a host folder) behind.
        for starter in starters:
            starter.join(STARTUP_TIMEOUT_S + GUARD_MARGIN_S)
