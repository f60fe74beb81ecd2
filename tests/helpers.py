"""Helpers shared by the whole suite: skips CI must not hit, CLI runs, polling.

Imported as `tests.helpers` (pyproject's pytest `pythonpath` puts the repository first).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, NoReturn, TypeVar

import pytest

REPO = Path(__file__).resolve().parents[1]
T = TypeVar("T")

# What each HARNESS_REQUIRE_* variable vouches for; .ci/run sets them all to 1.
REQUIREMENTS = {
    "DOCKER": "a Docker engine and the sandbox image (and its offline base)",
    "MODEL": "the xllamacpp engine and the small test GGUF",
    "BROWSER": "playwright and a Chromium",
}


def skip_or_fail(need: str, reason: str) -> NoReturn:
    """Skip a test whose environment lacks `need`, or fail it when HARNESS_REQUIRE_<need>=1.

    CI sets the variables: there a missing engine, model or browser is a defect, never
    a silent skip. Every skip CI could hit goes through here.
    """
    if need not in REQUIREMENTS:
        raise ValueError(f"unknown requirement {need!r}; known: {', '.join(REQUIREMENTS)}")
    variable = f"HARNESS_REQUIRE_{need}"
    if os.environ.get(variable) == "1":
        pytest.fail(f"{variable}=1 but {reason}", pytrace=False)
    pytest.skip(f"{reason} (with {variable}=1 this fails instead)")


def cli(*argv: str) -> int:
    """`python -m harness ARGV` in this process, through the real parser.

    Unlike harness.cli.main, a UsageError propagates, so a test can match it.
    """
    from harness.cli import build_parser

    args = build_parser().parse_args(list(argv))
    return int(args.func(args) or 0)


def harness_env(**extra: str) -> dict[str, str]:
    """The environment for a `python -m harness` child: this checkout first on the path."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def run_harness(
    *argv: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """`python -m harness ARGV` as a user runs it: a child process, output captured."""
    return subprocess.run(
        [sys.executable, "-m", "harness", *argv], cwd=cwd or REPO, env=env or harness_env(),
        capture_output=True, text=True, timeout=timeout,
    )


def ctrl_c_reaches_it() -> None:
    """`preexec_fn` for a child the test will send SIGINT: a shell that starts a job in
    the background without job control (`cmd &` in a script, as a CI runner may) makes
    it ignore SIGINT, and Python keeps an ignored SIGINT ignored. A terminal's Ctrl-C
    reaches a foreground run, which is what the tests mean to check."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_harness(*argv: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Like run_harness, but returns the running child (for signals)."""
    return subprocess.Popen(
        [sys.executable, "-m", "harness", *argv], cwd=cwd, env=env or harness_env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_reaches_it,
    )


def wait_until(
    condition: Callable[[], T], what: str, *, timeout_s: float = 120.0, interval_s: float = 0.01
) -> T:
    """Poll `condition` until it returns something truthy, and return that.

    The timeout only guards against a hang (it is generous: machines are loaded);
    a test never asserts on how long the wait took.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {timeout_s:g} s waiting for {what}", pytrace=False)
        time.sleep(interval_s)


# A program's prelude for sandbox tests about the worker's own processes: `zygote` (the
# program's parent), `worker` (the zygote's), `siblings()` (the zygote's other
# children: the test's process and the blank children kept ready) and
# `blank_children()` (siblings once at least one blank child exists; they are forked
# while the job runs).
WORKER_PROCESSES = (
    "import os, resource\n"
    "def parent_of(pid):\n"
    "    return int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])\n"
    "zygote = os.getppid()\n"
    "worker = parent_of(zygote)\n"
    "def siblings():\n"  # the blank children kept ready, and the test's process
    "    found = []\n"
    "    for entry in filter(str.isdigit, os.listdir('/proc')):\n"
    "        try:\n"
    "            if parent_of(int(entry)) == zygote and int(entry) != os.getpid():\n"
    "                found.append(int(entry))\n"
    "        except (OSError, ValueError, IndexError):\n"  # IndexError: the worker's stat is masked
    "            pass\n"
    "    return found\n"
    "def blank_children():\n"  # the test's process and at least one blank child
    "    import time\n"
    "    deadline = time.monotonic() + 3\n"
    "    while len(siblings()) < 2 and time.monotonic() < deadline:\n"  # forked while this job runs
    "        time.sleep(0.01)\n"
    "    return siblings()\n"
)


def run_in_threads(target: Callable[..., object], calls: list[tuple], timeout_s: float) -> list[BaseException]:
    """Runs `target(*args)` for each args of `calls`, each in its own thread, all at
    once; waits up to `timeout_s` for each; returns what they raised (empty: none)."""
    import threading

    errors: list[BaseException] = []

    def guarded(*args: object) -> None:
        try:
            target(*args)
        except BaseException as exc:  # surfaced to the caller
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=args) for args in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout_s)
    return errors
