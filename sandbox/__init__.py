"""Runs untrusted Python with tests under limits. Knows nothing of LLMs.

Public API: `open_sandbox(config)` returns a `Sandbox`; `Sandbox.run(RunRequest)`
returns one `TestOutcome` per test; `run_script(sandbox, program, stdin, ...)` runs one
script whole and gives back its stdout, stderr, exit status and time;
`open_workspace(config, WorkspaceSpec(...))` returns a `Workspace`: a folder in a container
to run commands in, read and write files, apply a patch and take the diff from the start.
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
from sandbox.registry import open_sandbox, open_workspace
from sandbox.script import ScriptRun, run_script
from sandbox.workspace import (
    CommandResult,
    PatchFile,
    PatchResult,
    PatchSummary,
    Workspace,
    WorkspaceError,
    WorkspaceLimits,
    WorkspaceSpec,
    summarize_patch,
)

__all__ = [
    "CommandResult",
    "PatchFile",
    "PatchResult",
    "PatchSummary",
    "Workspace",
    "WorkspaceError",
    "WorkspaceLimits",
    "WorkspaceSpec",
    "open_workspace",
    "summarize_patch",
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
