"""The sandbox worker: judges one test against one program per job, in two processes.

Standard library only: it runs inside the sandbox image as PID 1 of a container, and,
for the process backend, as a plain subprocess on the host. sandbox/README.md explains
the design and its threat model; in short:

    worker (W)   talks to the host, watches each job, cleans up; runs no job's code
     '- zygote (Z)   forked before the first job; never holds a job; forks blank
          children on request and says when each one ends
           |- P   a blank child given the program: runs it, then serves calls
           '- T   a blank child given one test: runs it; the program's functions are
                  proxies that call into P; the verdict is computed here and written
                  on a pipe that only T holds

No process holds another job's program or test: P and T come from a zygote that has
held none, so a test the model wrote cannot read a hidden test out of memory it
inherited, and the program never sees the test that judges it. Only plain data
crosses from P to T (None, bool, int, float, complex, str, bytes and list / tuple /
dict / set / frozenset of them), as tagged JSON decoded by a parser that can build
nothing else, and references to P's other objects, which T can ask P to call, read,
iterate or index but which compare only by identity.

Host protocol, one JSON object per line. At start the worker writes
``{"ready": true, "protocol": N, "pid": ..., "python": "..."}``. Each job line
``{"id", "program", "test", "prelude", "entry_point", "timeout_s", "memory_mb",
"max_output_bytes", "max_file_mb", "pids"}`` gets one answer line
``{"id", "status", "detail", "duration_s", "output"}``. The answer goes out before the
clean-up; a worker that could not restore a clean state declines the next job with
``{"id", "not_run": true, "retire": "<why>"}`` and exits, and the host runs that job
on a fresh worker.
"""
from __future__ import annotations

import ast
import builtins
import ctypes
import fcntl
import gc
import io
import json
import keyword
import linecache
import math
import os
import re
import reprlib
import resource
import select
import signal
import socket
import stat
import struct
import sys
import tempfile
import time
import traceback
import types

PROTOCOL = 2
DETAIL_MAX = 400  # characters of a failure detail
_PROGRAM_FILE = "<program>"
_TEST_FILE = "<test>"
_PRELUDE_FILE = "<prelude>"
_CHANNEL_FD = 3  # in P and T: the socket between them
_REPORT_FD = 4  # in T: the verdict pipe to the worker
_REPORT_MAX = 64 * 1024
_FRAME_MAX = 32 * 1024 * 1024  # one message between P and T
_DEPTH_MAX = 100  # nesting of plain data
_ITEMS_MAX = 2_000_000  # values in one message
_NAMES_MAX = 5000  # names a program may expose
_HELD_MAX = 100_000  # program objects the test may hold references to
_ZYGOTE_TIMEOUT_S = 10.0
_CLEANUP_TIMEOUT_S = 10.0
_WIPE_TIMEOUT_S = 5.0
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_IPC_RMID = 0

# Imported once in the worker so that every forked process finds them ready. Heavy
# libraries with threads (numpy's BLAS) stay out: threads do not survive fork.
_PRELOAD = (
    "abc argparse array base64 bisect calendar cmath collections collections.abc "
    "contextlib copy csv dataclasses datetime decimal difflib enum fractions functools "
    "hashlib heapq itertools json math numbers operator random re statistics string "
    "struct tempfile textwrap typing unicodedata unittest"
).split()
# Signals the worker and the zygotes ignore (SIGKILL and SIGSTOP cannot be ignored:
# PID 1 of a container never receives them from inside; see README).
_IGNORED_SIGNALS = [
    s for s in signal.Signals
    if s not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD, signal.SIGSEGV,
                 signal.SIGBUS, signal.SIGFPE, signal.SIGILL)
]


def _preload() -> None:
    for name in _PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass


_LIBC = ctypes.CDLL(None, use_errno=True)  # the C library's handle: a constant


def _prctl(option: int, value: int) -> None:
    try:
        _LIBC.prctl(option, value, 0, 0, 0)
    except AttributeError:
        pass


# ================================================================ plain data


class NotPlain(Exception):
    """A value that is not plain data; the message says what it is ("a Node")."""


class WireError(Exception):
    """A message that is not well-formed plain data."""


_HEX_INT = re.compile(r"-?0x[0-9a-f]+")
_SMALL_INT = 1 << 1000  # ints below this travel as JSON numbers, larger ones as hex
_BARE = frozenset({str, float, bool, type(None)})  # with small ints: JSON as they are


def _bare_items(items) -> bool:
    """Every item an exact str, float, bool, None or small int: JSON can carry the
    container as it is (the common case: lists of numbers or strings)."""
    for item in items:
        kind = type(item)
        if kind is int:
            if not -_SMALL_INT < item < _SMALL_INT:
                return False
        elif kind not in _BARE:
            return False
    return True


def _type_name(value: object) -> str:
    try:
        name = type(value).__name__
    except BaseException:
        return "object"
    return name if isinstance(name, str) and name.isidentifier() else "object"


def to_tree(value: object, other=None) -> object:
    """A JSON-able tree for a plain value; subclasses become their base type.

    `other(value, walk, depth)` gives the tree of a value that is not plain data (a
    reference to an object held elsewhere); without it, such a value is NotPlain.
    """
    budget = [_ITEMS_MAX]

    def walk(v: object, depth: int) -> object:
        budget[0] -= 1
        if budget[0] < 0:
            raise NotPlain(f"more than {_ITEMS_MAX} values")
        if depth > _DEPTH_MAX:
            raise NotPlain(f"data nested deeper than {_DEPTH_MAX} levels")
        if v is None or v is True or v is False:
            return v
        if isinstance(v, bool):  # bool cannot be subclassed; kept for clarity
            return bool.__bool__(v)
        if isinstance(v, int):
            number = int.__index__(v)
            return number if -_SMALL_INT < number < _SMALL_INT else ["int", hex(number)]
        if isinstance(v, float):
            return float.__float__(v)  # JSON keeps every float exactly, nan and inf included
        if isinstance(v, complex):
            return ["complex", float.hex(complex.real.__get__(v)), float.hex(complex.imag.__get__(v))]
        if isinstance(v, str):
            return str.__str__(v)
        if isinstance(v, bytes):
            return ["bytes", bytes.hex(v)]
        if isinstance(v, (list, tuple, set, frozenset)) and type(v) in (list, tuple, set, frozenset):
            items = list(v)
            if _bare_items(items):
                budget[0] -= len(items)
                if budget[0] < 0:
                    raise NotPlain(f"more than {_ITEMS_MAX} values")
                return [type(v).__name__, items]
        if isinstance(v, list):
            return ["list", [walk(x, depth + 1) for x in list.__iter__(v)]]
        if isinstance(v, tuple):
            return ["tuple", [walk(x, depth + 1) for x in tuple.__iter__(v)]]
        if isinstance(v, dict):
            return ["dict", [[walk(k, depth + 1), walk(x, depth + 1)] for k, x in dict.items(v)]]
        if isinstance(v, frozenset):
            return ["frozenset", [walk(x, depth + 1) for x in frozenset.__iter__(v)]]
        if isinstance(v, set):
            return ["set", [walk(x, depth + 1) for x in set.__iter__(v)]]
        module = getattr(type(v), "__module__", "") or ""
        if module.split(".")[0] == "numpy" and getattr(v, "shape", None) == () and hasattr(v, "item"):
            return walk(v.item(), depth + 1)  # a numpy scalar: its Python value
        if other is not None:
            return other(v, walk, depth)
        raise NotPlain(f"a {_type_name(v)}")

    return walk(value, 0)


_DECODED_SCALARS = frozenset({str, int, float, bool, type(None)})  # what json.loads makes


def from_tree(tree: object, tags: dict | None = None) -> object:
    """The plain value a tree describes; WireError for anything else.

    `tags` maps the extra tags one side accepts (references to objects) to a function
    `(node, walk, depth) -> value`; every other tag is refused.
    """
    budget = [_ITEMS_MAX]

    def hashable(v: object) -> object:
        try:
            hash(v)
        except TypeError:
            raise WireError(f"unhashable {type(v).__name__} as a dict key or set member") from None
        return v

    def items(node: list, depth: int) -> list:
        if len(node) != 2 or type(node[1]) is not list:
            raise WireError(f"malformed {node[0]}")
        values = node[1]
        if all(type(x) in _DECODED_SCALARS for x in values):  # numbers and strings as JSON gave them
            budget[0] -= len(values)
            if budget[0] < 0:
                raise WireError("too large")
            return values
        return [walk(x, depth + 1) for x in values]

    def walk(node: object, depth: int) -> object:
        budget[0] -= 1
        if budget[0] < 0 or depth > _DEPTH_MAX + 2:
            raise WireError("too large or too deep")
        kind = type(node)
        if node is None or kind is bool or kind is str or kind is int or kind is float:
            return node
        if kind is not list or not node or type(node[0]) is not str:
            raise WireError("not a tagged value")
        tag = node[0]
        if tag == "int" and len(node) == 2 and type(node[1]) is str and _HEX_INT.fullmatch(node[1]):
            return int(node[1], 16)
        if tag == "float" and len(node) == 2 and type(node[1]) is str and len(node[1]) < 40:
            try:
                return float.fromhex(node[1])
            except ValueError:
                raise WireError("bad float") from None
        if tag == "complex" and len(node) == 3 and all(type(p) is str and len(p) < 40 for p in node[1:]):
            try:
                return complex(float.fromhex(node[1]), float.fromhex(node[2]))
            except ValueError:
                raise WireError("bad complex") from None
        if tag == "bytes" and len(node) == 2 and type(node[1]) is str:
            try:
                return bytes.fromhex(node[1])
            except ValueError:
                raise WireError("bad bytes") from None
        if tag == "list":
            return items(node, depth)
        if tag == "tuple":
            return tuple(items(node, depth))
        if tag == "set":
            return {hashable(x) for x in items(node, depth)}
        if tag == "frozenset":
            return frozenset(hashable(x) for x in items(node, depth))
        if tag == "dict":
            if len(node) != 2 or type(node[1]) is not list:
                raise WireError("malformed dict")
            out = {}
            for pair in node[1]:
                if type(pair) is not list or len(pair) != 2:
                    raise WireError("malformed dict item")
                out[hashable(walk(pair[0], depth + 1))] = walk(pair[1], depth + 1)
            return out
        if tags is not None and tag in tags:
            return tags[tag](node, walk, depth)
        raise WireError(f"unknown tag {tag[:20]!r}")

    return walk(tree, 0)


# ================================================================ frames


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def send_frame(fd: int, message: dict) -> None:
    """One JSON object, length-prefixed."""
    data = json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode()
    _write_all(fd, struct.pack(">I", len(data)) + data)


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks, remaining = [], size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def recv_frame(fd: int) -> dict | None:
    """The next message, None at end of stream; WireError if it is not a JSON object."""
    head = _read_exact(fd, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">I", head)
    if size > _FRAME_MAX:
        raise WireError(f"a message of {size} bytes (the limit is {_FRAME_MAX})")
    body = _read_exact(fd, size)
    if body is None:
        return None
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        raise WireError("a message that is not JSON") from None
    if type(message) is not dict:
        raise WireError("a message that is not an object")
    return message


# ================================================================ text helpers


def _one_line(text: str, limit: int = DETAIL_MAX) -> str:
    text = " ".join(part.strip() for part in str(text).strip().splitlines())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _short_repr(value: object) -> str:
    shortener = reprlib.Repr()
    shortener.maxstring = shortener.maxother = 160
    shortener.maxlist = shortener.maxtuple = shortener.maxset = shortener.maxdict = 20
    shortener.maxlong = 100
    try:
        return shortener.repr(value)
    except BaseException as exc:  # e.g. an int too long for repr
        return f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"


def _exception_line(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"{type(exc).__name__}: {exc}"
    try:
        return traceback.format_exception_only(type(exc), exc)[-1].strip()
    except BaseException:
        return type(exc).__name__


# ================================================================ in P and T


def _enter_child(fds: dict[int, int], job: dict, cwd: str, stdio: tuple, home: str, role: str) -> None:
    """A blank child takes its job: only the given fds, its directory, limits, signals.

    `fds` maps target fd -> current fd; stdout+stderr are the output pipe.
    """
    if role == "program":  # Python's own defaults, as the program would have them
        for number in _IGNORED_SIGNALS:
            try:
                signal.signal(number, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # EPIPE as an error, not a death
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # "File too large" as an error
    # The test process keeps ignoring signals: the program's leftovers cannot stop it
    # with anything but SIGKILL/SIGSTOP, which make the verdict an error or a timeout.
    # Move sources above the targets first so that no dup2 clobbers another source.
    moved = {target: fcntl.fcntl(source, fcntl.F_DUPFD, 64) for target, source in fds.items()}
    for target, source in moved.items():
        os.dup2(source, target)
    highest = max([2, *fds])
    os.closerange(highest + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    os.chdir(cwd)
    os.environ["HOME"] = home
    _apply_limits(job)
    sys.stdin, sys.stdout, sys.stderr = stdio


def _apply_limits(job: dict) -> None:
    mb = 1024 * 1024
    cpu = math.ceil(float(job["timeout_s"])) + 1
    limits = [
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_AS, int(job["memory_mb"]) * mb, int(job["memory_mb"]) * mb),
        (resource.RLIMIT_FSIZE, int(job["max_file_mb"]) * mb, int(job["max_file_mb"]) * mb),
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_MSGQUEUE, 0, 0),  # no POSIX message queues
    ]
    if job.get("nproc"):
        limits.append((resource.RLIMIT_NPROC, int(job["nproc"]), int(job["nproc"])))
    for which, soft, hard in limits:
        _, old_hard = resource.getrlimit(which)
        if old_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, old_hard), min(hard, old_hard)
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            pass


def _flush_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


# ---------------------------------------------------------------- P: the program


class _Held:
    """P's objects that the test holds references to, by number.

    A value that is not plain data does not cross: the test gets a reference, and
    asks P to call it, read an attribute, iterate, index it, take its len / str /
    truth value. Each answer is plain data or another reference. Objects the test
    built from its own classes come to P by value and are rebuilt here (as the
    program's class of that name when it has one, else as a bare class).
    """

    def __init__(self, namespace: dict) -> None:
        self.namespace = namespace
        self.objects: list[object] = []
        self.numbers: dict[int, int] = {}  # id -> number; `objects` keeps them alive
        self.bare_classes: dict[str, type] = {}

    def reference(self, value: object, walk, depth: int) -> list:
        number = self.numbers.get(id(value))
        if number is None:
            if len(self.objects) >= _HELD_MAX:
                raise NotPlain(f"more than {_HELD_MAX} objects")
            number = self.numbers[id(value)] = len(self.objects)
            self.objects.append(value)
        return ["handle", number, _type_name(value)]

    def arguments(self, message: dict) -> tuple[object, object]:
        """The arguments of a request: plain data, references back to P's objects
        (`["ref", n]`), and objects the test built (`["obj", n]`, described in the
        request's flat `objects` table, so a long linked list nests no deeper than one
        of its links)."""
        table = message.get("objects") or []
        if type(table) is not list or len(table) > _HELD_MAX:
            raise WireError("a malformed object table")
        built: dict[int, object] = {}
        for entry in table:
            if (type(entry) is not list or len(entry) != 3 or type(entry[0]) is not int or entry[0] in built
                    or type(entry[1]) is not str or type(entry[2]) is not list):
                raise WireError("a malformed object")
            built[entry[0]] = self._instance(entry[1])

        def reference(node: list, walk, depth: int) -> object:
            if len(node) != 2 or type(node[1]) is not int or not 0 <= node[1] < len(self.objects):
                raise WireError("a bad reference")
            return self.objects[node[1]]

        def made(node: list, walk, depth: int) -> object:
            if len(node) != 2 or type(node[1]) is not int or node[1] not in built:
                raise WireError("a bad object number")
            return built[node[1]]

        def function(node: list, walk, depth: int) -> object:
            if len(node) != 2 or type(node[1]) is not str or not callable(self.namespace.get(node[1])):
                raise WireError("a bad function name")
            return self.namespace[node[1]]

        tags = {"ref": reference, "obj": made, "function": function}
        for number, name, attributes in table:
            for pair in attributes:
                if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
                    raise WireError("a malformed attribute")
                try:
                    object.__setattr__(built[number], pair[0], from_tree(pair[1], tags))
                except (AttributeError, TypeError) as exc:
                    raise WireError(f"an attribute the program's {name} cannot take ({exc})") from None
        return from_tree(message.get("args"), tags), from_tree(message.get("kwargs"), tags)

    def _instance(self, name: str) -> object:
        cls = self.namespace.get(name)
        if isinstance(cls, type) and getattr(cls, "__module__", None) == "solution":
            try:
                return object.__new__(cls)
            except TypeError:  # a class object.__new__ cannot make (a builtin's subclass)
                pass
        if name not in self.bare_classes:
            self.bare_classes[name] = type(name if name.isidentifier() else "Object", (), {"__module__": "test"})
        return self.bare_classes[name]()


def _describe_names(namespace: dict, held: _Held, wanted: object) -> list[list]:
    """The module-level names the test refers to, as the test process may see them."""
    names: list[list] = []
    if type(wanted) is not list:
        return names
    for name in wanted[:_NAMES_MAX]:
        if type(name) is not str or (name.startswith("__") and name.endswith("__")) or name not in namespace:
            continue
        value = namespace[name]
        if isinstance(value, types.ModuleType):
            module = getattr(value, "__name__", None)
            names.append([name, "module", module if isinstance(module, str) else ""])
        elif callable(value):
            names.append([name, "callable", _type_name(value)])
        else:
            try:
                names.append([name, "value", to_tree(value, held.reference)])
            except NotPlain as exc:
                names.append([name, "opaque", f"it is {exc}"])
    return names


def _exception_message(exc: BaseException) -> dict:
    kind = type(exc)
    builtin_base = "Exception"
    for base in kind.__mro__:
        if getattr(base, "__module__", None) == "builtins":
            builtin_base = base.__name__
            break
    try:
        args = to_tree(tuple(exc.args))
    except BaseException:
        args = None
    try:
        text = str(exc)
    except BaseException:
        text = ""
    return {"op": "raise", "type": _type_name(exc), "base": builtin_base, "args": args,
            "message": text[:DETAIL_MAX * 4]}


def _program_main(payload: dict) -> None:
    """P: run the program, then answer calls from the test until it hangs up."""
    module = types.ModuleType("solution")
    sys.modules["solution"] = module
    namespace = module.__dict__
    program = payload["program"]
    linecache.cache[_PROGRAM_FILE] = (len(program), None, program.splitlines(True), _PROGRAM_FILE)
    channel = _CHANNEL_FD
    try:
        exec(compile(program, _PROGRAM_FILE, "exec"), namespace)
    except SystemExit as exc:
        _flush_stdio()
        send_frame(channel, {"op": "failed",
                             "detail": f"the program called sys.exit({_short_repr(exc.code)}) before the test ran"})
        return
    except BaseException as exc:
        _flush_stdio()
        send_frame(channel, {"op": "failed", "detail": _one_line(_exception_line(exc))})
        return
    _flush_stdio()
    try:
        hello = recv_frame(channel)
    except WireError:
        return
    if hello is None or hello.get("op") != "hello":
        return
    held = _Held(namespace)
    send_frame(channel, {"op": "ready", "names": _describe_names(namespace, held, hello.get("names"))})
    while True:
        try:
            message = recv_frame(channel)
        except WireError:
            return
        if message is None or message.get("op") not in ("call", "apply"):
            return
        send_frame(channel, _serve_call(namespace, held, message))


# What the test may ask of an object it holds a reference to: each gives the program's
# own answer. Comparisons and hashing are not here: the test does them itself, by
# identity, so the program never decides an `==`.
_ACTIONS = {
    "call": lambda target, args, kwargs: target(*args, **kwargs),
    "getattr": lambda target, args, kwargs: getattr(target, args[0]),
    "setattr": lambda target, args, kwargs: setattr(target, args[0], args[1]),
    "setitem": lambda target, args, kwargs: target.__setitem__(args[0], args[1]),
    "iter": lambda target, args, kwargs: iter(target),
    "next": lambda target, args, kwargs: next(target),
    "len": lambda target, args, kwargs: len(target),
    "getitem": lambda target, args, kwargs: target[args[0]],
    "contains": lambda target, args, kwargs: args[0] in target,
    "bool": lambda target, args, kwargs: bool(target),
    "str": lambda target, args, kwargs: str(target),
}
_ARGUMENT_COUNT = {"getattr": 1, "getitem": 1, "contains": 1, "setattr": 2, "setitem": 2}


def _serve_call(namespace: dict, held: _Held, message: dict) -> dict:
    """One request from the test: a call to a function of the program by name, or an
    action on an object the test holds a reference to."""
    try:
        args, kwargs = held.arguments(message)
    except WireError as exc:
        return {"op": "refused", "detail": f"bad arguments: {exc}"}
    if type(args) is not tuple or type(kwargs) is not dict:
        return {"op": "refused", "detail": "bad arguments"}
    if message.get("op") == "call":
        name = message.get("name")
        target = namespace.get(name) if isinstance(name, str) else None
        action, label = "call", f"{name}()"
        if not callable(target):
            return {"op": "refused", "detail": f"{name!r} is not a function of the program"}
    else:
        number, action, name = message.get("handle"), message.get("action"), message.get("name")
        if action not in _ACTIONS:
            return {"op": "refused", "detail": "a bad request about an object of the program"}
        if type(number) is int and 0 <= number < len(held.objects):
            target = held.objects[number]
        elif number is None and isinstance(name, str) and callable(namespace.get(name)):
            target = namespace[name]  # a module-level function or class, by name
        else:
            return {"op": "refused", "detail": "a bad request about an object of the program"}
        count = _ARGUMENT_COUNT.get(action)
        if count is not None and (len(args) != count or kwargs
                                  or (action in ("getattr", "setattr") and type(args[0]) is not str)):
            return {"op": "refused", "detail": f"bad arguments for {action}"}
        label = f"{action}() of a {_type_name(target)}"
    reference = held.reference
    before = [to_tree(a, reference) if type(a) in (list, dict, set) else None for a in args]
    before_kw = {k: to_tree(a, reference) if type(a) in (list, dict, set) else None for k, a in kwargs.items()}
    try:
        result = _ACTIONS[action](target, args, kwargs)
    except (SystemExit, KeyboardInterrupt) as exc:
        _flush_stdio()
        what = "sys.exit" if isinstance(exc, SystemExit) else "KeyboardInterrupt"
        code = f"({_short_repr(exc.code)})" if isinstance(exc, SystemExit) else ""
        return {"op": "exit", "detail": f"the program raised {what}{code} during a call to {label}"}
    except BaseException as exc:
        _flush_stdio()
        return _exception_message(exc)
    _flush_stdio()
    try:
        value = to_tree(result, reference)
    except NotPlain as exc:
        return {"op": "not_plain", "detail": f"{label} returned {exc}; too much to send outside the sandbox"}
    mutated, kw_mutated = [], []
    try:  # arguments changed in place travel back, so in-place tests still work
        for index, arg in enumerate(args):
            if type(arg) in (list, dict, set) and (after := to_tree(arg, reference)) != before[index]:
                mutated.append([index, after])
        for key, arg in kwargs.items():
            if type(arg) in (list, dict, set) and (after := to_tree(arg, reference)) != before_kw[key]:
                kw_mutated.append([key, after])
    except NotPlain as exc:
        return {"op": "not_plain", "detail": f"{label} put {exc} into an argument; too much to send outside the sandbox"}
    return {"op": "return", "value": value, "mutated": mutated, "kw_mutated": kw_mutated}


# ---------------------------------------------------------------- T: the test


class ProgramBroke(BaseException):
    """The program misbehaved during a call (died, exited, returned something that is
    not plain data). A BaseException, so `except Exception` in a test cannot swallow
    it; the link also remembers it, so the verdict is an error whatever the test does."""


class _Link:
    """The test's end of the channel to P."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.broken: str | None = None
        self.program_ended = False
        self.calls = 0
        self.handles: dict[int, _Handle] = {}  # one reference per object of the program
        self.tags = {"handle": self._handle}

    def fail(self, detail: str, ended: bool = False) -> ProgramBroke:
        if self.broken is None:
            self.broken = detail
            self.program_ended = ended
        return ProgramBroke(self.broken)

    def receive(self, during: str) -> dict:
        try:
            message = recv_frame(self.fd)
        except WireError as exc:
            raise self.fail(f"the program sent {exc} {during}") from None
        except OSError as exc:
            raise self.fail(f"the program's channel failed ({exc.strerror}) {during}", ended=True) from None
        if message is None:
            raise self.fail(f"the program's process ended {during}", ended=True)
        return message

    def _handle(self, node: list, walk, depth: int) -> _Handle:
        if len(node) != 3 or type(node[1]) is not int or node[1] < 0 or type(node[2]) is not str:
            raise WireError("a malformed reference")
        handle = self.handles.get(node[1])
        if handle is None:
            kind = node[2] if node[2].isidentifier() and len(node[2]) <= 100 else "object"
            handle = self.handles[node[1]] = _Handle(self, node[1], kind)
        return handle

    def _encode(self, args: tuple, kwargs: dict) -> tuple[object, object, list]:
        """Arguments as trees, and the table of the test's own objects among them.

        References go back as they came. Objects of the test's own classes (a tree of
        Nodes its set-up built) go by value: each once, in a flat table of
        `[number, class name, [[attribute, tree], ...]]`, referred to as `["obj", n]`,
        so shared and cyclic links survive and a long chain nests no deeper than a link.
        """
        numbers: dict[int, int] = {}
        found: list[tuple[object, dict]] = []  # (object, its __dict__); alive until sent, so no id is reused

        def other(value: object, walk, depth: int) -> object:
            if type(value) is _Handle:
                if value._link is not self:
                    raise NotPlain("an object of another program")
                return ["ref", value._number]
            if type(value) is _Remote:  # a function of the program, passed back to it
                if value.__dict__.get("_link") is not self:
                    raise NotPlain("a function of another program")
                return ["function", value.__dict__["__name__"]]
            if not all(getattr(base, "__module__", None) == "__test__" for base in type(value).__mro__[:-1]):
                raise NotPlain(f"a {_type_name(value)}")
            try:
                attributes = object.__getattribute__(value, "__dict__")
            except AttributeError:
                raise NotPlain(f"a {_type_name(value)} without a __dict__") from None
            if type(attributes) is not dict:
                raise NotPlain(f"a {_type_name(value)} with an odd __dict__")
            if id(value) not in numbers:
                if len(found) >= _HELD_MAX:
                    raise NotPlain(f"more than {_HELD_MAX} objects")
                numbers[id(value)] = len(found)
                found.append((value, attributes))
            return ["obj", numbers[id(value)]]

        wire_args, wire_kwargs = to_tree(args, other), to_tree(kwargs, other)
        table = []
        while len(table) < len(found):  # grows while attributes bring in more objects
            value, attributes = found[len(table)]
            table.append([len(table), type(value).__name__,
                          [[key, to_tree(item, other)] for key, item in dict.items(attributes) if type(key) is str]])
        return wire_args, wire_kwargs, table

    def call(self, name: str, args: tuple, kwargs: dict) -> object:
        return self._ask({"op": "call", "name": name}, f"{name}()", args, kwargs)

    def apply_named(self, name: str, action: str, args: tuple) -> object:
        """An action on a module-level function or class of the program, by name."""
        return self._ask({"op": "apply", "name": name, "action": action}, f"{action}() of {name}", args, {})

    def apply(self, handle: _Handle, action: str, args: tuple = (), kwargs: dict | None = None) -> object:
        label = f"a {handle._kind} of the program" if action == "call" else f"{action}() of a {handle._kind}"
        return self._ask({"op": "apply", "handle": handle._number, "action": action}, label, args, kwargs or {})

    def _ask(self, request: dict, label: str, args: tuple, kwargs: dict) -> object:
        if self.broken is not None:
            raise ProgramBroke(self.broken)
        try:
            wire_args, wire_kwargs, objects = self._encode(args, kwargs)
        except NotPlain as exc:
            raise self.fail(f"an argument of {label} is {exc}; only plain data, objects of the test's "
                            "own classes and objects of the program can be sent to it") from None
        self.calls += 1
        try:
            send_frame(self.fd, {**request, "args": wire_args, "kwargs": wire_kwargs, "objects": objects})
        except OSError:
            raise self.fail(f"the program's process ended before a call to {label}", ended=True) from None
        reply = self.receive(f"during a call to {label}")
        op = reply.get("op")
        if op == "return":
            try:
                value = from_tree(reply.get("value"), self.tags)
                self._copy_back(args, reply.get("mutated"), lambda i: 0 <= i < len(args) and args[i])
                self._copy_back(kwargs, reply.get("kw_mutated"), lambda k: kwargs.get(k))
            except (WireError, TypeError, ValueError) as exc:
                raise self.fail(f"{label} answered with malformed data ({exc})") from None
            return value
        if op == "raise":
            error = _rebuild_exception(reply)
            if isinstance(error, StopIteration) and request.get("action") != "next":
                # Only next() may end an iteration: a StopIteration from a call would
                # silently end the test's own loop (`all(map(f, xs))` holding for any
                # f), as PEP 479 turns one inside a generator into a RuntimeError.
                raise RuntimeError(f"the program raised {reply.get('type')} during a call to {label}")
            raise error
        detail = reply.get("detail")
        detail = detail if isinstance(detail, str) else f"the program answered {str(op)[:40]!r}"
        raise self.fail(_one_line(detail))

    def _copy_back(self, container: object, changes: object, lookup) -> None:
        if not changes:
            return
        if type(changes) is not list:
            raise WireError("bad mutations")
        for change in changes:
            if type(change) is not list or len(change) != 2:
                raise WireError("bad mutation")
            key, tree = change
            if type(key) not in (int, str):
                raise WireError("bad mutation key")
            original = lookup(key)
            new = from_tree(tree, self.tags)
            if type(original) is not type(new):
                continue
            if type(original) is list:
                original[:] = new
            elif type(original) in (dict, set):
                original.clear()
                original.update(new)


class _ProgramBaseException(BaseException):
    """The base of the program's exceptions that are not `Exception`s."""


def _rebuild_exception(reply: dict) -> BaseException:
    """The program's exception, as an exception of the test's own making."""
    name = reply.get("type")
    name = name if isinstance(name, str) and name.isidentifier() and len(name) <= 100 else "ProgramError"
    base_name = reply.get("base")
    base = getattr(builtins, base_name, None) if isinstance(base_name, str) else None
    if not (isinstance(base, type) and issubclass(base, BaseException)):
        base = Exception
    elif not issubclass(base, Exception):
        # GeneratorExit, BaseException or a class of the program's derived from them:
        # as in one interpreter, `except Exception` in the test does not catch it. The
        # test's own SystemExit, KeyboardInterrupt and GeneratorExit are never raised
        # on the program's word: a BaseException of the test's making stands for them.
        base = _ProgramBaseException
        name = name if name != base.__name__ else "BaseException"
    message = reply.get("message")
    message = message if isinstance(message, str) else ""
    try:
        args = from_tree(reply.get("args"))
        if type(args) is not tuple:
            args = (message,)
    except WireError:
        args = (message,)
    kind = base if name == base.__name__ else type(name, (base,), {"__module__": "program"})
    for attempt in (args, (message,), ()):
        try:
            return kind(*attempt)
        except BaseException:
            continue
    return Exception(message)


class _Remote:
    """A function of the program, called from the test through the channel."""

    def __init__(self, link: _Link, name: str) -> None:
        self._link = link
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args, **kwargs):
        return self._link.call(self.__name__, args, kwargs)

    def __getattr__(self, name: str):
        """An attribute of the function or class (`Calc.add`, `Color.RED`), read in P."""
        state = self.__dict__
        if (name.startswith("__") and name.endswith("__")) or "_link" not in state:  # protocols stay the test's own
            raise AttributeError(name)
        return state["_link"].apply_named(state["__name__"], "getattr", (name,))

    def __repr__(self) -> str:
        return f"<function {self.__name__} of the sandboxed program>"


class _Handle:
    """An object of the program, held in P; the test holds this reference to it.

    What gives the program's own answer is asked of P: calling it, its attributes,
    iterating, indexing, `in`, len(), str() and its truth value (and setting an
    attribute or an item); each answer is plain data or another reference. Comparisons and hashing are the test's own: by
    identity, as for any object without them, so the program never decides an `==`.
    """

    __slots__ = ("_link", "_number", "_kind")

    def __init__(self, link: _Link, number: int, kind: str) -> None:
        self._link, self._number, self._kind = link, number, kind

    def _answer(self, action: str, kind: type, *args: object) -> object:
        value = self._link.apply(self, action, args)
        if type(value) is not kind:
            raise self._link.fail(f"{action}() of a {self._kind} in the program gave a {_type_name(value)}, "
                                  f"not a {kind.__name__}")
        return value

    def __call__(self, *args, **kwargs):
        return self._link.apply(self, "call", args, kwargs)

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):  # protocols stay the test's own
            raise AttributeError(name)
        return self._link.apply(self, "getattr", (name,))

    def __setattr__(self, name: str, value: object) -> None:
        if name in _Handle.__slots__:
            object.__setattr__(self, name, value)
        elif name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"{name} of an object of the program cannot be set from the test")
        else:
            self._link.apply(self, "setattr", (name, value))

    def __setitem__(self, key, value) -> None:
        self._link.apply(self, "setitem", (key, value))

    def __iter__(self):
        return self._link.apply(self, "iter")

    def __next__(self):
        return self._link.apply(self, "next")

    def __len__(self) -> int:
        return self._answer("len", int)

    def __getitem__(self, key):
        return self._link.apply(self, "getitem", (key,))

    def __contains__(self, item) -> bool:
        return self._answer("contains", bool, item)

    def __bool__(self) -> bool:
        return self._answer("bool", bool)

    def __str__(self) -> str:
        return self._answer("str", str)

    def __repr__(self) -> str:
        return f"<{self._kind} object of the sandboxed program>"


class _Opaque:
    """A module-level name of the program the test cannot use (a malformed value, a
    module the test process cannot import)."""

    def __init__(self, link: _Link, name: str, kind: str) -> None:
        object.__setattr__(self, "_why", (link, f"`{name}` of the program cannot be used by the test: {kind}"))

    def _refuse(self, *args, **kwargs):
        link, why = object.__getattribute__(self, "_why")
        raise link.fail(why)

    __call__ = __getattr__ = __eq__ = __iter__ = __len__ = __getitem__ = __bool__ = _refuse

    def __repr__(self) -> str:
        return "<opaque object of the sandboxed program>"


# Modules a test may get by the program's import (`import numpy as np` in the program,
# `np` in the test): the standard library and the image's scientific packages, imported
# by the test process itself from its own path. Not those that act on import.
_IMPORTABLE_EXTRA = frozenset({"numpy", "pytest"})
_ACTS_ON_IMPORT = frozenset({"antigravity", "this", "turtle", "turtledemo", "tkinter", "idlelib",
                             "webbrowser", "pydoc"})


def _importable(module: str) -> bool:
    if module in sys.modules:
        return True
    top = module.split(".")[0]
    if top in _ACTS_ON_IMPORT or not (top in sys.stdlib_module_names or top in _IMPORTABLE_EXTRA):
        return False
    if "__main__" in module.split("."):  # a package's script: importing it runs it
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
        tree = ast.parse(test_source, _TEST_FILE)
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


def _bind_program_names(namespace: dict, link: _Link, names: object, entry_point: str | None,
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
    for item in names[:_NAMES_MAX]:
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
            namespace[name] = _Remote(link, name)
        elif kind == "value":
            try:
                namespace[name] = from_tree(info, link.tags)
            except WireError:
                namespace[name] = _Opaque(link, name, "a malformed value")
        elif kind == "module" and isinstance(info, str) and _importable(info):
            namespace[name] = sys.modules[info]
        elif kind == "module":
            namespace[name] = _Opaque(link, name, f"the test process cannot import module {str(info)[:60]!r}")
        else:
            namespace[name] = _Opaque(link, name, str(info)[:80] if isinstance(info, str) else "not plain data")


def _assertion_detail(exc: AssertionError, test_source: str) -> str:
    """The failing assert's source, with the observed left side when it is a comparison.

    Only failures pay for this: the left side is evaluated again, in the frame of the
    failing assert, after the fact (the test code runs as written). Values from the
    program are plain data here, so their repr is the test process's own.
    """
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None or last.tb_frame.f_code.co_filename != _TEST_FILE:
        return _one_line(_exception_line(exc))  # raised by the program, not by a test
    frame = last.tb_frame
    line, col = last.tb_lineno, 0
    try:  # the raising instruction's position tells apart two asserts on one line
        position = list(frame.f_code.co_positions())[last.tb_lasti // 2]
        if position[0] is not None and position[2] is not None:
            line, col = position[0], position[2]
    except (AttributeError, IndexError):
        pass
    try:
        tree = ast.parse(test_source, _TEST_FILE)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _one_line(_exception_line(exc))
    asserts = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Assert)
        and (node.lineno, node.col_offset) <= (line, col)
        and (line, col) <= (node.end_lineno or node.lineno, node.end_col_offset or 0)
    ]
    if not asserts:
        return _one_line(_exception_line(exc))
    node = max(asserts, key=lambda n: (n.lineno, n.col_offset))
    source = _one_line(ast.get_source_segment(test_source, node) or "assert ...", DETAIL_MAX // 2)
    if isinstance(node.test, ast.Compare) and len(node.test.ops) == 1:
        try:
            left = ast.Expression(node.test.left)
            value = eval(compile(left, _TEST_FILE, "eval"), frame.f_globals, frame.f_locals)
        except BaseException as error:  # evaluating it again failed: say so, briefly
            return _one_line(f"{source}  # left side raised {type(error).__name__} when evaluated again")
        return _one_line(f"{source}  # got {_short_repr(value)}")
    message = str(exc)
    return _one_line(f"{source}  # {message}" if message else source)


def _global_names(code: types.CodeType) -> set[str]:
    """Every name the test's code may look up (a superset: attribute names too)."""
    names: set[str] = set()
    stack = [code]
    while stack:
        current = stack.pop()
        names.update(current.co_names)
        stack.extend(const for const in current.co_consts if isinstance(const, types.CodeType))
    return names


def _judge(payload: dict, link: _Link) -> tuple[str, str]:
    """Run the test against the program in P -> (status, detail)."""
    test, prelude = payload["test"], payload.get("prelude") or ""
    namespace: dict = {"__name__": "__test__", "__builtins__": builtins}
    for name, text in ((_PRELUDE_FILE, prelude), (_TEST_FILE, test)):
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    try:
        code = compile(test, _TEST_FILE, "exec")
    except SyntaxError as exc:
        return "error", _one_line(f"invalid test: {_exception_line(exc)}")
    if prelude:
        try:
            exec(compile(prelude, _PRELUDE_FILE, "exec"), namespace)
        except BaseException as exc:
            return "error", _one_line(f"the task's prelude failed: {_exception_line(exc)}")
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
        return "error", _one_line(detail if isinstance(detail, str) else "the program failed")
    if first.get("op") != "ready":
        return "error", "the program sent an unexpected first message"
    _bind_program_names(namespace, link, first.get("names"), entry_point, own, wanted, test)
    try:
        exec(code, namespace)
    except ProgramBroke:
        pass
    except AssertionError as exc:
        if link.broken is None:
            return "failed", _assertion_detail(exc, test)
    except SystemExit as exc:
        if link.broken is None:
            return "error", f"the test called sys.exit({_short_repr(exc.code)}) before it finished"
    except BaseException as exc:
        if link.broken is None:
            return "error", _one_line(_exception_line(exc))
    if link.broken is not None:
        return "error", _one_line(link.broken)
    return "passed", ""


def _judge_main(payload: dict) -> None:
    """T: judge, then write the verdict on the report pipe; never returns."""
    link = _Link(_CHANNEL_FD)
    try:
        status, detail = _judge(payload, link)
    except BaseException as exc:  # the judge itself failed: never a pass
        status, detail = "error", _one_line(f"the test process failed: {_exception_line(exc)}")
    _flush_stdio()
    report = {"token": payload["token"], "pid": os.getpid(), "status": status, "detail": detail,
              "program_ended": link.program_ended}
    try:
        _write_all(_REPORT_FD, (json.dumps(report) + "\n").encode())
    except BaseException:
        os._exit(71)
    os._exit(0)


# ================================================================ zygotes


def _stdio_objects() -> tuple:
    """The stdio objects a forked child will use (made once, before any fork)."""
    return (
        open(0, "r", closefd=False),
        io.TextIOWrapper(open(1, "wb", closefd=False), encoding="utf-8",
                         errors="backslashreplace", line_buffering=True),
        io.TextIOWrapper(open(2, "wb", closefd=False), encoding="utf-8",
                         errors="backslashreplace", line_buffering=True),
    )


def _recv_job(sock: socket.socket) -> tuple[dict, list[int]] | None:
    """A job for a blank child: a 4-byte length with the fds, then that many bytes of JSON."""
    head, fds, _, _ = socket.recv_fds(sock, 4, 8)
    if not head:
        return None
    while len(head) < 4:
        more = sock.recv(4 - len(head))
        if not more:
            return None
        head += more
    (size,) = struct.unpack(">I", head)
    body = _read_exact(sock.fileno(), size)
    if body is None:
        return None
    return json.loads(body), list(fds)


def _blank_child(sock: socket.socket, scratch: str, stdio: tuple) -> None:
    """A forked child that waits for its job, then becomes P or T; never returns.

    Its parent, the zygote, has never held a job: the child's memory holds no
    program and no test but its own. Job-independent set-up happens here, while the
    child waits, off the job's critical path.
    """
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    try:
        received = _recv_job(sock)
    except (OSError, ValueError):
        received = None
    if received is None:
        os._exit(0)
    payload, fds = received
    role = payload.get("role")
    targets = [_CHANNEL_FD, 1] if role == "program" else [_CHANNEL_FD, 1, _REPORT_FD]
    try:
        sock.close()
        fd_map = dict(zip(targets, fds))
        fd_map[2] = fd_map[1]
        # The program may import modules it wrote; the test only the installed ones.
        if role == "program":
            sys.path.insert(0, scratch)
        _enter_child(fd_map, payload, scratch, stdio, scratch if role == "program" else "/nonexistent", role)
    except BaseException:
        os._exit(70)
    if role == "program":
        try:
            _program_main(payload)
        except BaseException:
            pass
        _flush_stdio()
        os._exit(0)
    _judge_main(payload)


def _zygote_main(control: socket.socket, scratch: str) -> None:
    """Fork blank children on request; report each child's end. Holds no job, ever.

    Messages on `control` (SOCK_SEQPACKET): in, {"op": "fork"}; out,
    {"op": "blank", "pid"} with the worker's end of the child's socket, and
    {"op": "ended", "pid", "status"} when a child ends.
    """
    stdio = _stdio_objects()
    wake_r, wake_w = os.pipe()  # SIGCHLD writes here: a child ended
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    gc.collect()
    gc.freeze()
    while True:
        try:
            ready, _, _ = select.select([control, wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in ready:
            try:
                os.read(wake_r, 4096)
            except BlockingIOError:
                pass
            while True:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                control.send(json.dumps({"op": "ended", "pid": pid, "status": status}).encode())
        if control not in ready:
            continue
        try:
            request = control.recv(4096)
        except OSError:
            os._exit(0)
        if not request:
            os._exit(0)  # the worker is gone
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            try:
                control.close()
                theirs.close()
                signal.set_wakeup_fd(-1)
                os.close(wake_r)
                os.close(wake_w)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
                _blank_child(mine, scratch, stdio)
            finally:
                os._exit(70)
        mine.close()
        socket.send_fds(control, [json.dumps({"op": "blank", "pid": pid}).encode()], [theirs.fileno()])
        theirs.close()


class ZygoteGone(RuntimeError):
    """The zygote died (a job's program can kill it): this worker cannot go on."""


class _Zygote:
    """The worker's handle on the zygote and the blank children it keeps ready."""

    def __init__(self, scratch: str) -> None:
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.pid = os.fork()
        if self.pid == 0:
            try:
                parent_end.close()
                _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):  # let go of the host's pipes
                    os.dup2(devnull, fd)
                keep = {child_end.fileno(), 0, 1, 2}
                for fd in _open_fds():
                    if fd not in keep:
                        try:
                            os.close(fd)
                        except OSError:
                            pass
                _zygote_main(child_end, scratch)
            finally:
                os._exit(0)
        child_end.close()
        self.sock = parent_end
        self.blanks: list[tuple[int, socket.socket]] = []
        self.ended: dict[int, int] = {}  # pid -> wait status
        self.asked = 0  # blank children asked for and not yet announced

    def ask(self, count: int) -> None:
        try:
            for _ in range(count):
                self.sock.send(b'{"op": "fork"}')
        except OSError as exc:  # it died with requests unread: ECONNRESET or EPIPE
            raise ZygoteGone(f"the zygote is gone ({exc.strerror})") from None
        self.asked += count

    def _receive(self, timeout: float) -> bool:
        """Take one message if one comes within `timeout`; False if none did."""
        if not select.select([self.sock], [], [], max(0.0, timeout))[0]:
            return False
        try:
            data, fds, _, _ = socket.recv_fds(self.sock, 4096, 1)
        except OSError as exc:  # it died with our requests unread: ECONNRESET
            raise ZygoteGone(f"the zygote is gone ({exc.strerror})") from None
        if not data:
            raise ZygoteGone("the zygote is gone")
        message = json.loads(data)
        if message.get("op") == "blank" and fds:
            self.blanks.append((int(message["pid"]), socket.socket(fileno=fds[0])))
            self.asked -= 1
        elif message.get("op") == "ended":
            self.ended[int(message["pid"])] = int(message["status"])
        return True

    def pump(self) -> None:
        """Take every message already there."""
        while self._receive(0):
            pass

    def take_blank(self) -> tuple[int, socket.socket]:
        """A blank child that is alive and running (the last job's program may have
        stopped or killed the ones kept ready: it can do nothing else to them)."""
        deadline = time.monotonic() + _ZYGOTE_TIMEOUT_S
        while True:
            if not self.blanks and not self.asked:
                self.ask(1)
            while not self.blanks:
                if not self._receive(deadline - time.monotonic()):
                    raise RuntimeError("the zygote did not fork in time")
            pid, sock = self.blanks.pop(0)
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass
            state = _proc_stat(pid)
            if state is not None and state[0] not in ("Z", "X"):
                return pid, sock
            sock.close()

    def known_blanks(self) -> set[int]:
        """The blank children it keeps ready, once every fork asked for is announced
        (a child forked but not yet announced would look like nobody's)."""
        deadline = time.monotonic() + _ZYGOTE_TIMEOUT_S
        while self.asked > 0:
            self._resume()
            if not self._receive(min(0.05, deadline - time.monotonic())) and time.monotonic() > deadline:
                raise RuntimeError("the zygote did not announce the children it forked")
        return {pid for pid, _ in self.blanks}

    def _resume(self) -> None:
        """A job's program may have stopped it; it must answer now."""
        try:
            os.kill(self.pid, signal.SIGCONT)
        except OSError:
            pass

    def status_of(self, pid: int, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        while pid not in self.ended:
            self._resume()
            if not self._receive(min(0.05, deadline - time.monotonic())) and time.monotonic() > deadline:
                return None
        return self.ended.pop(pid)

    def alive(self) -> bool:
        try:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return False
        return pid == 0


def _give_job(child: tuple[int, socket.socket], payload: dict, fds: list[int]) -> int:
    pid, sock = child
    body = json.dumps(payload).encode()
    try:
        socket.send_fds(sock, [struct.pack(">I", len(body))], fds)
        sock.sendall(body)
    finally:
        sock.close()
    return pid


def _open_fds() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 256))


# ================================================================ the worker


def _listdir_here() -> list[str]:
    try:
        return os.listdir(".")
    except OSError:
        return []


def _wipe(directory: str, keep: str = "", deadline: float | None = None) -> None:
    """Empty `directory` (but keep the empty subdirectory `keep`), however deep it goes.

    Iterative and relative to the current directory: no recursion limit, no PATH_MAX,
    no symlink followed (lstat, and chdir only into real directories). Each directory
    is listed once, so the work is linear in the number of entries (re-listing a
    parent after each subdirectory made 30,000 empty subdirectories take minutes).
    Past `deadline` (time.monotonic()) it stops with TimeoutError.
    """
    try:
        os.chdir(directory)
    except OSError:
        return
    # (name of the directory we are in, what is left to visit in its parent)
    stack: list[tuple[str, list[str]]] = []
    entries = _listdir_here()
    try:
        while True:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"emptying {directory} took too long")
            if not entries:
                if not stack:
                    break
                name, entries = stack.pop()
                os.chdir("..")
                if name != "\0keep":
                    try:
                        os.rmdir(name)
                    except OSError:
                        pass
                continue
            name = entries.pop()
            try:
                mode = os.lstat(name).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                try:
                    os.chmod(name, 0o700)
                    os.chdir(name)
                except OSError:
                    continue
                stack.append(("\0keep" if not stack and name == keep else name, entries))
                entries = _listdir_here()
                continue
            try:
                os.unlink(name)
            except OSError:
                pass
    finally:
        os.chdir("/")


class NotRun(Exception):
    """The worker cannot run this job as it should; the host reruns it elsewhere."""


class _Worker:
    def __init__(self, scratch_root: str) -> None:
        self.scratch_root = scratch_root
        self.scratch = os.path.join(scratch_root, "test")
        self.is_init = os.getpid() == 1
        self.uid_process_base = 0
        if not self.is_init and os.geteuid() != 0:
            self.uid_process_base = self._count_own_processes()
        _clean_environment(self.scratch)
        os.makedirs(self.scratch, mode=0o700, exist_ok=True)
        self.settings = _settings(0)  # the zygote and the blank children inherit them
        self.zygote = _Zygote(self.scratch)
        self.zygote.ask(2)  # the first job's two processes
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._ended_job: list[int] = []  # pidfds (or pids) of the last job's P and T
        self.dirty = ""  # why the state could not be restored after the last job

    @staticmethod
    def _count_own_processes() -> int:
        uid, count = os.getuid(), 0
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    count += os.stat(f"/proc/{entry}").st_uid == uid
                except OSError:
                    pass
        return count

    # --- one job

    def run(self, job: dict) -> dict:
        limits = {key: job[key] for key in ("timeout_s", "memory_mb", "max_file_mb")}
        # RLIMIT_NPROC counts every process of the uid on the machine: in a container
        # the pids cgroup caps processes instead; as root it is ignored anyway.
        if self.uid_process_base:
            limits["nproc"] = self.uid_process_base + int(job.get("pids", 64))
        timeout = float(job["timeout_s"])
        cap = int(job["max_output_bytes"])
        token = os.urandom(8).hex()
        if self.dirty:
            raise NotRun(self.dirty)
        if not self.zygote.alive():  # killed from outside since the last job
            raise NotRun("the zygote is gone")
        try:  # a test's leftovers may have stopped it before they were killed
            os.kill(self.zygote.pid, signal.SIGCONT)
        except OSError:
            pass
        try:
            self.zygote.pump()
            self.zygote.ended.clear()  # earlier jobs' processes
            program_child, test_child = self.zygote.take_blank(), self.zygote.take_blank()
        except RuntimeError as exc:
            raise NotRun(str(exc)) from None
        try:
            self.zygote.ask(2)  # the next job's, forked while this one runs
        except ZygoteGone:
            pass  # noticed again below, or by the next job, which declines
        channel_t, channel_p = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        report_r, report_w = os.pipe()
        started = time.monotonic()
        try:
            p_pid = _give_job(program_child, dict(limits, role="program", program=job["program"]),
                              [channel_p.fileno(), out_w])
            t_pid = _give_job(test_child, dict(limits, role="test", test=job["test"],
                                               prelude=job.get("prelude") or "",
                                               entry_point=job.get("entry_point"), token=token),
                              [channel_t.fileno(), out_w, report_w])
        except OSError as exc:  # a blank child died before its job: with its zygote
            os.close(out_r)
            os.close(report_r)
            raise NotRun(f"a blank child died before its job ({exc.strerror})") from None
        finally:
            channel_t.close()
            channel_p.close()
            os.close(out_w)
            os.close(report_w)
        self._ended_job = [_pidfd(p_pid), _pidfd(t_pid)]
        try:
            result = self._watch(p_pid, t_pid, out_r, report_r, token, timeout, cap, started)
        except ZygoteGone as exc:
            # The zygote died during the job (killed by its program, or by an earlier
            # job's before it could be seen): its children die with it, so the verdict
            # is unknown. A fresh worker runs the job again.
            raise NotRun(str(exc)) from None
        finally:
            os.close(out_r)
            os.close(report_r)
        result["id"] = job.get("id")
        return result

    def after(self) -> None:
        """Between jobs, once the answer is sent: restore the clean state. A failure
        retires the worker: it declines the next job, which the host runs elsewhere."""
        self.dirty = self._clean_up()

    def _watch(self, p_pid, t_pid, out_r, report_r, token, timeout, cap, started) -> dict:
        output = bytearray()
        dropped = 0
        report = bytearray()
        deadline = started + timeout
        timed_out = False
        os.set_blocking(out_r, False)
        os.set_blocking(report_r, False)
        open_fds = [out_r, report_r]

        def drain(fd: int) -> bool:
            nonlocal dropped
            while True:
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    return True
                except OSError:
                    return False
                if not data:
                    return False
                if fd == out_r:
                    room = cap - len(output)
                    if room > 0:
                        output.extend(data[:room])
                    dropped += max(0, len(data) - max(room, 0))
                elif len(report) < _REPORT_MAX:
                    report.extend(data)

        # The test is over when its report pipe closes (the judge exited) or the zygote
        # says the judge ended (its leftovers may hold the pipe open).
        zygote = self.zygote
        while report_r in open_fds and t_pid not in zygote.ended:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            readable, _, _ = select.select(open_fds + [zygote.sock], [], [], remaining)
            for fd in readable:
                if fd is zygote.sock:
                    zygote.pump()
                elif not drain(fd):
                    open_fds.remove(fd)
        duration = time.monotonic() - started
        for pid in (t_pid, p_pid):  # stop both sides now; their leftovers go after the answer
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        for fd in open_fds:
            drain(fd)
        status, detail = self._verdict(p_pid, t_pid, timed_out, timeout, report, token)
        text = output.decode("utf-8", errors="replace")
        if dropped:
            text += f"\n[... {dropped} more bytes of output dropped]"
        return {"status": status, "detail": detail, "duration_s": round(duration, 6), "output": text}

    @staticmethod
    def _describe_end(code: int) -> tuple[str, str]:
        """(status, how) for a process's wait status."""
        if os.WIFSIGNALED(code):
            number = os.WTERMSIG(code)
            if number == signal.SIGXCPU:
                return "timeout", "CPU time limit exceeded"
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = f"signal {number}"
            hint = " (out of memory?)" if number == signal.SIGKILL else ""
            return "error", f"was killed by {name}{hint}"
        return "error", f"exited with status {os.WEXITSTATUS(code)}"

    def _verdict(self, p_pid, t_pid, timed_out, timeout, report, token) -> tuple[str, str]:
        if timed_out:
            return "timeout", f"timed out after {timeout:g} s (wall clock)"
        message = None
        for line in bytes(report).splitlines():
            try:
                candidate = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if (
                type(candidate) is dict
                and candidate.get("token") == token
                and candidate.get("pid") == t_pid
                and candidate.get("status") in ("passed", "failed", "error")
                and isinstance(candidate.get("detail", ""), str)
            ):
                message = candidate
                break
        if message is None:
            t_status = self.zygote.status_of(t_pid, _ZYGOTE_TIMEOUT_S)
            if t_status is None:
                raise RuntimeError("the zygote did not report how the test process ended")
            status, how = self._describe_end(t_status)
            if status == "timeout":
                return status, how
            return "error", f"the process {how} before the test finished"
        if message.get("program_ended") is True:
            p_status = self.zygote.status_of(p_pid, _ZYGOTE_TIMEOUT_S)
            if p_status is None:
                raise RuntimeError("the zygote did not report how the program's process ended")
            status, how = self._describe_end(p_status)
            if status == "timeout":
                return status, how
            if "before the test ran" in message["detail"]:
                return "error", f"the process {how} before the test finished"
            return "error", _one_line(f"{message['detail']}: it {how}")
        return message["status"], message["detail"][:DETAIL_MAX]

    # --- between jobs

    def _processes(self) -> list[int]:
        """Every live process but the worker and the zygote: the test's leftovers.

        Zombies are dead already (the zygote or the worker reaps them). On a host,
        the zygote's children count too: a test's processes are its grandchildren
        until they are orphaned.
        """
        me, zygote = os.getpid(), self.zygote.pid
        blanks = self.zygote.known_blanks()  # exactly the children it keeps ready
        if self.is_init:
            found = [int(e) for e in os.listdir("/proc") if e.isdigit()]
        else:
            found = _children_of(me) + _children_of(zygote)
        leftovers = []
        for pid in found:
            if pid in (me, zygote) or pid in blanks:
                continue
            # Any other process is the test's, whatever its parent (clone(CLONE_PARENT)
            # makes a child of the zygote) and whatever its state: a thread-group leader
            # that exited while its other threads run shows as a zombie.
            if _alive(pid):
                leftovers.append(pid)
        return sorted(set(leftovers))

    def _kill_leftovers(self) -> None:
        """Kill and reap every process the test left behind (daemons, forks, setsid)."""
        deadline = time.monotonic() + _CLEANUP_TIMEOUT_S
        for handle in self._ended_job:  # the job's two processes: wait for their end
            if isinstance(handle, int) and handle >= 0:
                select.select([handle], [], [], _CLEANUP_TIMEOUT_S)
                os.close(handle)
        self._ended_job = []
        while time.monotonic() < deadline:
            self._reap()
            leftovers = self._processes()
            if not leftovers:
                return
            for pid in leftovers:
                for kill in (os.killpg, os.kill):
                    try:
                        kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            time.sleep(0.0005)
        raise RuntimeError("processes of the test outlived the clean-up")

    def _reap(self) -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.zygote.pid:
                raise RuntimeError("the zygote died")

    def _clean_up(self) -> str:
        """Restore the state every job starts from; what could not be restored, if anything."""
        try:
            self._kill_leftovers()
            # Bounded: a job must not delay the next one past its time (the host would
            # take the late answer for a hung worker); a worker that cannot empty its
            # folders in time retires instead, and the next job runs on a fresh one.
            deadline = time.monotonic() + _WIPE_TIMEOUT_S
            _wipe(self.scratch_root, keep="test", deadline=deadline)
            os.makedirs(self.scratch, mode=0o700, exist_ok=True)  # a test may have removed it
            os.chmod(self.scratch, 0o700)
            if self.is_init:  # these belong to the container: on a host they are the user's
                _wipe("/dev/shm", deadline=deadline)
                _wipe("/dev/mqueue", deadline=deadline)
                self._remove_sysv_ipc()
            problem = self._state_problem()
        except Exception as exc:
            problem = _exception_line(exc)
        return problem

    def _remove_sysv_ipc(self) -> None:
        removers = {
            "shm": lambda ident: self._libc.shmctl(ident, _IPC_RMID, None),
            "msg": lambda ident: self._libc.msgctl(ident, _IPC_RMID, None),
            "sem": lambda ident: self._libc.semctl(ident, 0, _IPC_RMID),
        }
        for kind, remove in removers.items():
            for ident in _sysv_ids(kind):
                remove(ident)

    def _state_problem(self) -> str:
        if self._processes():
            return "processes of the test outlived the clean-up"
        if not self.zygote.alive():
            return "the zygote is gone"
        for who, pid in (("worker", 0), ("zygote", self.zygote.pid),
                         *(("blank child", pid) for pid in sorted(self.zygote.known_blanks()))):
            try:
                changed = _settings(pid) != self.settings
            except OSError:  # a blank child the job killed: it is replaced before use
                continue
            if changed:
                return f"the {who}'s resource limits or scheduling were changed by a test"
        if sorted(os.listdir(self.scratch_root)) != ["test"] or os.listdir(self.scratch):
            return f"{self.scratch_root} could not be emptied"
        if self.is_init:
            for path in ("/dev/shm", "/dev/mqueue"):
                if os.path.isdir(path) and os.listdir(path):
                    return f"{path} could not be emptied"
            for kind in ("shm", "msg", "sem"):
                if _sysv_ids(kind):
                    return f"SysV {kind} objects could not be removed"
        return ""


def _pidfd(pid: int) -> int:
    """A descriptor that turns readable when `pid` ends (-1 where the kernel has none)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


_RLIMITS = tuple(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_"))


_SYS_IOPRIO_GET = {"x86_64": 252, "aarch64": 31}.get(os.uname().machine)


def _settings(pid: int) -> tuple:
    """What any process of the same user may change in another one: resource limits
    (prlimit), niceness, scheduling policy, CPU affinity and I/O priority. A job's
    program can set them on the worker, the zygote or a blank child, and every later
    job would inherit them; so the clean state includes them (0: this process)."""
    ioprio = None
    if _SYS_IOPRIO_GET is not None:
        ioprio = ctypes.CDLL(None).syscall(_SYS_IOPRIO_GET, 1, pid)  # IOPRIO_WHO_PROCESS
    return (
        tuple(resource.prlimit(pid, which) for which in sorted(set(_RLIMITS))),
        os.getpriority(os.PRIO_PROCESS, pid),
        os.sched_getscheduler(pid),
        tuple(sorted(os.sched_getaffinity(pid))),
        ioprio,
    )


def _alive(pid: int) -> bool:
    """Whether any thread of `pid` still runs (a zombie leader may have live threads)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            return True
    return False


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state letter, parent pid) of a process; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[1])
    except (OSError, IndexError, ValueError):
        return None


def _sysv_ids(kind: str) -> list[int]:
    try:
        with open(f"/proc/sysvipc/{kind}") as handle:
            rows = handle.read().splitlines()[1:]
    except OSError:
        return []
    return [int(row.split()[1]) for row in rows if len(row.split()) > 1]


def _children_of(pid: int) -> list[int]:
    try:  # the kernel's own list, when it keeps one
        found: list[int] = []
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(p) for p in handle.read().split())
        return found
    except OSError:
        pass
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def _clean_environment(scratch: str) -> None:
    """The environment every forked process inherits (the worker needs none)."""
    os.environ.clear()
    os.environ.update(
        PATH="/usr/local/bin:/usr/bin:/bin",
        HOME=scratch,
        TMPDIR=scratch,
        LANG="C.UTF-8",
        PYTHONDONTWRITEBYTECODE="1",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
    )
    tempfile.tempdir = None  # recomputed from TMPDIR
    sys.argv = [""]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    scratch_root = "/tmp"
    if "--scratch-root" in args:
        scratch_root = args[args.index("--scratch-root") + 1]
    # Non-dumpable, inherited by every fork: no process of the test can open
    # /proc/<pid>/{mem,fd,environ} of the worker, a zygote or the judge, nor ptrace them.
    _prctl(_PR_SET_DUMPABLE, 0)
    if os.getpid() != 1:
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # orphans of a test come back to us
    for number in _IGNORED_SIGNALS:
        try:
            signal.signal(number, signal.SIG_IGN)
        except (OSError, ValueError):
            pass
    os.chdir(scratch_root)
    _preload()
    _wipe(scratch_root)
    worker = _Worker(scratch_root)
    gc.collect()
    gc.freeze()
    out = sys.stdout.buffer

    def send(message: dict) -> None:
        out.write(json.dumps(message).encode() + b"\n")
        out.flush()

    send({"ready": True, "protocol": PROTOCOL, "pid": os.getpid(), "python": sys.version.split()[0]})
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        job_id = None
        try:
            job = json.loads(line)
            job_id = job.get("id")
            send(worker.run(job))
            worker.after()
        except NotRun as exc:
            send({"id": job_id, "not_run": True, "retire": str(exc)})
            return 1
        except Exception as exc:  # the worker's own failure: answer, then let the host replace it
            send({"id": job_id, "status": "error", "detail": f"sandbox worker: {_exception_line(exc)}",
                  "duration_s": 0.0, "output": "", "internal": True,
                  "retire": f"internal error: {_exception_line(exc)}"})
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
