"""Reading a task folder from someone else: inside it, within bounds, never through a link.

A folder of task data (an Exercism exercise) names its own files; a name is data. Every
path is normalised before it is used or counted (`./x`, `a//x` and `x` are one file;
`..`, an absolute path and a backslash are refused), and every component is opened
relative to the folder's descriptor with O_NOFOLLOW: a link anywhere below the folder
(a linked `.docs/`, `p -> /proc` in `p/self/environ`) is refused, never followed, and
nothing can swap a component between a check and the read. A file is read only when it
is a regular file (a FIFO or a device would stall or flood the loader), and never past
its limit.
"""
from __future__ import annotations

import errno
import fnmatch
import os
import stat
from pathlib import Path, PurePosixPath

from harness.tasks.base import TaskError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class TooLarge(TaskError):
    """A file larger than the limit it was read with."""


class PathNameError(ValueError):
    """A name that is no path inside the folder."""


def normal_name(name: str, inside: str = "the folder") -> str:
    """`name` as one canonical relative path (`./a//b` -> `a/b`); PathNameError when it is
    empty, absolute, climbs out (`..`) or holds a backslash or a NUL."""
    if not name or name.startswith("/") or "\\" in name or "\0" in name:
        raise PathNameError(f"{name[:200]!r} is not a path inside {inside}")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise PathNameError(f"{name[:200]!r} is not a path inside {inside}")
    return "/".join(parts)


def open_folder(base: Path, below: tuple[str, ...] = ()) -> int:
    """A descriptor of `base` (the folder the user named, reached as they named it)
    joined with `below`, each part of which is opened without following a link."""
    try:
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise TaskError(f"{base}: cannot be opened as a folder ({exc.strerror})") from None
    here = base
    for part in below:
        here = here / part
        fd = _step(fd, part, here)
    return fd


def _step(fd: int, part: str, where: Path | str) -> int:
    """The descriptor of folder `part` inside `fd` (which is closed), never through a link."""
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        raise TaskError(f"{where}: {_why(exc, fd, part)}") from None
    finally:
        os.close(fd)


def _why(exc: OSError, fd: int, part: str) -> str:
    try:
        if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
            return "is a link; links in a task folder are never followed (copy the file in)"
    except OSError:
        pass
    if exc.errno == errno.ENOENT:
        return "missing"
    if exc.errno == errno.ENOTDIR:
        return "not a folder"
    return f"cannot be opened ({exc.strerror})"


def _kind(mode: int) -> str:
    return ("link" if stat.S_ISLNK(mode) else "file" if stat.S_ISREG(mode)
            else "folder" if stat.S_ISDIR(mode) else "other")


class Folder:
    """One folder, opened once (`fd`); `path` only names it in messages. Close it."""

    def __init__(self, fd: int, path: Path) -> None:
        self.fd, self.path = fd, path

    @classmethod
    def inside(cls, parent: "Folder", name: str) -> "Folder":
        fd = os.dup(parent.fd)
        return cls(_step(fd, name, parent.path / name), parent.path / name)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> "Folder":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _parent_of(self, name: str) -> tuple[int, str]:
        """(a descriptor of the folder holding `name`'s last part, that part): a new fd."""
        *dirs, last = name.split("/")
        fd = os.dup(self.fd)
        here = self.path
        for part in dirs:
            here = here / part
            fd = _step(fd, part, here)
        return fd, last

    def kind(self, name: str) -> str:
        """'file', 'folder', 'link', 'other' or 'missing' for a normal name: 'link' when
        any of its components is one (none is followed)."""
        parts = name.split("/")
        fd = os.dup(self.fd)
        try:
            for i, part in enumerate(parts):
                try:
                    mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
                except OSError:
                    return "missing"
                if stat.S_ISLNK(mode):
                    return "link"
                if i == len(parts) - 1:
                    return _kind(mode)
                if not stat.S_ISDIR(mode):
                    return "missing"
                try:
                    fd = _step(fd, part, self.path)
                except TaskError:
                    fd = -1
                    return "missing"
            return "missing"
        finally:
            if fd >= 0:
                os.close(fd)

    def read(self, name: str, limit: int) -> bytes:
        """The bytes of regular file `name` (a normal name), at most `limit` of them:
        a TaskError naming the file otherwise."""
        where = self.path / name
        try:
            fd, last = self._parent_of(name)
        except TaskError as exc:
            raise TaskError(f"{where}: reached through {exc}") from None
        try:
            try:
                handle = os.open(last, _FILE_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise TaskError(f"{where}: {_why(exc, fd, last)}") from None
        finally:
            os.close(fd)
        try:
            if not stat.S_ISREG(os.fstat(handle).st_mode):
                raise TaskError(f"{where}: not a regular file")
            chunks, size = [], 0
            while size <= limit and (chunk := os.read(handle, min(1 << 20, limit + 1 - size))):
                chunks.append(chunk)
                size += len(chunk)
        except OSError as exc:
            raise TaskError(f"{where}: cannot be read ({exc.strerror})") from None
        finally:
            os.close(handle)
        if size > limit:
            raise TooLarge(f"{where}: larger than {limit:,} bytes; a task folder's files are source text")
        return b"".join(chunks)

    def entries(self) -> list[tuple[str, str]]:
        """(name, kind) of each entry, sorted by name; kind as `kind()` says (no link followed)."""
        out = []
        with os.scandir(self.fd) as it:
            for entry in it:
                out.append((entry.name, _kind(entry.stat(follow_symlinks=False).st_mode)))
        return sorted(out)

    def glob(self, pattern: str) -> list[str]:
        """Normal names of the regular files matching `pattern` (`*_test.go`, `src/*.rs`:
        wildcards in the last part only), none reached through a link."""
        *dirs, last = PurePosixPath(pattern).parts
        try:
            inner = self if not dirs else Folder.inside(self, "/".join(dirs)) if len(dirs) == 1 else None
        except TaskError:
            return []
        if inner is None:
            raise ValueError(f"pattern {pattern!r}: one folder level at most")
        try:
            return [("/".join([*dirs, n])) for n, k in inner.entries() if k == "file" and fnmatch.fnmatchcase(n, last)]
        finally:
            if inner is not self:
                inner.close()
