"""P of an io job: the program run whole as `__main__`, its standard input a pipe from
the worker (W) holding the test's input and nothing else, its standard output and error
two pipes that W reads. It is never given the expected output and sends no verdict: W
compares what it printed (io_compare), so nothing else it does can make it pass.
"""
from __future__ import annotations

import builtins
import io
import linecache
import os
import sys
import traceback

from .protocol import PROGRAM_FILE


def _exit_code(exc: SystemExit) -> int:
    """What `python program.py` would exit with for this SystemExit."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int) and not isinstance(code, bool):
        return code & 0xFF
    try:
        print(code, file=sys.stderr)
    except BaseException:
        pass
    return 1


# /dev/stdin and the like are links through /proc/self/fd, and /proc is covered for
# every job (namespace.py): in the program's process, Python's open() of one of these
# names opens the descriptor itself, as the link would (a new file object on a copy of
# it). Only open(): os.open() of these names fails with ENOENT.
_STREAM_NAMES = {f"{folder}{fd}": fd for folder in ("/dev/fd/", "/proc/self/fd/") for fd in (0, 1, 2)}
_STREAM_NAMES.update({"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2})


def _open_with_streams(real_open):
    def open(file, *args, **kwargs):  # noqa: A001 (builtins.open's name, as programs see it)
        fd = _STREAM_NAMES.get(file) if isinstance(file, str) else None
        return real_open(file if fd is None else os.dup(fd), *args, **kwargs)

    return open


def stdio_main(payload: dict) -> None:
    """Run the program on fds 0/1/2 as a script would run; never returns."""
    program = payload["program"]
    linecache.cache[PROGRAM_FILE] = (len(program), None, program.splitlines(True), PROGRAM_FILE)
    # Block-buffered stdout, as for a script whose stdout is a pipe (a judge's view).
    sys.stdin = io.TextIOWrapper(open(0, "rb", closefd=False), encoding="utf-8", errors="replace")
    sys.stdout = io.TextIOWrapper(open(1, "wb", closefd=False), encoding="utf-8", errors="backslashreplace")
    sys.stderr = io.TextIOWrapper(open(2, "wb", closefd=False), encoding="utf-8", errors="backslashreplace",
                                  line_buffering=True)
    sys.argv = [PROGRAM_FILE]
    builtins.open = io.open = _open_with_streams(io.open)
    namespace = {"__name__": "__main__", "__builtins__": builtins, "__file__": PROGRAM_FILE}
    code = 0
    try:
        exec(compile(program, PROGRAM_FILE, "exec"), namespace)
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException as exc:
        try:
            # From the program's first frame on: the worker's own frame says nothing.
            traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)
        except BaseException:
            pass
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # stdout closed by the program, or a broken pipe: as CPython
            code = code or 120
    os._exit(code)
