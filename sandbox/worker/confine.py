"""A seccomp filter every process of a job runs under (in a container only): it refuses
the few system calls that let a program write a number into a counter the whole host
shares, where no check of the worker's can see it and a later job (in any container)
can read it back.

    socket(), socketpair(), pipe(),      every pipe and socket is an inode numbered by the
      pipe2()                            kernel's one counter for the host (get_next_ino:
                                         batches of 1024 per CPU); a sender makes pipes
                                         until the number is its secret, a receiver reads
                                         the number of a new pipe (fstat): ~10 bits a job.
                                         A job keeps the descriptors W gave it (made by W,
                                         whose work no job sets); with /proc and /sys
                                         covered (namespace.py) no lookup takes a number
    mq_open, io_setup, userfaultfd,      each makes an inode numbered by that same counter
      memfd_secret                       (a message queue, an AIO ring, an anonymous inode)
    unshare, setns, mount, umount2       the zygote's namespaces are the jobs' (namespace.py
                                         covers /proc and /sys in them); a job's own would
                                         give it the rights to uncover them
    io_uring_setup, _enter, _register    io_uring makes sockets without socket()
    memfd_create, shmget, mmap of        each makes an inode of the kernel's internal
      shared anonymous memory            tmpfs, numbered by one counter for the host
    pidfd_open, clone(CLONE_PIDFD),      a pidfd's inode number counts every process
      SO_PEERPIDFD, SO_PASSPIDFD         and thread the host ever made
    SO_COOKIE, SO_NETNS_COOKIE           a socket's cookie is the next number of one
                                         counter for the host (a unix socket's too)
    sysinfo                              the host's load, free memory and process count
                                         (what the masked /proc/loadavg and meminfo say)
    clock_gettime, clock_getres,         another process's CPU-time clock: any process may
      clock_nanosleep, timer_create      read the worker's, whose work a program sets (by
      on another process's CPU clock     its output), so a later job could read it back
    setsid                               each new session takes the next number of
                                         the host's scheduler autogroups
    fadvise64 (posix_fadvise),           evict (DONTNEED) or load pages of a file: the
      madvise(MADV_COLD, MADV_PAGEOUT),  page cache is the host's, and a later job times
      process_madvise, cachestat         reads to see which pages are in it (landlock.py
                                         keeps every page a job can read resident)

Docker's own profile stays under it (filters stack; the stricter answer wins): Docker's
default, plus unshare(CLONE_NEWUSER | CLONE_NEWNS) for the zygote alone (docker_backend's
`seccomp_profile`), which this filter refuses to every job. The
zygote installs it once, after it builds the Landlock ruleset and before its first
fork: every blank child inherits it with the fork (installed in each child, it cost
~0.15 ms of CPU a process). W stays unfiltered. Since the filter refuses setsid, a
blank child makes its own process group instead (`setpgid`: what W kills), and so a
job never makes a session: all of a container's jobs share the zygote's autogroup.
"""
from __future__ import annotations

import ctypes
import errno
import os
import struct

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS: A = 32-bit word of seccomp_data at k
_AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35
_JSET_K = 0x45  # jump if A & k
_RET_K = 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR, _ARCH = 0, 4


def _arg(index: int) -> int:
    return 16 + 8 * index  # the low 32 bits, little-endian (both architectures below)


# Per architecture: its audit number, then the calls by name.
_ARCHES = {
    "x86_64": (0xC000003E, dict(pipe=22, pipe2=293, socketpair=53, unshare=272, setns=308, mount=165, umount2=166, mq_open=240,
                                io_setup=206, userfaultfd=323, memfd_secret=447, socket=41, setsid=112,
                                sysinfo=99, clock_gettime=228, clock_getres=229,
                                clock_nanosleep=230, timer_create=222, memfd_create=319, shmget=29, mmap=9, pidfd_open=434,
                                clone=56, getsockopt=55, setsockopt=54, io_uring_setup=425,
                                io_uring_enter=426, io_uring_register=427, fadvise64=221, madvise=28,
                                process_madvise=440, cachestat=451)),
    "aarch64": (0xC00000B7, dict(pipe2=59, socketpair=199, unshare=97, setns=268, mount=40, umount2=39, mq_open=180,
                                 io_setup=0, userfaultfd=282, memfd_secret=447, socket=198, setsid=157,
                                 sysinfo=179, clock_gettime=113, clock_getres=114,
                                 clock_nanosleep=115, timer_create=107, memfd_create=279, shmget=194, mmap=222, pidfd_open=434,
                                 clone=220, getsockopt=209, setsockopt=208, io_uring_setup=425,
                                 io_uring_enter=426, io_uring_register=427, fadvise64=223, madvise=233,
                                 process_madvise=440, cachestat=451)),
}
_X32_BIT = 0x40000000  # x86_64's x32 numbering: another table of calls, refused whole
_CLONE_PIDFD = 0x1000
# CLONE_NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: a job's own
# namespace (Docker's profile refuses most; this filter holds without it too).
_CLONE_NAMESPACES = 0x00000080 | 0x00020000 | 0x7E000000
_SOL_SOCKET = 1
_SOCKET_OPTIONS = (57, 71, 76, 77)  # SO_COOKIE, SO_NETNS_COOKIE, SO_PASSPIDFD, SO_PEERPIDFD
# A negative clock id names a CPU-time clock (or a clock device) by PID: ~pid << 3 | kind.
# From -8 to -1 it is the caller's own process or thread (PID 0); below, another one's.
_OWN_CPU_CLOCKS, _NEGATIVE = 0xFFFFFFF8, 0x80000000
_MAP_SHARED, _MAP_TYPE, _MAP_ANONYMOUS = 0x01, 0x03, 0x20  # MAP_SHARED_VALIDATE is 0x03
_MADV_COLD, _MADV_PAGEOUT = 20, 21  # move a mapping's pages to be reclaimed first / now


def _ret(value: int) -> tuple:
    return (_RET_K, 0, 0, value)


def _refuse(code: int) -> tuple:
    return _ret(_ERRNO | code)


# What a compile worker's jobs may make besides (`--compile`: a container that runs only
# trusted compilers, never a program, and whose jobs see no test; README, "Compiled
# languages"): rustc, the go tool and the compiler drivers talk to their helpers over pipes.
COMPILE_ALLOWED = frozenset({"pipe", "pipe2", "socketpair"})


def program(machine: str, allowed: frozenset[str] = frozenset()) -> list[tuple]:
    """The filter as (code, jt, jf, k) instructions; KeyError for an unknown machine.
    `allowed`: names of refused calls to let through (COMPILE_ALLOWED, for compile jobs)."""
    audit_arch, nr = _ARCHES[machine]
    head = [(_LD_W_ABS, 0, 0, _ARCH), (_JEQ_K, 1, 0, audit_arch), _refuse(errno.ENOSYS),
            (_LD_W_ABS, 0, 0, _NR)]
    if machine == "x86_64":
        head += [(_JGE_K, 0, 1, _X32_BIT), _refuse(errno.ENOSYS)]
    refused = [("io_uring_setup", errno.ENOSYS), ("io_uring_enter", errno.ENOSYS),
               ("io_uring_register", errno.ENOSYS), ("pidfd_open", errno.ENOSYS),
               ("memfd_create", errno.EPERM), ("shmget", errno.EPERM), ("setsid", errno.EPERM),
               ("sysinfo", errno.ENOSYS), ("fadvise64", errno.EPERM), ("process_madvise", errno.EPERM),
               ("cachestat", errno.ENOSYS), ("socket", errno.EPERM), ("socketpair", errno.EPERM),
               ("pipe", errno.EPERM), ("pipe2", errno.EPERM), ("unshare", errno.EPERM), ("setns", errno.EPERM),
               ("mount", errno.EPERM), ("umount2", errno.EPERM),
               ("mq_open", errno.ENOSYS), ("io_setup", errno.ENOSYS), ("userfaultfd", errno.ENOSYS),
               ("memfd_secret", errno.ENOSYS)]
    for name, code in refused:
        if name in nr and name not in allowed:  # aarch64 has no pipe(): only pipe2
            head += [(_JEQ_K, 0, 1, nr[name]), _refuse(code)]
    # Calls whose arguments decide: each block ends in a return, so A need not be reloaded.
    blocks = {
        "clone": [(_LD_W_ABS, 0, 0, _arg(0)), (_JSET_K, 0, 1, _CLONE_PIDFD | _CLONE_NAMESPACES), _refuse(errno.EPERM),
                  _ret(_ALLOW)],
        "mmap": [(_LD_W_ABS, 0, 0, _arg(3)), (_AND_K, 0, 0, _MAP_TYPE | _MAP_ANONYMOUS),
                 (_JEQ_K, 2, 0, _MAP_SHARED | _MAP_ANONYMOUS), (_JEQ_K, 1, 0, _MAP_TYPE | _MAP_ANONYMOUS),
                 _ret(_ALLOW), _refuse(errno.EPERM)],
        "madvise": [(_LD_W_ABS, 0, 0, _arg(2)), (_JEQ_K, 1, 0, _MADV_COLD), (_JEQ_K, 0, 1, _MADV_PAGEOUT),
                    _refuse(errno.EPERM), _ret(_ALLOW)],
    }
    clock = [(_LD_W_ABS, 0, 0, _arg(0)), (_JGE_K, 2, 0, _OWN_CPU_CLOCKS), (_JGE_K, 0, 1, _NEGATIVE),
             _refuse(errno.EINVAL), _ret(_ALLOW)]
    for name in ("clock_gettime", "clock_getres", "clock_nanosleep", "timer_create"):
        blocks[name] = clock
    count = len(_SOCKET_OPTIONS)  # level SOL_SOCKET and one of these: refused, else allowed
    sockopt = [(_LD_W_ABS, 0, 0, _arg(1)), (_JEQ_K, 0, count + 2, _SOL_SOCKET), (_LD_W_ABS, 0, 0, _arg(2))]
    sockopt += [(_JEQ_K, count - index - 1, 0, option) for index, option in enumerate(_SOCKET_OPTIONS[:-1])]
    sockopt += [(_JEQ_K, 0, 1, _SOCKET_OPTIONS[-1]), _refuse(errno.ENOPROTOOPT), _ret(_ALLOW)]
    blocks["getsockopt"] = blocks["setsockopt"] = sockopt
    # The dispatch: one jump per call, to its block after the final ALLOW.
    names = list(blocks)
    dispatch_end = len(head) + len(names) + 1  # index of the first block
    starts, position = {}, dispatch_end
    for name in names:
        starts[name] = position
        position += len(blocks[name])
    body = []
    for index, name in enumerate(names):
        here = len(head) + index
        body.append((_JEQ_K, starts[name] - here - 1, 0, nr[name]))
    body.append(_ret(_ALLOW))
    for name in names:
        body += blocks[name]
    return head + body


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def compile_filter(machine: str, allowed: frozenset[str] = frozenset()) -> _SockFprog | None:
    """The filter as the kernel takes it (None for a machine it has no numbers for)."""
    try:
        instructions = program(machine, allowed)
    except KeyError:
        return None
    packed = b"".join(struct.pack("=HBBI", *instruction) for instruction in instructions)
    buffer = ctypes.create_string_buffer(packed, len(packed))
    compiled = _SockFprog(len(instructions), ctypes.cast(buffer, ctypes.c_void_p))
    compiled.buffer = buffer  # the instructions live as long as the structure
    return compiled


# Built once, when the worker starts, with the C function resolved and typed: a child
# only makes the two calls (building the filter there, and resolving prctl on first use,
# cost ~1.7 ms per process and copied pages).
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl
_PRCTL.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
_PRCTL.restype = ctypes.c_int
_FILTER = compile_filter(os.uname().machine)
_COMPILE_FILTER = compile_filter(os.uname().machine, COMPILE_ALLOWED)


def confine(for_compiling: bool = False) -> None:
    """Install the filter on this process (and every process it will make); raises
    OSError, naming the call, when it cannot: the job must not run without it.
    `for_compiling`: the compile worker's variant (COMPILE_ALLOWED let through)."""
    compiled = _COMPILE_FILTER if for_compiling else _FILTER
    if compiled is None:
        raise OSError(errno.ENOSYS, f"confine: no system call numbers for {os.uname().machine}")
    for option, value, argument in ((PR_SET_NO_NEW_PRIVS, 1, None),
                                    (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(compiled))):
        if _PRCTL(option, value, argument, 0, 0) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"confine: prctl({option}) failed: {os.strerror(code)}")
