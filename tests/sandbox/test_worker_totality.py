"""Every reading of a program's result and every comparison in the worker is total:
whatever bytes a program prints and whatever value it returns, the reader answers a
value or its own "not a value", and the comparison answers pass or fail; nothing else
is ever raised (an exception there would fail the worker, not the program: the job
would rerun, fault again, and the attempt would leave the score).

A deterministic fuzz over the worker's pure functions (no sandbox, no Docker): random
bytes, Unicode digits, surrogates, huge numbers, deep nesting, long lines and every
special float, through values.parse/equal, native's result reading and verdict,
io_compare in every rule and mode, plain.from_tree (the test process's reader of the
program's data) and the report line W reads from the test process. Then the exact
rules for numbers, with the hostile results the rules exist for."""
from __future__ import annotations

import itertools
import json
import math
import random

import pytest

from sandbox.worker import io_compare, native, plain, supervisor, values
from sandbox.worker.protocol import WireError

SEED = 44
# Pieces a hostile program prints: digits of every script, signs, words for numbers,
# JSON punctuation, escapes, surrogates, NUL and control bytes.
PIECES = (
    "0", "1", "7", "9", "-", "+", ".", "e", "E", "e+", "e-", "²", "³", "¹", "١", "٣", "۷", "०", "๓", "０", "９",
    "𝟘", "𝟗", "Ⅻ", "½", "⁴", "₅", "NaN", "nan", "sNaN", "Infinity", "-Infinity", "inf", "-inf", "Inf", "1e999",
    "-1e999", "1e-999", "0x10", "1_0", "007", "-0", "-0.0", "0.0", "5e-324", "1.7976931348623157e308", "[", "]",
    "{", "}", ",", ":", '"', "\\", "\\u", "\\ud800", "\\udc00", "\ud800", "\udfff", "\udc80", "\x00", "\x1b[2J",
    "\t", "\n", "\r\n", "\x0b", "\x0c", "\xa0", "\u2028", "\u3000", "true", "false", "null", "end", " ", "é", "🙂",
)
SPECIAL_FLOATS = (0.0, -0.0, math.nan, -math.nan, math.inf, -math.inf, 5e-324, -5e-324, 2.2250738585072014e-308,
                  1.7976931348623157e308, -1.7976931348623157e308, 0.1, 0.30000000000000004, 1e21, 1e22, 9e18,
                  2.0 ** 53, 2.0 ** 53 + 2, 2.0 ** 63, 2.0 ** 64, 3.0, -3.0)
SPECIAL_INTS = (0, 1, -1, 3, 2 ** 53, 2 ** 53 + 1, 2 ** 63 - 1, -(2 ** 63), 2 ** 64, 9000000000000000007,
                10 ** 21 + 7, 10 ** 22 + 7, 10 ** 400, -(10 ** 400), 10 ** 3999, int("7" * 4000))
TOLERANCES = (None, 0.0, 1e-9, 0.5, 1e300, math.inf, math.nan)


def _text(rng: random.Random) -> str:
    """A hostile result line: pieces, runs of digits, brackets (the extremes: EXTREMES)."""
    parts = []
    for _ in range(rng.randint(0, 10)):
        roll = rng.random()
        if roll < 0.08:
            parts.append(rng.choice("0123456789²١") * rng.choice((1, 2, 17, 20, 309, 401)))
        elif roll < 0.1:
            depth = rng.choice((2, 10, 100))
            parts.append(rng.choice(("[" * depth + "]" * depth, "[" * depth, '{"a":' * depth + "1" + "}" * depth)))
        else:
            parts.append(rng.choice(PIECES))
    return "".join(parts)


# What no random draw should be relied on to reach: every one goes through every reader.
EXTREMES = ("9" * 4000, "9" * 4001, "9" * 6000, "-" + "9" * 4000, "1" * 400 + ".5", "1e" + "9" * 7,
            "[" * 1100 + "]" * 1100, "[" * 100_000, '{"a":' * 3000 + "1" + "}" * 3000, "1 " * 100_000,
            "x" * 300_000, "\ud800" * 1000, "²" * 5000, "0." + "0" * 5000 + "1", "1e-99999999",
            "NaN " * 1000, "sNaN", "-0", "-0.0", "1e999", "-1e999")


def _bytes(rng: random.Random) -> bytes:
    if rng.random() < 0.5:
        return rng.randbytes(rng.randint(0, 64))
    return _text(rng).encode("utf-8", "surrogatepass")


def _value(rng: random.Random, depth: int = 0) -> object:
    """A value a driver (or a program writing its own result line) may make."""
    roll = rng.random()
    if roll < 0.25:
        return rng.choice(SPECIAL_FLOATS)
    if roll < 0.45:
        return rng.choice(SPECIAL_INTS) * rng.choice((1, -1))
    if roll < 0.55:
        return rng.choice((True, False, None, "", "3", "\ud800", "²", "NaN"))
    if roll < 0.56:
        nested: object = 1
        for _ in range(3000 if roll < 0.551 else rng.choice((10, 100))):
            nested = [nested]
        return nested
    if depth > 3 or roll < 0.7:
        return rng.uniform(-1e20, 1e20)
    if roll < 0.85:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(("a", "b", "3", "\ud800")): _value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def _expected_text(rng: random.Random) -> str:
    """An expected value as the host sends it (json.dumps of the task's value)."""
    try:
        return json.dumps(_value(rng))
    except RecursionError:  # too deep for the host to write: no task holds it
        return "null"


def _parse_or_not(text: str) -> object:
    try:
        return values.parse(text)
    except values.NotAValue:
        return None


def test_reading_and_comparing_results_never_raise():
    rng = random.Random(SEED)
    cases = 0
    for text in EXTREMES + tuple(_text(rng) for _ in range(30_000)):
        read = _parse_or_not(text)  # only NotAValue may come out
        assert values.equal(read, _value(rng), rng.choice(TOLERANCES)) in (True, False)
        assert values.equal(read, read, rng.choice(TOLERANCES)) in (True, False)
        assert values.equal(_value(rng), _value(rng), rng.choice(TOLERANCES)) in (True, False)
        cases += 4
    specials = SPECIAL_FLOATS + SPECIAL_INTS + tuple(-n for n in SPECIAL_INTS)
    for (a, b), tolerance in itertools.product(itertools.product(specials, repeat=2), TOLERANCES):
        assert values.equal(a, b, tolerance) in (True, False)
        assert values.equal([a], {"k": b}, tolerance) is False
        cases += 2
    assert cases >= 100_000


def test_the_result_lines_and_the_call_verdict_never_raise():
    rng = random.Random(SEED + 1)
    token = "0123456789abcdef"
    statuses = set()
    for number in range(6_000):
        count = rng.randint(1, 12)
        expected = [_expected_text(rng) for _ in range(count)]
        lines = []
        for _ in range(rng.randint(0, 8)):
            head = rng.choice(("0", "1", "²", "١", "00", "9" * 5000, "end", "-1", " ", str(rng.randint(0, 15)), ""))
            lines.append(rng.choice((token, token, "x" * 16)) + " " + head + " " + _text(rng))
        if number % 10 == 0:  # the right answers, then a hostile tail
            lines = [f"{token} {index} {text}" for index, text in enumerate(expected)] + [f"{token} end"] + lines
        elif number % 10 == 1:
            lines.append(f"{token} {rng.randrange(count)} {rng.choice(EXTREMES)}")
        data = "\n".join(lines).encode("utf-8", "surrogatepass")
        if rng.random() < 0.3:
            data += rng.randbytes(rng.randint(0, 200))
        found = native._results(data, token, count)
        assert all(key == "end" or (type(key) is int and 0 <= key < count) for key in found)
        labels = [f"call {index + 1}" for index in range(count)]
        verdict = native._call_verdict(found, expected, labels, rng.choice(TOLERANCES), number % 10 == 0 or rng.random() < 0.8,
                                       "exited with status 0", _text(rng))
        assert verdict["status"] in ("passed", "failed", "error") and isinstance(verdict["detail"], str)
        statuses.add(verdict["status"])
    assert statuses == {"passed", "failed", "error"}


def _unicode(text: str) -> str:
    """The task's expected text is always Unicode."""
    return text.encode("utf-8", "replace").decode()


def test_every_io_rule_and_mode_answers_for_any_output():
    rng = random.Random(SEED + 2)
    cases = 0
    pairs = [(extreme.encode("utf-8", "surrogatepass"), _unicode(other)) for extreme in EXTREMES
             for other in ("1", "1 " * 100_000, "9" * 6000, extreme)]
    pairs += [(_bytes(rng), _unicode(_text(rng))) for _ in range(2_000)]
    for output, expected in pairs:
        for rule, mode in itertools.product(io_compare.RULES, io_compare.MODES):
            for printed in (output, output.decode("utf-8", "surrogateescape")):
                same, why = io_compare.compare(printed, expected, rule, mode)
                assert same in (True, False) and isinstance(why, str)
                cases += 1
    assert cases >= 30_000


def test_the_test_process_s_readers_refuse_only_by_their_own_error():
    rng = random.Random(SEED + 3)
    trees = [["float", "0x1p99999"], ["complex", "0x1p99999", "0x0p0"], ["int", "0x" + "f" * 50000],
             ["dict", [[["list", []], 1]]], ["set", [["set", []]]], ["float", "inf"], ["bytes", "zz"]]
    for text in EXTREMES + tuple(_text(rng) for _ in range(5_000)):
        tree = _parse_or_not(text) if rng.random() < 0.5 else rng.choice(trees + [_value(rng)])
        try:
            plain.from_tree(tree)
        except WireError:
            pass
        report = bytearray(text.encode("utf-8", "surrogatepass") + b"\n")
        assert supervisor._calls_done(report, "token", 7) in (True, False)


@pytest.mark.parametrize("observed, expected", [
    ("1e22", "10000000000000000000007"),  # a JavaScript Number that dropped the +7
    ("9.000000003e+18", "9000000003000000007"),  # (n as f64) * (n as f64) for n*n + 7 near 3e9
    ("9000000003000000000.0", "9000000003000000007"),
    ("1" + "0" * 400, "1.5"),  # 10n**400n where a float is expected
    ("1" + "0" * 400, "Infinity"),
    ("1e999", "Infinity"),  # only the word says infinity
    ("1" * 401, "1e400"),  # the expected text overflows too: never equal
    ("3.5", "3"),
    ("NaN", "0"),
    ("true", "1"),
    ('"3"', "3"),
    ("2.0000001", "2"),  # a tolerance is for a float expected value only
])
def test_numbers_compare_exactly_and_a_wrong_one_fails(observed, expected):
    try:
        read = values.parse(observed)
    except values.NotAValue:
        return  # the program's error: not a pass either
    try:
        wanted = values.parse(expected)
    except values.NotAValue:
        return
    assert not values.equal(read, wanted) and not values.equal(read, wanted, 1e-6)


@pytest.mark.parametrize("observed, expected, tolerance", [
    ("9000000003000000007", "9000000003000000007", None),
    ("3", "3.0", None),  # an integral result for a float expected value
    ("3.0", "3", None),  # an integral float for an integer expected value: exactly equal
    ("1e+22", "10000000000000000000000", None),
    ("-0.0", "0", None),
    ("NaN", "NaN", None),
    ("-Infinity", "-Infinity", 1e-9),
    ("0.30000000000000004", "0.3", 1e-9),
    ("1", "1.0000001", 1e-6),
    ("[1, 2.5, \"a\", null, true]", "[1, 2.5, \"a\", null, true]", None),
])
def test_equal_numbers_still_pass(observed, expected, tolerance):
    assert values.equal(values.parse(observed), values.parse(expected), tolerance)


def test_a_unicode_digit_or_a_giant_index_is_no_result_line():
    token = "t"
    data = "t ² 3\nt 9999999999999999999999 3\nt 0 3\nt ١ 4\nt end\n".encode()
    assert native._results(data, token, 2) == {0: "3"}
    verdict = native._call_verdict(native._results(data, token, 2), ["3", "4"], ["a", "b"], None, True, "exited", "")
    assert verdict["status"] == "error" and verdict["detail"].startswith("b  #")


def test_every_call_is_compared_and_the_first_wrong_one_decides():
    found = {0: "1", 1: "1" + "0" * 401, 2: "[[[[", "end": True}
    verdict = native._call_verdict(found, ["2", "1.5", "0", "0"], ["a", "b", "c", "d"], None, True, "exited", "")
    assert verdict == {"status": "failed", "detail": "a  # got 1"}
    found[0] = "2"
    assert native._call_verdict(found, ["2", "1.5", "0"], ["a", "b", "c"], None, True, "exited", "")["status"] == "failed"


def test_text_with_a_lone_surrogate_is_compared_not_refused():
    for rule, mode in itertools.product(io_compare.RULES, io_compare.MODES):
        assert io_compare.compare("\ud800 1\n", "1\n", rule, mode)[0] is False
