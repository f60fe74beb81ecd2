"""Kernel state a job can leave behind that no wipe resets: W notices it and retires.

Files, processes, POSIX and SysV objects are removed between jobs (supervisor.py).
What remains is state the kernel keeps for the container as a whole and counts up:
a program can move it on purpose and a later program can read it back, so a hidden
test's input, or a count of earlier gradings, could cross from one job to the next.

    the PID counter             forks and threads advance it; a later process reads its own PID
    the tmpfs inode counters    each file made in /tmp or /dev/shm takes the next inode number
    the SysV IPC id counters    each object made advances the sequence in the next id
    loopback packet counters    /proc/net/dev, netlink: every packet on `lo` is counted
    sockets left in the kernel  TCP TIME_WAIT and other states outlive their process

`Traces` takes a baseline when the worker starts and, after each job's clean-up, says
what moved beyond W's own doing (its forks, its one new scratch folder, its probes).
Any movement retires the worker: the next job runs on a fresh container, whose state
does not depend on what earlier programs did. Only in a container (PID 1): on a host
these counters are the machine's, moved by everything else that runs there.
"""
from __future__ import annotations

import ctypes
import os

from .procs import read_proc

_IPC_PRIVATE = 0
_IPC_RMID = 0
_PING_TABLES = ("icmp", "icmp6")


def _read(path: str) -> str:
    return read_proc(path).decode("ascii", errors="replace")


def last_pid() -> int:
    """The last PID the container's PID namespace handed out."""
    return int(_read("/proc/sys/kernel/ns_last_pid") or -1)


def packet_counters() -> tuple:
    """Every interface's byte and packet counters (only `lo` under --network none)."""
    return tuple(line.split() for line in _read("/proc/net/dev").splitlines()[2:])


def kernel_sockets() -> list[str]:
    """Sockets of the network namespace that no worker process holds: any inet socket
    in any state (TIME_WAIT included; the namespace's own counts in sockstat, since
    listing /proc/net/tcp walks the host's whole connection table, ~100 ms), any ping
    socket, and any named or abstract unix socket. W's own socket pairs are unnamed,
    and W holds no inet socket."""
    found = []
    for table in ("sockstat", "sockstat6"):
        for line in _read(f"/proc/net/{table}").splitlines():
            protocol, _, rest = line.partition(":")
            fields = rest.split()
            counts = dict(zip(fields[::2], fields[1::2]))
            for key in ("inuse", "tw"):
                if protocol.strip() != "sockets" and counts.get(key, "0") != "0":
                    found.append(f"{protocol.strip()} {key} {counts[key]}")
    for table in _PING_TABLES:
        rows = _read(f"/proc/net/{table}").splitlines()[1:]
        found += [f"{table}: {' '.join(row.split()[1:4])}" for row in rows if row.strip()]
    for row in _read("/proc/net/unix").splitlines()[1:]:
        fields = row.split()
        if len(fields) >= 8:  # the eighth field is the path ("@name" when abstract)
            found.append(f"unix: {fields[7][:40]}")
    return found


def inode_probe(directory: str) -> int:
    """The inode number a new file in `directory` gets (the file is removed again)."""
    path = os.path.join(directory, ".probe")
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    try:
        return os.fstat(fd).st_ino
    finally:
        os.close(fd)
        os.unlink(path)


def _ordinal(ident: int) -> int:
    """How many objects of its kind were made before the one with this id: the kernel
    hands out ids as `seq * 32768 + index`, the index cycling through 64 slots and the
    sequence moving on at each turn (measured on Linux 6.18; if another kernel counts
    otherwise, the check below only retires workers more often)."""
    return (ident >> 15) * 64 + (ident & 0x7FFF)


def sysv_probe(libc) -> tuple[int, int, int]:
    """The ordinals of a new SysV shared memory segment, message queue and semaphore
    set (each removed again): they count every object of the kind ever made."""
    shm = libc.shmget(_IPC_PRIVATE, 1, 0o600)
    if shm >= 0:
        libc.shmctl(shm, _IPC_RMID, None)
    msg = libc.msgget(_IPC_PRIVATE, 0o600)
    if msg >= 0:
        libc.msgctl(msg, _IPC_RMID, None)
    sem = libc.semget(_IPC_PRIVATE, 1, 0o600)
    if sem >= 0:
        libc.semctl(sem, 0, _IPC_RMID)
    return tuple(_ordinal(ident) if ident >= 0 else -1 for ident in (shm, msg, sem))


class Traces:
    """The container's counters, as W's own work alone moves them."""

    def __init__(self, scratch: str, forks: int) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        first = sysv_probe(self._libc)
        self.sysv = sysv_probe(self._libc)
        self.sysv_step = tuple(b - a for a, b in zip(first, self.sysv))  # one object's worth
        if min(first + self.sysv) < 0:
            self.sysv_step = None  # no SysV IPC here: nothing to count
        self.scratch_inode = os.stat(scratch).st_ino
        self.shm_inode = inode_probe("/dev/shm") if os.path.isdir("/dev/shm") else None
        self.packets = packet_counters()
        self.pid, self.forks = last_pid(), forks

    def moved(self, scratch: str, forks: int) -> str:
        """What a job moved, or ""; call after the clean-up, with the number of forks W
        has asked the zygote for so far (all of them done) and the new scratch folder."""
        problem = ""
        pid = last_pid()
        if pid - self.pid != forks - self.forks:
            problem = f"the PID counter moved by {pid - self.pid - (forks - self.forks)} beyond the worker's forks"
        self.pid, self.forks = pid, forks
        inode = os.stat(scratch).st_ino
        if not problem and inode != self.scratch_inode + 1:
            problem = f"{inode - self.scratch_inode - 1} inode(s) were made in the scratch filesystem"
        self.scratch_inode = inode
        if self.shm_inode is not None:
            shm_inode = inode_probe("/dev/shm")
            if not problem and shm_inode != self.shm_inode + 1:
                problem = f"{shm_inode - self.shm_inode - 1} inode(s) were made in /dev/shm"
            self.shm_inode = shm_inode
        if self.sysv_step is not None:
            sysv = sysv_probe(self._libc)
            if not problem and any(new - old != step for old, new, step in zip(self.sysv, sysv, self.sysv_step)):
                problem = "SysV IPC objects were made"
            self.sysv = sysv
        packets = packet_counters()
        if not problem and packets != self.packets:
            problem = "packets were sent on the loopback interface"
        self.packets = packets
        if not problem and (left := kernel_sockets()):
            problem = f"sockets outlived the job's processes ({left[0]})"
        return problem
