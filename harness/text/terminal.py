"""Text fit for the user's terminal: what a model, a server or a data file wrote is shown,
never obeyed.

`terminal_safe` is the one helper: control characters other than newline and tab (escape
sequences that retitle, clear or rewrite a terminal, a carriage return that hides a line,
bidirectional overrides) become visible \\xNN / \\uNNNN escapes. The CLI also writes
everything through `SafeStream` while a command runs, so that a string printed without
the helper (a model name in a run's header line, a study's model spec) is made safe all
the same; only the progress bar writes to the stream beneath (`raw_stream`), with text
the harness made.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator, TextIO

_KEEP = str.maketrans("", "", "\n\t ")


def terminal_safe(text: str) -> str:
    """`text` with every character a terminal could act on shown as an escape."""
    if text.translate(_KEEP).isprintable():  # the common case, at C speed
        return text
    return "".join(ch if ch in "\n\t " or ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
                   for ch in text)


class SafeStream:
    """A text stream that writes `terminal_safe(text)` to the one it wraps."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(terminal_safe(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding, ...
        return getattr(self.raw, name)


def raw_stream(stream: Any) -> Any:
    """The stream beneath a SafeStream (or `stream` itself): for the progress bar alone."""
    return stream.raw if isinstance(stream, SafeStream) else stream


@contextlib.contextmanager
def safe_streams() -> Iterator[None]:
    """sys.stdout and sys.stderr made safe for the duration (the CLI's main())."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(saved[0]), SafeStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
