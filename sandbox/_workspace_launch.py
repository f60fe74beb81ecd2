"""Runs one workspace command for the process backend (a script: `python -I this.py
COMMAND FILE_BYTES`): it becomes the child subreaper, runs `bash -c COMMAND` in its own
session with stderr into stdout, and when bash ends, or on SIGTERM (the harness's time
limit), kills every process it left: a process that leaves its parent is re-parented
here, so none can slip away. Writes one line to its own stderr: `exit N` or `timeout`.
Imports nothing from the package (it runs by its path)."""
from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36


def _children() -> list[int]:
    found: list[int] = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as handle:
                found += [int(pid) for pid in handle.read().split()]
        except OSError:
            pass
    return found


def _sweep(session: int) -> None:
    """Kill the command's session, then every child left (orphans come here), until none."""
    try:
        os.killpg(session, signal.SIGKILL)
    except OSError:
        pass
    while True:
        children = _children()
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG if children else 0)[0]:
                pass
        except ChildProcessError:
            return


def main(command: str, file_bytes: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("error: cannot become a child subreaper", file=sys.stderr, flush=True)
        sys.exit(3)
    # SIGTERM (the time limit) waits until its handler knows the command's session.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    pid = os.fork()
    if pid == 0:
        os.setsid()
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        os.dup2(1, 2)
        os.execvp("bash", ["bash", "-c", command])
    stopped: list[bool] = []

    def stop(signum, frame) -> None:
        stopped.append(True)
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass

    signal.signal(signal.SIGTERM, stop)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    _, status = os.waitpid(pid, 0)
    _sweep(pid)
    verdict = "timeout" if stopped else f"exit {os.waitstatus_to_exitcode(status)}"
    print(verdict, file=sys.stderr, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
