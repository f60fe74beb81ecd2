"""Sandbox backends by name, imported lazily: the two built in, and those other
packages add through the entry point group `reflexion_harness.sandboxes` (name ->
`module:factory`, a factory taking a SandboxConfig and returning a Sandbox)."""
from __future__ import annotations

import importlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from importlib import metadata

from typing import TYPE_CHECKING

from sandbox.base import PYTHON, RunRequest, Sandbox, SandboxConfig, SandboxUnavailable

if TYPE_CHECKING:
    from sandbox.workspace import Workspace, WorkspaceSpec

# name -> "module:factory"; a factory takes a SandboxConfig and returns a Sandbox.
BUILTIN_BACKENDS: dict[str, str] = {
    "docker": "sandbox.docker_backend:DockerSandbox",
    "process": "sandbox.process_backend:ProcessSandbox",
}


ENTRY_POINT_GROUP = "reflexion_harness.sandboxes"

# name -> "module:factory"; a factory takes a SandboxConfig and a WorkspaceSpec and
# returns a Workspace (sandbox/workspace.py). Other packages add theirs through the
# entry point group `reflexion_harness.workspaces`.
_WORKSPACES: dict[str, str] = {
    "docker": "sandbox.workspace_docker:DockerWorkspace",
    "process": "sandbox.workspace_process:ProcessWorkspace",
}
WORKSPACE_ENTRY_POINT_GROUP = "reflexion_harness.workspaces"


def _backends(built_in: dict[str, str] = BUILTIN_BACKENDS, group: str = ENTRY_POINT_GROUP) -> dict[str, str]:
    found = dict(built_in)
    for ep in metadata.entry_points(group=group):
        if ep.name in found and found[ep.name] != ep.value:
            raise ValueError(f"sandbox {ep.name!r} is defined twice: {found[ep.name]} and the entry point {ep.value}")
        found[ep.name] = ep.value
    return found


def _load(target: str):
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def open_workspace(config: SandboxConfig, spec: "WorkspaceSpec") -> "Workspace":
    """A workspace of the backend `config.backend` (sandbox/workspace.py), started from
    `spec`; the caller closes it (it is also a context manager)."""
    backends = _backends(_WORKSPACES, WORKSPACE_ENTRY_POINT_GROUP)
    try:
        target = backends[config.backend]
    except KeyError:
        raise ValueError(
            f"unknown workspace backend {config.backend!r}; choose one of: {', '.join(sorted(backends))}"
        ) from None
    return _load(target)(config, spec)


def backend_names() -> list[str]:
    return sorted(_backends())


def open_sandbox(config: SandboxConfig) -> Sandbox:
    """The backend `config.backend`, for Python; with `config.languages`, one more for each
    of those languages (each on its own image), behind one Sandbox that sends a request to
    the one of its language (sandbox.polyglot)."""
    backends = _backends()
    try:
        target = backends[config.backend]
    except KeyError:
        raise ValueError(
            f"unknown sandbox {config.backend!r}; choose one of: {', '.join(sorted(backends))}"
        ) from None
    factory = _load(target)
    others = tuple(dict.fromkeys(language for language in config.languages if language != PYTHON))
    if others:
        from sandbox.polyglot import Polyglot

        sandbox = Polyglot.open(factory, replace(config, languages=()), others)
    else:
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
