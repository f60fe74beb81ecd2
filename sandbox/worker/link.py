"""T's end of the channel to P: the proxies the test holds for the program's functions
and objects, and the exceptions of the program rebuilt as the test's own.
"""
from __future__ import annotations

import builtins

from .plain import NotPlain, from_tree, to_tree, type_name
from .protocol import HELD_MAX, WireError, recv_frame, send_frame
from .text import one_line


class ProgramBroke(BaseException):
    """The program misbehaved during a call (died, exited, returned something that is
    not plain data). A BaseException, so `except Exception` in a test cannot swallow
    it; the link also remembers it, so the verdict is an error whatever the test does."""


class Link:
    """The test's end of the channel to P."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.broken: str | None = None
        self.program_ended = False
        self.calls = 0
        self.handles: dict[int, _Handle] = {}  # one reference per object of the program
        self.tags = {"handle": self._handle}
        # A blind test: how many asserts it had recorded (`recorded()`) when the program
        # broke; and whether its calls are done (the program's processes are being or
        # have been killed: nothing may be asked of it any more).
        self.recorded = lambda: 0
        self.broken_after = 0
        self.done = False

    def fail(self, detail: str, ended: bool = False) -> ProgramBroke:
        if self.broken is None:
            self.broken = detail
            self.program_ended = ended
            self.broken_after = self.recorded()
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
            if type(value) is Remote:  # a function of the program, passed back to it
                if value.__dict__.get("_link") is not self:
                    raise NotPlain("a function of another program")
                return ["function", value.__dict__["__name__"]]
            if not all(getattr(base, "__module__", None) == "__test__" for base in type(value).__mro__[:-1]):
                raise NotPlain(f"a {type_name(value)}")
            try:
                attributes = object.__getattribute__(value, "__dict__")
            except AttributeError:
                raise NotPlain(f"a {type_name(value)} without a __dict__") from None
            if type(attributes) is not dict:
                raise NotPlain(f"a {type_name(value)} with an odd __dict__")
            if id(value) not in numbers:
                if len(found) >= HELD_MAX:
                    raise NotPlain(f"more than {HELD_MAX} objects")
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
        if self.done:
            raise self.fail(f"the test asked for {label} once the program's calls were done "
                            "(a comparison made after the program's processes had ended)")
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
        raise self.fail(one_line(detail))

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


class Remote:
    """A function of the program, called from the test through the channel."""

    def __init__(self, link: Link, name: str) -> None:
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

    def __init__(self, link: Link, number: int, kind: str) -> None:
        self._link, self._number, self._kind = link, number, kind

    def _answer(self, action: str, kind: type, *args: object) -> object:
        value = self._link.apply(self, action, args)
        if type(value) is not kind:
            raise self._link.fail(f"{action}() of a {self._kind} in the program gave a {type_name(value)}, "
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


class Opaque:
    """A module-level name of the program the test cannot use (a malformed value, a
    module the test process cannot import)."""

    def __init__(self, link: Link, name: str, kind: str) -> None:
        object.__setattr__(self, "_why", (link, f"`{name}` of the program cannot be used by the test: {kind}"))

    def _refuse(self, *args, **kwargs):
        link, why = object.__getattribute__(self, "_why")
        raise link.fail(why)

    __call__ = __getattr__ = __eq__ = __iter__ = __len__ = __getitem__ = __bool__ = _refuse

    def __repr__(self) -> str:
        return "<opaque object of the sandboxed program>"
