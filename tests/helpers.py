"""Helpers shared by the whole suite: skips CI must not hit, CLI runs, polling.

Imported as `tests.helpers` (pyproject's pytest `pythonpath` puts the repository first).
"""
from __future__ import annotations

import functools
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
# while the job runs). No /proc is needed where a job cannot read it (a container:
# worker/landlock.py): the worker leads the process group the zygote is in (it is PID 1
# of its container, or the leader of its own session on a host), and in a container
# the zygote's children are the processes that lead a group of their own (each blank
# child makes one), but for the worker; its PIDs are few and small, so they are found
# by asking for each one's group. On a host (the process backend, no Landlock) the
# siblings are found by their parent in /proc, since other processes of the user lead
# groups too.
WORKER_PROCESSES = (
    "import os, resource\n"
    "zygote = os.getppid()\n"
    "worker = os.getpgid(zygote)\n"
    "def group_of(pid):\n"
    "    try:\n"
    "        return os.getpgid(pid)\n"
    "    except OSError:\n"  # no such process
    "        return None\n"
    "def parent_of(pid):\n"
    "    return int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])\n"
    "def siblings():\n"  # the blank children kept ready, and the test's process
    "    try:\n"
    "        entries = os.listdir('/proc')\n"
    "    except PermissionError:\n"  # a container's job: the group leaders but the worker
    "        return [pid for pid in range(2, os.getpid() + 1000)\n"
    "                if pid not in (zygote, os.getpid()) and group_of(pid) == pid]\n"
    "    found = []\n"
    "    for entry in filter(str.isdigit, entries):\n"
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

# A program's prelude: `leftovers(test_pid)`, the processes an earlier job left behind,
# called from the test with the test's own PID. On a host (/proc readable): the
# worker's children but the zygote (an orphan's parent becomes the worker, their
# subreaper). In a container (no /proc for a job): every process but this job's two
# that carries a job's limits (a blank child sets them when it takes its job, and no
# process can raise a hard limit again), wherever it hangs in the tree. Either way it
# must see what it knows is there (the zygote; this job's two processes), or it says so.
JOB_LEFTOVERS = WORKER_PROCESSES + (
    "def leftovers(test_pid):\n"
    "    try:\n"
    "        entries = [int(entry) for entry in os.listdir('/proc') if entry.isdigit()]\n"
    "    except PermissionError:\n"
    "        limited = []\n"
    "        for pid in range(1, os.getpid() + 1000):\n"
    "            try:\n"
    "                if resource.prlimit(pid, resource.RLIMIT_CPU)[1] != resource.RLIM_INFINITY:\n"
    "                    limited.append(pid)\n"
    "            except OSError:\n"  # no such process
    "                pass\n"
    "        if not {os.getpid(), test_pid} <= set(limited):\n"
    "            return ['this job\\'s own processes were not seen']\n"
    "        return [pid for pid in limited if pid not in (os.getpid(), test_pid)]\n"
    "    children = []\n"
    "    for pid in entries:\n"
    "        try:\n"
    "            if parent_of(pid) == worker:\n"
    "                children.append(pid)\n"
    "        except (OSError, ValueError, IndexError):\n"  # gone, or the worker's masked stat
    "            pass\n"
    "    if zygote not in children:\n"
    "        return ['the zygote was not seen']\n"
    "    return [pid for pid in children if pid != zygote]\n"
)

# A program's prelude that finds what its own process's memory holds, without /proc
# (closed to a job in a container): `memory_ranges()` finds every mapping by asking
# mmap for a range with MAP_FIXED_NOREPLACE (EEXIST: something is mapped there; a
# range with nothing mapped is refused for its size, or mapped and unmapped at once),
# halving each such range until what is left is wholly mapped (mincore answers for
# it); `memory_holding(pattern)` copies every range into a pipe and back (the kernel
# skips a page the process may not read with EFAULT, where a plain read would crash)
# and returns the set of matches. A caller plants a match of its own to show that the
# scan sees its memory.
OWN_MEMORY = (
    "import ctypes, errno, os, re\n"
    "_libc = ctypes.CDLL(None, use_errno=True)\n"
    "_libc.mmap.restype = ctypes.c_void_p\n"
    "_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]\n"
    "_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]\n"
    "_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]\n"
    "_libc.write.restype = ctypes.c_ssize_t\n"
    "_libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]\n"
    "_PAGE = os.sysconf('SC_PAGE_SIZE')\n"
    "_FAILED = (1 << 64) - 1\n"
    "_BOTTOM = 1 << 16\n"  # mmap_min_addr
    "_TOP = (1 << (48 if os.uname().machine == 'aarch64' else 47)) - _PAGE\n"  # the user address space
    "def _taken(start, size):\n"
    "    got = _libc.mmap(start, size, 0, 0x22 | 0x100000, -1, 0)\n"  # PROT_NONE, PRIVATE|ANONYMOUS|FIXED_NOREPLACE
    "    if got is not None and got != _FAILED:\n"
    "        _libc.munmap(got, size)\n"
    "        return False\n"
    "    code = ctypes.get_errno()\n"
    "    return True if code == errno.EEXIST else False if code == errno.ENOMEM else None\n"
    "def _wholly_mapped(start, size):\n"
    "    return size <= (1 << 30) and _libc.mincore(start, size, ctypes.create_string_buffer(size // _PAGE)) == 0\n"
    "def memory_ranges():\n"
    "    found, pending = [], [(_BOTTOM, _TOP)]\n"
    "    while pending:\n"
    "        start, end = pending.pop()\n"
    "        taken = _taken(start, end - start)\n"
    "        if taken is False or (taken is None and end - start == _PAGE):\n"
    "            continue\n"
    "        if _wholly_mapped(start, end - start):\n"
    "            found.append((start, end))\n"
    "            continue\n"
    "        middle = start + (end - start) // 2 // _PAGE * _PAGE\n"
    "        pending += [(middle, end), (start, middle)]\n"
    "    return sorted(found)\n"
    "def read_memory(start, end, chunk=1 << 16):\n"  # the readable parts, as (address, bytes)
    # Through an unnamed file of /tmp (write() fails with EFAULT on a page it may not
    # read): a job may not make a pipe (sandbox/worker/confine.py).
    "    import tempfile\n"
    "    fd = os.open(tempfile.gettempdir(), os.O_TMPFILE | os.O_RDWR, 0o600)\n"
    "    try:\n"
    "        here = start\n"
    "        while here < end:\n"
    "            os.lseek(fd, 0, os.SEEK_SET)\n"
    "            got = _libc.write(fd, here, min(chunk, end - here))\n"
    "            if got > 0:\n"
    "                yield here, os.pread(fd, got, 0)\n"
    "                here += got\n"
    "            else:\n"  # a page it may not read (PROT_NONE, a guard page): the next one
    "                here = (here // _PAGE + 1) * _PAGE\n"
    "    finally:\n"
    "        os.close(fd)\n"
    "def memory_holding(pattern):\n"
    "    matches, overlap = set(), 256\n"
    "    for start, end in memory_ranges():\n"
    "        tail, after = b'', start\n"
    "        for address, data in read_memory(start, end):\n"
    "            if address != after:\n"  # a page skipped between them
    "                tail = b''\n"
    "            matches.update(re.findall(pattern, tail + data))\n"
    "            tail, after = data[-overlap:], address + len(data)\n"
    "    return matches\n"
)


@functools.cache
def cpu_unit_s() -> float:
    """The CPU seconds this machine takes for a fixed piece of pure-Python work (reading
    200,000 decimal tokens as floats), the best of three: the unit in which a test that
    guards against super-linear time states its budget, so that the budget scales with
    the machine's speed. CPU time of this thread only: other processes' load (other
    test workers included) does not count."""
    text = "0.5 " * 200_000
    best = float("inf")
    for _ in range(3):
        started = time.thread_time()
        [float(token) for token in text.split()]
        best = min(best, time.thread_time() - started)
    return best


def cpu_units(fn: Callable[..., T], *args: object, catch: type[BaseException] | tuple = ()) -> tuple[T | BaseException, float]:
    """`fn(*args)` (or the `catch` exception it raised) and the CPU time this thread spent
    in it, in `cpu_unit_s()` units. A test asserts the units below a budget set from
    what the work needs with a wide margin (ten times what it was measured at), never
    on seconds of wall clock."""
    unit = cpu_unit_s()
    started = time.thread_time()
    try:
        result: T | BaseException = fn(*args)
    except catch as exc:
        result = exc
    return result, (time.thread_time() - started) / unit


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
