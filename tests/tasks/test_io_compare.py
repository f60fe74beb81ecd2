"""The output comparison rules, one test per rule of each source's grader."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "sandbox" / "worker" / "io_compare.py"


def _load():
    spec = importlib.util.spec_from_file_location("io_compare_under_test", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


io_compare = _load()


def same(output: str, expected: str, rule: str) -> bool:
    return io_compare.compare(output, expected, rule)[0]


@pytest.mark.parametrize("rule", io_compare.RULES)
def test_line_endings_do_not_count(rule):
    assert same("1 2\r\n3\r\n", "1 2\n3\n", rule)


@pytest.mark.parametrize("rule", io_compare.RULES)
def test_trailing_whitespace_and_blank_lines_do_not_count(rule):
    assert same("1 2   \n3\t\n\n\n", "1 2\n3", rule)


@pytest.mark.parametrize("rule", io_compare.RULES)
def test_a_wrong_answer_fails(rule):
    assert not same("1 2\n4\n", "1 2\n3\n", rule)


@pytest.mark.parametrize("rule", io_compare.RULES)
def test_no_output_fails(rule):
    assert not same("", "3\n", rule)


def test_lcb_lines_must_match_in_number():
    assert not same("1\n2\n", "1 2\n", "lcb")
    assert io_compare.compare("1\n2\n", "1 2\n", "lcb")[1] == "2 lines, expected 1"


def test_lcb_leading_spaces_of_a_line_do_not_count():
    assert same("  1 2\n", "1 2\n", "lcb")


def test_lcb_spaces_inside_a_line_count_unless_numbers():
    assert not same("a  b\n", "a b\n", "lcb")
    assert same("1  2\n", "1 2\n", "lcb")  # equal as decimals, token by token


def test_lcb_numbers_equal_as_decimals_not_within_a_tolerance():
    assert same("0.50\n", "0.5\n", "lcb")
    assert same("1e3\n", "1000\n", "lcb")
    assert not same("0.1000001\n", "0.1\n", "lcb")
    # np.isclose would say yes here; Decimal does not (LiveCodeBench's own comment)
    assert not same("50000000000000001\n", "50000000000000000\n", "lcb")


def test_lcb_a_blank_line_inside_counts():
    assert not same("1\n\n2\n", "1\n2\n", "lcb")


def test_codecontests_ignores_lines_and_case():
    assert same("1\n2\n", "1 2\n", "codecontests")
    assert same("YES\n", "yes\n", "codecontests")


def test_codecontests_float_tolerance_is_absolute_1e_5():
    assert same("0.333333\n", "0.3333333333\n", "codecontests")
    assert not same("0.3333\n", "0.3333333333\n", "codecontests")
    assert same("2.000001\n", "2\n", "codecontests")  # a float beside an int: tolerance
    assert not same("3\n", "4\n", "codecontests")  # two ints: equal or not


def test_apps_float_lines_close():
    assert same("0.3333334\n", "0.3333333\n", "apps")
    assert not same("0.34\n", "0.33\n", "apps")


def test_apps_ignores_order_of_lines_and_tokens():
    # APPS's last check compares lines as a set of sets of tokens
    assert same("2 1\n3\n", "3\n1 2\n", "apps")


def test_apps_blank_lines_inside_do_not_count():
    assert same("1\n\n2\n", "1\n2\n", "apps")


def test_exact_keeps_inner_whitespace():
    assert not same("1  2\n", "1 2\n", "exact")
    assert not same(" 1\n", "1\n", "exact")


def test_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="unknown comparison rule"):
        io_compare.compare("", "", "fuzzy")


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
