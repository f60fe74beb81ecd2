"""Sandbox backends by name, imported lazily."""
from __future__ import annotations

import importlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from sandbox.base import RunRequest, Sandbox, SandboxConfig, SandboxUnavailable

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
    sandbox = factory(config)
    try:
        _prepare(sandbox, config.domains)
    except BaseException:
        sandbox.close()
        raise
    return sandbox


# Needs no program and passes in any working worker.
_TRIVIAL = RunRequest("", ["pass"])


def _prepare(sandbox: Sandbox, domains: tuple[str, ...]) -> None:
    """One trivial job per domain, at once: each binds a worker started with the pool
    (which starts spares in the background), so a run's first calls in every domain do
    not wait for a container to start. A job that fails says the sandbox cannot work."""
    if not domains:
        return
    with ThreadPoolExecutor(max_workers=len(domains)) as pool:
        answers = list(pool.map(lambda domain: sandbox.run(replace(_TRIVIAL, domain=domain)), domains))
    for domain, [outcome] in zip(domains, answers):
        if outcome.status != "passed":
            raise SandboxUnavailable(
                f"the {sandbox.name} sandbox failed a trivial test in domain {domain!r} at start-up: "
                f"{outcome.status} {outcome.detail[:300]}"
            )
