"""Task kinds: one module each (function, io, runner), found by the one registry
(harness/registry.py, point `kinds`: every TaskKind subclass of this package's modules,
and plug-ins' through the entry point group `reflexion_harness.kinds`).

`kind_of(name)` is the only way code outside this package reaches a kind; a new kind
is a module here defining one TaskKind subclass.
"""
from __future__ import annotations

import threading

from harness.kinds.base import TaskKind, WrittenTests
from harness.registry import REGISTRY, RegistryError

__all__ = ["TaskKind", "WrittenTests", "kind_of", "kind_names"]

_INSTANCES: dict[type, TaskKind] = {}  # one instance per kind class: kinds hold no state of a run
_LOCK = threading.Lock()


def kind_names() -> tuple[str, ...]:
    return REGISTRY.names("kinds")


def kind_of(name: str) -> TaskKind:
    try:
        cls = REGISTRY.get("kinds", name)
    except RegistryError as exc:
        raise ValueError(str(exc)) from None
    with _LOCK:
        if cls not in _INSTANCES:
            _INSTANCES[cls] = cls()
        return _INSTANCES[cls]
