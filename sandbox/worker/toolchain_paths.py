"""The folders of the compilers and runtimes an image of another language holds, which
its jobs may read (landlock.py) and the warm-up reads into the page cache (warm.py).

Only those that exist count: the Python image has none of them, so its list is what it
was. Patterns, because Debian names some folders by version (go-1.23). Whatever a
toolchain's files link to outside these folders (/etc/alternatives/cc, a compiler's
driver in /usr/bin) is found by its resolved path: a link is followed to its target,
which must itself lie in an allowed folder to be read.
"""
from __future__ import annotations

import glob

PATTERNS = (
    "/usr/lib/gcc",  # gcc's own programs and start files: the linker of rustc, g++
    "/usr/include",  # the C and C++ headers
    "/usr/lib/rustlib",  # rustc's standard library
    "/usr/lib/go-*", "/usr/share/go-*",  # GOROOT and the sources its links point to
    "/opt/go-std",  # the standard library compiled when the image was built (export data)
    "/usr/share/nodejs", "/usr/lib/nodejs",  # node's global modules
    "/opt/sandbox/lib",  # the library that hands node the worker's spare pipes (image/setup/harness_pipes.c)
)


def toolchain_folders() -> set[str]:
    """The toolchain folders of this image (none in the Python image)."""
    found: set[str] = set()
    for pattern in PATTERNS:
        found.update(glob.glob(pattern))
    return found
