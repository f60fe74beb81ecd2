"""Judges a program's standard output against a test's expected output.

Standard library only: it runs in the worker (W), never in the program's process, so
nothing the program does decides its verdict except the bytes it wrote to stdout.

Every test names a *rule* (its source: ``lcb``, ``codecontests``, ``apps``, ``exact``)
and is judged in one of two *modes*:

``strict`` (the default): the output passes only when it is the expected output token
for token, in order. Tokens are the runs of bytes between ASCII whitespace (space, tab,
CR, LF, VT, FF; so line breaks, "\\r\\n" and trailing blank lines do not count, and
nothing else splits a token: no NBSP, no Unicode space). Two tokens match when they are
the same bytes, or

- both are integers (``[+-]?[0-9]+``, ASCII digits only): equal as integers, of any
  size (compared as digit strings, never converted: ``007`` = ``7``, ``-0`` = ``0``);
- both are decimal numbers (ASCII digits, an optional point, an optional exponent of at
  most 6 digits) and at least one is not an integer: equal as decimals (exactly:
  ``0.50`` = ``0.5``, ``8.0`` = ``8``, ``1e3`` = ``1000``); or, where *both* are
  non-integers, within the rule's float tolerance (STRICT_TOLERANCE: LiveCodeBench
  none, CodeContests an absolute 1e-5, APPS numpy's allclose), computed in decimal
  arithmetic (never in doubles: near 1e18 neighbouring doubles are 128 apart).

Anything else (``0x10``, ``1_6``, Unicode digits, ``inf`` beside ``Infinity``, a case
difference, NUL, bytes that are not UTF-8) is a different token. The ``exact`` rule is
stricter in both modes: the text itself, with "\\r\\n" as "\\n" and trailing whitespace
of each line and of the whole ignored.

``source``: the source's own grader's rule, for comparability with its published
numbers. Some of these accept wrong answers, so they are never a default:

- ``lcb`` (LiveCodeBench, ``lcb_runner/evaluation/testing_util.py``, ``grade_stdio``):
  both texts stripped, split on "\\n", every line stripped; the line counts must be
  equal; a line matches when equal as text or when both split into the same number of
  tokens that are equal as ``Decimal`` (no tolerance).
- ``codecontests`` (DeepMind's ``execution/tester_sandboxer.cc``, ``OutputsMatch``):
  tokens lower-cased, lines ignored; equal token lists match; else, with as many
  tokens, each pair must match: two integers that fit an int32 exactly, two numbers of
  which one is a float (an integer past int32 is read as a double) within an absolute
  1e-5, text exactly. Accepts ``n*n + 7`` for ``n*n`` near 1e18.
- ``apps`` (APPS's ``eval/testing_util.py``, standard input): the first of its checks
  that says yes: the stripped texts equal; the stripped non-empty lines equal; every
  line one number and all close (numpy's allclose); the lines as a set of sets of tokens
  equal (order and repetition ignored), as tokens or as numbers rounded to 3 decimals.
  Accepts an unsorted echo for a sort and ``YES``/``NO`` for any YES/NO queries.

A comparison always answers, in time linear in the sizes of the two texts: whatever
the output holds (sNaN, integers of any length, giant lines, millions of tokens), what
cannot be decided is a wrong answer, never an exception (``compare`` never raises for
any output; only an unknown rule or mode is refused).
"""
from __future__ import annotations

import math
import re
from decimal import Context, Decimal, InvalidOperation

RULES = ("lcb", "codecontests", "apps", "exact")
MODES = ("strict", "source")
DEFAULT_RULE = "lcb"
DEFAULT_MODE = "strict"

# Both tokens non-integer decimals: |a - b| <= absolute + relative * |b| (strict mode).
STRICT_TOLERANCE: dict[str, tuple[str, str] | None] = {
    "lcb": ("0", "0"),  # LiveCodeBench compares decimals exactly
    "codecontests": ("1e-5", "0"),  # CodeContests' absolute 1e-5
    "apps": ("1e-8", "1e-5"),  # numpy.allclose's defaults, as APPS's check uses
    "exact": None,  # the text itself
}
_CC_TOLERANCE = 1e-5
_APPS_RTOL, _APPS_ATOL = 1e-5, 1e-8
_CC_INT = re.compile(r"[+-]?\d+")
_INT = re.compile(rb"[+-]?[0-9]+")
_DECIMAL = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,6})?")
# Tolerance arithmetic: 60 significant digits, no trap (an overflow is an infinity).
_CONTEXT = Context(prec=60, Emax=10**9, Emin=-(10**9), traps=[])
# What data can make the arithmetic or the rules' own parsing fail: the program's
# wrong answer, never the worker's failure.
_UNDECIDABLE = (ArithmeticError, ValueError, MemoryError, RecursionError)


def describe() -> dict:
    """The rules and their tolerances, as run.json records them."""
    return {
        "modes": list(MODES),
        "default_mode": DEFAULT_MODE,
        "strict": {
            rule: ("the text, trailing whitespace ignored" if tol is None else
                   "tokens in order; integers exactly; decimals exactly, or where both are non-integers "
                   + ("exactly" if tol == ("0", "0") else f"|a-b| <= {tol[0]} + {tol[1]}*|b|"))
            for rule, tol in STRICT_TOLERANCE.items()
        },
        "source": {
            "lcb": "LiveCodeBench grade_stdio: lines, each equal as text or as Decimal tokens",
            "codecontests": "CodeContests OutputsMatch: lower-cased tokens; int32 exactly; a float beside any "
                            "number within an absolute 1e-5 (as doubles)",
            "apps": "APPS testing_util: texts, lines, numbers allclose, then lines as a set of token sets "
                    "(also rounded to 3 decimals)",
            "exact": "the text, trailing whitespace ignored",
        },
    }


# --- strict


def _integer_digits(token: bytes) -> tuple[bool, bytes]:
    """(negative, digits without leading zeros) of an integer token; -0 is 0."""
    negative = token[:1] == b"-"
    digits = token.lstrip(b"+-").lstrip(b"0") or b"0"
    return negative and digits != b"0", digits


def _is_integer(token: bytes) -> bool:
    return len(token) > 0 and _INT.fullmatch(token) is not None


def _token_match(a: bytes, b: bytes, tolerance: tuple[Decimal, Decimal]) -> bool:
    """Whether the printed token `a` counts as the expected token `b` (they differ as bytes)."""
    a_int, b_int = _is_integer(a), _is_integer(b)
    if a_int and b_int:
        return _integer_digits(a) == _integer_digits(b)
    if _DECIMAL.fullmatch(a) is None or _DECIMAL.fullmatch(b) is None:
        return False
    x, y = Decimal(a.decode("ascii")), Decimal(b.decode("ascii"))
    if x == y:  # exact, whatever the forms
        return True
    absolute, relative = tolerance
    if a_int or b_int or (not absolute and not relative):
        return False  # a tolerance only where both are non-integers
    bound = _CONTEXT.add(absolute, _CONTEXT.multiply(relative, y.copy_abs()))
    return _CONTEXT.subtract(x, y).copy_abs() <= bound


def _strict(output: bytes, expected: bytes, rule: str) -> tuple[bool, str]:
    if output == expected:
        return True, ""
    tolerance = STRICT_TOLERANCE[rule]
    if tolerance is None:
        return _exact(output, expected)
    got, want = output.split(), expected.split()
    if len(got) != len(want):
        return False, f"{len(got)} tokens, expected {len(want)}"
    if got == want:
        return True, ""
    tol = (Decimal(tolerance[0]), Decimal(tolerance[1]))
    for number, (a, b) in enumerate(zip(got, want), start=1):
        if a != b and not _token_match(a, b, tol):
            return False, f"token {number} differs"
    return True, ""


def _exact(output: bytes, expected: bytes) -> tuple[bool, str]:
    def norm(text: bytes) -> list[bytes]:
        return [line.rstrip() for line in text.replace(b"\r\n", b"\n").rstrip().split(b"\n")]

    return (True, "") if norm(output) == norm(expected) else (False, "output differs")


# --- the sources' own rules (mode "source"), on text


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
        try:  # a signalling NaN ("sNaN") raises on ==: the line differs
            same = da is not None and db is not None and da == db
        except InvalidOperation:
            same = False
        if not same:
            return False, f"line {number} differs"
    return True, ""


def _cc_number(token: str) -> tuple[str, float] | None:
    """("int", v) or ("float", v) as absl's SimpleAtoi / SimpleAtod would read it."""
    # An int32 has at most 10 digits and a sign: a longer token is no int (and int()
    # of one over 4,300 digits would raise).
    if len(token) <= 11 and _CC_INT.fullmatch(token):
        value = int(token)
        if -(1 << 31) <= value < (1 << 31):  # SimpleAtoi into an int
            return "int", float(value)
    try:
        value = float(token)
    except ValueError:
        return None
    return "float", value


def _cc_match(a: str, b: str) -> bool:
    if a == b:  # the same token, whatever a double would make of it (inf - inf is NaN)
        return True
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


_SOURCE_RULES = {"lcb": _lcb, "codecontests": _codecontests, "apps": _apps}


def _as_bytes(output: bytes | str) -> bytes:
    """The output's bytes: text as UTF-8, its escaped bytes back as they were and any
    other lone surrogate as its own three bytes (not UTF-8: a different token)."""
    if not isinstance(output, str):
        return bytes(output)
    try:
        return output.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return output.encode("utf-8", "surrogatepass")


def compare(output: bytes | str, expected: str, rule: str = DEFAULT_RULE, mode: str = DEFAULT_MODE) -> tuple[bool, str]:
    """(whether `output`, the program's stdout, passes for `expected` under `rule` in
    `mode`, why not in a few words). Never raises for any output."""
    if rule not in RULES:
        raise ValueError(f"unknown comparison rule {rule!r}; known: {', '.join(RULES)}")
    if mode not in MODES:
        raise ValueError(f"unknown comparison mode {mode!r}; known: {', '.join(MODES)}")
    data = _as_bytes(output)
    want = expected.encode("utf-8")  # the task's text: a failure here is not the program's
    try:
        if mode == "strict" or rule == "exact":
            return _strict(data, want, rule)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return False, f"the output is not UTF-8 text (byte {exc.start + 1})"
        return _SOURCE_RULES[rule](text, expected)
    except _UNDECIDABLE as exc:
        return False, f"the comparison could not decide ({type(exc).__name__}): a wrong answer"
