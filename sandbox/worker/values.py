"""How a function's result, as the driver of a compiled (or JavaScript) program printed
it, is compared with the expected value: both JSON, compared here in W, where the
expected value is and the program's process never was.

The canonical form every driver prints (sandbox/drivers/): integers as integers (every
digit), floating-point numbers as the shortest text that reads back to the same value
(NaN, Infinity and -Infinity as those words), strings and characters as JSON strings,
booleans, null for nothing (None, nil, std::nullopt, undefined, unit), arrays for
sequences and tuples, objects for maps (a key that is not a string is written as its
canonical text).

Reading (`parse`): one JSON value, ASCII digits only; a number with a fraction or an
exponent is a float, one that overflows a double ("1e999") is no value (only the words
say infinity); an integer has at most INT_DIGITS digits.

Equality (`equal`): booleans equal only booleans; numbers compare exactly, never as
doubles: an integer equals an integer of the same value, and a float only when the
float is integral and exactly that value (9000000000000000000.0 is not
9000000000000000007); two floats are equal as floats (NaN equals NaN: both say "not a
number"), or within `tolerance` when the test gives one and the expected value is a
float (an integer expected value is exact whatever the tolerance; the difference is
taken exactly, in fractions); strings, arrays and objects as JSON compares them,
element by element. No rule lets a value of another shape through: a string "3" is not
the number 3.

Both are total: `parse` raises only NotAValue, `equal` never raises (what it cannot
decide is not equal), whatever the program printed.
"""
from __future__ import annotations

import json
import math
from fractions import Fraction

INT_DIGITS = 4000  # digits of an integer read (Python's own limit for int(str) is 4,300)
SHOWN_MAX = 200  # characters of a value shown in a failure's detail
_CONSTANTS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class NotAValue(ValueError):
    """Text that is not one JSON value."""


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise NotAValue(f"a number too large for a double: {shown(text)}")
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > INT_DIGITS:
        raise NotAValue(f"an integer of more than {INT_DIGITS} digits")
    return int(text)


_DECODER = json.JSONDecoder(parse_constant=_CONSTANTS.__getitem__, parse_float=_float, parse_int=_int)


def parse(text: str):
    """The one JSON value `text` holds; NotAValue for anything else (never another error)."""
    try:
        stripped = text.strip()
        value, end = _DECODER.raw_decode(stripped)
    except NotAValue:
        raise
    except (ValueError, RecursionError, MemoryError, TypeError, KeyError):
        raise NotAValue(f"not a value: {shown(text)}") from None
    if end != len(stripped):
        raise NotAValue(f"more than one value: {shown(text)}")
    return value


def shown(text: str) -> str:
    text = str(text).strip()
    return text if len(text) <= SHOWN_MAX else text[: SHOWN_MAX - 3] + "..."


def equal(observed, expected, tolerance: float | None = None) -> bool:
    """Whether `observed` counts as `expected` (module doc); never raises."""
    try:
        return _equal(observed, expected, tolerance)
    except (RecursionError, MemoryError, ArithmeticError, ValueError, TypeError):
        return False


def _numbers_equal(observed: int | float, expected: int | float, tolerance: float | None) -> bool:
    if isinstance(observed, float) and math.isnan(observed) or isinstance(expected, float) and math.isnan(expected):
        return isinstance(observed, float) and isinstance(expected, float) and math.isnan(observed) and math.isnan(expected)
    if observed == expected:  # Python compares int and float exactly
        return True
    if tolerance is None or not isinstance(expected, float) or math.isinf(expected):
        return False
    if isinstance(observed, float) and math.isinf(observed):
        return False
    if not math.isfinite(tolerance):  # an infinite tolerance lets any finite number through; NaN none
        return tolerance == math.inf
    return abs(Fraction(observed) - Fraction(expected)) <= Fraction(tolerance)


def _equal(observed, expected, tolerance: float | None) -> bool:
    if isinstance(expected, bool) or isinstance(observed, bool):
        return type(observed) is type(expected) and observed == expected
    if isinstance(expected, (int, float)) and isinstance(observed, (int, float)):
        return _numbers_equal(observed, expected, tolerance)
    if isinstance(expected, str) or isinstance(observed, str):
        return type(observed) is type(expected) and observed == expected
    if expected is None or observed is None:
        return observed is None and expected is None
    if isinstance(expected, list) and isinstance(observed, list):
        return len(observed) == len(expected) and all(
            _equal(o, e, tolerance) for o, e in zip(observed, expected))
    if isinstance(expected, dict) and isinstance(observed, dict):
        return observed.keys() == expected.keys() and all(
            _equal(observed[key], expected[key], tolerance) for key in expected)
    return False
