"""Kernel state a job can leave behind that no wipe resets: W notices it and retires.

Files, processes, POSIX and SysV objects are removed between jobs (supervisor.py).
What remains is state the kernel keeps for the container as a whole and counts up:
a program can move it on purpose and a later program can read it back, so a hidden
test's input, or a count of earlier gradings, could cross from one job to the next.

    the PID counter             forks and threads advance it; a later process reads its own PID
    the tmpfs inode counters    each file made in /tmp or /dev/shm takes the next inode number
    the SysV IPC id counters    each object made advances the sequence in the next id
    network statistics          the namespace's own counters (/proc/net/dev, snmp, snmp6,
                                netstat, dev_snmp6/*): a packet on `lo`, and errors that send
                                none (a datagram to an address with no route: OutNoRoutes)
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
from collections import Counter
from typing import Callable, NamedTuple

from .procs import ProcFiles, read_proc

Reader = Callable[[str], bytes]

_IPC_PRIVATE = 0
_IPC_RMID = 0
_PING_TABLES = ("icmp", "icmp6")
# Every statistics file of the container's network namespace, compared whole: a
# program moves some counter of theirs with no socket left and no packet sent (each
# datagram sent to an address with no route adds one to `Ip: OutNoRoutes`), and any
# counter it can move carries a number to the next job. Not here: the namespace's
# socket tables (checked by kernel_sockets: they list the worker's own sockets too) and
# files that count for the whole host (softnet_stat, stat/rt_cache, protocols' memory),
# which move whatever the container does.
_NET_STATISTICS = ("/proc/net/dev", "/proc/net/snmp", "/proc/net/snmp6", "/proc/net/netstat")
_NET_DEVICE_STATISTICS = "/proc/net/dev_snmp6"  # one file per interface


def _read(path: str, read: Reader = read_proc) -> str:
    return read(path).decode("ascii", errors="replace")


def last_pid(read: Reader = read_proc) -> int:
    """The last PID the container's PID namespace handed out."""
    return int(_read("/proc/sys/kernel/ns_last_pid", read) or -1)


def net_statistics_files() -> tuple[str, ...]:
    """The network namespace's statistics files (the interfaces are the container's
    from its start: under --network none, only `lo`)."""
    try:
        devices = sorted(os.listdir(_NET_DEVICE_STATISTICS))
    except OSError:
        devices = []
    return _NET_STATISTICS + tuple(f"{_NET_DEVICE_STATISTICS}/{name}" for name in devices)


def net_statistics(files: tuple[str, ...], read: Reader = read_proc) -> tuple[bytes, ...]:
    """Each file's bytes, to compare whole (cheaper than parsing, and no counter missed)."""
    return tuple(read(path) for path in files)


def _named_counters(data: bytes) -> dict[str, str]:
    """The counters of a statistics file by name, in any of its layouts: a line of names
    over a line of values with the same prefix (snmp, netstat), `name value` lines
    (snmp6), or an interface and its numbers (dev)."""
    lines = [line.split() for line in data.decode("ascii", errors="replace").splitlines()]
    named: dict[str, str] = {}
    index = 0
    while index < len(lines):
        words = lines[index]
        following = lines[index + 1] if index + 1 < len(lines) else []
        if words and following[:1] == words[:1] and len(following) == len(words):
            named.update((f"{words[0]} {name}", value) for name, value in zip(words[1:], following[1:]))
            index += 2
            continue
        if words:
            named[words[0]] = " ".join(words[1:])
        index += 1
    return named


def first_difference(files: tuple[str, ...], old: tuple[bytes, ...], new: tuple[bytes, ...]) -> str:
    """Which file and counter differ first between two snapshots (for the retirement's
    reason: names only, never the values a program chose)."""
    for path, before, after in zip(files, old, new):
        if before != after:
            counters_before, counters_after = _named_counters(before), _named_counters(after)
            moved = [name for name in counters_after if counters_before.get(name) != counters_after[name]]
            return f"{path}: {moved[0] if moved else 'its layout'}"
    return ""


def named_unix_sockets(read: Reader = read_proc) -> Counter:
    """The namespace's named and abstract unix sockets: how many bear each path."""
    found: Counter = Counter()
    for row in _read("/proc/net/unix", read).splitlines()[1:]:
        fields = row.split()
        if len(fields) >= 8:  # the eighth field is the path ("@name" when abstract)
            found[fields[7]] += 1
    return found


def kernel_sockets(read: Reader = read_proc, own: Counter | None = None) -> list[str]:
    """Sockets of the network namespace that no worker process holds: any inet socket
    in any state (TIME_WAIT included; the namespace's own counts in sockstat, since
    listing /proc/net/tcp walks the host's whole connection table, ~100 ms), any ping
    socket, and any named or abstract unix socket beyond `own` (how many bear each
    path). W's own socket pairs are unnamed, and W holds no inet socket; the one named
    socket of the namespace that is not a job's is the host's end of W's channel
    (docker_backend.py): the end a listener accepts is made in the connecting side's
    namespace and bears the listener's path, the host's, in a folder whose random name
    no job can learn (it cannot read /proc/net/unix). Counted by path: that end's inode
    is given only when the host accepts, which may come after W looked."""
    found = []
    for table in ("sockstat", "sockstat6"):
        for line in _read(f"/proc/net/{table}", read).splitlines():
            protocol, _, rest = line.partition(":")
            fields = rest.split()
            counts = dict(zip(fields[::2], fields[1::2]))
            for key in ("inuse", "tw"):
                if protocol.strip() != "sockets" and counts.get(key, "0") != "0":
                    found.append(f"{protocol.strip()} {key} {counts[key]}")
    for table in _PING_TABLES:
        rows = _read(f"/proc/net/{table}", read).splitlines()[1:]
        found += [f"{table}: {' '.join(row.split()[1:4])}" for row in rows if row.strip()]
    found += [f"unix: {path[:40]}" for path in sorted(named_unix_sockets(read) - (own or Counter()))]
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


class Allowance(NamedTuple):
    """What a job may move without retiring its worker: at most `pids` PIDs beyond the
    worker's forks (None: any number: a compile worker's jobs, trusted compilers), and
    exactly `files` inodes in the scratch filesystem (None: any number)."""

    pids: int | None = 0
    files: int | None = 0


class Traces:
    """The container's counters, as W's own work alone moves them."""

    def __init__(self, scratch: str, forks: int) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._read = ProcFiles().read
        first = sysv_probe(self._libc)
        self.sysv = sysv_probe(self._libc)
        self.sysv_step = tuple(b - a for a, b in zip(first, self.sysv))  # one object's worth
        if min(first + self.sysv) < 0:
            self.sysv_step = None  # no SysV IPC here: nothing to count
        self.scratch_inode = os.stat(scratch).st_ino
        self.shm_inode = inode_probe("/dev/shm") if os.path.isdir("/dev/shm") else None
        self.net_files = net_statistics_files()
        self.net = net_statistics(self.net_files, self._read)  # W itself does no networking
        self.pid, self.forks = last_pid(self._read), forks
        self.own_sockets: Counter = Counter()

    def channel_connected(self) -> None:
        """W's channel to the host is connected (before any job): the named socket it made
        in the namespace, the host's end, is W's own from now on."""
        self.own_sockets = named_unix_sockets(self._read)

    def only_forks(self, forks: int) -> bool:
        """Whether every PID handed out since the last clean-up went to the worker's own
        forks (`forks`: asked of the zygote so far, every one of them announced): then no
        job made a process or a thread since. PIDs are handed out in order and no job can
        choose one (`ns_last_pid` and `clone3`'s `set_tid` need privileges it has not)."""
        return last_pid(self._read) - self.pid == forks - self.forks

    def moved(self, scratch: str, forks: int, allowance: "Allowance | None" = None) -> str:
        """What a job moved, or ""; call after the clean-up, with the number of forks W
        has asked the zygote for so far (all of them done) and the new scratch folder.
        `allowance`: what the job's own runtime moves by itself (a compiled program's
        file, a runtime's threads; README, "Compiled languages"); None: nothing."""
        allowance = allowance or Allowance()
        problem = ""
        pid = last_pid(self._read)
        beyond = pid - self.pid - (forks - self.forks)
        if beyond < 0 or (allowance.pids is not None and beyond > allowance.pids):
            problem = f"the PID counter moved by {beyond} beyond the worker's forks"
        self.pid, self.forks = pid, forks
        inode = os.stat(scratch).st_ino
        made = inode - self.scratch_inode - 1
        if not problem and made != allowance.files and allowance.files is not None:
            problem = f"{made} inode(s) were made in the scratch filesystem"
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
        net = net_statistics(self.net_files, self._read)
        if not problem and net != self.net:
            problem = f"network counters moved ({first_difference(self.net_files, self.net, net)})"
        self.net = net
        if not problem and (left := kernel_sockets(self._read, self.own_sockets)):
            problem = f"sockets outlived the job's processes ({left[0]})"
        return problem
