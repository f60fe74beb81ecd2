"""T, the test's process: binds the names the test asks about, runs the test, and
writes the verdict on the report pipe that only T holds. In a blind job (hidden grading)
it judges only once the program's processes are gone (`judge_main`).
"""
from __future__ import annotations

import ast
import builtins
import json
import keyword
import linecache
import os
import sys
import types
from typing import Callable

from .assertions import (OBSERVER, Ledger, compile_blind_test, compile_prepared, compile_test, exception_verdict,
                         failed_assert_detail, observer)
from .child import flush_stdio
from .link import Link, Opaque, ProgramBroke, Remote
from .plain import from_tree
from .protocol import CHANNEL_FD, NAMES_MAX, PRELUDE_FILE, REPORT_FD, TEST_FILE, WireError, send_frame, write_all
from .text import exception_line, one_line, short_repr

RELEASE_FD = 5  # in a blind job's T: W writes RELEASED here once no other process of the job runs
RELEASED = b"g"

# Modules a test may get by the program's import (`import numpy as np` in the program,
# `np` in the test): the standard library and the image's scientific packages, imported
# by the test process itself from its own path. Not those that act on import.
_IMPORTABLE_EXTRA = frozenset({"numpy", "pytest"})
_ACTS_ON_IMPORT = frozenset({"antigravity", "this", "turtle", "turtledemo", "tkinter", "idlelib",
                             "webbrowser", "pydoc"})


def _importable(module: str) -> bool:
    if "__main__" in module.split("."):  # a script (a package's, or the process's own)
        return False
    if module in sys.modules:
        return True
    top = module.split(".")[0]
    if top in _ACTS_ON_IMPORT or not (top in sys.stdlib_module_names or top in _IMPORTABLE_EXTRA):
        return False
    if not all(part.isidentifier() for part in module.split(".")):
        return False
    try:
        __import__(module)
    except BaseException:
        return False
    return module in sys.modules


def _attribute_bases(test_source: str) -> set[str]:
    """Names the test reads an attribute of (`math` in `math.isclose(...)`)."""
    try:
        tree = ast.parse(test_source, TEST_FILE)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return {node.value.id for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)}


def _may_be_module(name: str) -> bool:
    """Whether `name` could be a top-level module of the test's process (no import)."""
    return name in sys.modules or name in sys.stdlib_module_names or name in _IMPORTABLE_EXTRA


def _own_module(name: str) -> types.ModuleType | None:
    """The module the test's process itself has under a top-level `name` (`math`,
    `re`, `numpy`), or None: what a test means by a module name it uses unimported."""
    module = sys.modules.get(name) if _importable(name) else None
    return module if isinstance(module, types.ModuleType) else None


def _bind_program_names(namespace: dict, link: Link, names: object, entry_point: str | None,
                        own: set[str], wanted: set[str], test_source: str) -> None:
    """The program's module-level names, as the test sees them.

    The entry point always comes from the program. Other names come from it only when
    the grader has nothing of that name: builtins and the task's prelude (its own
    helpers and imports) stay the grader's, and so does a module of the test's own
    process that the test reads attributes of. So the program cannot replace a function
    the test relies on to judge it, nor stand in for `math` in `math.isclose(f(x), y)`
    with an object whose `isclose` says yes; a function of its own that happens to
    share a module's name (`chunk`, `array`) is still the program's where the test
    calls it. Only names the test asked about are taken, never a dunder name.
    """
    if type(names) is not list:
        return
    attribute_bases: set[str] | None = None  # parsed only if a module's name comes up
    for item in names[:NAMES_MAX]:
        if type(item) is not list or len(item) != 3 or type(item[0]) is not str:
            continue
        name, kind, info = item
        if not name.isidentifier() or keyword.iskeyword(name) or len(name) > 200:
            continue
        if name not in wanted or (name.startswith("__") and name.endswith("__")):
            continue
        if name != entry_point and (name in own or hasattr(builtins, name)):
            continue
        if name != entry_point and kind != "module" and _may_be_module(name):
            if attribute_bases is None:
                attribute_bases = _attribute_bases(test_source)
            # Imported only where the test reads from it: a program's `chunk` that the
            # test calls costs no import (and no DeprecationWarning in the output).
            if name in attribute_bases and (module := _own_module(name)) is not None:
                namespace[name] = module
                continue
        if kind == "callable":
            namespace[name] = Remote(link, name)
        elif kind == "value":
            try:
                namespace[name] = from_tree(info, link.tags)
            except WireError:
                namespace[name] = Opaque(link, name, "a malformed value")
        elif kind == "module" and isinstance(info, str) and _importable(info):
            namespace[name] = sys.modules[info]
        elif kind == "module":
            namespace[name] = Opaque(link, name, f"the test process cannot import module {str(info)[:60]!r}")
        else:
            namespace[name] = Opaque(link, name, str(info)[:80] if isinstance(info, str) else "not plain data")


def _global_names(code: types.CodeType) -> set[str]:
    """Every name the test's code may look up (a superset: attribute names too)."""
    names: set[str] = set()
    stack = [code]
    while stack:
        current = stack.pop()
        names.update(current.co_names)
        stack.extend(const for const in current.co_consts if isinstance(const, types.CodeType))
    return names


def _cache_sources(payload: dict) -> None:
    for name, text in ((PRELUDE_FILE, payload.get("prelude") or ""), (TEST_FILE, payload["test"])):
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)


def _prepare(payload: dict, link: Link, code: types.CodeType) -> dict | tuple[str, str]:
    """The namespace the test's `code` runs in (the prelude run, the program's names
    bound), or the verdict when the test cannot run: (status, detail)."""
    test, prelude = payload["test"], payload.get("prelude") or ""
    namespace: dict = {"__name__": "__test__", "__builtins__": builtins}
    if prelude:
        try:
            exec(compile(prelude, PRELUDE_FILE, "exec"), namespace)
        except BaseException as exc:
            return "error", one_line(f"the task's prelude failed: {exception_line(exc)}")
    own = set(namespace)
    entry_point = payload.get("entry_point")
    wanted = _global_names(code) | ({entry_point} if isinstance(entry_point, str) else set())
    try:
        send_frame(link.fd, {"op": "hello", "names": sorted(wanted)})
    except OSError:
        pass  # the program already failed and left: its last word is still to be read
    try:
        first = link.receive("before the test ran")
    except ProgramBroke:
        return "error", link.broken or "the program's process ended"
    if first.get("op") == "failed":
        detail = first.get("detail")
        return "error", one_line(detail if isinstance(detail, str) else "the program failed")
    if first.get("op") != "ready":
        return "error", "the program sent an unexpected first message"
    _bind_program_names(namespace, link, first.get("names"), entry_point, own, wanted, test)
    return namespace


def _judge(payload: dict, link: Link) -> tuple[str, str]:
    """Run the test against the program in P -> (status, detail). The first failed
    assert ends the test (not blind: internal tests, whose verdicts reach the agent)."""
    test = payload["test"]
    _cache_sources(payload)
    prepared = compile_prepared(payload.get("prepared"), blind=False)
    compiled_source = payload["prepared"]["source"] if prepared else None
    try:
        code, observed = prepared or compile_test(test)
    except SyntaxError as exc:
        return "error", one_line(f"invalid test: {exception_line(exc)}")
    namespace = _prepare(payload, link, code)
    if isinstance(namespace, tuple):
        return namespace
    namespace[OBSERVER] = observer(observed)
    try:
        exec(code, namespace)
    except ProgramBroke:
        pass
    except AssertionError as exc:
        if link.broken is None:
            return "failed", failed_assert_detail(exc, test, observed, compiled_source)
    except SystemExit as exc:
        if link.broken is None:
            return "error", f"the test called sys.exit({short_repr(exc.code)}) before it finished"
    except BaseException as exc:
        if link.broken is None:
            return "error", one_line(exception_line(exc))
    if link.broken is not None:
        return "error", one_line(link.broken)
    return "passed", ""


Verdict = tuple[str, str, bool]  # status, detail, whether the program's end is its cause


def _run_blind(payload: dict, link: Link) -> Callable[[], Verdict]:
    """A verdict-blind test's first phase: run the whole test (no assert stops it; see
    assertions.compile_blind_test) while the program answers. What gives the verdict is
    returned, to be called only once no process of the program is left."""
    test = payload["test"]
    _cache_sources(payload)
    try:
        code, table = compile_prepared(payload.get("prepared"), blind=True) or compile_blind_test(test)
        ledger = Ledger(test, table)
    except SyntaxError as exc:
        invalid = ("error", one_line(f"invalid test: {exception_line(exc)}"), False)
        return lambda: invalid
    namespace = _prepare(payload, link, code)
    if isinstance(namespace, tuple):
        early = (*namespace, link.program_ended)
        return lambda: early
    ledger.bind(namespace)
    link.recorded = lambda: len(ledger.events)
    ending: BaseException | None = None
    try:
        exec(code, namespace)
    except BaseException as exc:  # ends the test as in one interpreter; judged later
        ending = exc
    return lambda: _blind_verdict(ledger, link, ending, test)


def _blind_verdict(ledger: Ledger, link: Link, ending: BaseException | None, test: str) -> Verdict:
    """The first of what went wrong, in the order the test met it: a failed assert
    (deferred comparisons evaluated now), the program breaking, the exception that ended
    the test."""
    failure = ledger.first_failure(link.broken_after if link.broken is not None else None)
    if failure is not None:
        return (*failure, False)
    if link.broken is not None:
        return "error", one_line(link.broken), link.program_ended
    if ending is None:
        return "passed", "", False
    if isinstance(ending, SystemExit):
        return "error", f"the test called sys.exit({short_repr(ending.code)}) before it finished", False
    # Raised outside an assert statement (or an AssertionError raised by hand).
    return (*exception_verdict(ending, test), False)


def _calls_done(token: str, link: Link) -> None:
    """Tell W on the report pipe that the test will ask the program nothing more, then wait
    until W has killed every other process of the job and says so on RELEASE_FD. Whether
    and when this happens does not depend on the program's answers."""
    link.done = True
    flush_stdio()
    try:
        write_all(REPORT_FD, (json.dumps({"token": token, "pid": os.getpid(), "calls_done": True}) + "\n").encode())
        released = os.read(RELEASE_FD, 1)
    except BaseException:
        os._exit(71)
    if released != RELEASED:
        os._exit(72)  # W is gone: there is no one to give a verdict to


def judge_main(payload: dict) -> None:
    """T: judge, then write the verdict on the report pipe; never returns.

    A blind job (`"blind": true`, hidden grading) runs in two phases: the whole test while
    the program answers, recording what its asserts met; then, once W has killed every
    other process of the job, the deferred comparisons and the verdict."""
    link = Link(CHANNEL_FD)
    blind = payload.get("blind") is True
    finish: Callable[[], Verdict] | None = None
    program_ended = None
    try:
        if blind:
            finish = _run_blind(payload, link)
        else:
            status, detail = _judge(payload, link)
    except BaseException as exc:  # the judge itself failed: never a pass
        status, detail = "error", one_line(f"the test process failed: {exception_line(exc)}")
    if blind:
        _calls_done(payload["token"], link)
        if finish is not None:
            try:
                status, detail, program_ended = finish()
            except BaseException as exc:
                status, detail = "error", one_line(f"the test process failed: {exception_line(exc)}")
    flush_stdio()
    report = {"token": payload["token"], "pid": os.getpid(), "status": status, "detail": detail,
              "program_ended": link.program_ended if program_ended is None else program_ended}
    try:
        write_all(REPORT_FD, (json.dumps(report) + "\n").encode())
    except BaseException:
        os._exit(71)
    os._exit(0)
