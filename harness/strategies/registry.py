"""The strategies this harness knows: every module of harness/strategies/ and every
entry point of the group `reflexion_harness.strategies`, keyed by the name in their
traits; a name defined twice is refused."""
from __future__ import annotations

import importlib
import pkgutil
import threading
from importlib import metadata
from typing import Iterable

from harness.strategies.base import Strategy, Traits

ENTRY_POINT_GROUP = "reflexion_harness.strategies"
_INTERNAL = {"base", "registry"}


class StrategyError(ValueError):
    """An unknown strategy, or a plug-in that cannot be loaded; the message says which."""


class Registry:
    def __init__(self) -> None:
        self._classes: dict[str, type[Strategy]] = {}
        self._lock = threading.Lock()
        self._loaded = False

    def register(self, cls: type[Strategy], *, origin: str = "") -> type[Strategy]:
        traits = getattr(cls, "traits", None)
        if not isinstance(traits, Traits):
            raise StrategyError(f"{origin or cls.__module__}: {cls.__name__} declares no Traits (`traits = Traits(...)`)")
        known = self._classes.get(traits.name)
        if known is not None and known is not cls:
            raise StrategyError(f"strategy {traits.name!r} is defined twice: by {known.__module__}.{known.__name__} "
                                f"and by {origin or cls.__module__}.{cls.__name__}")
        self._classes[traits.name] = cls
        return cls

    def unregister(self, name: str) -> None:
        """Forgets a strategy registered by `register` (tests that register their own)."""
        self._classes.pop(name, None)

    def _load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            package = importlib.import_module("harness.strategies")
            for info in pkgutil.iter_modules(package.__path__):
                if info.name.startswith("_") or info.name in _INTERNAL:
                    continue
                module = importlib.import_module(f"harness.strategies.{info.name}")
                for value in vars(module).values():
                    if isinstance(value, type) and issubclass(value, Strategy) and value is not Strategy \
                            and value.__module__ == module.__name__ and "traits" in vars(value):
                        self.register(value)
            for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
                try:
                    cls = ep.load()
                except Exception as exc:  # noqa: BLE001 - a broken plug-in is named, not a traceback
                    raise StrategyError(f"the strategy plug-in {ep.name!r} ({ep.value}) cannot be loaded: "
                                        f"{type(exc).__name__}: {exc}") from None
                if not (isinstance(cls, type) and issubclass(cls, Strategy)):
                    raise StrategyError(f"the entry point {ep.name!r} ({ep.value}) of {ENTRY_POINT_GROUP} is not a "
                                        "Strategy subclass")
                self.register(cls, origin=f"entry point {ep.value}")
            self._loaded = True

    def classes(self) -> dict[str, type[Strategy]]:
        self._load()
        return dict(self._classes)

    def names(self) -> tuple[str, ...]:
        found = self.classes()
        return tuple(sorted(found, key=lambda n: (found[n].traits.order, n)))

    def traits(self, name: str) -> Traits:
        return self.get_class(name).traits

    def get_class(self, name: str) -> type[Strategy]:
        found = self.classes()
        if name not in found:
            raise StrategyError(f"unknown strategy {name!r}; known: {', '.join(self.names())}")
        return found[name]

    def groups(self) -> dict[str, tuple[str, ...]]:
        """Each group a strategy declares, with its members in order."""
        out: dict[str, list[str]] = {}
        for name in self.names():
            for group in self.traits(name).groups:
                out.setdefault(group, []).append(name)
        return {g: tuple(m) for g, m in out.items()}

    def resolve(self, spec: str) -> tuple[str, ...]:
        """A `--strategy` value: a strategy's name, a group, or names and groups joined by commas."""
        groups = self.groups()
        out: list[str] = []
        for part in (p.strip() for p in spec.split(",")):
            if not part:
                continue
            names: Iterable[str] = groups.get(part) or (part,)
            for name in names:
                self.get_class(name)
                if name not in out:
                    out.append(name)
        if not out:
            raise StrategyError(f"no strategy in {spec!r}")
        return tuple(out)


REGISTRY = Registry()
