"""The languages the sandbox runs besides Python: one module per toolchain, found by
name (`toolchain("rust")`). Python is the worker's own and has no toolchain here."""
from __future__ import annotations

import importlib

from sandbox.toolchains.base import PROGRAM_ARTIFACT, Build, Toolchain, cut_message

PYTHON = "python"
# language -> "module:attribute" of its Toolchain, imported when first asked for.
_TOOLCHAINS: dict[str, str] = {
    "rust": "sandbox.toolchains.rust:RUST",
    "go": "sandbox.toolchains.go:GO",
    "cpp": "sandbox.toolchains.cpp:CPP",
    "javascript": "sandbox.toolchains.javascript:JAVASCRIPT",
}


def languages() -> tuple[str, ...]:
    """Every language the sandbox runs: Python, then the toolchains'."""
    return (PYTHON, *_TOOLCHAINS)


def toolchain(language: str) -> Toolchain:
    try:
        target = _TOOLCHAINS[language]
    except KeyError:
        raise ValueError(f"unknown language {language!r}; the sandbox runs: {', '.join(languages())}") from None
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


__all__ = ["PROGRAM_ARTIFACT", "PYTHON", "Build", "Toolchain", "cut_message", "languages", "toolchain"]
