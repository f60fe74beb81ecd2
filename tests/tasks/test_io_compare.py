"""The output comparison rules: the strict rule with each source's tolerance (the
default), each source's own grader's rule (mode "source"), and hostile outputs that must
neither pass nor make a comparison raise or run long."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.helpers import cpu_units

_PATH = Path(__file__).resolve().parents[2] / "sandbox" / "worker" / "io_compare.py"


def _load():
    spec = importlib.util.spec_from_file_location("io_compare_under_test", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


io_compare = _load()


def same(output: str | bytes, expected: str, rule: str, mode: str = "strict") -> bool:
    return io_compare.compare(output, expected, rule, mode)[0]


def source(output: str, expected: str, rule: str) -> bool:
    return same(output, expected, rule, "source")


EVERY = [(rule, mode) for rule in io_compare.RULES for mode in io_compare.MODES]


@pytest.mark.parametrize("rule, mode", EVERY)
def test_line_endings_do_not_count(rule, mode):
    assert same("1 2\r\n3\r\n", "1 2\n3\n", rule, mode)


@pytest.mark.parametrize("rule, mode", EVERY)
def test_trailing_whitespace_and_blank_lines_do_not_count(rule, mode):
    assert same("1 2   \n3\t\n\n\n", "1 2\n3", rule, mode)


@pytest.mark.parametrize("rule, mode", EVERY)
def test_a_wrong_answer_fails(rule, mode):
    assert not same("1 2\n4\n", "1 2\n3\n", rule, mode)


@pytest.mark.parametrize("rule, mode", EVERY)
def test_no_output_fails(rule, mode):
    assert not same("", "3\n", rule, mode)


def test_the_default_is_strict():
    assert io_compare.DEFAULT_MODE == "strict"
    assert io_compare.compare("3 1 2\n", "1 2 3\n", "apps") == (False, "token 1 differs")


# --- the strict rule (the default)


@pytest.mark.parametrize("rule", ["lcb", "codecontests", "apps"])
def test_strict_is_token_for_token_in_order(rule):
    assert same("1\n2\n", "1 2\n", rule)  # lines do not count, tokens do
    assert not same("2 1\n", "1 2\n", rule)
    assert not same("1 2 2\n", "1 2\n", rule)
    assert io_compare.compare("1 2 2\n", "1 2\n", rule)[1] == "3 tokens, expected 2"
    assert not same("a  b c\n", "a b\n", rule)
    assert not same("yes\n", "YES\n", rule)  # case counts


@pytest.mark.parametrize("rule", ["lcb", "codecontests", "apps"])
def test_strict_integers_of_any_size_are_exact(rule):
    big = 10**18
    assert not same(f"{big + 7}\n", f"{big}\n", rule)
    assert same(f"00{big}\n", f"{big}\n", rule) and same("-0\n", "0\n", rule) and same("+5\n", "5\n", rule)
    huge = "7" * 5000  # past the 4,300 digits int() converts
    assert same(f"{huge} 0.50\n", f"{huge} 0.5\n", rule)
    assert not same(f"{huge}8 0.5\n", f"{huge}9 0.5\n", rule)


@pytest.mark.parametrize("rule", ["lcb", "codecontests", "apps"])
def test_strict_decimals_equal_exactly_whatever_their_form(rule):
    assert same("0.50\n", "0.5\n", rule) and same("8.0\n", "8\n", rule) and same("1e3\n", "1000\n", rule)
    assert same(".5\n", "0.5\n", rule) and same("1E+3\n", "1000.000\n", rule)
    # a tolerance never applies beside an integer
    assert not same("8.000001\n", "8\n", rule) and not same("8\n", "8.000001\n", rule)


def test_strict_float_tolerance_per_source():
    # LiveCodeBench: none
    assert not same("0.1000001\n", "0.1\n", "lcb")
    # CodeContests: an absolute 1e-5, in decimals (not doubles)
    assert same("0.333333\n", "0.3333333333\n", "codecontests")
    assert not same("0.3333\n", "0.3333333333\n", "codecontests")
    assert not same("1000000000000000000.5\n", "1000000000000000000.0\n", "codecontests")
    assert same("1000000000000000000.000001\n", "1000000000000000000.0\n", "codecontests")
    # APPS: numpy's allclose, |a - b| <= 1e-8 + 1e-5 |b|
    assert same("0.3333334\n", "0.3333333\n", "apps") and not same("0.34\n", "0.33\n", "apps")
    assert same("100000.5\n", "100000.0\n", "apps") and not same("100002.0\n", "100000.0\n", "apps")
    described = io_compare.describe()["strict"]
    assert "exactly" in described["lcb"] and "1e-5 + 0" in described["codecontests"]
    assert "1e-8 + 1e-5" in described["apps"]


# --- each source's own rule (mode "source")


def test_lcb_lines_must_match_in_number():
    assert not source("1\n2\n", "1 2\n", "lcb")
    assert io_compare.compare("1\n2\n", "1 2\n", "lcb", "source")[1] == "2 lines, expected 1"


def test_lcb_leading_spaces_of_a_line_do_not_count():
    assert source("  1 2\n", "1 2\n", "lcb")


def test_lcb_spaces_inside_a_line_count_unless_numbers():
    assert not source("a  b\n", "a b\n", "lcb")
    assert source("1  2\n", "1 2\n", "lcb")  # equal as decimals, token by token


def test_lcb_numbers_equal_as_decimals_not_within_a_tolerance():
    assert source("0.50\n", "0.5\n", "lcb")
    assert source("1e3\n", "1000\n", "lcb")
    assert not source("0.1000001\n", "0.1\n", "lcb")
    # np.isclose would say yes here; Decimal does not (LiveCodeBench's own comment)
    assert not source("50000000000000001\n", "50000000000000000\n", "lcb")


def test_lcb_a_blank_line_inside_counts():
    assert not source("1\n\n2\n", "1\n2\n", "lcb")


def test_codecontests_ignores_lines_and_case():
    assert source("1\n2\n", "1 2\n", "codecontests")
    assert source("YES\n", "yes\n", "codecontests")


def test_codecontests_float_tolerance_is_absolute_1e_5():
    assert source("0.333333\n", "0.3333333333\n", "codecontests")
    assert not source("0.3333\n", "0.3333333333\n", "codecontests")
    assert source("2.000001\n", "2\n", "codecontests")  # a float beside an int: tolerance
    assert not source("3\n", "4\n", "codecontests")  # two ints: equal or not


def test_apps_float_lines_close():
    assert source("0.3333334\n", "0.3333333\n", "apps")
    assert not source("0.34\n", "0.33\n", "apps")


def test_apps_ignores_order_of_lines_and_tokens():
    # APPS's last check compares lines as a set of sets of tokens
    assert source("2 1\n3\n", "3\n1 2\n", "apps")


def test_apps_blank_lines_inside_do_not_count():
    assert source("1\n\n2\n", "1\n2\n", "apps")


@pytest.mark.parametrize("mode", io_compare.MODES)
def test_exact_keeps_inner_whitespace(mode):
    assert not same("1  2\n", "1 2\n", "exact", mode)
    assert not same(" 1\n", "1\n", "exact", mode)
    assert not same("0.50\n", "0.5\n", "exact", mode)


def test_unknown_rule_or_mode_is_refused():
    with pytest.raises(ValueError, match="unknown comparison rule"):
        io_compare.compare("", "", "fuzzy")
    with pytest.raises(ValueError, match="unknown comparison mode"):
        io_compare.compare("", "", "lcb", "lenient")


def test_the_module_is_stdlib_only():
    # It ships in the sandbox image: nothing outside the standard library.
    import ast
    import sys

    tree = ast.parse(_PATH.read_text())
    imported = {
        (n.module if isinstance(n, ast.ImportFrom) else a.name).split(".")[0]
        for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in (n.names if isinstance(n, ast.Import) else [n])
    }
    imported.discard("__future__")
    assert imported <= set(sys.stdlib_module_names)


# --- hostile outputs: none passes, none makes a comparison raise or run long

SORT = ("5\n3 1 2 5 4\n", "1 2 3 4 5\n")  # (the input, the sorted answer)
HOSTILE = {
    # (what the program prints, the expected output)
    "the input echoed unsorted, for a sort": ("3 1 2 5 4\n", SORT[1]),
    "YES/NO for any YES/NO queries": ("YES\nNO\n", "YES\nNO\nNO\nYES\nYES\n"),
    "n*n + 7 for n*n near 1e18": (f"{10**18 + 7}\n", f"{10**18}\n"),
    "the smallest item for a sort": ("1\n", SORT[1]),
    "sNaN": ("sNaN\n", "5\n"),
    "sNaN after a right first line": ("6\nsNaN\n", "6\n7\n"),
    "NaN": ("NaN\n", "NaN0\n"),
    "inf for a large number": ("inf\n", "1e400\n"),
    "Infinity for inf": ("Infinity\n", "inf\n"),
    "a number over 4,300 digits beside a token of another form": ("9" * 5000 + " 0.5\n", "9" * 4999 + "8 0.50\n"),
    "underscores in a number": ("1_6\n", "16\n"),
    "Arabic-Indic digits": ("\u0661\u0666\n", "16\n"),
    "full-width digits": ("\uff11\uff16\n", "16\n"),
    "hexadecimal": ("0x10\n", "16\n"),
    "a no-break space inside a token": ("1\u00a02\n", "1 2\n"),
    "an exponent too long for a decimal": ("1e99999999999999999999\n", "1e99999999999999999998\n"),
    "NUL": ("6\x00\n", "6\n"),
    "invalid UTF-8": (b"\xff6\n", "6\n"),
    "invalid UTF-8 where U+FFFD is expected": (b"\xff\n", "\ufffd\n"),
    "a lone surrogate escape": ("\udcff6\n", "6\n"),
    "a giant line": ("7" * 3_000_000 + "\n", "7" * 2_999_999 + "8\n"),
    "a million tokens, the last wrong": ("0.50 " * 999_999 + "1\n", "0.5 " * 1_000_000 + "\n"),
    "a million tokens, one too many": ("1 " * 1_000_001, "1 " * 1_000_000),
}


# A comparison's CPU budget in tests.helpers.cpu_units' machine-relative units: the
# slowest of these (a million tokens) was measured at about 40, linear in the output;
# a quadratic comparison of them would take millions.
COMPARE_BUDGET = 400


@pytest.mark.parametrize("name", list(HOSTILE))
@pytest.mark.parametrize("rule", ["lcb", "codecontests", "apps", "exact"])
def test_hostile_outputs_do_not_pass_strict(name, rule):
    output, expected = HOSTILE[name]
    (verdict, why), spent = cpu_units(io_compare.compare, output, expected, rule, "strict")
    assert (verdict, bool(why)) == (False, True), why
    assert spent < COMPARE_BUDGET, f"{spent:.0f} CPU units"


@pytest.mark.parametrize("name", list(HOSTILE))
@pytest.mark.parametrize("rule", ["lcb", "codecontests", "apps", "exact"])
def test_hostile_outputs_never_make_a_source_rule_raise(name, rule):
    output, expected = HOSTILE[name]
    (verdict, why), spent = cpu_units(io_compare.compare, output, expected, rule, "source")  # passes or not: never raises
    assert isinstance(verdict, bool) and isinstance(why, str)
    assert spent < COMPARE_BUDGET, f"{spent:.0f} CPU units"


def test_the_sources_own_rules_pass_the_forgeries_they_are_known_for():
    """Why they are a named mode and never the default: each passes a wrong answer."""
    assert source(*HOSTILE["the input echoed unsorted, for a sort"], "apps")
    assert source(*HOSTILE["YES/NO for any YES/NO queries"], "apps")
    assert source(*HOSTILE["n*n + 7 for n*n near 1e18"], "codecontests")
    assert source("\u0661\u0666\n", "16\n", "lcb")  # Decimal reads Unicode digits


def test_an_honest_answer_with_a_huge_integer_passes_the_strict_rule():
    huge = "12345" * 1000
    for rule in ("lcb", "codecontests", "apps"):
        assert same(f"{huge}\n0.50\n", f"{huge}\n0.5\n", rule)
        assert source(f"{huge}\n0.50\n", f"{huge}\n0.5\n", rule)  # and under its own rule (once an error)
