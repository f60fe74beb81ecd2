"""The test's asserts, rewritten so that a failed one says what the test observed.

`assert f(x) == y` is compiled as `assert __sandbox_observed__((line, col), f(x)) == y`:
the left side is evaluated once, as written, and its value is kept under the assert's
position. When the assert fails, the detail shows that value (`# got ...`); nothing is
evaluated again, so the program is asked exactly once per call the test makes, and
cannot tell from a second call that its first answer was rejected.

A verdict-blind test (`compile_blind_test`, for hidden grading) goes further: no assert
stops it, so the program sees the same calls whatever its answers. Each `assert`
statement becomes a call that records its outcome in a `Ledger` and lets the test go
on; a comparison `assert L op R` of plain data is not even evaluated then: both sides
are copied, and compared once no process of the program is left (the judge asks W for
that). What the program could time or count while it lives does not depend on whether
its answers were right.
"""
from __future__ import annotations

import ast
import operator
import sys
import types

from .link import Opaque, ProgramBroke, Remote, _Handle
from .protocol import DETAIL_MAX, TEST_FILE
from .rewrite import (CHECK, COMPARE, OBSERVER, OPERATOR_NODES, SOFT, BlindTable, observe_asserts,
                      single_comparison, soften_asserts, statements)
from .text import exception_line, one_line, short_repr

def compile_test(source: str) -> tuple[types.CodeType, dict]:
    """The test's code with its comparisons observed, and the dict the values go to
    (to bind as OBSERVER in the test's namespace with `observer`). SyntaxError as
    compile() raises it."""
    tree = ast.parse(source, TEST_FILE)
    code = compile(tree if observe_asserts(tree) else source, TEST_FILE, "exec")
    return code, {}


def compile_prepared(prepared: object, blind: bool) -> tuple[types.CodeType, object] | None:
    """The code of a test the host prepared (rewrite.prepare), with what compile_test
    (a dict for the observed values) or compile_blind_test (a Ledger) would return
    beside it; None if `prepared` is not that (T then rewrites the test itself)."""
    if type(prepared) is not dict or type(prepared.get("source")) is not str:
        return None
    try:
        code = compile(prepared["source"], TEST_FILE, "exec")
    except (SyntaxError, ValueError):  # as the test's own text would fail: said from it
        return None
    if not blind:
        return code, {}
    rows, guarded = prepared.get("asserts"), prepared.get("guarded")
    if type(rows) is not list or type(guarded) is not list:
        return None
    table = BlindTable()
    for row in rows:
        if type(row) is not list or len(row) != 5:
            return None
        table[(row[0], row[1])] = tuple(row[2:])
    if not all(type(lines) is list and len(lines) == 2 and all(type(n) is int for n in lines) for lines in guarded):
        return None
    table.guarded = tuple((first, last) for first, last in guarded)
    return code, table


def observer(values: dict):
    """The function the rewritten asserts call: keeps the last value seen at each assert."""

    def observe(key: tuple, value: object) -> object:
        values[key] = value
        return value

    return observe


def failed_assert_detail(exc: AssertionError, test_source: str, values: dict,
                         compiled_source: str | None = None) -> str:
    """The failing assert's source, with the left side the test observed when it is a
    comparison. Values from the program are plain data here, so their repr is the test
    process's own. `compiled_source`: the text the code was compiled from when it is
    not `test_source` (the host's prepared text; its asserts are the test's, in order)."""
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
        compiled = tree if compiled_source is None else ast.parse(compiled_source, TEST_FILE)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return one_line(exception_line(exc))
    ordered = [node for node in statements(compiled.body) if isinstance(node, ast.Assert)]
    asserts = [
        index
        for index, node in enumerate(ordered)
        if (node.lineno, node.col_offset) <= (line, col)
        and (line, col) <= (node.end_lineno or node.lineno, node.end_col_offset or 0)
    ]
    if not asserts:
        return one_line(exception_line(exc))
    index = max(asserts, key=lambda i: (ordered[i].lineno, ordered[i].col_offset))
    if compiled is not tree:  # the same assert in the test as written
        originals = [node for node in statements(tree.body) if isinstance(node, ast.Assert)]
        if len(originals) != len(ordered):
            return one_line(exception_line(exc))
        node = originals[index]
    else:
        node = ordered[index]
    source = one_line(ast.get_source_segment(test_source, node) or "assert ...", DETAIL_MAX // 2)
    key = (node.lineno, node.col_offset)
    if single_comparison(node) and key in values:
        return one_line(f"{source}  # got {short_repr(values[key])}")
    message = str(exc)
    return one_line(f"{source}  # {message}" if message else source)


def exception_verdict(exc: BaseException, test_source: str) -> tuple[str, str]:
    """The verdict of an exception that ended a test (or, blind, an assert's operands):
    an AssertionError raised by hand is a failure, anything else an error."""
    if isinstance(exc, AssertionError):
        return "failed", failed_assert_detail(exc, test_source, {})
    return "error", one_line(exception_line(exc))


# --- verdict-blind tests ------------------------------------------------------------------

# The operators of `assert L op R`, by the index the rewritten call passes; `is` and
# `is not` last: they take the same time whatever the answer, so they run when met.
_OPERATORS = (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
              lambda a, b: a in b, lambda a, b: a not in b, operator.is_, operator.is_not)
_FIRST_IDENTITY = OPERATOR_NODES.index(ast.Is)
_FIRST_MEMBERSHIP = OPERATOR_NODES.index(ast.In)
_CHECKED = -1  # the operator of an assert that is not a single comparison
_RAISED = -2  # the operator of an assert whose operands raised (the exception kept as `left`)
_ATOMS = frozenset({int, float, complex, str, bytes, bool, type(None)})
_PROGRAM_TYPES = (_Handle, Remote, Opaque)  # what stands in the test for an object of the program


def compile_blind_test(source: str) -> tuple[types.CodeType, BlindTable]:
    """The test's code with every `assert` statement (nested ones included) made soft:
    it records its outcome in a Ledger (made from the returned table) and the test goes
    on, also when its operands raise an exception (an answer of the wrong type met
    `abs(answer - 0.5)`: the test would otherwise end sooner for a wrong answer). The
    assert's message is never evaluated (it could ask the program only when the assert
    fails); a constant message still shows in the detail. SyntaxError as compile()
    raises it."""
    tree = ast.parse(source, TEST_FILE)
    table = soften_asserts(tree)
    return compile(tree, TEST_FILE, "exec"), table


class _WhenMet(Exception):
    """A comparison that may need the program to answer: it is made when met."""


# Types of the test's process whose comparisons never ask the program anything and whose
# values do not change (modules' own value types; pytest's approx).
_VALUE_MODULES = frozenset({"decimal", "fractions", "datetime", "_pytest.python_api", "numpy"})


def _held(value: object, found: list[bool], seen: set[int]) -> object:
    """`value` as the test sees it now, kept apart from later changes: plain containers
    copied (their atoms shared: immutable; a numpy array copied), references to the
    program's objects kept (they compare by identity, in the test's process), the test's
    own objects kept as they are after a look at their attributes. The cost follows the
    value's size only. `found` is set to [holds an object of the program, holds an object
    of the test's own classes]. _WhenMet for anything else (a generator, a map object:
    comparing it may ask the program for more)."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is list:
        return [_held(item, found, seen) for item in value]
    if kind is tuple:
        return tuple([_held(item, found, seen) for item in value])
    if kind is dict:
        return {_held(key, found, seen): _held(item, found, seen) for key, item in value.items()}
    if kind is set:
        return {_held(item, found, seen) for item in value}
    if kind is frozenset:
        return frozenset([_held(item, found, seen) for item in value])
    if kind is bytearray:
        return bytearray(value)
    if kind in _PROGRAM_TYPES:
        found[0] = True
        return value
    module = getattr(kind, "__module__", None)
    if module == "__test__":
        # The test's own object (its class may define __eq__): compared as it is then;
        # made when met if the program's objects are at hand (its __eq__ could ask them).
        found[1] = True
        if id(value) not in seen:
            seen.add(id(value))
            try:
                attributes = object.__getattribute__(value, "__dict__")
            except AttributeError:
                attributes = None
            if type(attributes) is dict:
                for item in list(attributes.values()):
                    _held(item, found, seen)
        return value
    if type(module) is str and (module in _VALUE_MODULES or module.startswith("numpy.")):
        return value.copy() if kind.__name__ == "ndarray" else value
    raise _WhenMet


class _Soft:
    """`with` around one blind assert: an exception its operands raise (an `Exception`;
    not the program breaking, a `SystemExit` or an interrupt, which still end the test)
    that nothing of the test could catch is recorded as the assert's outcome, and the
    test goes on with its next statement. One the test could catch (a frame of it stands
    in a `try` or `with` statement, or code that is not the test's stands between the
    assert and the test's module) goes on as it would have."""

    __slots__ = ("events", "key", "guarded")

    def __init__(self, events: list, key: tuple[int, int], guarded: tuple[tuple[int, int], ...]) -> None:
        self.events, self.key, self.guarded = events, key, guarded

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, _traceback) -> bool:
        if kind is None or not issubclass(kind, Exception) or not self._would_end_the_test():
            return False
        self.events.append((self.key, _RAISED, exc, None, False))
        return True

    def _would_end_the_test(self) -> bool:
        frame = sys._getframe(2)  # the frame whose `with` this is
        while frame is not None:
            code = frame.f_code
            if code.co_filename != TEST_FILE:
                return False  # a helper of the prelude, a library: it may catch it
            line = frame.f_lineno
            if any(first <= line <= last for first, last in self.guarded):
                return False
            if code.co_name == "<module>":
                return True
            frame = frame.f_back
        return False


class _SoftByKey(dict):
    """SOFT in the test's namespace: the `with` of the assert at each (line, col)."""

    def __init__(self, events: list, guarded: tuple[tuple[int, int], ...]) -> None:
        super().__init__()
        self.events, self.guarded = events, guarded

    def __missing__(self, key: tuple[int, int]) -> _Soft:
        made = self[key] = _Soft(self.events, key, self.guarded)
        return made


class Ledger:
    """What a blind test's asserts met, in order: `(key, op, left, right, outcome)`.

    A comparison of plain data is kept with copies of its operands and `outcome` None:
    it is evaluated by `first_failure`, which the judge calls only once W says that no
    process of the program is left. So are references to the program's objects inside
    plain data (they compare by identity, in T) and the test's own objects (kept as they
    are). A comparison that may need P to answer (`in` an object of the program, the
    test's own object beside one of the program's, a generator or any value of a type
    not known to be inert), `is` and `is not` (constant time), and every other assert are
    evaluated when met; only their outcome is kept then. An assert whose operands
    raised keeps the exception (op `_RAISED`). Recording costs the same whether an
    assert holds or not.
    """

    def __init__(self, source: str, asserts: BlindTable) -> None:
        self.source = source
        self.asserts = asserts  # where each assert stands in `source`, its constant message
        self.events: list[tuple] = []

    def bind(self, namespace: dict) -> None:
        namespace[COMPARE] = self.compare
        namespace[CHECK] = self.check
        namespace[SOFT] = _SoftByKey(self.events, self.asserts.guarded)

    def compare(self, key: tuple[int, int], op: int, left: object, right: object) -> None:
        if op >= _FIRST_IDENTITY:
            self.events.append((key, op, left, None, _OPERATORS[op](left, right)))
            return
        found = [False, False]
        try:
            held_left, held_right = _held(left, found, set()), _held(right, found, set())
            # `in` an object of the program asks the program; so may the test's own
            # __eq__ given one of them.
            if (op >= _FIRST_MEMBERSHIP and type(right) in _PROGRAM_TYPES) or (found[0] and found[1]):
                raise _WhenMet
        except (_WhenMet, RecursionError):  # (too deep, or cyclic, to copy)
            self.events.append((key, op, left, None, bool(_OPERATORS[op](left, right))))
            return
        self.events.append((key, op, held_left, held_right, None))

    def check(self, key: tuple[int, int], value: object) -> None:
        self.events.append((key, _CHECKED, None, None, bool(value)))

    def first_failure(self, limit: int | None = None) -> tuple[str, str] | None:
        """The verdict of the first of the first `limit` asserts that failed (or whose
        deferred comparison raised); None if none did. Call only once the program's
        processes are gone. Every deferred comparison is made, whichever fails first, so
        the work does not end sooner for a wrong answer."""
        raised: tuple[str, str] | None = None  # a deferred comparison that raised
        failed: tuple | None = None  # the first failed assert: (key, op, left)
        for key, op, left, right, outcome in self.events[:limit]:
            if op == _RAISED:  # as it would have ended the test there
                if failed is None and raised is None:
                    raised = exception_verdict(left, self.source)
                continue
            if outcome is None:
                try:
                    outcome = bool(_OPERATORS[op](left, right))
                except BaseException as exc:  # as it would have ended the test there
                    if failed is None and raised is None:
                        why = str(exc) if isinstance(exc, ProgramBroke) else exception_line(exc)
                        raised = ("error", one_line(why))
                    continue
            if not outcome and failed is None and raised is None:
                failed = (key, op, left)
        if raised is not None:
            return raised
        return None if failed is None else ("failed", self._detail(*failed))

    def _detail(self, key: tuple[int, int], op: int, left: object) -> str:
        """The failed assert's source; a comparison's left side as the test observed it,
        another assert's constant message."""
        place = self.asserts.get(key)
        if place is None:
            return "assert ..."
        source = one_line(_segment(self.source, key, place) or "assert ...", DETAIL_MAX // 2)
        if op != _CHECKED:
            return one_line(f"{source}  # got {short_repr(left)}")
        message = place[2] if type(place[2]) is str else ""
        return one_line(f"{source}  # {message}" if message else source)


def _segment(source: str, key: tuple[int, int], place: tuple) -> str:
    """`ast.get_source_segment` of the assert at `key` (`place` says where it ends),
    splitting only what it needs: the verdict's detail is the one part of a blind job's
    second phase that a wrong answer adds (the library's version splits the whole test
    in a Python loop: ~0.1 ms for HumanEval's)."""
    (line, col), (end_line, end_col) = key, place[:2]
    if not all(type(n) is int for n in (line, col, end_line, end_col)):
        return ""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")  # as the parser counts lines
    first, last = line - 1, end_line - 1
    if not 0 <= first <= last < len(lines):
        return ""
    if first == last:
        return lines[first].encode()[col:end_col].decode(errors="replace")
    head = lines[first].encode()[col:].decode(errors="replace")
    tail = lines[last].encode()[:end_col].decode(errors="replace")
    return "\n".join([head, *lines[first + 1:last], tail])
