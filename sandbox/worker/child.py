"""What a blank child does when it takes its job, as P or as T: its descriptors, its
directory, its limits and its signals.
"""
from __future__ import annotations

import fcntl
import math
import os
import resource
import signal
import sys

import _signal  # the C module under `signal`: its calls take and give plain ints

# Signals the worker's own processes (W, the zygote, the blank children and T) ignore:
# every signal the kernel can deliver that can be caught or ignored, the real-time
# ones (SIGRTMIN..SIGRTMAX) included, not only those with names. Not SIGKILL and
# SIGSTOP (they cannot be; PID 1 of a container never receives them from inside, see
# README), nor SIGCHLD (W and the zygote wait for their children; its default is to
# ignore it anyway). A fault the process itself raises (SIGSEGV, SIGBUS, SIGFPE,
# SIGILL) still kills it: the kernel resets an ignored synchronous fault to its default.
IGNORED_SIGNALS = sorted(
    int(number) for number in set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD}
)


def enter_child(fds: dict[int, int], job: dict, cwd: str, stdio: tuple, home: str, role: str) -> None:
    """A blank child takes its job: only the given fds, its directory, limits, signals.

    `fds` maps target fd -> current fd; stdout+stderr are the output pipe.
    """
    if role == "program":
        python_signals()
    else:
        # The test process keeps ignoring signals: the program's leftovers cannot stop
        # it with anything but SIGKILL/SIGSTOP, which make the verdict an error or a
        # timeout. A process the test forks (its own multiprocessing.Process) has
        # Python's defaults, so that terminate() (SIGTERM) ends it. Signals are blocked
        # across the fork: one sent before the child has reset its handlers waits for
        # them instead of meeting the inherited SIG_IGN (a blocked signal is never
        # discarded as ignored).
        os.register_at_fork(before=_block_signals, after_in_parent=_unblock_signals,
                            after_in_child=_python_signals_unblocked)
    # Move sources above the targets first so that no dup2 clobbers another source.
    moved = {target: fcntl.fcntl(source, fcntl.F_DUPFD, 64) for target, source in fds.items()}
    for target, source in moved.items():
        os.dup2(source, target)
    highest = max([2, *fds])
    os.closerange(highest + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    os.chdir(cwd)
    os.environ["HOME"] = home
    _apply_limits(job)
    sys.stdin, sys.stdout, sys.stderr = stdio


def python_signals() -> None:
    """Python's own signal defaults, as a program run by `python3` would have them.

    Through `_signal`, as the other calls a freshly forked child makes here: `signal`'s
    wrappers turn each old handler and mask into an enum member, which in a child
    writes to pages of the enum machinery shared with the zygote (each first write
    copies one)."""
    for number in IGNORED_SIGNALS:
        try:
            _signal.signal(number, _signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    _signal.signal(_signal.SIGINT, _signal.default_int_handler)
    _signal.signal(_signal.SIGPIPE, _signal.SIG_IGN)  # EPIPE as an error, not a death
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)  # "File too large" as an error


def _block_signals() -> None:
    _signal.pthread_sigmask(_signal.SIG_BLOCK, IGNORED_SIGNALS)


def _unblock_signals() -> None:
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, IGNORED_SIGNALS)


def _python_signals_unblocked() -> None:
    python_signals()
    _unblock_signals()


def _apply_limits(job: dict) -> None:
    mb = 1024 * 1024
    cpu = math.ceil(float(job["timeout_s"])) + 1
    limits = [
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_AS, int(job["memory_mb"]) * mb, int(job["memory_mb"]) * mb),
        (resource.RLIMIT_FSIZE, int(job["max_file_mb"]) * mb, int(job["max_file_mb"]) * mb),
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_MSGQUEUE, 0, 0),  # no POSIX message queues
    ]
    if job.get("nproc"):
        limits.append((resource.RLIMIT_NPROC, int(job["nproc"]), int(job["nproc"])))
    for which, soft, hard in limits:
        _, old_hard = resource.getrlimit(which)
        if old_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, old_hard), min(hard, old_hard)
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            pass


def flush_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
