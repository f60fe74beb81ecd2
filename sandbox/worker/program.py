"""P, the program's process: runs the program as module `solution`, then answers the
test's requests (calls, and actions on objects the test holds references to).
"""
from __future__ import annotations

import linecache
import sys
import types

from .child import flush_stdio
from .plain import NotPlain, from_tree, to_tree, type_name
from .protocol import CHANNEL_FD, DETAIL_MAX, HELD_MAX, NAMES_MAX, PROGRAM_FILE, WireError, recv_frame, send_frame
from .text import exception_line, one_line, short_repr


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
            if len(self.objects) >= HELD_MAX:
                raise NotPlain(f"more than {HELD_MAX} objects")
            number = self.numbers[id(value)] = len(self.objects)
            self.objects.append(value)
        return ["handle", number, type_name(value)]

    def arguments(self, message: dict) -> tuple[object, object]:
        """The arguments of a request: plain data, references back to P's objects
        (`["ref", n]`), and objects the test built (`["obj", n]`, described in the
        request's flat `objects` table, so a long linked list nests no deeper than one
        of its links)."""
        table = message.get("objects") or []
        if type(table) is not list or len(table) > HELD_MAX:
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
    for name in wanted[:NAMES_MAX]:
        if type(name) is not str or (name.startswith("__") and name.endswith("__")) or name not in namespace:
            continue
        value = namespace[name]
        if isinstance(value, types.ModuleType):
            module = getattr(value, "__name__", None)
            names.append([name, "module", module if isinstance(module, str) else ""])
        elif callable(value):
            names.append([name, "callable", type_name(value)])
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
    return {"op": "raise", "type": type_name(exc), "base": builtin_base, "args": args,
            "message": text[:DETAIL_MAX * 4]}


def program_main(payload: dict) -> None:
    """P: run the program, then answer calls from the test until it hangs up."""
    module = types.ModuleType("solution")
    sys.modules["solution"] = module
    namespace = module.__dict__
    program = payload["program"]
    linecache.cache[PROGRAM_FILE] = (len(program), None, program.splitlines(True), PROGRAM_FILE)
    channel = CHANNEL_FD
    try:
        exec(compile(program, PROGRAM_FILE, "exec"), namespace)
    except SystemExit as exc:
        flush_stdio()
        send_frame(channel, {"op": "failed",
                             "detail": f"the program called sys.exit({short_repr(exc.code)}) before the test ran"})
        return
    except BaseException as exc:
        flush_stdio()
        send_frame(channel, {"op": "failed", "detail": one_line(exception_line(exc))})
        return
    flush_stdio()
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
        label = f"{action}() of a {type_name(target)}"
    reference = held.reference
    before = [to_tree(a, reference) if type(a) in (list, dict, set) else None for a in args]
    before_kw = {k: to_tree(a, reference) if type(a) in (list, dict, set) else None for k, a in kwargs.items()}
    try:
        result = _ACTIONS[action](target, args, kwargs)
    except (SystemExit, KeyboardInterrupt) as exc:
        flush_stdio()
        what = "sys.exit" if isinstance(exc, SystemExit) else "KeyboardInterrupt"
        code = f"({short_repr(exc.code)})" if isinstance(exc, SystemExit) else ""
        return {"op": "exit", "detail": f"the program raised {what}{code} during a call to {label}"}
    except BaseException as exc:
        flush_stdio()
        return _exception_message(exc)
    flush_stdio()
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
