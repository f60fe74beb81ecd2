"""Task kinds: one module each (function, io), found by name.

`kind_of(name)` is the only way code outside this package reaches a kind; a new kind
is a module here defining one TaskKind subclass.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from harness.kinds.base import TaskKind, WrittenTests

__all__ = ["TaskKind", "WrittenTests", "kind_of", "kind_names"]


@lru_cache(maxsize=1)
def _kinds() -> dict[str, TaskKind]:
    found: dict[str, TaskKind] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, TaskKind) and value is not TaskKind \
                    and value.__module__ == module.__name__:
                if value.name in found:
                    raise RuntimeError(f"task kind {value.name!r} defined twice ({module.__name__})")
                found[value.name] = value()
    return found


def kind_names() -> tuple[str, ...]:
    return tuple(sorted(_kinds()))


def kind_of(name: str) -> TaskKind:
    try:
        return _kinds()[name]
    except KeyError:
        raise ValueError(f"unknown task kind {name!r}; known: {', '.join(kind_names())}") from None
