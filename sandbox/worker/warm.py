"""The warm-up: `python3 -I -B <worker folder> --warm`, in a one-shot container of the
sandbox image that the host starts before the pool. It reads every regular file a job
may read (landlock.readable_paths(), after the worker's own imports, as the zygote
computes it), so each of their pages is in the host's page cache before any job runs,
charged to this container's memory cgroup (which no job can put under pressure), and
says on stdout, as one JSON line, what it read, how long it took and whether the
kernel lets the zygote build the ruleset and cover /proc and /sys (namespace.py).
"""
from __future__ import annotations

import json
import os
import stat
import sys
import time

from .landlock import abi, build_ruleset, readable_paths
from .namespace import cover_kernel_views, covered
from .supervisor import preload

_CHUNK = 1 << 20


def _files_under(path: str):
    """Every regular file at or beneath `path` (no symlink followed: a link's target
    is read where it lies, if it lies in the list)."""
    if not os.path.isdir(path):
        yield path
        return
    for folder, _, names in os.walk(path):
        for name in names:
            yield os.path.join(folder, name)


def _read_whole(path: str) -> int:
    """Bytes read from `path` if it is a regular file this user can read, else 0."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return 0  # unreadable to this user: unreadable to every job too (the same uid)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return 0
        total = 0
        while chunk := os.read(fd, _CHUNK):
            total += len(chunk)
        return total
    finally:
        os.close(fd)


def _namespace_problem() -> str:
    """Why the zygote could not cover /proc and /sys for its jobs (namespace.py), tried
    in a forked child of this container (same image, user and seccomp profile as a
    worker's); "" when it can."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            cover_kernel_views()
            message = "" if covered() else "/proc or /sys still shows entries after covering them"
        except OSError as exc:
            message = str(exc)
        os.write(write_fd, message.encode() or b"-")
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as answer:
        said = answer.read().decode(errors="replace")
    os.waitpid(pid, 0)
    return "" if said == "-" else (said or "the child that tried it died")


def main() -> int:
    preload()  # the zygote's imports, so the mapped folders are the zygote's
    started = time.monotonic()
    paths = readable_paths()
    files = size = 0
    for path in paths:
        for name in _files_under(path):
            read = _read_whole(name)
            files += read > 0
            size += read
    seconds = time.monotonic() - started
    version = abi()
    problem = ""
    try:
        os.close(build_ruleset())
    except OSError as exc:
        problem = str(exc)
    print(json.dumps({"warmed": True, "paths": paths, "files": files, "bytes": size, "seconds": round(seconds, 3),
                      "landlock_abi": version, "landlock_problem": problem,
                      "namespace_problem": _namespace_problem()}), flush=True)
    return 0
