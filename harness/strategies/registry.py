"""The strategies this harness knows, as the one registry (harness/registry.py) holds
them: every module of harness/strategies/ and every entry point of the group
`reflexion_harness.strategies`, keyed by the name in their traits; a name defined twice
is refused."""
from __future__ import annotations

from typing import Iterable

from harness.registry import REGISTRY as _ONE, RegistryError
from harness.strategies.base import Strategy, Traits

ENTRY_POINT_GROUP = "reflexion_harness.strategies"
_KEY = "strategies"


class StrategyError(ValueError):
    """An unknown strategy, or a plug-in that cannot be loaded; the message says which."""


class Registry:
    """The strategies point of the one registry, with what strategies add: traits,
    groups, `--strategy` values."""

    def register(self, cls: type[Strategy], *, origin: str = "") -> type[Strategy]:
        traits = getattr(cls, "traits", None)
        if not isinstance(traits, Traits):
            raise StrategyError(f"{origin or cls.__module__}: {cls.__name__} declares no Traits (`traits = Traits(...)`)")
        try:
            _ONE.register(_KEY, traits.name, cls, origin=origin or f"{cls.__module__}.{cls.__name__}")
        except RegistryError as exc:
            raise StrategyError(str(exc)) from None
        return cls

    def unregister(self, name: str) -> None:
        """Forgets a strategy registered by `register` (tests that register their own)."""
        _ONE.unregister(_KEY, name)

    def classes(self) -> dict[str, type[Strategy]]:
        try:
            return _ONE.values(_KEY)
        except RegistryError as exc:
            raise StrategyError(str(exc)) from None

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
