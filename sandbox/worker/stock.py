"""The descriptors W gives each job (a socket between P and T, three pipes), made for
every job of the container before the first job runs.

A pipe's or socket's inode number comes from one counter for the whole host (the
kernel's get_next_ino, in batches of 1024 per CPU), and a job reads the number of every
descriptor it holds (`fstat`). Were W to make a job's pipes when the job comes, their
numbers would show how many numbers were taken on W's CPU since the last job's, which
that job's program could sway (a fork makes W list /proc, whose lookups take numbers:
measured, the move from one job's numbers to the next was 18-23 when the first program
did nothing, 225-1297 when it forked once). Made all at once when W starts, a job's
numbers say only which job of the container it is (as its PIDs do) and what the host
did before the container started. A job can neither make pipes or sockets nor look up
anything under /proc (confine.py, namespace.py), so it has no other way to read that
counter, and nothing an earlier program did reaches it through them.

On a host (the process backend) nothing is made ahead: the process backend isolates
nothing anyway, and its fd limit may be small.
"""
from __future__ import annotations

import fcntl
import os
import resource
import socket
from typing import NamedTuple

KITS_DEFAULT = 500  # SandboxConfig.jobs_per_container's default: the host says its own
FDS_PER_KIT = 8
# The stock waits above the descriptors W uses, and a kit comes down to low numbers when
# its job takes it: W watches a job's pipes with select(), which takes no descriptor
# past 1023 (made in place, the kits of later jobs had numbers past it, and each worker
# failed after ~125 jobs).
STOCK_FD_BASE = 1024
# The kernel counts every pipe's buffer against its user, host-wide: past
# fs.pipe-user-pages-soft (16384 pages) each new pipe of that user gets 2 pages. Full
# size, 500 kits of three pipes would pass it alone (24,000 pages), and every later pipe
# of uid 65534 on the host, in this container or another, would be small. So a pipe
# waits in the stock at one page, and gets its 16 when its job takes it.
PIPE_WAITING, PIPE_IN_USE = 4096, 65536


def stock_base() -> int:
    """Where the stock's descriptors begin: 1024, or half the limit when it is lower."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return STOCK_FD_BASE if soft == resource.RLIM_INFINITY else min(STOCK_FD_BASE, soft // 2)


def kits_that_fit(asked: int, spares: int = 0) -> int:
    """At most `asked`, and no more than fit between the stock's base and the
    descriptor limit: past them W declines the next job and the host starts another
    container."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return asked
    return max(1, min(asked, (soft - stock_base()) // (FDS_PER_KIT + 2 * spares)))


class Kit(NamedTuple):
    """One job's descriptors, W's and the job's ends together."""

    sockets: tuple[socket.socket, socket.socket]  # a function job's P <-> T channel
    pipes: tuple[tuple[int, int], ...]  # three (read end, write end)
    # Pipes a runtime that must make some (node: one per event loop) is handed instead
    # (`--spare-pipes N`: the JavaScript image's workers; image/setup/harness_pipes.c).
    spares: tuple[tuple[int, int], ...] = ()

    def close_spares(self) -> None:
        for read_end, write_end in self.spares:
            os.close(read_end)
            os.close(write_end)

    def close_sockets(self) -> None:
        for end in self.sockets:
            end.close()


def _resize(pipe: tuple[int, int], size: int) -> None:
    try:
        fcntl.fcntl(pipe[0], fcntl.F_SETPIPE_SZ, size)
    except OSError:  # EPERM past the user's limit: the pipe keeps its size, and works
        pass


def _moved(fd: int, base: int | None) -> int:
    """The same open file under another number: the lowest free one at or above `base`
    (None: the lowest free one); the old number is closed. Close-on-exec, as made."""
    new = os.dup(fd) if base is None else fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, base)
    os.close(fd)
    return new


def _kit_moved(kit: Kit, base: int | None) -> Kit:
    sockets = tuple(socket.socket(fileno=_moved(end.detach(), base)) for end in kit.sockets)
    pipes = tuple((_moved(read_end, base), _moved(write_end, base)) for read_end, write_end in kit.pipes)
    spares = tuple((_moved(read_end, base), _moved(write_end, base)) for read_end, write_end in kit.spares)
    return Kit(sockets, pipes, spares)


def make_kit(waiting_at: int | None = None, spares: int = 0) -> Kit:
    """A kit; `waiting_at`: for the stock, its pipes at one page and its descriptors
    at or above that number; `spares`: that many more pipes."""
    kit = Kit(socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM), (os.pipe(), os.pipe(), os.pipe()),
              tuple(os.pipe() for _ in range(spares)))
    if waiting_at is None:
        return kit
    for pipe in kit.pipes + kit.spares:
        _resize(pipe, PIPE_WAITING)
    return _kit_moved(kit, waiting_at)


class Stock:
    """`count` kits made now, handed out in order; None: each made when taken."""

    def __init__(self, count: int | None, spares: int = 0) -> None:
        self.ahead = count is not None
        self.spares = spares
        base = stock_base()
        self._kits = [make_kit(waiting_at=base, spares=spares) for _ in range(kits_that_fit(count, spares) if count else 0)]
        self._kits.reverse()  # taken from the end: the first made goes first

    def take(self) -> Kit | None:
        """The next job's kit; None when every kit made ahead is used (the container
        has run its jobs: the host starts another)."""
        if not self.ahead:
            return make_kit(spares=self.spares)
        if not self._kits:
            return None
        kit = _kit_moved(self._kits.pop(), None)  # down to W's own numbers (select)
        for pipe in kit.pipes:
            _resize(pipe, PIPE_IN_USE)
        return kit

    def left(self) -> int | None:
        return len(self._kits) if self.ahead else None
