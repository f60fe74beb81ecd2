"""W's side of the jobs of other languages: compiling a program (a compile worker's
job), and running a compiled program's driver on one test's calls. (An io program of
another language is an io job: io_job.py, with the program started by `exec_payload`.)

A compile job: one blank child writes the sources and runs the compiler's steps
(launch.py) under the compile limits, its messages on one pipe; W reads the artifacts
the job names out of the scratch folder once every process of the job is gone.

A call job (a function task's test): one blank child becomes the program (the task's
function linked with the harness's driver, sandbox/drivers/). W writes the job's token
and then each call's arguments (one JSON array a line) on its descriptor 3 and closes
it; the driver calls the function once per line and writes `<token> <index> <value>` on
its descriptor 4 for each result, then `<token> end`. The expected values are W's alone:
once the program has ended and every process of the job is gone, W compares each result
with its expected value (values.py), in order; the first call whose result is missing
or different decides. The token is no secret from the program (compiled code can read
its whole process); the verdict does not rest on it (README, "Compiled languages").
"""
from __future__ import annotations

import base64
import errno
import os
import select
import signal
import time

from .procs import Capped, pidfd
from .values import NotAValue, equal, parse, shown
from .zygote import ZYGOTE_TIMEOUT_S, ZygoteGone, give_job

KILL_GRACE_S = 5.0
STDERR_TAIL = 1600  # characters of a program's output shown when it fails
MESSAGE_MAX = 64 * 1024  # bytes of a compiler's messages kept (its first errors come first)
# How a compiler says it ran out of memory (RLIMIT_AS makes allocations fail): rustc,
# cc1plus, the go tools, node.
OUT_OF_MEMORY = ("memory allocation of", "out of memory", "cannot allocate memory", "virtual memory exhausted",
                 "std::bad_alloc", "Fatal process out of memory", "failed to reserve")


ARTIFACTS_KEPT = 4  # compiled programs W keeps by digest (the host sends each once per worker)
_ARTIFACTS: dict[str, bytes] = {}


class ArtifactUnknown(RuntimeError):
    """The host named an artifact this worker does not hold (it is sent whole again)."""


def artifacts_held(job: dict) -> bool:
    """Whether every artifact the job names by digest alone is one this worker holds."""
    return all("b64" in item or "sha" not in item or item["sha"] in _ARTIFACTS
               for item in job["exec"]["files"].values())


def exec_payload(job: dict) -> dict:
    """The blank child's part of a job whose program is not Python: its files (bytes,
    executable), argv and environment, from the host's `exec`. An artifact comes whole
    (base64, with its digest) the first time, then by its digest alone."""
    spec = job["exec"]
    files = {}
    for name, item in spec["files"].items():
        if "b64" in item:
            data = base64.b64decode(item["b64"])
            if item.get("sha"):
                _ARTIFACTS[item["sha"]] = data
                while len(_ARTIFACTS) > ARTIFACTS_KEPT:
                    _ARTIFACTS.pop(next(iter(_ARTIFACTS)))
        elif "sha" in item:
            if item["sha"] not in _ARTIFACTS:
                raise ArtifactUnknown(f"the artifact {item['sha']} is not held by this worker")
            data = _ARTIFACTS[item["sha"]]
        else:
            data = item["text"].encode("utf-8")
        files[name] = (data, bool(item.get("executable")))
    return {"files": files, "argv": list(spec["argv"]), "env": dict(spec.get("env") or {})}


def _start(worker, job: dict, limits: dict, payload: dict, NotRun):
    zygote = worker.zygote
    try:
        zygote.pump()
        zygote.ended.clear()
        child = zygote.take_blank()
    except RuntimeError as exc:
        raise NotRun(str(exc)) from None
    try:
        zygote.ask(1)
    except ZygoteGone:
        pass
    return child


def _end(worker, pid: int, deadline: float) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if not worker.kill_job(worker._ended_job[0], pid, None, deadline):
        raise RuntimeError("processes of the job outlived SIGKILL")


def _pump_pipes(worker, pid, pipes: dict, writer: tuple | None, deadline: float) -> bool:
    """Read `pipes` ({fd: Capped}) and write `writer` (fd, bytes) until the job's process
    `pid` ends; False if `deadline` came first."""
    zygote = worker.zygote
    readers = list(pipes)
    pending = memoryview(writer[1]) if writer else None
    out_fd = writer[0] if writer else -1
    if writer and not pending:
        os.close(out_fd)
        worker._open_ends.discard(out_fd)
        out_fd = -1
    while pid not in zygote.ended:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        readable, writable, _ = select.select(readers + [zygote.sock], [out_fd] if out_fd >= 0 else [], [], remaining)
        for fd in readable:
            if fd is zygote.sock:
                zygote.pump()
            elif not pipes[fd].drain(fd):
                readers.remove(fd)
        if writable:
            try:
                pending = pending[os.write(out_fd, pending[:65536]):]
            except BlockingIOError:
                pass
            except OSError as exc:
                if exc.errno != errno.EPIPE:
                    raise
                pending = pending[:0]
            if not pending:
                os.close(out_fd)
                worker._open_ends.discard(out_fd)
                out_fd = -1
    return True


def run_compile(worker, job: dict, limits: dict, NotRun) -> dict:
    """Compile the job's sources; the answer has `status` (ok, error, timeout, memory),
    the compiler's `detail` (its messages, the first ones kept) and the `artifacts`
    (base64) the job named."""
    timeout = float(job["timeout_s"])
    child = _start(worker, job, limits, None, NotRun)
    kit = worker.take_kit()
    kit.close_sockets()
    kit.close_spares()
    (in_r, in_w), (out_r, out_w), (err_r, err_w) = kit.pipes
    for fd in (in_r, in_w, err_r, err_w):
        os.close(fd)
    started = time.monotonic()
    payload = dict(limits, role="compile", files=exec_payload(job)["files"], steps=job["steps"],
                   env=dict(job.get("env") or {}))
    try:
        pid = give_job(child, payload, [out_w])
    except OSError as exc:
        os.close(out_r)
        raise NotRun(f"a blank child died before its job ({exc.strerror})") from None
    finally:
        os.close(out_w)
    worker._ended_job = [pidfd(pid)]
    worker._job_pids = (pid,)
    worker._open_ends = {out_r}
    try:
        os.set_blocking(out_r, False)
        messages = Capped(MESSAGE_MAX)
        finished = _pump_pipes(worker, pid, {out_r: messages}, None, started + timeout)
        duration = time.monotonic() - started
        _end(worker, pid, time.monotonic() + KILL_GRACE_S)
        messages.drain(out_r)
        text = bytes(messages.data).decode("utf-8", errors="replace")
        answer = {"duration_s": round(duration, 6), "detail": text, "output": text}
        if not finished:
            return dict(answer, status="timeout")
        status = worker.zygote.status_of(pid, ZYGOTE_TIMEOUT_S)
        if status is None:
            raise RuntimeError("the zygote did not report how the compiler ended")
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
            return dict(answer, status="timeout")
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            return dict(answer, status="memory")  # the container's memory cap (no one else kills it)
        if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
            lowered = text.lower()
            memory = any(phrase.lower() in lowered for phrase in OUT_OF_MEMORY)
            return dict(answer, status="memory" if memory else "error")
        try:
            artifacts = {name: base64.b64encode(_read_artifact(worker.scratch, name, int(job["max_artifact_mb"]))).decode()
                         for name in job.get("artifacts", ())}
        except (OSError, ArtifactMissing) as exc:
            # The program's sources can make the compiler write no program, or one too big
            # (a library crate, a huge static array): the program's compile error, never
            # the worker's failure (nothing of its state changed).
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            return dict(answer, status="error", detail=f"{text}\nthe compiler made no usable program ({why})".lstrip())
        return dict(answer, status="ok", artifacts=artifacts)
    except ZygoteGone as exc:
        raise NotRun(str(exc)) from None
    finally:
        for fd in worker._open_ends:
            os.close(fd)
        worker._open_ends = set()


class ArtifactMissing(RuntimeError):
    """The compiler's output is not a regular file of at most the artifact limit."""


def _read_artifact(scratch: str, name: str, max_mb: int) -> bytes:
    """A file the compiler wrote in the scratch folder: regular, no link, at most max_mb."""
    folder = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    finally:
        os.close(folder)
    try:
        info = os.fstat(fd)
        if not (info.st_mode & 0o170000 == 0o100000) or info.st_size > max_mb * 1024 * 1024:
            raise ArtifactMissing(f"the compiler's output {name} is not a regular file of at most {max_mb} MB")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _tail(text: str) -> str:
    """A failing program's output: all of it if short, else its start (where a runtime
    says what went wrong: a panic, an uncaught exception) and its end."""
    text = text.rstrip()
    half = STDERR_TAIL // 2
    return text if len(text) <= STDERR_TAIL else text[:half] + "\n...\n" + text[-half:]


def run_call(worker, job: dict, limits: dict, NotRun, blind: bool) -> dict:
    """One function test (several calls) on the driver; the verdict is W's (module doc)."""
    timeout = float(job["timeout_s"])
    cap = int(job["max_output_bytes"])
    calls, expected = job["calls"], job["expected"]
    labels = job.get("labels") or [f"call {index + 1}" for index in range(len(calls))]
    tolerance = job.get("tolerance")
    token = os.urandom(8).hex()
    child = _start(worker, job, limits, None, NotRun)
    kit = worker.take_kit()
    kit.close_sockets()
    spare_fds, spare_info = worker.spares_for(kit, job)
    (calls_r, calls_w), (out_r, out_w), (res_r, res_w) = kit.pipes
    started = time.monotonic()
    try:
        pid = give_job(child, dict(limits, role="exec_call", **exec_payload(job), **spare_info),
                       [calls_r, out_w, res_w, *spare_fds])
    except OSError as exc:
        for fd in (calls_w, out_r, res_r):
            os.close(fd)
        raise NotRun(f"a blank child died before its job ({exc.strerror})") from None
    finally:
        for fd in (calls_r, out_w, res_w, *spare_fds):
            os.close(fd)
    worker._ended_job = [pidfd(pid)]
    worker._job_pids = (pid,)
    worker._open_ends = {calls_w, out_r, res_r}
    # Results: room for every expected value four times over, and never less than the cap.
    results_cap = max(cap, 4 * sum(len(e) for e in expected) + 64 * len(expected) + 4096)
    output, results = Capped(cap), Capped(results_cap)
    try:
        for fd in (calls_w, out_r, res_r):
            os.set_blocking(fd, False)
        text_in = (token + "\n" + "".join(call.strip() + "\n" for call in calls)).encode("utf-8")
        finished = _pump_pipes(worker, pid, {out_r: output, res_r: results}, (calls_w, text_in), started + timeout)
        duration = time.monotonic() - started
        # Every process of the job gone before anything is compared (blind or not: the
        # comparison is W's and the program is done either way).
        _end(worker, pid, time.monotonic() + KILL_GRACE_S)
        output.drain(out_r)
        results.drain(res_r)
        printed = bytes(output.data).decode("utf-8", errors="replace")
        answer = {"duration_s": round(duration, 6), "output": printed}
        if not finished:
            return dict(answer, status="timeout", detail=f"timed out after {timeout:g} s (wall clock)")
        if output.dropped or results.dropped:
            return dict(answer, status="failed", detail=f"printed more than {cap} bytes (the output cap)")
        status = worker.zygote.status_of(pid, ZYGOTE_TIMEOUT_S)
        if status is None:
            raise RuntimeError("the zygote did not report how the program's process ended")
        kind, how = worker._describe_end(status)
        ended_well = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        if not ended_well and kind == "timeout":
            return dict(answer, status="timeout", detail=f"the program {how}")
        found = _results(bytes(results.data), token, len(calls))
        return dict(answer, **_call_verdict(found, expected, labels, tolerance, ended_well, how, printed))
    except ZygoteGone as exc:  # the zygote died under the job: the program may have done it
        raise NotRun(str(exc), during=True) from None
    finally:
        for fd in worker._open_ends:
            os.close(fd)
        worker._open_ends = set()


def _call_verdict(found: dict, expected: list, labels: list, tolerance, ended_well: bool, how: str,
                  printed: str) -> dict:
    """{status, detail} of a call job, from the results the driver wrote (`found`, see
    `_results`): every call's result is read and compared (values.py: both total), in
    order, whatever the earlier ones were, so the work done does not depend on which
    call was wrong; the first call whose result is missing or different decides."""
    verdict = None
    for index, label in enumerate(labels):
        if index not in found:
            if verdict is None:
                tail = _tail(printed)
                why = f"the program {how}" if not ended_well else "the program ended before it returned"
                verdict = {"status": "error", "detail": f"{label}  # {why}" + (f":\n{tail}" if tail else "")}
            continue
        try:
            same = equal(parse(found[index]), parse(expected[index]), tolerance)
        except NotAValue as exc:
            if verdict is None:
                verdict = {"status": "error", "detail": f"{label}  # the driver printed {exc}"}
            continue
        if not same and verdict is None:
            verdict = {"status": "failed", "detail": f"{label}  # got {shown(found[index])}"}
    if verdict is not None:
        return verdict
    if not ended_well or found.get("end") is not True:
        tail = _tail(printed)
        return {"status": "error", "detail": f"the program {how} after its last call" + (f":\n{tail}" if tail else "")}
    return {"status": "passed", "detail": ""}


def _results(data: bytes, token: str, count: int) -> dict:
    """{index: the value's text} of the lines framed by `token` (the first of each index),
    and "end": True when the driver said it was done after the last one. An index is
    ASCII digits only (`'²'.isdigit()` is true, and int() refuses it)."""
    found: dict = {}
    prefix = token + " "
    width = len(str(max(count - 1, 0)))
    for raw in data.decode("utf-8", errors="replace").split("\n"):
        if not raw.startswith(prefix):
            continue
        head, _, value = raw[len(prefix):].partition(" ")
        if head == "end":
            if len([key for key in found if key != "end"]) == count:
                found["end"] = True
            continue
        if not (0 < len(head) <= width and head.isascii() and head.isdigit()) or "end" in found:
            continue
        index = int(head)
        if index < count and index not in found:
            found[index] = value
    return found
