"""Sandbox backends by name, imported lazily."""
from __future__ import annotations

import importlib

from sandbox.base import Sandbox, SandboxConfig

# name -> "module:factory"; a factory takes a SandboxConfig and returns a Sandbox.
_BACKENDS: dict[str, str] = {
    "docker": "sandbox.docker_backend:DockerSandbox",
    "process": "sandbox.process_backend:ProcessSandbox",
}


def backend_names() -> list[str]:
    return sorted(_BACKENDS)


def open_sandbox(config: SandboxConfig) -> Sandbox:
    try:
        target = _BACKENDS[config.backend]
    except KeyError:
        raise ValueError(
            f"unknown sandbox {config.backend!r}; choose one of: {', '.join(backend_names())}"
        ) from None
    module_name, _, attr = target.partition(":")
    factory = getattr(importlib.import_module(module_name), attr)
    return factory(config)
