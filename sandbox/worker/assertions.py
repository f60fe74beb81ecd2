"""The test's asserts, rewritten so that a failed one says what the test observed.

`assert f(x) == y` is compiled as `assert __sandbox_observed__((line, col), f(x)) == y`:
the left side is evaluated once, as written, and its value is kept under the assert's
position. When the assert fails, the detail shows that value (`# got ...`); nothing is
evaluated again, so the program is asked exactly once per call the test makes, and
cannot tell from a second call that its first answer was rejected.
"""
from __future__ import annotations

import ast
import types

from .protocol import DETAIL_MAX, TEST_FILE
from .text import exception_line, one_line, short_repr

OBSERVER = "__sandbox_observed__"  # a dunder name: never asked of the program


def compile_test(source: str) -> tuple[types.CodeType, dict]:
    """The test's code with its comparisons observed, and the dict the values go to
    (to bind as OBSERVER in the test's namespace with `observer`). SyntaxError as
    compile() raises it."""
    tree = ast.parse(source, TEST_FILE)
    rewritten = False
    for node in _statements(tree.body):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1:
            left = node.test.left
            key = ast.Constant((node.lineno, node.col_offset))
            call = ast.Call(ast.Name(OBSERVER, ast.Load()), [key, left], [])
            for made in (key, call, call.func):
                ast.copy_location(made, left)
                made.end_lineno, made.end_col_offset = left.end_lineno, left.end_col_offset
            node.test.left = call
            rewritten = True
    code = compile(tree if rewritten else source, TEST_FILE, "exec")
    return code, {}


def _statements(body: list):
    """Every statement, nested ones included (an assert is a statement: no need to walk
    the expressions, which is most of a test's tree)."""
    stack = list(body)
    while stack:
        node = stack.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if type(inner) is list:
                stack.extend(inner)


def observer(values: dict):
    """The function the rewritten asserts call: keeps the last value seen at each assert."""

    def observe(key: tuple, value: object) -> object:
        values[key] = value
        return value

    return observe


def failed_assert_detail(exc: AssertionError, test_source: str, values: dict) -> str:
    """The failing assert's source, with the left side the test observed when it is a
    comparison. Values from the program are plain data here, so their repr is the test
    process's own."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None or last.tb_frame.f_code.co_filename != TEST_FILE:
        return one_line(exception_line(exc))  # raised by the program, not by a test
    frame = last.tb_frame
    line, col = last.tb_lineno, 0
    try:  # the raising instruction's position tells apart two asserts on one line
        position = list(frame.f_code.co_positions())[last.tb_lasti // 2]
        if position[0] is not None and position[2] is not None:
            line, col = position[0], position[2]
    except (AttributeError, IndexError):
        pass
    try:
        tree = ast.parse(test_source, TEST_FILE)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return one_line(exception_line(exc))
    asserts = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Assert)
        and (node.lineno, node.col_offset) <= (line, col)
        and (line, col) <= (node.end_lineno or node.lineno, node.end_col_offset or 0)
    ]
    if not asserts:
        return one_line(exception_line(exc))
    node = max(asserts, key=lambda n: (n.lineno, n.col_offset))
    source = one_line(ast.get_source_segment(test_source, node) or "assert ...", DETAIL_MAX // 2)
    key = (node.lineno, node.col_offset)
    if isinstance(node.test, ast.Compare) and len(node.test.ops) == 1 and key in values:
        return one_line(f"{source}  # got {short_repr(values[key])}")
    message = str(exc)
    return one_line(f"{source}  # {message}" if message else source)
