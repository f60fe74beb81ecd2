"""The languages the sandbox runs besides Python: one module per toolchain, each holding
one Toolchain value, found by its name (`toolchain("rust")`); a new language is a module
here. Python is the worker's own and has no toolchain here."""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from sandbox.toolchains.base import PROGRAM_ARTIFACT, Build, Toolchain, cut_message

PYTHON = "python"
_NOT_TOOLCHAINS = {"base"}


@lru_cache(maxsize=1)
def _toolchains() -> dict[str, Toolchain]:
    found: dict[str, Toolchain] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_") or info.name in _NOT_TOOLCHAINS:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, Toolchain):
                known = found.setdefault(value.language, value)
                if known is not value:
                    raise ValueError(f"toolchain {value.language!r} is defined twice ({module.__name__})")
    return found


def languages() -> tuple[str, ...]:
    """Every language the sandbox runs: Python, then the toolchains'."""
    return (PYTHON, *_toolchains())


def toolchain(language: str) -> Toolchain:
    try:
        return _toolchains()[language]
    except KeyError:
        raise ValueError(f"unknown language {language!r}; the sandbox runs: {', '.join(languages())}") from None


__all__ = ["PROGRAM_ARTIFACT", "PYTHON", "Build", "Toolchain", "cut_message", "languages", "toolchain"]
