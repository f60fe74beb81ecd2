"""A program graded many times learns nothing from earlier verdicts (issue 20).

It is asked exactly once per call the test makes (a failed assert's detail shows the
value the test observed, never a second call), it finds no trace of an earlier job in
the container, and it cannot carry what it learnt into a later job of its own or of
another program. Both backends, where the channel exists on them.
"""
from __future__ import annotations

import pytest

from sandbox import RunRequest, TestOutcome

# Counts its calls in its own process (P lives for one job) and says so on stdout.
COUNTING = (
    "calls = 0\n"
    "def f(x):\n"
    "    global calls\n"
    "    calls += 1\n"
    "    print(f'call {calls}', flush=True)\n"
    "    return calls * 100 + x\n"
)

# (test, status, calls the test text makes, detail or None)
ASKED_ONCE = [
    ("assert f(1) == 101", "passed", 1, None),
    ("assert f(1) == 0", "failed", 1, "assert f(1) == 0  # got 101"),
    ("assert f(1) == 101\nassert f(2) == 0", "failed", 2, "assert f(2) == 0  # got 202"),
    ("for x in range(3):\n    assert f(x) == 100 * (x + 1) + x", "passed", 3, None),
    ("for x in range(3):\n    assert f(x) == 0", "failed", 1, "assert f(x) == 0  # got 100"),
    ("def check(candidate):\n    assert candidate(1) == 101\n    assert candidate(2) == 0, 'two'\ncheck(f)",
     "failed", 2, "assert candidate(2) == 0, 'two'  # got 202"),
    ("assert [f(1), f(2)] == [0]", "failed", 2, "assert [f(1), f(2)] == [0]  # got [101, 202]"),
    ("assert f(1) + f(2) < 0", "failed", 2, "assert f(1) + f(2) < 0  # got 303"),
    ("assert f(1) == 101 and f(2) == 0", "failed", 2, "assert f(1) == 101 and f(2) == 0"),
    ("assert f(1) in (0, 1)", "failed", 1, "assert f(1) in (0, 1)  # got 101"),
    ("assert 0 == f(1)", "failed", 1, "assert 0 == f(1)  # got 0"),
    ("x = f(1)\nassert x == 0", "failed", 1, "assert x == 0  # got 101"),
    ("assert f(1) == 0, f(2)", "failed", 2, "assert f(1) == 0, f(2)  # got 101"),
    ("assert f(1) < f(2) < 0", "failed", 2, "assert f(1) < f(2) < 0"),
    ("class Case:\n    assert f(1) == 0", "failed", 1, "assert f(1) == 0  # got 101"),
    ("assert f(1) == 101; assert f(2) == 0", "failed", 2, "assert f(2) == 0  # got 202"),
]


def run_one(sandbox, program: str, test: str) -> TestOutcome:
    [outcome] = sandbox.run(RunRequest(program, [test]))
    return outcome


@pytest.mark.parametrize("test, status, calls, detail", ASKED_ONCE, ids=[case[0] for case in ASKED_ONCE])
def test_the_program_is_asked_once_per_call_the_test_makes(sandbox, test, status, calls, detail):
    """Under passing and failing asserts alike, the program sees exactly the calls the
    test's text makes: the failure detail is the value the test observed."""
    outcome = run_one(sandbox, COUNTING, test)
    assert outcome.status == status, outcome
    assert outcome.output.splitlines() == [f"call {n}" for n in range(1, calls + 1)], outcome
    if detail is not None:
        assert outcome.detail == detail, outcome
