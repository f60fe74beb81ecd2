"""Runs untrusted Python with tests under limits. Knows nothing of LLMs.

Public API: `open_sandbox(config)` returns a `Sandbox`; `Sandbox.run(RunRequest)`
returns one `TestOutcome` per test; `run_script(sandbox, program, stdin, ...)` runs one
script whole and gives back its stdout, stderr, exit status and time.
"""
from sandbox.base import (
    IoCase,
    Limits,
    RunnerCase,
    RunRequest,
    Sandbox,
    SandboxConfig,
    SandboxFault,
    SandboxUnavailable,
    Status,
    TestOutcome,
    TestSuite,
)
from sandbox.registry import open_sandbox
from sandbox.script import ScriptRun, run_script

__all__ = [
    "IoCase",
    "Limits",
    "RunnerCase",
    "RunRequest",
    "Sandbox",
    "SandboxConfig",
    "SandboxFault",
    "SandboxUnavailable",
    "ScriptRun",
    "Status",
    "TestOutcome",
    "TestSuite",
    "open_sandbox",
    "run_script",
]
