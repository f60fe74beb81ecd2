"""Hostile answers through the whole pipeline: extraction, the graded program, the
sandbox, the records and pass@1.

Each answer is what a model rewarded for passing might write: it defines the entry
point wrongly and tries to get its hidden tests counted as passed anyway, with the
attack placed where extraction keeps it (definitions, and assignments that run code
at import). None may be scored as a pass; one honest answer beside them must be, so
a pipeline that failed everything would fail this test too.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.models.scripted import ScriptedModel
from harness.rundata import read_errors
from harness.tasks.base import Task
from tests.loop.helpers import responder, run

ADD_TESTS = ("assert add(2, 3) == 5", "assert add(-7, 7) == 0", "assert abs(add(0.5, 0.25) - 0.75) < 1e-9")
AREA_TESTS = ("assert math.isclose(area(1.0), 3.14159, rel_tol=1e-3)",)

HOSTILE_ANSWERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "an object equal to everything": (
        "class Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
        "    def __sub__(self, other):\n        return 0\n\n"
        "def add(a, b):\n    return Yes()\n",
        ADD_TESTS,
    ),
    "an int whose arithmetic always gives 0": (
        "class Zero(int):\n    def __sub__(self, other):\n        return Zero(0)\n    __rsub__ = __sub__\n"
        "    def __abs__(self):\n        return Zero(0)\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = int.__hash__\n\n"
        "def add(a, b):\n    return Zero(1)\n",
        ADD_TESTS,
    ),
    # The rebinding changes nothing the worker uses (P encodes its answers with an encoder
    # made before the program runs), so `add`'s own answers are graded: wrong for every test.
    "grader functions rebound at import": (
        "import builtins, json\n\n"
        "def add(a, b):\n    return -1\n\n"
        "builtins.exec = lambda *args, **kwargs: None\n"
        "json.dumps = lambda *args, **kwargs: '{\"status\": \"passed\"}'\n"
        "AssertionError = None\n",
        ADD_TESTS,
    ),
    "a forged report on every descriptor, then exit 0": (
        "def _forge():\n"
        "    import json, os\n"
        "    line = json.dumps({'token': '', 'pid': os.getpid(), 'status': 'passed', 'detail': ''}) + '\\n'\n"
        "    for fd in range(64):\n"
        "        try:\n            os.write(fd, line.encode())\n        except OSError:\n            pass\n"
        "    os._exit(0)\n\n"
        "def add(a, b):\n    return 0\n\n"
        "_ = _forge()\n",
        ADD_TESTS,
    ),
    "reading the hidden test out of memory": (
        "def add(a, b):\n"
        "    import gc, linecache, re, sys\n"
        "    texts = [str(v) for v in gc.get_objects() if isinstance(v, str) and 'assert add(' in v]\n"
        "    texts += [''.join(lines) for _, _, lines, _ in\n"
        "              [v for v in linecache.cache.values() if len(v) == 4]]\n"
        "    for text in texts:\n"
        "        for m in re.finditer(r'add\\(([^)]*)\\) == (\\S+)', text):\n"
        "            if m.group(1) == f'{a}, {b}':\n"
        "                return eval(m.group(2))\n"
        "    return None\n",
        ADD_TESTS,
    ),
    "exiting as soon as it is called": (
        "import os\n\ndef add(a, b):\n    os._exit(0)\n",
        ADD_TESTS,
    ),
    "StopIteration from every call": (
        "def add(a, b):\n    raise StopIteration\n",
        ADD_TESTS,
    ),
    "killing the worker and the test's process at import": (
        "import os, signal\n\n"
        "def _pids():\n"
        "    try:\n        return [int(p) for p in os.listdir('/proc') if p.isdigit()]\n"
        "    except OSError:  # closed to a job in a container, where PIDs are few and small\n"
        "        return range(2, os.getpid() + 1000)\n\n"
        "def _kill_all():\n"
        "    for pid in [1, os.getppid(), *_pids()]:\n"
        "        if pid != os.getpid():\n"
        "            try:\n                os.kill(pid, signal.SIGKILL)\n            except OSError:\n                pass\n\n"
        # Wrong for every test: where Landlock scopes a job's signals to its own processes
        # (ABI 6) the kills are refused and the answer is graded as it is.
        "def add(a, b):\n    return -1\n\n"
        "_ = _kill_all()\n",
        ADD_TESTS,
    ),
    "an object standing in for the module the test judges with": (
        "class _Math:\n    def isclose(self, *args, **kwargs):\n        return True\n\n"
        "math = _Math()\n\n"
        "def area(r):\n    return 0.0\n",
        AREA_TESTS,
    ),
}
# Not run on the process backend: there they would signal the host's own processes.
CONTAINER_ONLY = frozenset({"killing the worker and the test's process at import"})
HONEST = ("import math\n\ndef area(r):\n    return math.pi * r * r\n", AREA_TESTS)


def _task(number: int, answer_tests: tuple[str, ...]) -> Task:
    entry = "area" if answer_tests is AREA_TESTS else "add"
    # The marker lets the scripted model tell the tasks apart by their prompts.
    prompt = f'def {entry}(a, b):\n    """Case {number}: return the result."""\n'
    return Task(task_id=f"hostile/{number}", prompt=prompt, entry_point=entry, hidden_tests=answer_tests)


def test_hostile_answers_are_never_scored_as_passes(tmp_path: Path, loop_sandbox) -> None:
    names = [name for name in HOSTILE_ANSWERS if loop_sandbox.name == "docker" or name not in CONTAINER_ONLY]
    cases = [*(HOSTILE_ANSWERS[name] for name in names), HONEST]
    names.append("honest")
    tasks = [_task(number, tests) for number, (_, tests) in enumerate(cases)]

    def actor(messages) -> str:
        text = "".join(m.content for m in messages)
        number = next(n for n in range(len(cases)) if f"Case {n}:" in text)
        return f"```python\n{cases[number][0]}```"

    model = ScriptedModel(responder=responder({"actor": actor, "testgen": lambda m: "", "reflection": lambda m: ""}))
    result = run(tmp_path, model, loop_sandbox, tasks=tasks, strategy="baseline")

    assert result.failed == {}, result.failed
    assert read_errors(result.run_dir / "errors.jsonl") == []
    by_task = {r.task_id: r for r in result.records}
    assert len(by_task) == len(cases)
    scored = {names[int(task_id.split("/")[1])]: r.hidden_passed for task_id, r in by_task.items()}
    assert scored == {**{name: False for name in names[:-1]}, "honest": True}, scored
    # The hostile programs ran as written (extraction kept the attack), and every hidden
    # test of theirs has a verdict other than passed.
    for task_id, record in by_task.items():
        name = names[int(task_id.split("/")[1])]
        if name != "honest":
            assert record.hidden_results and all(r.status != "passed" for r in record.hidden_results), (name, record)
            assert cases[int(task_id.split("/")[1])][0].split("\n")[0] in record.code, name


@pytest.mark.parametrize("name", ["an object equal to everything", "a forged report on every descriptor, then exit 0"])
def test_hostile_answers_fail_in_the_reflexion_loop_too(tmp_path: Path, loop_sandbox, name: str) -> None:
    """With internal tests and retries, every trial of a hostile answer is scored as a
    failure on its hidden tests, whatever its internal tests said."""
    answer, tests = HOSTILE_ANSWERS[name]
    model = ScriptedModel(responder=responder({
        "actor": lambda m: f"```python\n{answer}```",
        "testgen": lambda m: "```python\nassert add(2, 3) == 5\n```",
        "reflection": lambda m: "Return the sum.",
    }))
    result = run(tmp_path, model, loop_sandbox, tasks=[_task(0, tests)], strategy="reflexion", trials=2)

    assert result.failed == {}, result.failed
    assert result.records and all(not r.hidden_passed for r in result.records), result.records
