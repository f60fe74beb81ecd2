"""One script run whole on a given stdin, its stdout, stderr, exit status and time
given back: what an agent's `python` tool needs (harness/agent/), nothing compared.

It is an io job (worker/io_job.py) with no expected output, so it runs exactly as an io
test does: one program process under the same limits, Landlock and seccomp, in a
worker of the request's domain, cleaned up after. Only the answer differs: the worker
compares nothing and also sends the end of stderr and the exit status.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from sandbox.base import IoCase, RunRequest, Sandbox
from sandbox.toolchains import PYTHON


@dataclass(frozen=True)
class ScriptRun:
    """How one script run ended.

    status: "ok" (exit status 0), "error" (another exit status, or killed by a signal),
    "compile_error" / "compile_timeout" / "compile_memory" (a program of a compiled language
    that did not compile: the compiler's message is the detail),
    "timeout" (the wall-clock limit), "flooded" (stdout went past the output cap; the
    program was stopped there) or "lost" (the sandbox worker died or hung under it, twice:
    see sandbox/README.md). `stdout` is the start of what it printed (at most the cap),
    `stderr` the end; `seconds` the program's own time in the worker, `job_s` the host's
    round trip.
    """

    status: str
    stdout: str
    stderr: str
    exit_code: int | None
    detail: str
    seconds: float
    job_s: float


def run_script(sandbox: Sandbox, program: str, stdin: str = "", *, timeout_s: float, domain: str,
               language: str = PYTHON) -> ScriptRun:
    """Runs `program` as a script on `stdin` in a worker of `domain`: a Python script, or
    a whole program of another `language`, compiled first (a compile failure is status
    "error", the compiler's message its detail)."""
    started = time.perf_counter()
    [outcome] = sandbox.run(RunRequest(program, [IoCase(stdin, None, label="script")], timeout_s=timeout_s,
                                       domain=domain, blind=False, language=language))
    job_s = time.perf_counter() - started
    detail = outcome.detail
    if outcome.status == "passed":
        status = "ok"
    elif outcome.status.startswith("compile_"):
        status = outcome.status
    elif outcome.status == "timeout":
        status = "timeout"
    elif outcome.status == "failed":  # an io job fails only past the output cap when nothing is compared
        status = "flooded"
    elif outcome.exit_code is None and "sandbox worker" in detail:
        status = "lost"
    else:
        status = "error"
    return ScriptRun(status, outcome.output, outcome.stderr, outcome.exit_code, detail, outcome.duration_s, job_s)
