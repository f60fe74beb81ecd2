"""W's side of an io job: one program process (P) fed the test's input on stdin, its
stdout and stderr read under the output cap, the time limit kept, and the verdict
computed here by io_compare from what P printed. The expected output never leaves W.

A job line with ``"kind": "io"`` carries ``program``, ``stdin``, ``expected``,
``compare`` (the rule), ``compare_mode`` (strict, the default, or source) and the
limits; its answer has the usual ``status``, ``detail``, ``duration_s`` and ``output``
(the program's stdout, cut to the cap), and in a mode other than strict
``strict_status``, the verdict the strict rule gives the same output.

A script run (``"expected": null``: an agent's own script, sandbox/script.py) compares
nothing: its answer also carries ``stderr`` (the end kept) and ``exit_code`` (the
negated signal number when a signal ended it), and its status is ``passed`` for exit
status 0 (``_script_end``).
"""
from __future__ import annotations

import errno
import os
import select
import signal
import time

from .io_compare import DEFAULT_MODE, DEFAULT_RULE, compare
from .native import exec_payload
from .procs import Capped, pidfd
from .text import exception_line
from .zygote import ZYGOTE_TIMEOUT_S, ZygoteGone, give_job

STDERR_KEPT = 4096  # bytes of stderr kept (its end: where a traceback says what went wrong)
ERROR_LINES = 6  # lines of stderr in an error's detail
ERROR_CHARS = 1200
KILL_GRACE_S = 5.0  # for W to kill and see gone every process of an io job before it compares


def _output_cap(job: dict) -> int:
    # The cap must let a right answer through: at least twice the expected output.
    if job["expected"] is None:  # a script run: the cap as set
        return int(job["max_output_bytes"])
    return max(int(job["max_output_bytes"]), 2 * len(job["expected"].encode()) + 4096)


def _error_tail(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", errors="replace").rstrip().splitlines()[-ERROR_LINES:]
    text = "\n".join(lines)
    return text if len(text) <= ERROR_CHARS else "..." + text[-ERROR_CHARS + 3:]


def run_io(worker, job: dict, limits: dict, NotRun, blind: bool) -> dict:
    """One io test in one fresh blank child; the caller cleans up after the answer.

    Blind (hidden grading): W compares the output only once no process of the job runs
    any more (supervisor.kill_job), so none can time the comparison (or anything after)."""
    timeout = float(job["timeout_s"])
    cap = _output_cap(job)
    zygote = worker.zygote
    try:
        zygote.pump()
        zygote.ended.clear()
        child = zygote.take_blank()
    except RuntimeError as exc:
        raise NotRun(str(exc)) from None
    try:
        zygote.ask(1)  # the next job's, forked while this one runs
    except ZygoteGone:
        pass
    kit = worker.take_kit()  # stock.py: made before the first job
    kit.close_sockets()
    spare_fds, spare_info = worker.spares_for(kit, job)
    (in_r, in_w), (out_r, out_w), (err_r, err_w) = kit.pipes
    started = time.monotonic()
    try:
        # A Python program runs in the child itself (stdio.py); another language's is
        # exec'd there (launch.py), from the file its compile job made.
        role = dict(role="exec_io", **exec_payload(job), **spare_info) if "exec" in job else dict(role="stdio", program=job["program"])
        pid = give_job(child, dict(limits, **role), [in_r, out_w, err_w, *spare_fds])
    except OSError as exc:
        for fd in (in_w, out_r, err_r):
            os.close(fd)
        raise NotRun(f"a blank child died before its job ({exc.strerror})") from None
    finally:
        for fd in (in_r, out_w, err_w, *spare_fds):
            os.close(fd)
    worker._ended_job = [pidfd(pid)]
    worker._job_pids = (pid,)
    # W's ends still open. Each is closed once: a freed number is the next one the
    # kernel hands out, say to the socket of the blank child the zygote announces during
    # this job, and a second close would close that instead.
    ends = {in_w, out_r, err_r}
    try:
        return _watch(worker, job, pid, in_w, out_r, err_r, timeout, cap, started, ends, blind)
    except ZygoteGone as exc:
        raise NotRun(str(exc), during=True) from None
    finally:
        for fd in ends:
            os.close(fd)


def _close(fd: int, ends: set[int]) -> None:
    """Close `fd`, one of W's `ends`, and strike it off (the caller closes the rest)."""
    ends.remove(fd)
    os.close(fd)


def _watch(worker, job, pid, in_w, out_r, err_r, timeout, cap, started, ends: set[int], blind: bool) -> dict:
    zygote = worker.zygote
    pending = memoryview(job["stdin"].encode("utf-8"))
    stdout, stderr = Capped(cap), Capped(STDERR_KEPT, tail=True)
    pipes = {out_r: stdout, err_r: stderr}
    for fd in (in_w, out_r, err_r):
        os.set_blocking(fd, False)
    readers = [out_r, err_r]
    writer_open = True
    if not pending:
        _close(in_w, ends)
        writer_open = False
    deadline = started + timeout
    timed_out = False

    while pid not in zygote.ended:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        if stdout.dropped:  # flooding: the answer cannot be right any more
            break
        writers = [in_w] if writer_open else []
        readable, writable, _ = select.select(readers + [zygote.sock], writers, [], remaining)
        for fd in readable:
            if fd is zygote.sock:
                zygote.pump()
            elif not pipes[fd].drain(fd):
                readers.remove(fd)
        if writable:
            try:
                written = os.write(in_w, pending[:65536])
                pending = pending[written:]
            except BlockingIOError:
                pass
            except OSError as exc:  # EPIPE: the program closed its stdin or ended
                if exc.errno != errno.EPIPE:
                    raise
                pending = pending[:0]
            if not pending:
                _close(in_w, ends)
                writer_open = False
    duration = time.monotonic() - started
    for kill in (os.killpg, os.kill):  # its forks go with it (the clean-up finds the rest)
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass
    # Blind: its forks outside its group too, before anything is compared. W's own work,
    # not the program's time: bounded apart from the job's limit.
    if blind and not worker.kill_job(worker._ended_job[0], pid, None, time.monotonic() + KILL_GRACE_S):
        raise RuntimeError("processes of the io job outlived SIGKILL")
    for fd in list(readers):
        pipes[fd].drain(fd)
    output = bytes(stdout.data)
    text = output.decode("utf-8", errors="replace")
    answer = {"duration_s": round(duration, 6), "output": text}
    script = job["expected"] is None
    if script:
        answer["stderr"] = bytes(stderr.data).decode("utf-8", errors="replace")
    if timed_out:
        return dict(answer, status="timeout", detail=f"timed out after {timeout:g} s (wall clock)")
    if stdout.dropped:
        return dict(answer, status="failed",
                    detail=f"printed more than {cap} bytes (the output cap); the rest was dropped",
                    output=text + f"\n[... {stdout.dropped} more bytes of output dropped]")
    status = zygote.status_of(pid, ZYGOTE_TIMEOUT_S)
    if status is None:
        raise RuntimeError("the zygote did not report how the program's process ended")
    if script:
        return _script_end(worker, answer, status)
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        kind, how = worker._describe_end(status)  # as for a function job's processes
        tail = _error_tail(bytes(stderr.data))
        return dict(answer, status=kind, detail=f"the program {how}" + (f":\n{tail}" if tail else ""))
    rule, mode = job.get("compare") or DEFAULT_RULE, job.get("compare_mode") or DEFAULT_MODE
    try:
        verdicts = {"strict": compare(output, job["expected"], rule, "strict")}
        if mode != "strict":
            verdicts[mode] = compare(output, job["expected"], rule, mode)
    except Exception as exc:
        # compare() answers for every output, so this is the worker's own failure (an
        # unknown rule, a task's expected text that is not Unicode): an internal error,
        # which the host records as its own. The worker does not retire for it: nothing
        # of its state changed, and whether a container retires must never depend on
        # what a comparison met.
        return dict(answer, status="error", detail=f"sandbox worker: {exception_line(exc)}", internal=True)
    status, detail = _status(*verdicts[mode])
    if mode != "strict":
        answer["strict_status"] = _status(*verdicts["strict"])[0]
    return dict(answer, status=status, detail=detail)


def _status(same: bool, why: str) -> tuple[str, str]:
    return ("passed", "") if same else ("failed", f"wrong answer: {why}")


def _script_end(worker, answer: dict, status: int) -> dict:
    """A script run's answer: how it ended, nothing compared."""
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return dict(answer, status="passed", detail="", exit_code=0)
    kind, how = worker._describe_end(status)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
    return dict(answer, status=kind, detail=f"the program {how}", exit_code=code)
