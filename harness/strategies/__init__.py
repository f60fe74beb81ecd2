"""Strategies: one module each, behind one contract (base.py) and a registry.

Outside this package no module names a strategy: choices, groups, pairings, plot
styles and labels all come from `traits_of` and the registry.
"""
from __future__ import annotations

from harness.strategies.base import Strategy, Traits
from harness.strategies.registry import ENTRY_POINT_GROUP, REGISTRY, StrategyError

__all__ = ["Strategy", "Traits", "StrategyError", "ENTRY_POINT_GROUP", "register", "unregister", "get_strategy", "strategy_names",
           "traits_of", "template_samples", "template_folders", "groups", "resolve", "reference_name", "known"]


def register(cls: type[Strategy]) -> type[Strategy]:
    """Class decorator for strategies defined outside this package's modules (tests, notebooks)."""
    return REGISTRY.register(cls)


def unregister(name: str) -> None:
    REGISTRY.unregister(name)


def get_strategy(name: str) -> Strategy:
    return REGISTRY.get_class(name)()


def strategy_names() -> tuple[str, ...]:
    return REGISTRY.names()


def known(name: str) -> bool:
    return name in REGISTRY.classes()


def traits_of(name: str) -> Traits | None:
    """A strategy's traits; None for a name no registered strategy has (a run folder
    written with a plug-in that is not installed here)."""
    found = REGISTRY.classes().get(name)
    return found.traits if found is not None else None


def groups() -> dict[str, tuple[str, ...]]:
    return REGISTRY.groups()


def resolve(spec: str) -> tuple[str, ...]:
    return REGISTRY.resolve(spec)


def template_samples() -> dict[str, dict]:
    """Every registered strategy's own templates, with their sample values."""
    out: dict[str, dict] = {}
    for cls in REGISTRY.classes().values():
        out.update({name: dict(values) for name, values in cls.templates.items()})
    return out


def template_folders() -> tuple:
    """The template folders of plug-in strategies (their own packages')."""
    return tuple(dict.fromkeys(cls.template_folder for cls in REGISTRY.classes().values()
                               if cls.template_folder is not None))


def reference_name() -> str | None:
    """The registered reference strategy (plain sampling), if any."""
    for name in REGISTRY.names():
        if REGISTRY.traits(name).reference:
            return name
    return None
