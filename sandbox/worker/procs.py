"""Process and /proc helpers: prctl, pidfds, who is alive, whose children, SysV IPC ids,
and the settings of a process that another one of the same user may change.
"""
from __future__ import annotations

import ctypes
import os
import resource

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
IPC_RMID = 0
_LIBC = ctypes.CDLL(None, use_errno=True)  # the C library's handle: a constant


def prctl(option: int, value: int) -> None:
    try:
        _LIBC.prctl(option, value, 0, 0, 0)
    except AttributeError:
        pass


def pidfd(pid: int) -> int:
    """A descriptor that turns readable when `pid` ends (-1 where the kernel has none)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


_RLIMITS = tuple(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_"))


_SYS_IOPRIO_GET = {"x86_64": 252, "aarch64": 31}.get(os.uname().machine)


def settings(pid: int) -> tuple:
    """What any process of the same user may change in another one: resource limits
    (prlimit), niceness, scheduling policy, CPU affinity and I/O priority. A job's
    program can set them on the worker, the zygote or a blank child, and every later
    job would inherit them; so the clean state includes them (0: this process)."""
    ioprio = None
    if _SYS_IOPRIO_GET is not None:
        ioprio = _LIBC.syscall(_SYS_IOPRIO_GET, 1, pid)  # IOPRIO_WHO_PROCESS
    # Every resource limit in one read (the kernel's table of them all), not one prlimit
    # call each: W asks this of four processes after every job.
    limits = read_proc(f"/proc/{pid or 'self'}/limits")
    if not limits:  # no /proc here: one call each, as the table would show them
        limits = tuple(resource.prlimit(pid, which) for which in sorted(set(_RLIMITS)))
    return (
        limits,
        os.getpriority(os.PRIO_PROCESS, pid),
        os.sched_getscheduler(pid),
        tuple(sorted(os.sched_getaffinity(pid))),
        ioprio,
    )


def read_proc(path: str) -> bytes:
    """A /proc file's bytes, or b"" when it cannot be read (unbuffered: W reads some
    fifteen of them after every job, and open() costs half as much again)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return b""
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)


class ProcFiles:
    """/proc files W reads after every job, each opened once and read again from its
    start (pread): half the cost of opening it each time (0.12 ms for the eleven of
    traces.py against 0.26). Only for files whose meaning does not change with the
    reader after opening (the namespace's own, read by W alone)."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    def read(self, path: str) -> bytes:
        """The file's bytes now, or b"" when it cannot be read."""
        fd = self._fds.get(path)
        if fd is None:
            try:
                fd = self._fds[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return b""
        try:
            chunks, offset = [], 0
            while chunk := os.pread(fd, 65536, offset):
                chunks.append(chunk)
                offset += len(chunk)
            return b"".join(chunks)
        except OSError:
            return b""


_PF_EXITING = 0x4  # a task's flag (/proc/<pid>/stat, field 9): it is in do_exit


def alive(pid: int, exiting_is_gone: bool = False) -> bool:
    """Whether any thread of `pid` still runs (a zombie leader may have live threads).

    `exiting_is_gone`: a thread that has begun to exit (a SIGKILL taken: its flags have
    PF_EXITING) counts as gone too. It never runs its own code again; what is left is the
    kernel freeing its memory, which takes a 20 MB Python process about a millisecond."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for task in tasks:
        try:
            fields = read_proc(f"/proc/{pid}/task/{task}/stat").rsplit(b")", 1)[1].split()
            state = fields[0]
        except IndexError:
            continue
        if state in (b"Z", b"X"):
            continue
        if not exiting_is_gone:
            return True
        try:
            if not int(fields[6]) & _PF_EXITING:
                return True
        except (IndexError, ValueError):
            return True
    return False


def proc_stat(pid: int) -> tuple[str, int] | None:
    """(state letter, parent pid) of a process; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[1])
    except (OSError, IndexError, ValueError):
        return None


def sysv_ids(kind: str) -> list[int]:
    rows = read_proc(f"/proc/sysvipc/{kind}").splitlines()[1:]
    return [int(row.split()[1]) for row in rows if len(row.split()) > 1]


def children_of(pid: int) -> list[int]:
    try:  # the kernel's own list, when it keeps one
        found: list[int] = []
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(p) for p in handle.read().split())
        return found
    except OSError:
        pass
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def open_fds() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 256))


class Capped:
    """What a job's process writes on a pipe, kept up to `cap` bytes: the first ones
    (`tail=False`, with a count of the bytes dropped after them) or the last ones."""

    def __init__(self, cap: int, tail: bool = False) -> None:
        self.cap, self.tail = cap, tail
        self.data = bytearray()
        self.dropped = 0

    def drain(self, fd: int) -> bool:
        """Read what the non-blocking `fd` holds now; False once it is closed or broken."""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            if self.tail:
                self.data.extend(chunk)
                del self.data[:-self.cap]
                continue
            room = self.cap - len(self.data)
            if room > 0:
                self.data.extend(chunk[:room])
            self.dropped += max(0, len(chunk) - max(room, 0))
