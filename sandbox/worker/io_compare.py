"""Judges a program's standard output against a test's expected output.

Standard library only: it runs in the worker (W), never in the program's process, so
nothing the program does decides its verdict except the bytes it wrote to stdout.
One rule per source, each as that source's own grader applies it:

- ``lcb`` (LiveCodeBench, ``lcb_runner/evaluation/testing_util.py``, ``grade_stdio``):
  both texts are stripped, split on "\\n" and every line stripped, so line endings
  ("\\r\\n"), trailing spaces and trailing blank lines do not count; the line counts
  must be equal; a line matches when equal as text or, failing that, when both split
  on whitespace into the same number of decimals that are equal as decimals
  (``Decimal``: "0.50" equals "0.5" and "1e3" equals "1000", but "0.1000001" does not
  equal "0.1": LiveCodeBench applies no float tolerance).
- ``codecontests`` (DeepMind's ``execution/tester_sandboxer.cc``, ``OutputsMatch``):
  both texts split on any whitespace (lines do not count), tokens lower-cased; equal
  token lists match; else, with as many tokens, each pair must match: two integers
  exactly, a float with anything numeric within an absolute 1e-5, text exactly.
- ``apps`` (APPS's ``eval/testing_util.py``, standard input): the first of its checks
  that says yes: the stripped texts equal; the stripped non-empty lines equal; every
  line one number and all close (numpy's ``allclose``: |a - b| <= 1e-8 + 1e-5 |b|);
  the lines as a set of sets of tokens equal (order ignored), as tokens or as numbers
  rounded to 3 decimals.
- ``exact``: equal after "\\r\\n" -> "\\n" and with trailing whitespace of each line and
  of the whole text ignored.
"""
from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

RULES = ("lcb", "codecontests", "apps", "exact")
DEFAULT_RULE = "lcb"
_CC_TOLERANCE = 1e-5
_APPS_RTOL, _APPS_ATOL = 1e-5, 1e-8
_CC_INT = re.compile(r"[+-]?\d+")


def _lines(text: str) -> list[str]:
    # LiveCodeBench's get_stripped_lines: strip, split on "\n", strip each line.
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(token) for token in line.split()]
    except (InvalidOperation, ValueError):
        return None


def _lcb(output: str, expected: str) -> tuple[bool, str]:
    got, want = _lines(output), _lines(expected)
    if len(got) != len(want):
        return False, f"{len(got)} lines, expected {len(want)}"
    for number, (a, b) in enumerate(zip(got, want), start=1):
        if a == b:
            continue
        da, db = _decimals(a), _decimals(b)
        if da is None or db is None or da != db:
            return False, f"line {number} differs"
    return True, ""


def _cc_number(token: str) -> tuple[str, float] | None:
    """("int", v) or ("float", v) as absl's SimpleAtoi / SimpleAtod would read it."""
    if _CC_INT.fullmatch(token):
        value = int(token)
        if -(1 << 31) <= value < (1 << 31):  # SimpleAtoi into an int
            return "int", float(value)
    try:
        value = float(token)
    except ValueError:
        return None
    return "float", value


def _cc_match(a: str, b: str) -> bool:
    na, nb = _cc_number(a), _cc_number(b)
    if na is None or nb is None:
        return a == b
    if na[0] == "float" or nb[0] == "float":
        return abs(na[1] - nb[1]) < _CC_TOLERANCE
    return na[1] == nb[1]


def _codecontests(output: str, expected: str) -> tuple[bool, str]:
    got, want = output.lower().split(), expected.lower().split()
    if got == want:
        return True, ""
    if len(got) != len(want):
        return False, f"{len(got)} tokens, expected {len(want)}"
    for number, (a, b) in enumerate(zip(got, want), start=1):
        if not _cc_match(a, b):
            return False, f"token {number} differs"
    return True, ""


def _floats(items: list[str]) -> list[float] | None:
    try:
        return [float(item) for item in items]
    except ValueError:
        return None


def _apps(output: str, expected: str) -> tuple[bool, str]:
    if output.strip() == expected.strip():
        return True, ""
    got = [line.strip() for line in output.split("\n") if line.strip()]
    want = [line.strip() for line in expected.split("\n") if line.strip()]
    if got == want:
        return True, ""
    fa, fb = _floats(got), _floats(want)
    if fa is not None and fb is not None and len(fa) == len(fb) and all(
        math.isfinite(a) and math.isfinite(b) and abs(a - b) <= _APPS_ATOL + _APPS_RTOL * abs(b)
        for a, b in zip(fa, fb)
    ):
        return True, ""
    sets_a = {frozenset(line.split()) for line in got}
    sets_b = {frozenset(line.split()) for line in want}
    if sets_a == sets_b:
        return True, ""
    try:
        rounded_a = {frozenset(round(float(t), 3) for t in line.split()) for line in got}
        rounded_b = {frozenset(round(float(t), 3) for t in line.split()) for line in want}
    except (ValueError, OverflowError):
        return False, "output differs"
    return (True, "") if rounded_a == rounded_b else (False, "output differs")


def _exact(output: str, expected: str) -> tuple[bool, str]:
    def norm(text: str) -> list[str]:
        return [line.rstrip() for line in text.replace("\r\n", "\n").rstrip().split("\n")]

    return (True, "") if norm(output) == norm(expected) else (False, "output differs")


_RULES = {"lcb": _lcb, "codecontests": _codecontests, "apps": _apps, "exact": _exact}


def compare(output: str, expected: str, rule: str = DEFAULT_RULE) -> tuple[bool, str]:
    """(whether `output` passes for `expected` under `rule`, why not in a few words)."""
    try:
        judge = _RULES[rule]
    except KeyError:
        raise ValueError(f"unknown comparison rule {rule!r}; known: {', '.join(RULES)}") from None
    return judge(output, expected)
