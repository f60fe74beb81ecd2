"""The zygote's own mount namespace, in which /proc and /sys are covered by empty,
read-only folders: no process of a job can reach the kernel's views by any path.

Landlock (landlock.py) already refuses every open beneath /proc and /sys. What it does
not check is a lookup: `stat` or `readlink` of an entry. A lookup of an entry of
/proc/<pid>/ that the kernel has not cached makes an inode, numbered by the counter the
whole host shares for pipes, sockets and /proc's process entries (get_next_ino), and
the entry's `st_ino` shows the number: a program could write a secret into that counter
by looking up entries and a later job, in any container, read it back. Here the
zygote, before it builds the ruleset and the filter, makes a user namespace (its own
user id mapped to itself, never to 0) and a mount namespace, and mounts an empty
read-only tmpfs over /proc and over /sys. Every blank child it forks, and so every
process of every job, lives in that namespace. /dev/fd, /dev/stdin and the like are
links into /proc: they name nothing there either.

The zygote then gives up every capability it held in its user namespace (the effective,
permitted and inheritable sets, the bounding set, the ambient set): a job cannot
unmount the covers (EPERM), and confine.py refuses it unshare and setns, so it cannot
make a namespace of its own in which it would hold capabilities. W stays in the
container's namespaces and reads /proc as before.

In Docker this needs unshare(CLONE_NEWUSER | CLONE_NEWNS), which Docker's default
seccomp profile refuses; the harness runs its containers with that profile plus this
one call (docker_backend.seccomp_profile). The warm-up container tries it before the
pool starts, and the host refuses to start without it (as without Landlock).
"""
from __future__ import annotations

import ctypes
import os

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
COVERED = ("/proc", "/sys")
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
_MS_REC, _MS_PRIVATE = 0x4000, 1 << 18
# The zygote's three calls, by their flags: the host's seccomp profile allows exactly
# these (docker_backend.seccomp_profile imports them from here).
UNSHARE_FLAGS = CLONE_NEWUSER | CLONE_NEWNS
PRIVATE_FLAGS = _MS_REC | _MS_PRIVATE  # mount: nothing propagates either way
COVER_FLAGS = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC  # mount: the empty tmpfs over each
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_PR_GET_DUMPABLE, _PR_SET_DUMPABLE = 3, 4
_CAP_VERSION_3 = 0x20080522
_CAP_MAX = 63  # bounding-set drops past the kernel's last capability fail with EINVAL

_LIBC = ctypes.CDLL(None, use_errno=True)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"namespace: {what} failed: {os.strerror(code)}")


def _write(path: str, text: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise OSError(exc.errno, f"namespace: cannot open {path}: {exc.strerror}") from None
    try:
        os.write(fd, text.encode())
    except OSError as exc:
        raise OSError(exc.errno, f"namespace: cannot write {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


def drop_capabilities() -> None:
    """No capability left in any set, nor any to regain (the bounding set is emptied
    first: that needs CAP_SETPCAP, which the process still holds then)."""
    _check(_LIBC.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clearing the ambient set")
    for capability in range(_CAP_MAX + 1):
        if _LIBC.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            break  # EINVAL: past the kernel's last capability
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_LIBC.capset(ctypes.byref(header), data), "capset (dropping every capability)")


def cover_kernel_views() -> None:
    """Enter a user and mount namespace of this process's own and cover /proc and /sys
    there; then hold no capability. Raises OSError, naming the step: no job may run
    where these views are reachable."""
    uid, gid = os.getuid(), os.getgid()
    _check(_LIBC.unshare(UNSHARE_FLAGS), "unshare(CLONE_NEWUSER | CLONE_NEWNS)")
    # A non-dumpable process's /proc/self files belong to root: the zygote (non-dumpable
    # from W, so that no job opens its memory) writes its maps as a dumpable one, before
    # any child exists, and is non-dumpable again before it forks the first.
    dumpable = _LIBC.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)
    _check(_LIBC.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0), "prctl(PR_SET_DUMPABLE, 1)")
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    finally:
        _check(_LIBC.prctl(_PR_SET_DUMPABLE, max(dumpable, 0), 0, 0, 0), "restoring PR_SET_DUMPABLE")
    # Nothing mounted here propagates back to the container's namespace, nor from it.
    _check(_LIBC.mount(b"none", b"/", None, PRIVATE_FLAGS, None), "making / private")
    for path in COVERED:
        _check(_LIBC.mount(b"none", path.encode(), b"tmpfs", COVER_FLAGS, b"size=4k,nr_inodes=1,mode=0555"),
               f"covering {path}")
    drop_capabilities()


def covered() -> bool:
    """Whether this process sees /proc and /sys covered (both empty folders)."""
    try:
        return all(os.listdir(path) == [] for path in COVERED)
    except OSError:
        return False
