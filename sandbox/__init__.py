"""Runs untrusted Python with tests under limits. Knows nothing of LLMs.

Public API: `open_sandbox(config)` returns a `Sandbox`; `Sandbox.run(RunRequest)`
returns one `TestOutcome` per test.
"""
from sandbox.base import (
    IoCase,
    Limits,
    RunRequest,
    Sandbox,
    SandboxConfig,
    SandboxFault,
    SandboxUnavailable,
    Status,
    TestOutcome,
)
from sandbox.registry import open_sandbox

__all__ = [
    "IoCase",
    "Limits",
    "RunRequest",
    "Sandbox",
    "SandboxConfig",
    "SandboxFault",
    "SandboxUnavailable",
    "Status",
    "TestOutcome",
    "open_sandbox",
]
