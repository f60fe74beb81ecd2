"""Languages as units: one module per language (its fences, how its code is taken out of
an answer, how its tests are read, its prompt templates, its export form), found by
name. Python is the default and the harness's own; the others run on the sandbox's
toolchains (sandbox/toolchains/)."""
from __future__ import annotations

import importlib

from harness.kinds.languages.base import Language

DEFAULT = "python"
_LANGUAGES: dict[str, str] = {
    "python": "harness.kinds.languages.python:PYTHON",
    "rust": "harness.kinds.languages.rust:RUST",
    "go": "harness.kinds.languages.go:GO",
    "cpp": "harness.kinds.languages.cpp:CPP",
    "javascript": "harness.kinds.languages.javascript:JAVASCRIPT",
}
# Other names a task file or a dataset uses for a language (MultiPL-E's suffixes).
ALIASES = {"py": "python", "rs": "rust", "go_test.go": "go", "cxx": "cpp", "golang": "go", "c++": "cpp", "cc": "cpp", "js": "javascript", "node": "javascript"}


def language_names() -> tuple[str, ...]:
    return tuple(_LANGUAGES)


def canonical(name: str) -> str:
    """A language's name as the harness writes it; ValueError naming the choices."""
    name = ALIASES.get(name.strip().lower(), name.strip().lower())
    if name not in _LANGUAGES:
        raise ValueError(f"unknown language {name!r}; choose one of: {', '.join(_LANGUAGES)}")
    return name


def get_language(name: str) -> Language:
    module, _, attr = _LANGUAGES[canonical(name)].partition(":")
    return getattr(importlib.import_module(module), attr)


__all__ = ["ALIASES", "DEFAULT", "Language", "canonical", "get_language", "language_names"]
