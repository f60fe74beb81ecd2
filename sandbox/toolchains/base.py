"""A toolchain: what an image of one language holds (Debian packages, set-up run as the
image is built) and how a program of that language is compiled and run in the sandbox.

The sandbox knows languages this far and no further: the harness decides what the
program is (its prompt, the model's answer); a toolchain turns it into files, compile
steps and the command that runs it, with the harness's driver for a function task
(sandbox/drivers/: it calls the function on each test's arguments and prints each
result in the canonical form that worker/values.py compares).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    from sandbox.base import TestSuite

PROGRAM_ARTIFACT = "program"  # what a compile job leaves in the scratch folder
MESSAGE_LINES = 40  # of a compiler's messages in feedback: the first errors
MESSAGE_CHARS = 3000


@dataclass(frozen=True)
class Build:
    """One program, ready for the worker: the sources and compile steps (none for a
    language that is run from its source), and what a test job runs."""

    sources: Mapping[str, str]  # file name -> text, written into the scratch folder
    steps: tuple[tuple[str, ...], ...]  # compile steps, in order (argv each); () = nothing to compile
    run_argv: tuple[str, ...]  # what a test job runs, in its scratch folder
    run_files: Mapping[str, str]  # for an uncompiled language: file name -> text, written before each run
    program_file: str  # the file whose line numbers the compiler's messages name
    driver_file: str = ""  # the harness's driver, when it is a file of its own
    program_lines: int = 0  # the program's last line in program_file (after it: the driver)
    env: Mapping[str, str] = field(default_factory=dict)  # for the compile steps, beside the toolchain's


@dataclass(frozen=True)
class Toolchain:
    language: str
    packages: tuple[str, ...]  # Debian packages beside Python's (image.OFFLINE_PACKAGES)
    apt_suites: tuple[str, ...] = ()  # more suites of the mirror (bookworm-backports)
    setup: str = ""  # run as root when the image is built (the Dockerfile's SETUP)
    env: Mapping[str, str] = field(default_factory=dict)  # for compile and run
    compile_timeout_s: float = 60.0
    compile_memory_mb: int = 2048
    compile_pids: int = 256
    run_memory_mb: int | None = None  # address space a program needs at least (a runtime's reservations)
    threads: int = 0  # PIDs a run may take beyond its process (the runtime's own threads)
    spare_pipes: int = 0  # pipes its workers keep for a runtime that makes some (node)
    fences: tuple[str, ...] = ()  # code-fence tags answers use
    compiles: bool = True  # False: run from its source (its syntax errors are its tests' errors)

    def build(self, program: str, entry_point: str | None) -> Build:
        """The files and steps for `program`: with the driver for `entry_point` (a
        function task), or run whole (an io task: entry_point None)."""
        raise NotImplementedError

    def build_runner(self, program: str, suite: "TestSuite") -> Build:
        """The files and steps of a test runner's program: `program` (the solution, at
        `suite.program_path`) built with the exercise's tests (`suite.files`) and the
        harness's runner (drivers/<language>_runner.*), which runs the one test a job
        names and writes the driver's protocol (drivers/rust_runner.rs says how)."""
        raise ValueError(f"the sandbox has no test runner for {self.language}")

    def identity(self) -> dict:
        return {"language": self.language, "packages": list(self.packages), "suites": list(self.apt_suites),
                "setup": self.setup}


def cut_message(text: str, build: Build, scratch: str = "/tmp/test/") -> str:
    """A compiler's messages for the agent: the first errors (at most MESSAGE_LINES lines
    and MESSAGE_CHARS characters, then how many more lines there were), with the scratch
    folder's path taken out and the driver's file named as the harness's."""
    text = text.replace(scratch, "")
    lines = text.rstrip().splitlines()
    kept = lines[:MESSAGE_LINES]
    body = "\n".join(kept)
    if len(body) > MESSAGE_CHARS:
        body = body[:MESSAGE_CHARS]
    shown_lines = body.count("\n") + 1 if body else 0
    if shown_lines < len(lines):
        body += f"\n... ({len(lines) - shown_lines} more lines)"
    if build.driver_file and build.driver_file in body:
        body += (f"\n(note: {build.driver_file} is the harness's test driver, which calls the function "
                 "with each test's arguments: the function's signature may differ from the task's)")
    return body


def line_of_driver(message: str, build: Build) -> bool:
    """Whether a message names a line past the program in its file (the appended driver)."""
    if not build.program_lines:
        return False
    pattern = re.compile(re.escape(build.program_file) + r":(\d+)")
    return any(int(m.group(1)) > build.program_lines for m in pattern.finditer(message))
