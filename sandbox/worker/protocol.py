"""What both sides of the worker share: the host's protocol version, the descriptors and
limits of P and T, and the length-prefixed JSON frames between them.

One of the three modules of the worker that the host imports (for PROTOCOL; the others
are `rewrite`, for the tests it prepares, and `namespace`, for the flags its seccomp
profile allows the zygote).
"""
from __future__ import annotations

import json
import os
import struct

PROTOCOL = 2
DETAIL_MAX = 400  # characters of a failure detail
PROGRAM_FILE = "<program>"
TEST_FILE = "<test>"
PRELUDE_FILE = "<prelude>"
CHANNEL_FD = 3  # in P and T: the socket between them
REPORT_FD = 4  # in T: the verdict pipe to the worker
CALLS_FD = 3  # in a function task's driver (another language): the calls, one JSON line each
RESULTS_FD = 4  # in that driver: its results, one line each, framed by the job's token
SPARE_FD_BASE = 10  # in a runtime that makes pipes (node): the worker's spare pipes, from here on
REPORT_MAX = 64 * 1024
_FRAME_MAX = 32 * 1024 * 1024  # one message between P and T
DEPTH_MAX = 100  # nesting of plain data
ITEMS_MAX = 2_000_000  # values in one message
NAMES_MAX = 5000  # names a program may expose
HELD_MAX = 100_000  # program objects the test may hold references to


class WireError(Exception):
    """A message that is not well-formed plain data."""


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


# Made once: json.dumps with arguments builds an encoder for every message, and
# json.loads of bytes guesses their encoding in Python first; in a freshly forked P or
# T both also touch pages shared with the zygote (each first write copies one).
_ENCODER = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))
_DECODER = json.JSONDecoder()
_LENGTH = struct.Struct(">I")


def send_frame(fd: int, message: dict) -> None:
    """One JSON object (ASCII), length-prefixed."""
    data = _ENCODER.encode(message).encode()
    write_all(fd, _LENGTH.pack(len(data)) + data)


def read_exact(fd: int, size: int) -> bytes | None:
    chunks, remaining = [], size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def recv_frame(fd: int) -> dict | None:
    """The next message, None at end of stream; WireError if it is not a JSON object."""
    head = read_exact(fd, 4)
    if head is None:
        return None
    (size,) = _LENGTH.unpack(head)
    if size > _FRAME_MAX:
        raise WireError(f"a message of {size} bytes (the limit is {_FRAME_MAX})")
    body = read_exact(fd, size)
    if body is None:
        return None
    try:  # UTF-8 as json.loads reads it (the sending side writes ASCII)
        message = _DECODER.decode(body.decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise WireError("a message that is not JSON") from None
    if type(message) is not dict:
        raise WireError("a message that is not an object")
    return message
