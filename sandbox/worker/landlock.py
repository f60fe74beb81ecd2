"""A Landlock ruleset every process of a job runs under (in a container only): it may
read and execute only the Python installation and the libraries it uses, write only
the scratch tmpfs (/tmp) and /dev/shm, and read and write the devices of /dev (null,
zero, urandom, ...). Every regular file it may read is read once by a warm-up container
before the pool runs a job (`warm.py`), so every page a job can read is already in the
host's page cache: a job can neither load a cold page (a bit a later job, in any
container, would read back by timing a read) nor evict one (`confine.py` refuses
fadvise and the madvise calls that page out; the pages are charged to the warm-up
container's memory cgroup, which no job's memory pressure reclaims).

/proc and /sys are not allowed at all: no file or folder beneath them opens (EACCES),
so no job reads a counter the kernel keeps there. The scheduler's virtual runtime of
the container's cgroup (`se.vruntime` in /proc/self/sched: it grows with all the CPU
time the container used, so a job that burns CPU until it reads a chosen value carried
~5 bits to the next job) is the one that motivated it; the statistics of the network
namespace, the process table and every other process's state go with it. What is left
of /proc to a job is what Landlock does not check: `stat` and `readlink` (a link such as
/proc/self/fd/<n> or /dev/stdin opens the object it names, checked there: a pipe or
socket opens, as objects of internal filesystems always do). W and the zygote are not
under the ruleset and keep reading /proc.

`readable_paths()` is the one list both use: the allow list here, the walk there.

The zygote builds the ruleset once (`build_ruleset`, 1.5-5.6 ms: an O_PATH open per path)
and then installs confine.py's filter, which sets no_new_privs for it and every child;
each blank child only calls `restrict` (one system call, ~0.04 ms) while it waits for
its job. So each job runs in its own Landlock domain, nested below the zygote (which
has none): Landlock forbids a process to ptrace one outside its domain.
"""
from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys

from .toolchain_paths import toolchain_folders

# The same numbers on x86_64 and aarch64 (the generic table).
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_MAKE_AND_REMOVE = sum(1 << bit for bit in range(4, 13))  # remove/make dir, file, char, sock...
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2 (links and renames across folders), ABI 3
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # all a rule on a file may name
# ABI 6: a process under the ruleset may signal, and connect to abstract unix sockets of,
# only processes of its own domain (what it forks). Each blank child makes its own
# domain, so a job's processes cannot signal W, the zygote, the blank children kept for
# the next job (killing them made the zygote fork more: W's work, set by a program) or
# each other (P and T are two domains).
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

# Folders whose files are not in the page cache (/dev: devices) or are the job's own
# (the tmpfs mounts), with what a job may do there. /dev/shm is under /dev: its own
# rule adds the rights to make and remove files.
_READ = READ_FILE | READ_DIR
_PSEUDO = {"/dev": _READ | WRITE_FILE | TRUNCATE}
_SCRATCH = ("/tmp", "/dev/shm")
# Never allowed, nor anything beneath them: /proc and /sys are the kernel's counters
# (the scheduler's vruntime of the container in /proc/self/sched, the host's and the
# namespace's statistics), which a job could move and a later one read back.
_CLOSED = ("/proc", "/sys")
# Single files outside the installation that the C library or Python read on demand:
# the dynamic loader's cache (ctypes.CDLL by name), the local time zone, the user and
# group names (pwd, grp, getpass), the name service switch that says where they are.
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf")
_ZONEINFO = ("/usr/share/zoneinfo", "/usr/lib/zoneinfo", "/usr/share/lib/zoneinfo")  # CPython's default TZPATH

_LIBC = ctypes.CDLL(None, use_errno=True)
_SYSCALL = _LIBC.syscall
_SYSCALL.restype = ctypes.c_long
# A second handle on syscall(), typed for restrict_self alone: a child calls it with
# plain ints, no argument objects made per call (~0.1 ms less of a child's first call).
_RESTRICT = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_long, ctypes.c_int, ctypes.c_uint, use_errno=True)(
    ("syscall", _LIBC))


def _call(number: int, *args: int | ctypes.c_char_p | None) -> int:
    result = _SYSCALL(ctypes.c_long(number), *[ctypes.c_long(arg) if isinstance(arg, int) else arg for arg in args])
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"landlock: system call {number} failed: {os.strerror(code)}")
    return result


def abi() -> int:
    """The kernel's Landlock ABI version; 0 when it has none (or a filter refuses it)."""
    try:
        return _call(_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)
    except OSError:
        return 0


def _mapped_folders() -> set[str]:
    """The folders of the shared libraries and extension modules this process maps
    (the interpreter's own, libc, libffi, ...: whatever distribution laid them out)."""
    folders = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)  # address, mode, offset, device, inode[, path]
            path = fields[5].strip() if len(fields) == 6 else ""
            if path.startswith("/") and not path.endswith(" (deleted)"):
                folders.add(os.path.dirname(path))
    return folders


def _covering(paths: set[str]) -> list[str]:
    """The paths, resolved, without any that lies beneath another (a rule covers its subtree)."""
    resolved = sorted({os.path.realpath(path) for path in paths if os.path.exists(path)})
    kept: list[str] = []
    for path in resolved:
        if not any(path == top or path.startswith(top.rstrip("/") + "/") for top in kept):
            kept.append(path)
    return kept


def readable_paths() -> list[str]:
    """Every folder and file a job may read, resolved and without overlaps: the Python
    installation (sys.path: the stdlib, lib-dynload, site- and dist-packages), the
    folders of the libraries mapped here, the locales, time zones and executables, the
    image's toolchain folders (toolchain_paths.py), and a few files of /etc. Called after the worker's imports (in the zygote, and in the
    warm-up container after the same imports), so the mapped folders agree."""
    paths = {entry for entry in sys.path if os.path.isdir(entry)}
    paths |= {os.path.dirname(os.__file__), os.path.dirname(os.path.realpath(sys.executable))}
    paths |= _mapped_folders()
    paths |= {"/usr/lib/locale", "/usr/local/bin", "/usr/bin", "/bin", *_ZONEINFO, *_SYSTEM_FILES}
    paths |= toolchain_folders()  # an image of another language: its compiler and runtime
    not_cached = (*_PSEUDO, *_SCRATCH, *_CLOSED)
    return [path for path in _covering(paths)
            if not any(path == top or path.startswith(top + "/") for top in not_cached)]


def _add_rule(ruleset: int, path: str, access: int) -> None:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        if not os.path.isdir(path):
            access &= _FILE_RIGHTS
        attr = ctypes.create_string_buffer(struct.pack("=Qi", access, fd), 12)  # packed struct
        _call(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.addressof(attr), 0)
    except OSError as exc:
        raise OSError(exc.errno, f"landlock: cannot allow {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


def build_ruleset(paths: list[str] | None = None) -> int:
    """The ruleset's descriptor (close-on-exec), rules added (reading `paths`, by
    default `readable_paths()`); raises OSError, naming what failed, when the kernel has
    no Landlock or refuses a rule."""
    version = abi()
    if version < 1:
        raise OSError(errno.ENOSYS, "landlock: the kernel has no Landlock (or a seccomp filter refuses it)")
    handled = EXECUTE | WRITE_FILE | READ_FILE | READ_DIR | _MAKE_AND_REMOVE
    handled |= (REFER if version >= 2 else 0) | (TRUNCATE if version >= 3 else 0)
    if version >= 6:  # handled_access_fs, handled_access_net (none), scoped
        packed = struct.pack("=QQQ", handled, 0, SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    else:
        packed = struct.pack("=Q", handled)  # handled_access_fs only
    attr = ctypes.create_string_buffer(packed, len(packed))
    ruleset = _call(_CREATE_RULESET, ctypes.addressof(attr), len(packed), 0)
    try:
        for path in readable_paths() if paths is None else paths:
            _add_rule(ruleset, path, (READ_FILE | READ_DIR | EXECUTE) & handled)
        for path, access in _PSEUDO.items():
            if os.path.isdir(path):
                _add_rule(ruleset, path, access & handled)
        for path in _SCRATCH:
            if os.path.isdir(path):
                _add_rule(ruleset, path, handled)  # tmpfs: its pages are the job's, wiped after it
    except OSError:
        os.close(ruleset)
        raise
    return ruleset


def restrict(ruleset: int) -> None:
    """Put this process (and every process it will make) under the ruleset; needs
    no_new_privs (confine.py sets it). Raises OSError: the job must not run without it."""
    if _RESTRICT(_RESTRICT_SELF, ruleset, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"landlock: restrict_self({ruleset}) failed: {os.strerror(code)}")
