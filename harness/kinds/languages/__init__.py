"""Languages as units: one module per language (its fences, how its code is taken out of
an answer, how its tests are read, its prompt templates, its export form, the other names
it goes by), found by the one registry (harness/registry.py, point `languages`). Python
is the default and the harness's own; the others run on the sandbox's toolchains
(sandbox/toolchains/)."""
from __future__ import annotations

from harness.kinds.languages.base import Language
from harness.registry import REGISTRY

DEFAULT = "python"


def language_names() -> tuple[str, ...]:
    """Every language, Python first."""
    names = REGISTRY.names("languages")
    return (DEFAULT, *(name for name in names if name != DEFAULT))


def other_languages() -> tuple[str, ...]:
    """Every language but Python: those the sandbox's toolchains run."""
    return language_names()[1:]


def aliases() -> dict[str, str]:
    """Other names -> the language's name."""
    return {alias: language.name for language in REGISTRY.values("languages").values() for alias in language.aliases}


def canonical(name: str) -> str:
    """A language's name as the harness writes it; ValueError naming the choices."""
    name = name.strip().lower()
    name = aliases().get(name, name)
    if name not in language_names():
        raise ValueError(f"unknown language {name!r}; choose one of: {', '.join(language_names())}")
    return name


def get_language(name: str) -> Language:
    return REGISTRY.get("languages", canonical(name))


__all__ = ["DEFAULT", "Language", "aliases", "canonical", "get_language", "language_names", "other_languages"]
