"""Emptying the scratch folder between jobs, however deep and hostile its tree.
"""
from __future__ import annotations

import os
import stat
import time


def _listdir_here() -> list[str]:
    try:
        return os.listdir(".")
    except OSError:
        return []


def wipe(directory: str, keep: str = "", deadline: float | None = None) -> None:
    """Empty `directory` (but keep the empty subdirectory `keep`), however deep it goes.

    Iterative and relative to the current directory: no recursion limit, no PATH_MAX,
    no symlink followed (lstat, and chdir only into real directories). Each directory
    is listed once, so the work is linear in the number of entries (re-listing a
    parent after each subdirectory made 30,000 empty subdirectories take minutes).
    Past `deadline` (time.monotonic()) it stops with TimeoutError.
    """
    try:
        os.chdir(directory)
    except OSError:
        return
    # (name of the directory we are in, what is left to visit in its parent)
    stack: list[tuple[str, list[str]]] = []
    entries = _listdir_here()
    try:
        while True:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"emptying {directory} took too long")
            if not entries:
                if not stack:
                    break
                name, entries = stack.pop()
                os.chdir("..")
                if name != "\0keep":
                    try:
                        os.rmdir(name)
                    except OSError:
                        pass
                continue
            name = entries.pop()
            try:
                mode = os.lstat(name).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                try:
                    os.chmod(name, 0o700)
                    os.chdir(name)
                except OSError:
                    continue
                stack.append(("\0keep" if not stack and name == keep else name, entries))
                entries = _listdir_here()
                continue
            try:
                os.unlink(name)
            except OSError:
                pass
    finally:
        os.chdir("/")


def reset_metadata(directory: str) -> None:
    """`directory` back to mode 0700 without extended attributes, where W may change
    them (its own folder on a host; the container's /tmp belongs to root, and a
    program cannot change it either)."""
    try:
        for name in os.listxattr(directory):
            try:
                os.removexattr(directory, name)
            except OSError:
                pass
        os.chmod(directory, 0o700)
    except OSError:
        pass
