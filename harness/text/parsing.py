"""The one place the harness parses Python text (model answers, task files).

CPython 3.11 keeps the counter it uses while turning a parsed tree into `ast` objects
in per-interpreter state shared by every thread; two threads doing it at once can
corrupt it, and `ast.parse` then fails with "SystemError: AST constructor recursion
depth mismatch" (python/cpython gh-106905; seen here when several units parsed
answers at once). The hazard is as wide as the interpreter, so the lock that
serialises parsing must be too: every parse in the harness goes through `parse` below,
under the one lock the sandbox's host side also takes when it prepares tests
(`sandbox.parsing.PARSE_LOCK`). A lock owned by an object would protect only the
callers that happened to share that object.
"""
from __future__ import annotations

import ast

from sandbox.parsing import PARSE_LOCK as _PARSE_LOCK  # interpreter-wide hazard (see above)


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse`, one thread at a time. Raises SyntaxError / ValueError as it does."""
    with _PARSE_LOCK:
        return ast.parse(source, filename)


# What `ast.parse` raises for text it cannot turn into a tree: bad syntax, a NUL byte
# (ValueError), or nesting too deep for the parser's stack or the recursion limit
# (MemoryError "parser stack overflow", RecursionError): about 3,000 unary minuses in
# a 3 KB answer are enough, so these are answers, not harness failures.
# (A lone surrogate makes UnicodeEncodeError, a ValueError.)
UNPARSEABLE = (SyntaxError, ValueError, RecursionError, MemoryError)
_UNPARSEABLE = UNPARSEABLE


def try_parse(source: str) -> ast.Module | None:
    """The module, or None when the text is not valid Python or nests too deeply to parse."""
    try:
        return parse(source)
    except _UNPARSEABLE:
        return None


def syntax_problem(source: str) -> str | None:
    """None when `source` parses; else "SyntaxError: <msg> (line N)"."""
    try:
        parse(source)
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    except ValueError as exc:  # e.g. a NUL byte
        return f"ValueError: {exc}"
    except (RecursionError, MemoryError) as exc:
        return f"{type(exc).__name__}: the code nests too deeply to parse"
    return None
