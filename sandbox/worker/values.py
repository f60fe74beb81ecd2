"""How a function's result, as the driver of a compiled (or JavaScript) program printed
it, is compared with the expected value: both JSON, compared here in W, where the
expected value is and the program's process never was.

The canonical form every driver prints (sandbox/drivers/): integers as integers,
floating-point numbers as the shortest text that reads back to the same value (NaN,
Infinity and -Infinity as those words), strings and characters as JSON strings, booleans,
null for nothing (None, nil, std::nullopt, undefined, unit), arrays for sequences and
tuples, objects for maps (a key that is not a string is written as its canonical text).

Equality: booleans equal only booleans; an integer equals an integer of the same value;
a number with a fraction or exponent (a float) equals another number only when both are
equal as floats (NaN equals NaN: both say "not a number"), or within `tolerance` when the
test gives one; strings, arrays and objects as JSON compares them, element by element.
No rule lets a value of another shape through: a string "3" is not the number 3.
"""
from __future__ import annotations

import json
import math

_DECODER = json.JSONDecoder(parse_constant={"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.__getitem__)
SHOWN_MAX = 200  # characters of a value shown in a failure's detail


class NotAValue(ValueError):
    """Text that is not one JSON value."""


def parse(text: str):
    try:
        value, end = _DECODER.raw_decode(text.strip())
    except (ValueError, RecursionError):
        raise NotAValue(f"not a value: {shown(text)}") from None
    if end != len(text.strip()):
        raise NotAValue(f"more than one value: {shown(text)}")
    return value


def shown(text: str) -> str:
    text = text.strip()
    return text if len(text) <= SHOWN_MAX else text[: SHOWN_MAX - 3] + "..."


def equal(observed, expected, tolerance: float | None = None) -> bool:
    if isinstance(expected, bool) or isinstance(observed, bool):
        return type(observed) is type(expected) and observed == expected
    if isinstance(expected, (int, float)) and isinstance(observed, (int, float)):
        if isinstance(expected, int) and isinstance(observed, int):
            return observed == expected
        a, b = float(observed), float(expected)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if tolerance is not None:
            return abs(a - b) <= tolerance or (math.isinf(a) and a == b)
        return a == b
    if isinstance(expected, str) or isinstance(observed, str):
        return type(observed) is type(expected) and observed == expected
    if expected is None or observed is None:
        return observed is None and expected is None
    if isinstance(expected, list) and isinstance(observed, list):
        return len(observed) == len(expected) and all(
            equal(o, e, tolerance) for o, e in zip(observed, expected))
    if isinstance(expected, dict) and isinstance(observed, dict):
        return observed.keys() == expected.keys() and all(
            equal(observed[key], expected[key], tolerance) for key in expected)
    return False
