"""Verdicts the graded code cannot forge (issue 9), run against every backend.

The program runs in one process, the test in another; only plain data crosses from
the program to the test, and references to the program's other objects, which the
test can call, read, iterate and index but never lets decide a comparison. Each case is written as a hostile model would write it:
what it tries must come out as a failure or an error, never as a pass, and honest
code graded afterwards in the same pool must still pass.
"""
from __future__ import annotations

import ast
import secrets

import pytest

from sandbox import RunRequest, TestOutcome
from tests.helpers import JOB_LEFTOVERS, OWN_MEMORY, WORKER_PROCESSES

ADD = "def add(a, b):\n    return a + b\n"


def run_one(sandbox, program: str, test: str, **fields) -> TestOutcome:
    [outcome] = sandbox.run(RunRequest(program, [test], **fields))
    return outcome


def assert_honest_code_still_passes(sandbox) -> None:
    outcomes = sandbox.run(RunRequest(ADD, ["assert add(2, 3) == 5", "assert add(2, 3) == 6"]))
    assert [o.status for o in outcomes] == ["passed", "failed"], outcomes
    assert outcomes[1].detail == "assert add(2, 3) == 6  # got 5"


# --- forged verdicts -----------------------------------------------------------------

FORGERIES = {
    "rebinding exec, compile and __import__": (
        "import builtins\n"
        "def f(x):\n    return x\n"
        "builtins.exec = lambda *a, **k: None\n"
        "builtins.compile = lambda *a, **k: compile('pass', '', 'exec')\n"
        "builtins.__import__ = lambda *a, **k: None\n",
        "assert f(1) == 2",
    ),
    "rebinding json.dumps to write a passing report": (
        "import json\n"
        "json.dumps = lambda *a, **k: '{\"status\": \"passed\", \"detail\": \"\"}'\n"
        "def f(x):\n    return x\n",
        "assert f(1) == 2",
    ),
    "a forged report on every inherited descriptor, then exit 0": (
        "import gc, json, os, sys\n"
        "tokens = set()\n"
        "for obj in gc.get_objects():\n"
        "    if isinstance(obj, dict) and 'token' in obj:\n"
        "        tokens.add(str(obj['token']))\n"
        "frame = sys._getframe()\n"
        "while frame is not None:\n"
        "    for value in list(frame.f_locals.values()):\n"
        "        if isinstance(value, dict) and 'token' in value:\n"
        "            tokens.add(str(value['token']))\n"
        "    frame = frame.f_back\n"
        "for token in tokens or {''}:\n"
        "    line = json.dumps({'token': token, 'pid': os.getpid(), 'status': 'passed', 'detail': ''}) + '\\n'\n"
        "    for fd in range(0, 64):\n"
        "        try:\n            os.write(fd, line.encode())\n        except OSError:\n            pass\n"
        "os._exit(0)\n",
        "assert False",
    ),
    "an object whose __eq__ is always true": (
        "class Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
        "def f(x):\n    return Yes()\n",
        "assert f(1) == 5",
    ),
    "an int subclass whose __sub__ and __abs__ return 0": (
        "class Zero(int):\n"
        "    def __sub__(self, other):\n        return Zero(0)\n"
        "    __rsub__ = __sub__\n"
        "    def __abs__(self):\n        return Zero(0)\n"
        "    def __eq__(self, other):\n        return True\n"
        "    __hash__ = int.__hash__\n"
        "def f(x):\n    return Zero(7)\n",
        "assert abs(f(1) - 3.5) < 1e-6",
    ),
    "a str subclass equal to everything": (
        "class Any(str):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\n"
        "def f(x):\n    return Any('no')\n",
        "assert f(1) == 'yes'",
    ),
    "redefining the prelude's helper the test judges with": (
        # The task's prelude encodes by reversing; the answer redefines `encode` as the
        # identity so that an identity `decode` would pass a test that uses `encode`.
        "def encode(s):\n    return s\n"
        "def decode(s):\n    return s\n",
        "assert decode(encode('abc')) == 'abc'",
    ),
    "shadowing a builtin the test compares with": (
        "def sorted(xs, **kw):\n    return xs\n"
        "def f(xs):\n    return xs\n",
        "assert f([2, 1]) == sorted([2, 1])",
    ),
    "swallowing the program's death in a bare except": (
        "import os\ndef f(x):\n    os._exit(0)\n",
        "try:\n    f(1)\nexcept BaseException:\n    pass",
    ),
    "too much data, swallowed by except Exception": (
        "def f(x):\n    y = []\n    for _ in range(500):\n        y = [y]\n    return y\n",
        "try:\n    assert f(1) == []\nexcept Exception:\n    pass",
    ),
    "an iterator whose items are equal to everything": (
        "class Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
        "def f(x):\n    return iter([Yes(), Yes()])\n",
        "assert list(f(1)) == [1, 2]",
    ),
    "an object equal to everything, looked up with in": (
        "class Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
        "def f(x):\n    return Yes()\n",
        "assert f(1) in [1, 2] and f(1) in {1: 0}",
    ),
    "StopIteration from a call, ending the test's own iteration": (
        "def f(x):\n    raise StopIteration\n",
        "assert all(map(f, [1, 2])) and list(map(f, [3])) == []",
    ),
    "an object with every comparison and protocol overridden": (
        "class Liar:\n"
        "    def __eq__(self, o):\n        return True\n"
        "    __ne__ = __lt__ = __le__ = __gt__ = __ge__ = lambda self, o: False\n"
        "    __hash__ = lambda self: 5\n"
        "    __index__ = __int__ = lambda self: 5\n"
        "    __float__ = lambda self: 5.0\n"
        "    __class__ = int\n"
        "def f(x):\n    return Liar()\n",
        "assert f(1) == 5 or isinstance(f(1), int) or {f(1): 1} == {5: 1}",
    ),
    "an object standing in for a module the test uses unimported": (
        "class FakeMath:\n    def isclose(self, *args, **kwargs):\n        return True\n"
        "math = FakeMath()\n"
        "def f(x):\n    return 0.0\n",
        "assert math.isclose(f(1), 2.0)",
    ),
    "a class standing in for a module the test uses unimported": (
        "class re:\n    @staticmethod\n    def fullmatch(*args):\n        return True\n"
        "def f(x):\n    return 'no'\n",
        "assert re.fullmatch('y.s', f(1))",
    ),
    "a function of the program named like a module, with the module's attribute": (
        "def math():\n    pass\n"
        "math.isclose = lambda *args, **kwargs: True\n"
        "def f(x):\n    return 0.0\n",
        "assert math.isclose(f(1), 2.0)",
    ),
    "a BaseException from the program, swallowed by except Exception": (
        "class Stop(BaseException):\n    pass\n"
        "def f(x):\n    raise Stop()\n",
        "try:\n    assert f(1) == 2\nexcept Exception:\n    pass",
    ),
    "GeneratorExit from the program, swallowed by except Exception": (
        "def f(x):\n    raise GeneratorExit\n",
        "try:\n    assert f(1) == 2\nexcept Exception:\n    pass",
    ),
}
PRELUDE = "def encode(s):\n    return s[::-1]\n"


@pytest.mark.parametrize("name", list(FORGERIES))
def test_forged_verdicts_are_not_passes(sandbox, name):
    program, test = FORGERIES[name]
    entry = "decode" if "prelude" in name else "f"
    outcome = run_one(sandbox, program, test, prelude=PRELUDE, entry_point=entry)
    assert outcome.status in ("failed", "error"), outcome
    assert_honest_code_still_passes(sandbox)


def test_forgery_details_say_what_happened(sandbox):
    eq = run_one(sandbox, *FORGERIES["an object whose __eq__ is always true"])
    assert (eq.status, eq.detail) == ("failed", "assert f(1) == 5  # got <Yes object of the sandboxed program>")
    zero = run_one(sandbox, FORGERIES["an int subclass whose __sub__ and __abs__ return 0"][0], "assert f(1) == 3")
    assert zero.status == "failed" and zero.detail == "assert f(1) == 3  # got 7"
    dead = run_one(sandbox, *FORGERIES["swallowing the program's death in a bare except"])
    assert dead.status == "error" and "the program's process ended during a call to f()" in dead.detail


def test_the_program_never_sees_the_test_text(sandbox):
    """The hidden test's text is in no process where model code runs: not in
    linecache, frames, gc, nor anywhere in the program's own memory."""
    secret = "SECRET-" + secrets.token_hex(8)
    # The scan must find a match the program planted in its own memory, or it saw nothing.
    program = OWN_MEMORY + (
        "import gc, linecache, sys\n"
        "PLANTED = bytearray(b'SEC' + b'RET-' + b'0f' * 8)\n"
        "def steal():\n"
        "    seen = [str(linecache.cache)]\n"
        "    frame = sys._getframe()\n"
        "    while frame is not None:\n"
        "        seen.append(repr(frame.f_locals)[:10000])\n"
        "        frame = frame.f_back\n"
        "    seen += [o for o in gc.get_objects() if isinstance(o, str)]\n"
        "    pattern = b'SEC' + b'RET-[0-9a-f]{16}'\n"
        "    found = set(re.findall(pattern, '\\n'.join(seen).encode()))\n"
        "    in_memory = memory_holding(pattern)\n"
        "    if bytes(PLANTED) not in in_memory:\n"
        "        return 'the memory scan missed what it planted'\n"
        "    found = (found | in_memory) - {bytes(PLANTED)}\n"
        "    return min(found).decode() if found else 'nothing'\n"
    )
    # The scan's time depends on the machine: a wide limit lets it finish, and were it
    # stopped all the same, a timeout learns nothing either (the secret must be in
    # neither its detail nor its output); a finished scan must have found nothing.
    outcome = run_one(sandbox, program, f"assert steal() == {secret!r}", timeout_s=60.0)
    assert outcome.status in ("failed", "timeout"), outcome
    assert secret not in outcome.output, outcome
    if outcome.status == "failed":
        assert outcome.detail == f"assert steal() == {secret!r}  # got 'nothing'"
    else:
        assert secret not in outcome.detail, outcome


def test_a_model_written_test_cannot_read_an_earlier_hidden_test(make_sandbox):
    """Each test process holds its own test only: a test written by the model, run
    after a hidden test in the same worker, finds no trace of it in its memory."""
    sandbox = make_sandbox(workers=1)
    secret = "HIDDEN-" + secrets.token_hex(8)
    hidden = run_one(sandbox, ADD, f"assert add(1, 1) == 2, {secret!r}")
    assert hidden.status == "passed"
    scan = OWN_MEMORY + (  # it finds what it planted, and nothing else
        "PLANTED = bytearray(b'HIDDEN' + b'-' + b'0f' * 8)\n"
        "assert memory_holding(b'HIDDEN' + b'-[0-9a-f]{16}') == {bytes(PLANTED)}"
    )
    model_test = run_one(sandbox, ADD, scan, timeout_s=60.0)  # a scan's time depends on the machine
    # Passed: it found its own plant and nothing else. A scan stopped at the limit
    # learned nothing either, and says none of it.
    assert model_test.status in ("passed", "timeout"), model_test
    assert secret not in model_test.detail + model_test.output, model_test


# --- plain data across the boundary ------------------------------------------------------


def test_plain_values_round_trip_exactly(sandbox):
    program = (
        "import math\n"
        "def values():\n"
        "    return (None, True, -0.0, float('inf'), 2 - 3j, b'\\x00\\xff', 'ü\\n',\n"
        "            frozenset({1, 2}), {(1, 'a'): [None, {3}]}, 10 ** 5000, -(2 ** 70))\n"
        "def nan():\n    return float('nan')\n"
    )
    test = (
        "import math\n"
        "v = values()\n"
        "assert v == (None, True, -0.0, float('inf'), 2 - 3j, b'\\x00\\xff', 'ü\\n',"
        " frozenset({1, 2}), {(1, 'a'): [None, {3}]}, 10 ** 5000, -(2 ** 70))\n"
        "assert math.copysign(1, v[2]) == -1 and v[1] is True and v[0] is None\n"
        "assert math.isnan(nan())"
    )
    outcome = run_one(sandbox, program, test)
    assert outcome.status == "passed", outcome


def test_subclasses_come_back_as_their_base_type(sandbox):
    program = (
        "from collections import OrderedDict, namedtuple\n"
        "class L(list):\n    pass\n"
        "Point = namedtuple('Point', 'x y')\n"
        "def f():\n    return L([1]), Point(1, 2), OrderedDict(a=1), True\n"
    )
    test = (
        "l, p, d, b = f()\n"
        "assert type(l) is list and type(p) is tuple and type(d) is dict and b is True\n"
        "assert (l, p, d) == ([1], (1, 2), {'a': 1})"
    )
    assert run_one(sandbox, program, test).status == "passed"


def test_exceptions_come_back_by_type_and_message(sandbox):
    program = (
        "class Missing(KeyError):\n    pass\n"
        "def bad(x):\n    raise ValueError(f'bad {x}')\n"
        "def missing():\n    raise Missing('k')\n"
    )
    test = (
        "import pytest\n"
        "with pytest.raises(ValueError, match='bad 3'):\n    bad(3)\n"
        "try:\n    missing()\nexcept KeyError as e:\n"
        "    assert type(e).__name__ == 'Missing' and e.args == ('k',)\n"
        "else:\n    raise AssertionError('no KeyError')"
    )
    assert run_one(sandbox, program, test).status == "passed"
    raised = run_one(sandbox, program, "assert bad(1) == 2")
    assert raised.status == "error" and raised.detail == "ValueError: bad 1"


def test_exceptions_that_are_not_exceptions_stay_base_exceptions(sandbox):
    """As in one interpreter: `except BaseException` catches them, `except Exception`
    does not, and the verdict names the program's type."""
    program = "class Stop(BaseException):\n    pass\ndef f():\n    raise Stop('now')\ndef g():\n    raise GeneratorExit\n"
    caught = "try:\n    f()\nexcept BaseException as e:\n    assert type(e).__name__ == 'Stop' and e.args == ('now',)"
    assert run_one(sandbox, program, caught).status == "passed"
    for call, detail in (("f()", "program.Stop: now"), ("g()", "program.GeneratorExit")):
        outcome = run_one(sandbox, program, f"try:\n    {call}\nexcept Exception:\n    pass")
        assert (outcome.status, outcome.detail) == ("error", detail), outcome


def test_modules_the_test_uses_unimported_are_its_own(sandbox):
    """A module name the test uses without importing it is the test process's own
    module, whatever the program binds to that name; a module the program imports
    under another name (`np`) is imported by the test process itself."""
    program = (
        "import numpy as np\n"
        "class math:\n    pi = 3\n"
        "def f(x):\n    return x * 2\n"
    )
    test = "import sys\nassert math is sys.modules['math'] and math.pi > 3.14 and np.sqrt(f(8)) == 4.0"
    assert run_one(sandbox, program, test).status == "passed"
    # Functions of the program that share a module's name are the program's where the
    # test calls them (no entry point given: the sandbox used on its own).
    named_like_modules = (
        "def chunk(items, size):\n    return [items[i:i + size] for i in range(0, len(items), size)]\n"
        "def select(xs):\n    return [x for x in xs if x]\n"
    )
    test = "assert chunk([1, 2, 3], 2) == [[1, 2], [3]] and select([0, 1]) == [1]"
    assert run_one(sandbox, named_like_modules, test).status == "passed"


def test_names_the_test_did_not_ask_about_are_not_bound(sandbox):
    """A program that answers the test's name lookup itself cannot bind names the
    test never asked about, nor dunder names."""
    program = (
        "import sys\n"
        "worker = sys._getframe(1).f_globals  # P's own code, which runs the program\n"
        "honest = worker['_describe_names']\n"
        "worker['_describe_names'] = lambda *args: honest(*args) + [\n"
        "    ['__file__', 'value', 'forged'], ['__annotations__', 'value', 1], ['unasked', 'value', 1]]\n"
        "def f():\n    return 1\n"
    )
    test = "x: int = f()\nassert x == 1 and '__file__' not in globals() and 'unasked' not in globals()"
    assert run_one(sandbox, program, test).status == "passed"


def test_arguments_changed_in_place_are_copied_back(sandbox):
    program = (
        "def sort_in_place(xs):\n    xs.sort()\n"
        "def tag(d, s, *, extra):\n    d['k'] = 1\n    s.add(2)\n    extra.append('x')\n"
    )
    test = (
        "a = [3, 1, 2]\nassert sort_in_place(a) is None\nassert a == [1, 2, 3]\n"
        "d, s, e = {}, set(), []\ntag(d, s, extra=e)\nassert (d, s, e) == ({'k': 1}, {2}, ['x'])"
    )
    assert run_one(sandbox, program, test).status == "passed"


def test_module_level_values_and_helpers_are_visible(sandbox):
    program = "import math\nLIMIT = 10\ndef helper(x):\n    return x * 2\ndef f(x):\n    return helper(x) + LIMIT\n"
    test = "assert f(1) == 12 and helper(2) == 4 and LIMIT == 10 and math.pi > 3"
    assert run_one(sandbox, program, test).status == "passed"


def test_what_cannot_cross_is_an_error_with_a_clear_detail(sandbox):
    program = (
        "def deep():\n    x = []\n    for _ in range(500):\n        x = [x]\n    return x\n"
        "def huge():\n    return 'x' * (40 * 1024 * 1024)\n"
        "def takes(f):\n    return f()\n"
        "def echo(x):\n    return x\n"
        "DEEP = deep()\n"
    )
    cases = {
        "assert deep()": "deep() returned data nested deeper than 100 levels; too much to send outside the sandbox",
        "assert takes(lambda: 1) == 1": "an argument of takes() is a function; only plain data, objects of the "
                                        "test's own classes and objects of the program can be sent to it",
        "import collections\nassert echo(collections.deque([1]))": "an argument of echo() is a deque; only plain "
        "data, objects of the test's own classes and objects of the program can be sent to it",
        "assert DEEP": "`DEEP` of the program cannot be used by the test: it is data nested deeper than 100 levels",
    }
    outcomes = sandbox.run(RunRequest(program, list(cases) + ["assert len(huge()) > 0"]))
    for outcome, detail in zip(outcomes, list(cases.values())):
        assert (outcome.status, outcome.detail) == ("error", detail)
    assert outcomes[-1].status == "error" and "the program sent a message of" in outcomes[-1].detail


def test_objects_of_the_program_are_used_by_reference(sandbox):
    """Generators, instances and classes of the program: the test calls, reads,
    iterates and indexes them in P; compared with `==` they are only themselves."""
    program = (
        "class Pair:\n    def __init__(self, a, b):\n        self.a, self.b = a, b\n"
        "    def total(self):\n        return self.a + self.b\n"
        "    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
        "class Solution:\n    def twoSum(self, nums, target):\n"
        "        seen = {}\n        for i, x in enumerate(nums):\n"
        "            if target - x in seen:\n                return [seen[target - x], i]\n"
        "            seen[x] = i\n"
        "def squares(n):\n    return (i * i for i in range(n))\n"
        "def chain(pairs):\n    pairs = sorted(pairs, key=lambda p: p.b)\n    count, end = 0, None\n"
        "    for p in pairs:\n        if end is None or p.a > end:\n            count, end = count + 1, p.b\n    return count\n"
        "ORIGIN = Pair(0, 0)\n"
        "def same():\n    return ORIGIN\n"
        "def table():\n    return {'p': Pair(1, 2), 'n': [Pair(3, 4)]}\n"
    )
    tests = [
        "assert tuple(squares(3)) == (0, 1, 4) and sorted(squares(3), reverse=True) == [4, 1, 0]",
        "assert 4 in squares(3) and list(zip(squares(2), 'ab')) == [(0, 'a'), (1, 'b')]",
        "assert Solution().twoSum([2, 7, 11, 15], 9) == [0, 1]",
        "assert chain([Pair(5, 24), Pair(15, 25), Pair(27, 40), Pair(50, 60)]) == 3",
        "p = Pair(1, 2)\nassert (p.a, p.b, p.total()) == (1, 2, 3)",
        "assert same() is same() is ORIGIN and ORIGIN.total() == 0",
        "t = table()\nassert t['p'].total() == 3 and t['n'][0].b == 4",
        "assert Pair(1, 2) == Pair(1, 2)",  # the program's __eq__ is not asked: identity
        "assert squares(3) == [0, 1, 4]",
        "assert repr(Pair(1, 2)) == '<Pair object of the sandboxed program>'",
        "p = Pair(1, 2)\np.a = 10\nt = table()\nt_items = t['n']\nassert p.total() == 12 and t_items[0].total() == 7",
    ]
    outcomes = sandbox.run(RunRequest(program, tests))
    assert [o.status for o in outcomes] == ["passed"] * 7 + ["failed"] * 2 + ["passed"] * 2, outcomes
    assert outcomes[8].detail == "assert squares(3) == [0, 1, 4]  # got <generator object of the sandboxed program>"


def test_attributes_of_the_program_s_functions_and_classes_are_read_in_it(sandbox):
    """`Calc.add(2, 3)`, `Calc.SCALE`, an attribute set on a function: read in P, the
    answer again plain data or a reference; dunder attributes stay the test's own."""
    program = (
        "class Calc:\n    SCALE = 10\n"
        "    @staticmethod\n    def add(a, b):\n        return a + b\n"
        "    def scaled(self, x):\n        return x * self.SCALE\n"
        "def counted():\n    return 1\n"
        "counted.calls = 3\n"
    )
    test = (
        "assert Calc.add(2, 3) == 5 and Calc.SCALE == 10 and Calc().scaled(2) == 20\n"
        "assert counted.calls == 3 and counted.__name__ == 'counted'"
    )
    assert run_one(sandbox, program, test).status == "passed"
    # The program's functions and classes passed back to it, as in one interpreter.
    passed_back = "def double(x):\n    return 2 * x\ndef twice(f, x):\n    return f(f(x))\n"
    test = "assert twice(double, 3) == 12 and twice(f=double, x=1) == 4 and list(map(double, [1])) == [2]"
    assert run_one(sandbox, passed_back, test).status == "passed"
    missing = run_one(sandbox, program, "assert Calc.mul(2, 3) == 6")
    assert (missing.status, missing.detail) == ("error", "AttributeError: type object 'Calc' has no attribute 'mul'")


def test_only_next_may_end_an_iteration(sandbox):
    program = "def f(x):\n    raise StopIteration\ndef g(n):\n    yield from range(n)\n"
    tests = [
        "assert all(map(f, [1, 2]))",
        "assert list(g(3)) == [0, 1, 2] and [x for x in g(2)] == [0, 1]",
        "it = iter(g(1))\nassert next(it) == 0\ntry:\n    next(it)\nexcept StopIteration:\n    pass\nelse:\n    assert False",
    ]
    outcomes = sandbox.run(RunRequest(program, tests))
    assert [o.status for o in outcomes] == ["error", "passed", "passed"], outcomes
    assert outcomes[0].detail == "RuntimeError: the program raised StopIteration during a call to f()"


def test_protocols_of_a_program_object_stay_the_tests_own(sandbox):
    """An object that answers every attribute (`__getattr__`) answers the test's plain
    reads, but no protocol the test's own code looks up by name (numpy's
    `__array_interface__`, dataclasses' fields, copy's hooks) is asked of it."""
    program = (
        "class Anything:\n    def __getattr__(self, name):\n        return {'data': (0, False), 'shape': (1,), 'typestr': '<i8'}\n"
        "def f():\n    return Anything()\n"
    )
    test = (
        "import copy, dataclasses\n"
        "o = f()\n"
        "assert o.anything == {'data': (0, False), 'shape': (1,), 'typestr': '<i8'}\n"
        "assert not hasattr(o, '__array_interface__') and not hasattr(o, '__dataclass_fields__')\n"
        "assert not dataclasses.is_dataclass(o) and copy.copy(o) is not o\n"
    )
    outcome = run_one(sandbox, program, test)
    assert outcome.status == "passed", outcome


# A program that takes over its own side of the protocol: it replaces the worker's
# encoder in its own process, so every answer is a tree it chose. The test's side
# must refuse whatever is not plain data or a well-formed reference.
FORGED_TREES = {
    "an object the test would build": '["obj", 0]',
    "a reference the test would resolve": '["ref", 0]',
    "a reference with a bad number": '["handle", "0", "x"]',
    "an unknown tag": '["pickle", "gASVAAAAAAAAAAA="]',
    "a malformed tuple inside a list": '["list", [["tuple", 5]]]',
    "an int that is not hex": '["int", "12e3"]',
}


@pytest.mark.parametrize("name", list(FORGED_TREES))
def test_forged_trees_from_a_hijacked_program_side_are_errors(sandbox, name):
    program = (
        "import sys\n"
        f"FORGED = {FORGED_TREES[name]}\n"
        "sys._getframe(1).f_globals['to_tree'] = lambda value, other=None: FORGED  # P's own encoder\n"
        "def f(x):\n    return x\n"
    )
    outcome = run_one(sandbox, program, "assert f(1) == 1")
    assert outcome.status == "error" and "f() answered with malformed data" in outcome.detail, outcome


def test_the_worker_s_modules_are_not_importable_nor_handed_to_the_test(sandbox):
    """The program cannot import the worker's modules by name (the worker's folder is on
    no sys.path and the blank children forget the package), a module it writes under one
    of their names shadows nothing of the worker's, and a hijacked program side that says
    a name is one of them, or `__main__`, gets nothing of the worker's into the test."""
    program = (
        "import importlib, sys\n"
        "open('protocol.py', 'w').write('raise SystemExit(3)\\n')\n"
        "def importable():\n"
        "    found = [name for name in sys.modules if name.startswith('sandbox_worker')]\n"
        "    for name in ('sandbox_worker', 'sandbox_worker.protocol', 'sandbox_worker.judge'):\n"
        "        try:\n            importlib.import_module(name)\n            found.append(name)\n"
        "        except ImportError:\n            pass\n"
        "    return found + sorted(vars(sys.modules['__main__']).keys() - {'__name__', '__doc__', '__package__',\n"
        "                                                            '__loader__', '__spec__'})\n"
        "worker = sys._getframe(1).f_globals\n"
        "honest = worker['_describe_names']\n"
        "worker['_describe_names'] = lambda *args: honest(*args) + [\n"
        "    ['x', 'module', 'sandbox_worker.judge'], ['y', 'module', '__main__']]\n"
    )
    assert run_one(sandbox, program, "assert importable() == []").status == "passed"
    for name, module in (("x", "sandbox_worker.judge"), ("y", "__main__")):
        outcome = run_one(sandbox, program, f"assert importable() == []\n{name}.main")
        assert outcome.status == "error" and f"cannot import module {module!r}" in outcome.detail, outcome


def test_a_hijacked_program_side_cannot_make_the_test_run_a_script(sandbox):
    """A program that answers the test's name lookup itself, claiming that a name is
    the module `unittest.__main__` (importing it runs unittest's command line), gets
    nothing run in the test's process."""
    program = (
        "import sys\n"
        "worker = sys._getframe(1).f_globals  # P's own code, which runs the program\n"
        "honest = worker['_describe_names']\n"
        "worker['_describe_names'] = lambda *args: honest(*args) + [['x', 'module', 'unittest.__main__']]\n"
        "def f():\n    return 1\n"
    )
    outcome = run_one(sandbox, program, "import sys\nassert f() == 1 and 'unittest.__main__' not in sys.modules\nx.run")
    assert outcome.status == "error" and "cannot import module 'unittest.__main__'" in outcome.detail, outcome
    assert outcome.output == ""  # unittest's command line would have said "Ran 0 tests"


def test_objects_the_test_builds_go_to_the_program_by_value(sandbox):
    """A tree or a linked list built by the test's own classes (MBPP's set-up code)
    reaches the program rebuilt, as the program's class of that name when it has one."""
    program = (
        "class Node:\n    def __init__(self, data):\n        self.data, self.left, self.right = data, None, None\n"
        "def height(root):\n    return 0 if root is None else 1 + max(height(root.left), height(root.right))\n"
        "def is_balanced(root):\n    if root is None:\n        return True\n"
        "    return abs(height(root.left) - height(root.right)) <= 1 and is_balanced(root.left) and is_balanced(root.right)\n"
        "def is_node(x):\n    return isinstance(x, Node)\n"
        "def ring_size(start):\n    size, at = 1, start.next\n"
        "    while at is not start:\n        size, at = size + 1, at.next\n    return size\n"
        "def length(head):\n    count = 0\n    while head is not None:\n        count, head = count + 1, head.next\n"
        "    return count\n"
    )
    setup = (
        "class Node:\n    def __init__(self, data):\n        self.data, self.left, self.right = data, None, None\n"
        "root = Node(1)\nroot.left = Node(2)\nroot.right = Node(3)\nroot.left.left = Node(4)\nroot.left.left.left = Node(8)\n"
        "small = Node(1)\nsmall.left = Node(2)\n"
    )
    ring = (
        "class Link:\n    def __init__(self):\n        self.next = self\n"
        "a, b, c = Link(), Link(), Link()\na.next, b.next, c.next = b, c, a\n"
    )
    chain = (  # far longer than plain data may nest: the links travel flat
        "class ListNode:\n    def __init__(self, value, next=None):\n        self.value, self.next = value, next\n"
        "head = None\nfor value in range(3000):\n    head = ListNode(value, head)\n"
    )
    tests = [
        setup + "assert is_balanced(root) is False and is_balanced(small) is True",
        setup + "assert is_node(root) and height(root) == 4",
        ring + "assert ring_size(a) == 3",
        chain + "assert length(head) == 3000 and length(None) == 0",
    ]
    outcomes = sandbox.run(RunRequest(program, tests))
    assert [o.status for o in outcomes] == ["passed"] * 4, outcomes


# --- nothing carries over, the worker holds -------------------------------------------------


def test_nothing_carries_over_between_tests(backend, make_sandbox):
    sandbox = make_sandbox(workers=1)
    leave = (
        "import os, sys\n"
        "os.environ['LEFT'] = '1'\n"
        "open('left_module.py', 'w').write('X = 1')\n"
        "sys.path.append('/tmp/elsewhere')\n"
        "import json\njson.LEFT = True\n"
        # A group of its own (a new session is refused, and so is subprocess's pipe: confine.py).
        "if os.fork() == 0:\n    os.setpgid(0, 0)\n    os.execv('/bin/sleep', ['sleep', '60'])\n"
        "def f():\n    return 1\n"
    )
    check = (
        "import os, sys, importlib.util, json\n"
        "def state():\n"
        "    return ('LEFT' in os.environ, importlib.util.find_spec('left_module') is not None,\n"
        "            '/tmp/elsewhere' in sys.path, hasattr(json, 'LEFT'), sorted(os.listdir('.')))\n"
    )
    assert run_one(sandbox, leave, "assert f() == 1").status == "passed"
    outcome = run_one(sandbox, check, "assert state() == (False, False, False, False, [])")
    assert outcome.status == "passed", outcome
    # The sleep left running, or any other process of the first job (tests/helpers.py:
    # on a host, the worker's children, so other users' processes do not count).
    leftovers = run_one(sandbox, JOB_LEFTOVERS, "assert leftovers(os.getpid()) == []")
    assert leftovers.status == "passed", leftovers
    # In a container, the first job's fork and file moved counters no wipe resets (the
    # PID and inode counters): its worker retired, and the next jobs ran on a fresh one.
    assert sandbox.replacements == (1 if backend == "docker" else 0)


def test_a_directory_1100_levels_deep_is_cleaned_up(backend, make_sandbox):
    """The wipe empties it in time (on a host the worker then goes on; in a container the
    1,100 inodes moved the scratch filesystem's inode counter, so it retires anyway)."""
    sandbox = make_sandbox(workers=1)
    program = (
        "import os\n"
        "def dig():\n"
        "    for _ in range(1100):\n"
        "        os.mkdir('d')\n"
        "        os.chdir('d')\n"
        "    os.chmod('.', 0)\n"
        "    return True\n"
    )
    assert run_one(sandbox, program, "assert dig()").status == "passed"
    assert_honest_code_still_passes(sandbox)
    assert run_one(sandbox, "import os\n", "assert os.listdir('.') == []").status == "passed"
    assert sandbox.replacements == (1 if backend == "docker" else 0)


def test_signals_from_the_code_do_not_stop_the_worker(backend, make_sandbox):
    sandbox = make_sandbox(workers=1)
    # The zygote and the worker, which leads the zygote's process group.
    targets = "{os.getppid(), os.getpgid(os.getppid())}" + (" | {1}" if backend == "docker" else "")
    # Sent, or refused (EPERM) where Landlock scopes a job's signals to its own processes
    # (ABI 6, Linux 6.12+: the worker's are outside the job's domain).
    program = (
        "import errno, os, signal\n"
        "def shout():\n"
        "    sent = refused = 0\n"
        f"    for pid in {targets}:\n"
        "        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT,\n"
        "                    signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGTSTP, signal.SIGPIPE):\n"
        "            try:\n                os.kill(pid, sig)\n                sent += 1\n"
        "            except PermissionError:\n                refused += 1\n"
        "    return sent, refused\n"
    )
    scoped = backend == "docker" and (sandbox.describe().get("landlock_abi") or 0) >= 6
    outcome = run_one(sandbox, program, "sent, refused = shout()\nassert sent == -1")
    sent, refused = ast.literal_eval(outcome.detail.rsplit("# got ", 1)[1]), None
    outcome = run_one(sandbox, program, "sent, refused = shout()\nassert refused == -1")
    refused = ast.literal_eval(outcome.detail.rsplit("# got ", 1)[1])
    assert (sent == 0 and refused > 0) if scoped else sent > 0, (sent, refused)
    assert_honest_code_still_passes(sandbox)
    assert sandbox.replacements == 0


def test_every_signal_the_kernel_delivers_leaves_the_worker_s_processes_alone(backend, make_sandbox):
    """Every signal that can be caught or ignored (the real-time ones SIGRTMIN..SIGRTMAX
    included, and the faults SIGSEGV, SIGBUS, SIGFPE, SIGILL sent with kill), sent to
    every process of the worker's that a program can find (the worker, the zygote, the
    test's process and the blank children kept ready): the job's verdict is what it
    would be, no error is recorded, and the worker is not replaced."""
    sandbox = make_sandbox(workers=1)
    program = WORKER_PROCESSES + (
        "import signal\n"
        "def shout():\n"
        "    sent = set()\n"
        "    numbers = sorted(set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP})\n"
        "    assert signal.SIGRTMIN in numbers and signal.SIGRTMAX in numbers\n"
        "    targets = {worker, zygote, *blank_children()} - {os.getpid()}\n"
        "    refused = set()\n"
        "    for number in numbers:\n"
        "        for pid in targets:\n"
        "            try:\n                os.kill(pid, number)\n                sent.add(number)\n"
        "            except PermissionError:\n                refused.add(number)\n"
        # Sent to them all; or, where Landlock scopes a job's signals to its own processes
        # (ABI 6), refused for every one (the handling is then tested on older kernels).
        "    return len(targets) >= 3 and (len(sent) == len(numbers) or (not sent and len(refused) == len(numbers)))\n"
        "def add(a, b):\n    return a + b\n"
    )
    for _ in range(2):  # the second job runs in the same worker, after the first one's signals
        outcomes = sandbox.run(RunRequest(program, ["assert shout() is True\nassert add(2, 3) == 5",
                                                    "assert shout() is True\nassert add(2, 3) == 6"]))
        assert [(o.status, o.detail) for o in outcomes] == [
            ("passed", ""), ("failed", "assert add(2, 3) == 6  # got 5")], outcomes
    assert_honest_code_still_passes(sandbox)
    assert sandbox.replacements == 0


def test_a_process_the_test_forks_has_python_s_signal_defaults(sandbox):
    """The test's own process ignores signals (the program's leftovers cannot stop it),
    but a process the test forks is an ordinary Python's: SIGTERM (what
    multiprocessing's terminate() sends) ends it, where it would otherwise hang until
    the time limit."""
    test = (
        "import os, signal, time\n"
        "child = os.fork()\n"
        "if child == 0:\n    time.sleep(60)\n    os._exit(0)\n"
        "time.sleep(0.2)\n"
        "os.kill(child, signal.SIGTERM)\n"
        "status = os.waitpid(child, 0)[1]\n"
        "assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM, status\n"
        "assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN\n"
        "assert add(2, 3) == 5\n"
    )
    outcome = run_one(sandbox, ADD, test, timeout_s=20)
    assert outcome.status == "passed", outcome


def test_killing_the_zygote_replaces_the_worker(make_sandbox):
    """The worker's own failure retires it: later jobs never get its errors."""
    sandbox = make_sandbox(workers=1)
    outcome = run_one(sandbox, "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n", "assert True")
    # The test itself may finish before the zygote's end takes its children with it;
    # if the worker sees the zygote gone first, the job reruns on a fresh worker (and
    # kills that one's zygote too): one to three workers are replaced. Where Landlock
    # scopes a job's signals to its own processes (ABI 6), the kill is refused instead.
    assert outcome.status in ("passed", "error"), outcome
    assert_honest_code_still_passes(sandbox)
    assert_honest_code_still_passes(sandbox)
    if "PermissionError" in outcome.detail:
        assert sandbox.replacements == 0 and (sandbox.describe().get("landlock_abi") or 0) >= 6
    else:
        assert 1 <= sandbox.replacements <= 3


@pytest.mark.docker
def test_ipc_objects_do_not_survive_the_test(docker_sandbox):
    program = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "IPC_CREAT = 0o1000\n"
        "def make():\n"
        "    made = [libc.shmget(4242, 4096, IPC_CREAT | 0o600) >= 0,\n"
        "            libc.msgget(4243, IPC_CREAT | 0o600) >= 0,\n"
        "            libc.semget(4244, 1, IPC_CREAT | 0o600) >= 0]\n"
        "    with open('/dev/shm/posix-shm', 'wb') as f:\n"
        "        f.write(b'x')\n"
        "    return made\n"
        "def present():\n"
        "    return [libc.shmget(4242, 0, 0) >= 0, libc.msgget(4243, 0) >= 0, libc.semget(4244, 0, 0) >= 0,\n"
        "            os.path.exists('/dev/shm/posix-shm')]\n"
    )
    # SysV shared memory is refused to a job's processes in a container (confine.py).
    made, later = docker_sandbox.run(RunRequest(program, ["assert make() == [False, True, True]",
                                                          "assert present() == [False] * 4"]))
    assert made.status == "passed", made
    assert later.status == "passed", later


def test_strings_from_the_sandbox_are_valid_utf8(sandbox):
    program = "import sys\ndef f():\n    print('\\ud800', file=sys.stderr)\n    raise ValueError('bad \\ud800 input')\n"
    outcome = run_one(sandbox, program, "assert f() == 1")
    assert outcome.status == "error"
    for text in (outcome.detail, outcome.output, outcome.test):
        text.encode("utf-8")  # raises on a lone surrogate
    assert outcome.detail == "ValueError: bad \\ud800 input"


# --- the program cannot reach the test's process, nor leave kernel state behind ---------

REACH_OTHER_PROCESSES = WORKER_PROCESSES + (
    "import ctypes\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "libc.syscall.restype = ctypes.c_long\n"
    "class IOVec(ctypes.Structure):\n"
    "    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]\n"
    "def reach():\n"
    "    got, seen = [], 0\n"
    "    for pid in [zygote, worker, *siblings()]:\n"  # only the worker's own processes, on any backend
    "        seen += 1\n"
    "        for name in ('mem', 'environ'):\n"
    "            try:\n"
    "                with open(f'/proc/{pid}/{name}', 'rb'):\n"
    "                    got.append((pid, name))\n"
    "            except OSError:\n"
    "                pass\n"
    "        try:\n"
    "            os.listdir(f'/proc/{pid}/fd')\n"
    "            got.append((pid, 'fd'))\n"
    "        except OSError:\n"
    "            pass\n"
    "        pidfd = libc.syscall(434, pid, 0)  # pidfd_open\n"
    "        if pidfd >= 0:\n"
    "            for target in range(8):\n"
    "                if libc.syscall(438, pidfd, target, 0) >= 0:  # pidfd_getfd\n"
    "                    got.append((pid, 'pidfd_getfd', target))\n"
    "            os.close(pidfd)\n"
    "        buffer = ctypes.create_string_buffer(64)\n"
    "        local = IOVec(ctypes.cast(buffer, ctypes.c_void_p), 64)\n"
    "        remote = IOVec(0x400000, 64)\n"
    "        if libc.syscall(310, pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) >= 0:\n"
    "            got.append((pid, 'process_vm_readv'))\n"
    "        if libc.ptrace(16, pid, 0, 0) == 0:  # PTRACE_ATTACH\n"
    "            got.append((pid, 'ptrace'))\n"
    "    return got if seen >= 3 else ['saw only', seen]\n"
)


def test_the_program_cannot_reach_the_test_process(backend, sandbox):
    """While the test waits on its call, the program tries every way into another
    process of the container (the test's, the worker's, the zygote's): its memory,
    environment, descriptors (the report pipe), ptrace. None opens."""
    import os

    if backend == "process" and os.geteuid() == 0:
        pytest.skip("process backend as root: CAP_SYS_PTRACE reaches every process (no isolation)")
    outcome = run_one(sandbox, REACH_OTHER_PROCESSES, "assert reach() == []")
    assert outcome.status == "passed", outcome


@pytest.mark.docker
def test_kernel_state_outside_the_container_is_out_of_reach(docker_sandbox):
    """Keyrings (kept per user, across processes: a channel from one test to the next)
    and new namespaces (a way around the limits) are refused to the code."""
    program = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = ctypes.c_long\n"
        "def attempts():\n"
        "    key = libc.syscall(248, b'user', b'leak', b'data', 4, -4)  # add_key to the user keyring\n"
        "    user_ns = libc.unshare(0x10000000)  # CLONE_NEWUSER\n"
        "    mount_ns = libc.unshare(0x00020000)  # CLONE_NEWNS\n"
        "    return [key >= 0, user_ns == 0, mount_ns == 0]\n"
    )
    outcome = run_one(docker_sandbox, program, "assert attempts() == [False, False, False]")
    assert outcome.status == "passed", outcome
