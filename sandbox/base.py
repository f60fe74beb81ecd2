"""The sandbox contract: run one untrusted program against a list of tests.

This package imports nothing from `harness`; it knows programs and tests, not models.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, Sequence, runtime_checkable

Status = Literal["passed", "failed", "error", "timeout", "compile_error", "compile_timeout", "compile_memory"]
# A program that did not compile fails every test with one of these (the compiler's
# message is each test's detail); CompileOutcome.status says it once.
COMPILE_STATUSES = ("compile_error", "compile_timeout", "compile_memory")
PYTHON = "python"
DEFAULT_DOMAIN = "default"  # RunRequest.domain when the caller names none


@dataclass(frozen=True)
class Limits:
    """Resource limits applied to every test run."""

    timeout_s: float = 5.0  # wall clock, per test
    memory_mb: int = 512  # address space per test process, and container memory cap
    max_output_bytes: int = 64 * 1024  # stdout+stderr kept per test; the rest is dropped
    max_file_mb: int = 16  # largest file a test may write
    pids: int = 64  # container process cap
    cpus: float = 1.0  # container CPU cap
    # Compiling another language's program (sandbox/toolchains/): wall clock and memory of
    # the compile job; None: the toolchain's own (60 s, 2048 MB).
    compile_timeout_s: float | None = None
    compile_memory_mb: int | None = None


@dataclass(frozen=True)
class TestOutcome:
    """The result of one test against one program.

    `detail` is the failing assertion with the observed value
    (``assert add(1, 2) == 4  # got 3``), or the exception's last line, or why it
    timed out; trimmed to a bounded length. Empty when passed.
    """

    __test__ = False  # a result record, not a pytest test class

    test: str
    status: Status
    detail: str = ""
    duration_s: float = 0.0
    output: str = ""  # trimmed stdout+stderr, for debugging only
    # io tests graded in a compare_mode other than "strict": the verdict the strict rule
    # gives the same output (None: `status` is the strict verdict).
    strict_status: Status | None = None
    # A script run (IoCase with no expected output, sandbox/script.py) only: the end of
    # its stderr and its exit status (negated signal number when a signal ended it).
    stderr: str = ""
    exit_code: int | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True)
class IoCase:
    """One test of a whole program: its stdin, and the stdout expected of it. The
    program never sees `expected`: the worker compares outside its process."""

    __test__ = False

    input: str
    # None: a script run (sandbox/script.py): nothing is compared, the outcome carries
    # the program's stderr and exit status.
    expected: str | None
    label: str = ""  # how outcomes name the test; default: the input's start

    def name(self) -> str:
        if self.label:
            return self.label
        text = self.input if len(self.input) <= 200 else self.input[:197] + "..."
        return "stdin: " + (text.rstrip("\n") or "(empty)")


@dataclass(frozen=True)
class Call:
    """One call of a function of another language: its arguments (a JSON array) and the
    value expected back (JSON, in the canonical form of sandbox/worker/values.py). Only the
    arguments reach the program's process; the expected value stays in the worker."""

    __test__ = False

    args: str
    expected: str
    label: str = ""  # how a failure names it (the assert as the test wrote it)


@dataclass(frozen=True)
class CallCase:
    """One test of a function task in another language: calls made in one fresh process
    of the program (the function linked with the harness's driver), compared in order."""

    __test__ = False

    calls: tuple[Call, ...]
    label: str = ""
    tolerance: float | None = None  # absolute, for floats; None: equal as floats

    def name(self) -> str:
        if self.label:
            return self.label
        return "; ".join(call.label or f"call {call.args}" for call in self.calls)[:300]


@dataclass(frozen=True)
class RunnerCase:
    """One test of an exercise's own test file, run by its language's test runner
    (sandbox/toolchains/, "Test runners" in the README): the program compiled with the
    request's TestSuite, run once per test in a fresh process, the runner told which test
    by name. Unlike a CallCase, the test's code and expected values are in the program's
    process: the verdict is the runner's, taken where the program runs."""

    __test__ = False

    test: str  # as the runner names it: a Rust or Go test function, a Catch2 TEST_CASE, a jest test's full name
    label: str = ""

    def name(self) -> str:
        return self.label or self.test


@dataclass(frozen=True)
class TestSuite:
    """The files an exercise's tests are built from beside the program (its test file,
    the runner's header, its manifest), by their paths in the exercise's folder, and the
    path the program itself takes there (`src/lib.rs`, `bob.h`, `bob.go`, `bob.js`)."""

    __test__ = False

    program_path: str
    files: tuple[tuple[str, str], ...]  # (path, text), in the exercise's layout

    def file(self, path: str) -> str | None:
        return next((text for name, text in self.files if name == path), None)


@dataclass(frozen=True)
class CompileOutcome:
    """How a program of a compiled language compiled (once per program: later requests
    for the same program reuse the artifact)."""

    status: Literal["ok", "compile_error", "compile_timeout", "compile_memory"]
    message: str = ""  # the compiler's messages, cut to the first errors
    seconds: float = 0.0
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class RunRequest:
    """One program and the tests to judge it by.

    Each test runs in its own process, apart from the program's; a test's text enters
    no other process that runs code from the request (sandbox/README.md). So tests the
    model wrote itself are handled exactly like a task's hidden tests.
    """

    program: str  # the code under test (a module's source)
    # Each runs, isolated, against a fresh run of `program`: a test's code (the program
    # is a module whose functions the test calls), or an IoCase (the program is run as a
    # script on the case's input; its stdout is compared by `compare`'s rule), or, for
    # another language's function task, a CallCase (the driver calls `entry_point`), or
    # a RunnerCase (one test of `suite`, run by the language's test runner).
    tests: Sequence[str | IoCase | CallCase | RunnerCase]
    timeout_s: float | None = None  # per test; None means Limits.timeout_s
    # Trusted code run in the test's process before each test: the task's own imports,
    # helpers and constants. Names it defines are the grader's: the program cannot
    # replace a helper the test uses to judge it.
    prelude: str = ""
    # The program's function under test: the test always sees the program's version,
    # even where the prelude (or a builtin) has the same name.
    entry_point: str | None = None
    # IoCase tests: how stdout is compared (sandbox/worker/io_compare.py): the rule (its
    # source: lcb, codecontests, apps, exact) and the mode: "strict" (token for token,
    # the rule's float tolerance only between two non-integers) or "source" (the
    # source's own grader's rule, lenient ones included; each outcome then carries the
    # strict verdict too, TestOutcome.strict_status).
    compare: str = "lcb"
    compare_mode: str = "strict"
    # Which workers may run it: a worker serves one domain for its whole life, and runs
    # only that domain's requests, so nothing a job leaves in a worker (whatever the
    # clean-up misses) reaches a job of another domain. A caller puts requests whose
    # results must not meet (say, scoring on hidden tests and anything whose result
    # reaches the code's author) in different domains.
    domain: str = DEFAULT_DOMAIN
    # Verdict-blind grading (the safe default): nothing a process of the job can observe
    # while it lives depends on whether the program's answers are right. A function test
    # runs to its end whatever its asserts find (a failed one is recorded; the first is
    # the verdict), its comparisons of plain data are made only once the program's
    # processes are gone, and an io test's output is compared only then (README,
    # "Verdict-blind grading"). False: the first failed assert ends the test, as in one
    # interpreter (for tests whose verdicts reach the program's author anyway).
    blind: bool = True
    # The program's language: "python", or a toolchain's (sandbox/toolchains/: rust, go,
    # cpp, javascript), whose program is compiled once and run per test.
    language: str = PYTHON
    # RunnerCase tests: the exercise's files the program is built with (its test runner's
    # program: toolchain.build_runner); None for every other kind of test.
    suite: TestSuite | None = None


@runtime_checkable
class Sandbox(Protocol):
    """Runs a program against tests, each test isolated from the others.

    Implementations are thread safe: `run` may be called from many threads at once;
    calls beyond the pool size queue. A request runs only on workers of its `domain`
    (RunRequest.domain), and a worker never serves two domains.
    """

    name: str

    def run(self, request: RunRequest) -> list[TestOutcome]:
        """One outcome per test, in order. Never raises for anything the program does;
        SandboxFault when the sandbox itself could not grade a test."""
        ...

    def close(self) -> None: ...


class SandboxUnavailable(RuntimeError):
    """The backend cannot start (no engine, no image); the message says what to do."""


class SandboxFault(RuntimeError):
    """The sandbox itself could not grade a test: its worker failed inside itself, or
    declined the test on two fresh workers in a row. Never something the program did
    (what a program can cause is its outcome), so never a verdict: the caller records
    it as its own error (the harness: a unit error in errors.jsonl, redone by --resume)."""


@dataclass(frozen=True)
class SandboxConfig:
    backend: str = "docker"  # "docker" | "process"
    # Jobs at once (docker: containers per domain; process: worker processes per domain)
    workers: int = 2
    image: str = "reflexion-harness-sandbox"  # without a tag: tagged by the recipe digest
    limits: Limits = field(default_factory=Limits)
    jobs_per_container: int = 500  # recycle a container after this many jobs
    # Domains (RunRequest.domain) to give a worker before open_sandbox returns, by one
    # trivial job each, so their first calls find workers ready (any other domain gets
    # its workers at its first call).
    domains: tuple[str, ...] = ()
    # The language of this backend's image (Python's, or `<image>-<language>`); and the
    # languages open_sandbox opens besides Python's, each on its own image.
    language: str = PYTHON
    languages: tuple[str, ...] = ()
