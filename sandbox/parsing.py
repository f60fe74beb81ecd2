"""The lock every parse of Python text into `ast` objects in this process takes: the
sandbox's own (the host preparing tests, `_prepared.py`) and the harness's
(`harness/text/parsing.py` takes it from here, the lower layer).

CPython 3.11 keeps the counter it uses while turning a parsed tree into `ast` objects
in per-interpreter state shared by every thread; two threads doing it at once can
corrupt it, and `ast.parse` then fails with "SystemError: AST constructor recursion
depth mismatch" (python/cpython gh-106905). Seen here when the host prepared the tests
of several concurrent gradings at once (`bench/grade_humaneval.py` with three sandboxes,
2026-12-03), and before that when several units parsed answers at once. The hazard is
as wide as the interpreter, so the lock is too: one per process, held only while text
is parsed.
"""
from __future__ import annotations

import threading

PARSE_LOCK = threading.Lock()
