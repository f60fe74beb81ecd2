"""Hostile io programs against the worker's comparison, on every backend: programs that
print a wrong answer a lenient rule would pass, outputs meant to make the comparison
raise, retire the worker or run long, and a program that tries to learn its verdict
from whether its container retires. None passes under the strict rule (the default);
none crashes anything; and the next job sees the same worker whatever the verdict."""
from __future__ import annotations

import pytest

from sandbox import IoCase, RunRequest, Sandbox, TestOutcome
from tests.sandbox.test_sandbox_conformance import assert_healthy
from tests.sandbox.test_sandbox_pool import WHO

RULES = ("lcb", "codecontests", "apps", "exact")


def run_io(sandbox: Sandbox, program: str, cases, compare: str = "lcb", mode: str = "strict",
           timeout_s: float = 30.0) -> list[TestOutcome]:
    # Every program here ends at once; the wide limit keeps a slow machine from turning
    # a verdict the tests need to see (the comparison's) into a timeout.
    return sandbox.run(RunRequest(program, list(cases), timeout_s=timeout_s, compare=compare, compare_mode=mode))


def unchanged_pool(sandbox: Sandbox):
    """(replacements, retirements) of the pool: no job here may replace or retire a worker."""
    return sandbox.replacements, list(sandbox._pool.retired)


# (program, input, expected output): each prints a wrong answer (or nothing a judge can
# read as the answer) for its input.
ECHO_SORT = ("import sys\nsys.stdin.readline()\nprint(sys.stdin.readline().strip())\n",
             "5\n3 1 2 5 4\n", "1 2 3 4 5\n")
HOSTILE = {
    "the input echoed unsorted, for a sort": ECHO_SORT,
    "YES then NO, whatever the queries": ("import sys\nsys.stdin.read()\nprint('YES')\nprint('NO')\n",
                                          "5\n2\n3\n4\n5\n6\n", "YES\nYES\nNO\nYES\nNO\n"),
    "n*n + 7 for n*n near 1e18": ("n = int(input())\nprint(n * n + 7)\n", "1000000000\n", f"{10**18}\n"),
    "the smallest number, for a sort": ("import sys\nsys.stdin.readline()\nprint(min(map(int, sys.stdin.readline().split())))\n",
                                        "5\n3 1 2 5 4\n", "1 2 3 4 5\n"),
    "sNaN": ("print('sNaN')\n", "", "5\n"),
    "sNaN after a right first line": ("print(6)\nprint('sNaN')\n", "", "6\n7\n"),
    "a huge integer after a right first line": ("print(6)\nprint('1' * 5000)\n", "", "6\n0.50\n"),
    "inf for a number": ("print('inf')\n", "", "1e400\n"),
    "Infinity for inf": ("print('Infinity')\n", "", "inf\n"),
    "NaN for nan": ("print('NaN')\n", "", "nan\n"),
    "underscores in a number": ("print('1_6')\n", "", "16\n"),
    "Arabic-Indic digits": ("print('\\u0661\\u0666')\n", "", "16\n"),
    "full-width digits": ("print('\\uff11\\uff16')\n", "", "16\n"),
    "hexadecimal": ("print('0x10')\n", "", "16\n"),
    "a no-break space between tokens": ("print('1\\u00a02')\n", "", "1 2\n"),
    "NUL after the answer": ("import sys\nsys.stdout.write('6\\x00\\n')\n", "", "6\n"),
    "bytes that are not UTF-8": ("import sys\nsys.stdout.buffer.write(b'\\xff6\\n')\n", "", "6\n"),
    "bytes that are not UTF-8, for U+FFFD": ("import sys\nsys.stdout.buffer.write(b'\\xff\\n')\n", "", "\ufffd\n"),
    "a giant line, one digit wrong": ("print('7' * 2_000_000 + '9')\n", "", "7" * 2_000_000 + "8\n"),
    "a million tokens, the last wrong": ("print('0.50 ' * 999_999 + '1')\n", "", "0.5 " * 1_000_000 + "\n"),
    "a million and one tokens": ("print('1 ' * 1_000_001)\n", "", "1 " * 1_000_000 + "\n"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_io_answers_fail_under_every_rule_and_crash_nothing(sandbox, name):
    program, stdin, expected = HOSTILE[name]
    before = unchanged_pool(sandbox)
    for rule in RULES:
        [outcome] = run_io(sandbox, program, [IoCase(stdin, expected)], compare=rule)
        assert outcome.status == "failed", (rule, outcome.detail)
        assert outcome.detail.startswith("wrong answer: ") and outcome.strict_status is None, (rule, outcome.detail)
    assert unchanged_pool(sandbox) == before  # no worker retired, none replaced
    assert_healthy(sandbox)


@pytest.mark.parametrize("name", list(HOSTILE))
def test_the_sources_own_rules_answer_too_and_keep_the_strict_verdict(sandbox, name):
    """io_compare "source": each source's own rule judges (it may pass a forgery), every
    outcome keeps the strict rule's verdict, and nothing raises or retires a worker."""
    program, stdin, expected = HOSTILE[name]
    before = unchanged_pool(sandbox)
    for rule in RULES:
        [outcome] = run_io(sandbox, program, [IoCase(stdin, expected)], compare=rule, mode="source")
        assert outcome.status in ("passed", "failed"), (rule, outcome)
        assert outcome.strict_status == "failed", (rule, outcome)
        assert "sandbox worker" not in outcome.detail
    assert unchanged_pool(sandbox) == before


def test_the_forgeries_the_sources_own_rules_pass_are_counted_against_strict(sandbox):
    passes = {
        "apps": ["the input echoed unsorted, for a sort", "YES then NO, whatever the queries"],
        "codecontests": ["n*n + 7 for n*n near 1e18"],
    }
    for rule, names in passes.items():
        for name in names:
            program, stdin, expected = HOSTILE[name]
            [strict] = run_io(sandbox, program, [IoCase(stdin, expected)], compare=rule)
            [lenient] = run_io(sandbox, program, [IoCase(stdin, expected)], compare=rule, mode="source")
            assert (strict.status, strict.strict_status) == ("failed", None), name
            assert (lenient.status, lenient.strict_status) == ("passed", "failed"), name


def test_honest_answers_in_other_forms_pass_the_strict_rule(sandbox):
    huge = "12345" * 1000  # over 4,300 digits
    program = f"print({huge!r})\nprint('0.50')\nprint('8.0')\nprint('-0')\n"
    for rule in ("lcb", "codecontests", "apps"):
        [outcome] = run_io(sandbox, program, [IoCase("", f"{huge}\n0.5\n8\n0\n")], compare=rule)
        assert outcome.status == "passed", (rule, outcome.detail)
    # a million tokens, each in another form: compared token by token, in bounded time
    [many] = run_io(sandbox, "print('0.50 ' * 1_000_000)\n", [IoCase("", "0.5 " * 1_000_000 + "\n")],
                    compare="codecontests")
    assert many.status == "passed", many.detail


# --- a program that tries to learn its verdict from its container's fate

# Prints a guess at the first line of its hidden expected output, then a line that made
# an earlier comparison raise (and retire its worker) only when the guess was right.
ORACLES = {
    "sNaN (LiveCodeBench's Decimal)": ("lcb", "print({guess})\nprint('sNaN')\n", "6\n7\n"),
    "a 5,000-digit integer (CodeContests' int())": ("codecontests", "print({guess})\nprint('1' * 5000)\n", "6\n0.50\n"),
}
# Names the worker (the container's id, or a process worker's PID) and the job's index in
# it (a job's PID: each job takes the same number of PIDs in a container).
OBSERVER = WHO + "\nprint(os.getpid())\n"


def observe(sandbox: Sandbox) -> tuple[str, int]:
    [outcome] = run_io(sandbox, OBSERVER, [IoCase("", "-\n")])
    worker, pid = outcome.output.split()
    return worker, int(pid)


@pytest.mark.parametrize("mode", ["strict", "source"])
@pytest.mark.parametrize("name", list(ORACLES))
def test_whether_the_next_job_sees_a_fresh_worker_does_not_depend_on_the_verdict(backend, make_sandbox, name, mode):
    rule, oracle, expected = ORACLES[name]
    sandbox = make_sandbox(workers=1)
    seen = {}
    for guess in ("6", "5", "6", "5"):  # right, wrong, right, wrong
        worker, pid = observe(sandbox)
        [graded] = run_io(sandbox, oracle.format(guess=guess), [IoCase("", expected)], compare=rule, mode=mode)
        assert graded.status == "failed" and "sandbox worker" not in graded.detail, graded
        after_worker, after_pid = observe(sandbox)
        seen.setdefault(guess, []).append((after_worker == worker, after_pid - pid))
    assert sandbox.replacements == 0 and sandbox._pool.retired == []
    assert all(same for runs in seen.values() for same, _ in runs), seen  # one worker throughout
    if backend == "docker":  # a container's PIDs count its jobs: the same steps for a right guess as a wrong one
        assert {delta for runs in seen.values() for _, delta in runs} == {seen["6"][0][1]}, seen


FUNCTION_ORACLE = "def f(x):\n    return {guess} if x == 1 else {sentinel}\n"
SENTINELS = {
    "an integer of 5,000 digits": "10 ** 5000",
    "NaN": "float('nan')",
    "lists nested 99 deep": "eval('[' * 99 + ']' * 99)",
    "text with NUL and a lone surrogate": "'\\x00\\udcff' * 1000",
}


@pytest.mark.parametrize("sentinel", list(SENTINELS))
def test_a_function_job_s_next_job_sees_the_same_worker_whatever_the_verdict(backend, make_sandbox, sentinel):
    sandbox = make_sandbox(workers=1)
    tests = ["assert f(1) == 2\nassert f(2) == 3"]
    seen = []
    for guess in ("2", "1", "2", "1"):
        [before] = sandbox.run(RunRequest(OBSERVER, ["pass"]))
        [graded] = sandbox.run(RunRequest(FUNCTION_ORACLE.format(guess=guess, sentinel=SENTINELS[sentinel]), tests))
        assert graded.status in ("failed", "error") and "sandbox worker" not in graded.detail, graded
        [after] = sandbox.run(RunRequest(OBSERVER, ["pass"]))
        (w0, p0), (w1, p1) = before.output.split(), after.output.split()
        seen.append((guess, w0 == w1, int(p1) - int(p0)))
    assert sandbox.replacements == 0 and sandbox._pool.retired == []
    assert all(same for _, same, _ in seen), seen
    if backend == "docker":
        assert len({delta for _, _, delta in seen}) == 1, seen
