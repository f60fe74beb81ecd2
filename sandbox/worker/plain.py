"""Plain data as JSON trees: `to_tree` on the sending side, `from_tree` (a strict walk
that builds nothing but plain data and what the caller's tags allow) on the receiving one.
"""
from __future__ import annotations

import re

from .protocol import DEPTH_MAX, ITEMS_MAX, WireError


class NotPlain(Exception):
    """A value that is not plain data; the message says what it is ("a Node")."""


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


def type_name(value: object) -> str:
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
    budget = [ITEMS_MAX]

    def walk(v: object, depth: int) -> object:
        budget[0] -= 1
        if budget[0] < 0:
            raise NotPlain(f"more than {ITEMS_MAX} values")
        if depth > DEPTH_MAX:
            raise NotPlain(f"data nested deeper than {DEPTH_MAX} levels")
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
                    raise NotPlain(f"more than {ITEMS_MAX} values")
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
        raise NotPlain(f"a {type_name(v)}")

    return walk(value, 0)


_DECODED_SCALARS = frozenset({str, int, float, bool, type(None)})  # what json.loads makes


def from_tree(tree: object, tags: dict | None = None) -> object:
    """The plain value a tree describes; WireError for anything else.

    `tags` maps the extra tags one side accepts (references to objects) to a function
    `(node, walk, depth) -> value`; every other tag is refused.
    """
    budget = [ITEMS_MAX]

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
        if budget[0] < 0 or depth > DEPTH_MAX + 2:
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
            except (ValueError, OverflowError):  # "0x1p99999" overflows
                raise WireError("bad float") from None
        if tag == "complex" and len(node) == 3 and all(type(p) is str and len(p) < 40 for p in node[1:]):
            try:
                return complex(float.fromhex(node[1]), float.fromhex(node[2]))
            except (ValueError, OverflowError):
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
