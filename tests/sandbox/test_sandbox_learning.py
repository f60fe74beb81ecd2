"""A program graded many times learns nothing from earlier verdicts (issue 20).

It is asked exactly once per call the test makes (a failed assert's detail shows the
value the test observed, never a second call), it finds no trace of an earlier job in
the container, and it cannot carry what it learnt into a later job of its own or of
another program. Both backends, where the channel exists on them.
"""
from __future__ import annotations

import ast
import secrets

import pytest

from sandbox import RunRequest, TestOutcome

# Counts its calls in its own process (P lives for one job) and says so on stdout.
COUNTING = (
    "calls = 0\n"
    "def f(x):\n"
    "    global calls\n"
    "    calls += 1\n"
    "    print(f'call {calls}', flush=True)\n"
    "    return calls * 100 + x\n"
)

# (test, status, calls the test text makes, detail or None)
ASKED_ONCE = [
    ("assert f(1) == 101", "passed", 1, None),
    ("assert f(1) == 0", "failed", 1, "assert f(1) == 0  # got 101"),
    ("assert f(1) == 101\nassert f(2) == 0", "failed", 2, "assert f(2) == 0  # got 202"),
    ("for x in range(3):\n    assert f(x) == 100 * (x + 1) + x", "passed", 3, None),
    ("for x in range(3):\n    assert f(x) == 0", "failed", 1, "assert f(x) == 0  # got 100"),
    ("def check(candidate):\n    assert candidate(1) == 101\n    assert candidate(2) == 0, 'two'\ncheck(f)",
     "failed", 2, "assert candidate(2) == 0, 'two'  # got 202"),
    ("assert [f(1), f(2)] == [0]", "failed", 2, "assert [f(1), f(2)] == [0]  # got [101, 202]"),
    ("assert f(1) + f(2) < 0", "failed", 2, "assert f(1) + f(2) < 0  # got 303"),
    ("assert f(1) == 101 and f(2) == 0", "failed", 2, "assert f(1) == 101 and f(2) == 0"),
    ("assert f(1) in (0, 1)", "failed", 1, "assert f(1) in (0, 1)  # got 101"),
    ("assert 0 == f(1)", "failed", 1, "assert 0 == f(1)  # got 0"),
    ("x = f(1)\nassert x == 0", "failed", 1, "assert x == 0  # got 101"),
    ("assert f(1) == 0, f(2)", "failed", 2, "assert f(1) == 0, f(2)  # got 101"),
    ("assert f(1) < f(2) < 0", "failed", 2, "assert f(1) < f(2) < 0"),
    ("class Case:\n    assert f(1) == 0", "failed", 1, "assert f(1) == 0  # got 101"),
    ("assert f(1) == 101; assert f(2) == 0", "failed", 2, "assert f(2) == 0  # got 202"),
]


# Where a blind test makes other calls: it goes on past a failed assert, and never
# evaluates an assert's message (which asks the program only when the assert fails).
BLIND_CALLS = {"for x in range(3):\n    assert f(x) == 0": 3, "assert f(1) == 0, f(2)": 1}


def run_one(sandbox, program: str, test: str, blind: bool = True) -> TestOutcome:
    [outcome] = sandbox.run(RunRequest(program, [test], blind=blind))
    return outcome


@pytest.mark.parametrize("blind", [True, False], ids=["blind", "not-blind"])
@pytest.mark.parametrize("test, status, calls, detail", ASKED_ONCE, ids=[case[0] for case in ASKED_ONCE])
def test_the_program_is_asked_once_per_call_the_test_makes(sandbox, test, status, calls, detail, blind):
    """Under passing and failing asserts alike, the program sees exactly the calls the
    test's text makes: the failure detail is the value the test observed."""
    outcome = run_one(sandbox, COUNTING, test, blind)
    calls = BLIND_CALLS.get(test, calls) if blind else calls
    assert outcome.status == status, outcome
    assert outcome.output.splitlines() == [f"call {n}" for n in range(1, calls + 1)], outcome
    if detail is not None:
        assert outcome.detail == detail, outcome


# --- memory carried from one grading to the next --------------------------------------
# Each channel is a way to keep a number from one job to a later one in the same
# container: `store(n)` leaves it, `load()` reads it back (0 when nothing is there). A
# program that learns stores what it saw and answers from what it finds; graded again
# and again, it must fail its hidden test every time. Within one job each channel does
# work (the control), so the failures come from the clean-up, not from broken code.

CHANNELS = {
    "a file in the scratch folder": (
        "def store(n):\n    open('memory', 'w').write(str(n))\n"
        "def load():\n    return int(open('memory').read()) if os.path.exists('memory') else 0\n",
        ("process", "docker")),
    "the scratch folder's modification time": (
        "def store(n):\n    os.utime('.', (n, n))\n"
        "def load():\n    t = int(os.stat('.').st_mtime)\n    return t if t < 10**6 else 0\n",
        ("process", "docker")),
    "the scratch folder's mode bits": (
        "def store(n):\n    os.chmod('.', 0o700 | (n & 0o77))\n"
        "def load():\n    return os.stat('.').st_mode & 0o77\n",
        ("process", "docker")),
    "an extended attribute of the scratch folder": (
        "def store(n):\n    os.setxattr('.', 'user.memory', str(n).encode())\n"
        "def load():\n    try:\n        return int(os.getxattr('.', 'user.memory'))\n"
        "    except OSError:\n        return 0\n",
        ("docker",)),
    "a file in /tmp beside the scratch folder": (
        "def store(n):\n    open('/tmp/memory', 'w').write(str(n))\n"
        "def load():\n    return int(open('/tmp/memory').read()) if os.path.exists('/tmp/memory') else 0\n",
        ("docker",)),
    "a file in /dev/shm": (
        "def store(n):\n    open('/dev/shm/memory', 'w').write(str(n))\n"
        "def load():\n    p = '/dev/shm/memory'\n    return int(open(p).read()) if os.path.exists(p) else 0\n",
        ("docker",)),
    "SysV shared memory segments": (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "def store(n):\n    for k in range(n):\n        libc.shmget(0x5EED00 + k, 16, 0o1600)\n"
        "def load():\n    n = 0\n    while libc.shmget(0x5EED00 + n, 0, 0) >= 0:\n        n += 1\n    return n\n",
        ("docker",)),
    "SysV semaphore sets": (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "def store(n):\n    for k in range(n):\n        libc.semget(0x5EED00 + k, 1, 0o1600)\n"
        "def load():\n    n = 0\n    while libc.semget(0x5EED00 + n, 0, 0) >= 0:\n        n += 1\n    return n\n",
        ("docker",)),
    "a SysV message queue": (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "def store(n):\n    for k in range(n):\n        libc.msgget(0x5EED00 + k, 0o1600)\n"
        "def load():\n    n = 0\n    while libc.msgget(0x5EED00 + n, 0) >= 0:\n        n += 1\n    return n\n",
        ("docker",)),
    "an abstract unix socket held by a daemon": (
        f"import errno, socket, time\nTOKEN = {secrets.token_hex(4)!r}\n"
        "def store(n):\n    if os.fork() == 0:\n        os.setpgid(0, 0)\n        if os.fork() == 0:\n"
        "            s = socket.socket(socket.AF_UNIX)\n            s.bind(f'\\0memory-{TOKEN}-{n}')\n"
        "            time.sleep(60)\n        os._exit(0)\n    os.wait()\n    time.sleep(0.2)\n"
        # Which name is taken: binding it again says so (the table in /proc/net/unix is
        # closed to a job in a container).
        "def load():\n    for n in range(1, 100):\n        probe = socket.socket(socket.AF_UNIX)\n        try:\n"
        "            probe.bind(f'\\0memory-{TOKEN}-{n}')\n        except OSError as exc:\n"
        "            if exc.errno == errno.EADDRINUSE:\n                return n\n            raise\n"
        "        finally:\n            probe.close()\n    return 0\n",
        ("process", "docker")),
    "TCP connections in TIME_WAIT": (
        "import socket\n"
        "def store(n):\n    for port in range(20001, 20001 + n):\n"
        "        server = socket.socket()\n        server.bind(('127.0.0.1', port))\n        server.listen()\n"
        "        client = socket.create_connection(('127.0.0.1', port))\n        conn, _ = server.accept()\n"
        "        conn.close()\n        client.recv(1)\n        client.close()\n        server.close()\n"
        "def load():\n    rows = open('/proc/net/tcp').read().split('\\n')[1:]\n"
        "    return sum(1 for r in rows if r.split() and r.split()[3] == '06'\n"
        "               and 20001 <= int(r.split()[1].split(':')[1], 16) < 20100)\n",
        ("docker",)),
    "loopback packet counters": (
        "import socket\n"
        "def store(n):\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "    for _ in range(n):\n        s.sendto(b'x', ('127.0.0.1', 9))\n"
        "def load():\n    for row in open('/proc/net/dev').read().split('\\n'):\n"
        "        if row.strip().startswith('lo:'):\n            return int(row.split(':')[1].split()[1])\n    return 0\n",
        ("docker",)),
    "the cgroup's memory high-water mark": (
        "def usage():\n    for path in ('/sys/fs/cgroup/memory/memory.max_usage_in_bytes', '/sys/fs/cgroup/memory.peak'):\n"
        "        try:\n            return int(open(path).read())\n        except OSError:\n            pass\n"
        "    return None\n"
        "def store(n):\n    block = bytearray(200 * 1024 * 1024)\n    del block\n"
        "def load():\n    u = usage()\n    return 0 if u is None else int(u > 150 * 1024 * 1024)\n",
        ("docker",)),
}
# Channels a job's process cannot even open in a container (confine.py refuses SysV
# shared memory and every socket; landlock.py refuses every file of /proc and /sys,
# /proc/net included, and namespace.py covers them): no control within a job, but the
# tests still check that nothing crosses. The cgroup's counters are masked.
NOT_WITHIN_A_JOB = {"the cgroup's memory high-water mark", "SysV shared memory segments",
                    "TCP connections in TIME_WAIT", "loopback packet counters"}
NOT_WITHIN_A_CONTAINER_JOB = {"an abstract unix socket held by a daemon"}  # on a host it works


def not_within_a_job(name: str, backend: str) -> bool:
    return name in NOT_WITHIN_A_JOB or (backend == "docker" and name in NOT_WITHIN_A_CONTAINER_JOB)


def channel_code(name: str, backend: str) -> str:
    """The channel's store() and load(); where its calls are refused, a refused call
    fails the store, not the grading, and a refused read finds nothing."""
    code, _ = CHANNELS[name]
    if not_within_a_job(name, backend):
        code += ("_store, _load = store, load\ndef store(n):\n    try:\n        _store(n)\n    except OSError:\n        pass\n"
                 "def load():\n    try:\n        return _load()\n    except OSError:\n        return 0\n")
    return code
CHANNEL_CASES = [pytest.param(name, backend, id=f"{backend}-{name}", marks=[pytest.mark.docker] if backend == "docker" else [])
                 for name, (_, backends) in CHANNELS.items() for backend in backends]
LEARNER = (
    "def learner(x):\n"
    "    seen = load()\n"  # what an earlier grading left
    "    store(seen + 1)\n"
    "    return seen > 0\n"  # the right answer, learnt from having been graded before
)


@pytest.mark.parametrize("name, backend", CHANNEL_CASES)
def test_a_program_graded_again_and_again_learns_nothing(name, backend, sandbox_opener):
    program = "import os\n" + channel_code(name, backend) + LEARNER
    sandbox = sandbox_opener(backend, workers=1)
    try:
        if not not_within_a_job(name, backend):  # where the channel works, it works within a job
            assert run_one(sandbox, program, "store(3)\nassert load() >= 1").status == "passed"
        for grading in range(4):
            outcome = run_one(sandbox, program, "assert learner(7) is True")
            assert (outcome.status, outcome.detail) == ("failed", "assert learner(7) is True  # got False"), \
                (grading, outcome)
    finally:
        sandbox.close()


@pytest.mark.parametrize("name, backend", [case for case in CHANNEL_CASES
                                           if "high-water" not in case.values[0] and "packet" not in case.values[0]
                                           and "TIME_WAIT" not in case.values[0]])
def test_a_hidden_input_never_reaches_a_later_program_s_detail(name, backend, sandbox_opener):
    """A program graded on a hidden test leaves the test's argument behind; another
    program graded next in the same container returns whatever it finds, so its
    failure detail (feedback for an internal test) would carry the hidden input."""
    code = channel_code(name, backend)
    secret = secrets.randbelow(50) + 10
    sandbox = sandbox_opener(backend, workers=1)
    try:
        leak = run_one(sandbox, "import os\n" + code + "def f(x):\n    store(x)\n    return 0\n",
                       f"assert f({secret}) == 1")
        assert leak.status == "failed", leak
        for _ in range(2):
            outcome = run_one(sandbox, "import os\n" + code + "def g():\n    return load()\n", "assert g() == -1")
            assert (outcome.status, outcome.detail) == ("failed", "assert g() == -1  # got 0"), outcome
    finally:
        sandbox.close()


def test_a_yes_no_function_cannot_learn_from_a_repeated_call(backend, sandbox_opener):
    """The issue's first attack: a yes/no function that never computes its answer. It
    keeps the arguments it was asked about; asked twice with the same argument in one
    grading (as a second evaluation for the failure detail once did), it takes its
    first answer as rejected and leaves itself a note to answer the other way."""
    channel = "/dev/shm/notes" if backend == "docker" else "notes"
    program = (
        "import os, json\n"
        f"NOTES = {channel!r}\n"
        "asked = {}\n"
        "def notes():\n    return json.load(open(NOTES)) if os.path.exists(NOTES) else {}\n"
        "def is_prime(n):\n"
        "    flipped = notes().get(str(n), False)\n"
        "    asked[n] = asked.get(n, 0) + 1\n"
        "    if asked[n] > 1:\n"  # asked again: the first answer was rejected
        "        json.dump({**notes(), str(n): not flipped}, open(NOTES, 'w'))\n"
        "    return flipped\n"  # False until it learns otherwise
    )
    sandbox = sandbox_opener(backend, workers=1)
    try:
        for grading in range(4):
            outcome = run_one(sandbox, program, "assert is_prime(7) is True")
            assert (outcome.status, outcome.detail) == ("failed", "assert is_prime(7) is True  # got False"), \
                (grading, outcome)
    finally:
        sandbox.close()


# Counters no wipe resets. A program moves one by an amount that encodes what it
# knows; the next program reads it. After a job that moved one the worker retires, so
# the next program starts in a fresh container and reads the same value whatever the
# amount was (what is left is one bit: whether the previous job retired its worker).
COUNTERS = {
    "the PID counter": (
        "def bump(n):\n    for _ in range(n):\n        pid = os.fork()\n        if pid == 0:\n            os._exit(0)\n"
        "        os.waitpid(pid, 0)\n",
        "def read():\n    return os.getpid()\n"),
    "the scratch filesystem's inode counter": (
        "def bump(n):\n    for k in range(n):\n        open(f'f{k}', 'w').close()\n        os.unlink(f'f{k}')\n",
        "def read():\n    open('probe', 'w').close()\n    return os.stat('probe').st_ino\n"),
    "/dev/shm's inode counter": (
        "def bump(n):\n    for k in range(n):\n        open(f'/dev/shm/f{k}', 'w').close()\n        os.unlink(f'/dev/shm/f{k}')\n",
        "def read():\n    open('/dev/shm/probe', 'w').close()\n    return os.stat('/dev/shm/probe').st_ino\n"),
    "the SysV id counter": (  # message queues: shared memory segments are refused (confine.py)
        "def bump(n):\n    for _ in range(n):\n        libc.msgctl(libc.msgget(0, 0o600), 0, None)\n",
        "def read():\n    ident = libc.msgget(0, 0o600)\n    libc.msgctl(ident, 0, None)\n    return ident\n"),
    # A datagram to an address with no route sends nothing (so no packet counter moves)
    # but adds one to the namespace's `Ip: OutNoRoutes`; in a container the socket
    # itself is refused now, and W retires on any move of the namespace's statistics.
    "the IP counters of the network namespace (OutNoRoutes)": (
        "import socket\n"
        "def bump(n):\n    try:\n        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n    except OSError:\n"
        "        return\n    for _ in range(n):\n        try:\n            s.sendto(b'x', ('10.1.2.3', 9))\n"
        "        except OSError:\n            pass\n",
        "def read():\n    try:\n        lines = open('/proc/net/snmp').read().split('\\n')\n    except OSError:\n"
        "        return None\n"
        "    names, values = lines[0].split(), lines[1].split()\n    return int(values[names.index('OutNoRoutes')])\n"),
}
# Counters a job cannot read at all: /proc/net is closed to it (landlock.py).
UNREADABLE_IN_A_JOB = {"the IP counters of the network namespace (OutNoRoutes)"}


@pytest.mark.docker
@pytest.mark.parametrize("name", list(COUNTERS))
def test_a_counter_moved_by_one_job_tells_the_next_nothing(name, sandbox_opener):
    bump, read = COUNTERS[name]
    program = "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n" + bump + read
    sandbox = sandbox_opener("docker", workers=1)
    try:
        seen = {}
        for amount in (3, 40):
            assert run_one(sandbox, program, f"bump({amount})\nassert read() == -1").status == "failed"
            outcome = run_one(sandbox, program, "assert read() == -1")
            assert outcome.status == "failed", outcome
            seen[amount] = ast.literal_eval(outcome.detail.rsplit("# got ", 1)[1])
        if name in UNREADABLE_IN_A_JOB:  # nothing to tell the next job anything with
            assert seen == {3: None, 40: None}, seen
            return
        # A fresh container's own start can differ by a PID (its first forks race);
        # without the retirement the second reading would be 37 steps past the first.
        assert abs(seen[40] - seen[3]) <= 2, seen
    finally:
        sandbox.close()


# Counters the whole host keeps, which no check of the worker's can see (every container
# and the host itself move them): a program must not be able to move them and a later
# job read the move back, in this container or another. `bump(n)` moves one by n,
# `read()` is its value now (None when the program cannot read it). A fresh container
# starts between the two jobs whenever the first one moved the PID counter, so what is
# compared is the move from the sender's reading before its bump to the receiver's, for
# a small and a large bump: the same but for the host's own noise (other containers'
# jobs) when the channel is closed, about 997 apart when it is open.
HOST_PRELUDE = (
    "import ctypes, os, threading\n"
    "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"  # per-CPU counters: one CPU
    "def forks(n, then=lambda: None):\n    for _ in range(n):\n        pid = os.fork()\n"
    "        if pid == 0:\n            try:\n                then()\n            finally:\n                os._exit(0)\n"
    "        os.waitpid(pid, 0)\n"
)
HOST_COUNTERS = {
    "the host's fork count (/proc/stat processes)": (
        "def bump(n):\n    forks(n)\n",
        "def read():\n    try:\n        text = open('/proc/stat').read()\n    except OSError:\n        return None\n"
        "    for line in text.split('\\n'):\n"
        "        if line.startswith('processes '):\n            return int(line.split()[1])\n    return None\n"),
    "a pidfd's inode number (every process and thread the host made)": (
        "def bump(n):\n    for _ in range(n):\n        t = threading.Thread(target=int)\n        t.start()\n        t.join()\n",
        "def read():\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n    try:\n"
        "        fd = os.pidfd_open(pid)\n    except OSError:\n        return None\n    finally:\n"
        "        os.waitpid(pid, 0)\n    ino = os.fstat(fd).st_ino\n    os.close(fd)\n    return ino\n"),
    "a memfd's inode number (the kernel's internal tmpfs, one for the host)": (
        "def bump(n):\n    for _ in range(n):\n        try:\n            os.close(os.memfd_create('x'))\n"
        "        except OSError:\n            return\n",
        "def read():\n    try:\n        fd = os.memfd_create('x')\n    except OSError:\n        return None\n"
        "    ino = os.fstat(fd).st_ino\n    os.close(fd)\n    return ino\n"),
    "a socket's cookie (one counter for the host)": (
        "import socket, struct\n"
        "def cookie():\n    s = socket.socket(socket.AF_UNIX)\n"
        "    return struct.unpack('Q', s.getsockopt(socket.SOL_SOCKET, 57, 8))[0]\n"
        "def bump(n):\n    for _ in range(n):\n        try:\n            cookie()\n        except OSError:\n            return\n",
        "def read():\n    try:\n        return cookie()\n    except OSError:\n        return None\n"),
    "the host's session count (the scheduler's autogroup numbers)": (
        "def bump(n):\n    forks(n, os.setsid)\n",
        "def read():\n    try:\n        text = open('/proc/self/autogroup').read()\n    except OSError:\n        return None\n"
        "    return int(text.split()[0].rsplit('-', 1)[1])\n"),
}


def _got(outcome: TestOutcome):
    """The value a failed `assert x == ...` observed (its detail's `# got ...`)."""
    assert outcome.status == "failed" and "# got " in outcome.detail, outcome
    return ast.literal_eval(outcome.detail.rsplit("# got ", 1)[1])


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("name", list(HOST_COUNTERS))
def test_a_host_wide_counter_carries_nothing_to_a_later_job(name, sandbox_opener):
    bump, read = HOST_COUNTERS[name]
    program = HOST_PRELUDE + bump + read
    sandbox = sandbox_opener("docker", workers=1)
    try:
        moves = {}
        for amount in (3, 1000):
            [sent] = sandbox.run(RunRequest(program, [f"before = read()\nbump({amount})\nassert before == -2"],
                                            timeout_s=20))
            [received] = sandbox.run(RunRequest(program, ["assert read() == -2"], timeout_s=20))
            before, after = _got(sent), _got(received)
            moves[amount] = None if None in (before, after) else after - before
        if None in moves.values():  # the job cannot read it at all, before or after
            assert set(moves.values()) == {None}, moves
        else:  # readable: the bump must not show through the noise
            assert abs(moves[1000] - moves[3]) < 500, moves
    finally:
        sandbox.close()


# State the kernel keeps for the container that a sender job sets to a secret symbol and
# the next job reads back (sandbox/README.md, residual channels): `send(symbol)` (True
# when it could aim) and `receive()` (the symbol read, None when it reads nothing), and
# how many symbols there are. Each pair of jobs runs on one worker, so the receiver is
# in the sender's container.
SENT_SECRETS = {
    # se.vruntime in /proc/<pid>/sched: a task placed on a CPU's run queue starts at
    # the average virtual runtime of the container's tasks there, which grows with all
    # the CPU time the container used. The sender, pinned to a CPU, burns CPU until its
    # own vruntime is its symbol's slot modulo the period; the receiver pins itself to
    # the same CPU and reads its own (the worker's work between them adds 2-16 ms).
    "the scheduler's virtual runtime of the container's cgroup": (
        "import os\n"
        "PERIOD, SLOT = 256.0, 32.0\n"  # ms: 8 symbols, 3 bits a job
        "def vruntime():\n"
        "    me = os.getpid()\n"
        "    for path in ('/proc/self/sched', '/proc/thread-self/sched', f'/proc/{me}/sched',\n"
        "                 f'/proc/{me}/task/{me}/sched'):\n"
        "        try:\n"
        "            with open(path) as lines:\n"
        "                for line in lines:\n"
        "                    if line.startswith('se.vruntime'):\n"
        "                        return float(line.split(':')[1])\n"
        "        except OSError:\n"
        "            pass\n"
        "    return None\n"
        "def pin():\n"
        "    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        "def send(symbol):\n"
        "    pin()\n"
        "    target = symbol * SLOT + SLOT / 4\n"  # early in its slot: the worker's work comes on top
        "    while (now := vruntime()) is not None:\n"
        "        if (now - target) % PERIOD < 1.0:\n"
        "            return True\n"
        "    return False\n"
        "def receive():\n"
        "    pin()\n"
        "    now = vruntime()\n"
        "    return None if now is None else int(now % PERIOD // SLOT)\n",
        8),
    # get_next_ino: every pipe and socket, and every entry of /proc/<pid>/ the kernel
    # looks up afresh, takes the next inode number from one counter for the host, in
    # batches of 1024 per CPU. The sender, pinned to a CPU, makes pipes (or sockets) until
    # the number there is its symbol's slot; the receiver, pinned there, reads the number
    # of a new pipe or socket, or of a /proc entry of its own (W's pipes and sockets
    # between them take 1-24). Decoded 10 of 10 on the worker of 2026-12-03 morning.
    "the inode numbers of pipes, sockets and /proc entries (host-wide)": (
        "import os, socket\n"
        "PERIOD, SLOT = 256, 32\n"  # inode numbers: 8 symbols, 3 bits a job
        "def pin():\n"
        "    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        "def number():\n"
        "    for make in (os.pipe, lambda: (socket.socket(socket.AF_UNIX).detach(),)):\n"
        "        try:\n            fds = make()\n        except OSError:\n            continue\n"
        "        number = os.fstat(fds[0]).st_ino\n        for fd in fds:\n            os.close(fd)\n"
        "        return number\n"
        "    for path in ('/proc/self/status', '/proc/self/stat', f'/proc/{os.getpid()}/limits'):\n"
        "        try:\n            return os.stat(path).st_ino\n        except OSError:\n            pass\n"
        "    return None\n"
        "def send(symbol):\n"
        "    pin()\n"
        "    target = symbol * SLOT + 2\n"  # early in its slot: W's work comes on top
        "    for _ in range(4 * PERIOD):\n"
        "        now = number()\n"
        "        if now is None:\n            return False\n"
        "        if now % PERIOD == target:\n            return True\n"
        "    return False\n"
        "def receive():\n"
        "    pin()\n"
        "    now = number()\n"
        "    return None if now is None else int(now % PERIOD // SLOT)\n",
        8),
}
PAIRS = 10


@pytest.mark.docker
@pytest.mark.parametrize("name", list(SENT_SECRETS))
def test_a_secret_sent_through_the_container_s_kernel_state_is_not_received(name, sandbox_opener):
    """The receiver decodes the sender's symbol no better than chance (1 in 8): it reads
    nothing. Before /proc was closed to jobs, 10 of 10 were decoded."""
    code, symbols = SENT_SECRETS[name]
    sandbox = sandbox_opener("docker", workers=1)
    try:
        pairs = []
        for _ in range(PAIRS):
            secret = secrets.randbelow(symbols)
            [sent] = sandbox.run(RunRequest(code, [f"assert send({secret}) is None"], timeout_s=10))
            [received] = sandbox.run(RunRequest(code, ["assert receive() == -1"], timeout_s=10))
            pairs.append((secret, _got(sent), _got(received)))
        hits = sum(secret == got for secret, _, got in pairs)
        assert hits < PAIRS / 2, pairs  # chance: 1.25 of 10
    finally:
        sandbox.close()


# What a job's process may not do in a container (confine.py), in the program's
# process and in the test's: each line is a call and the errno it must fail with.
REFUSED_CALLS = (
    "import ctypes, errno, mmap, os, socket\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "def attempt(call):\n    try:\n        call()\n    except OSError as exc:\n        return exc.errno\n    return 0\n"
    "def syscall(*args):\n    if libc.syscall(*args) == -1:\n        raise OSError(ctypes.get_errno(), 'refused')\n"
    "def setsid_in_a_fork():\n    pid = os.fork()\n    if pid == 0:\n"
    "        os._exit(attempt(os.setsid))\n    status = os.waitpid(pid, 0)[1] >> 8\n"
    "    if status:\n        raise OSError(status, 'refused')\n"
    "def clone_pidfd():\n    fd = ctypes.c_int(-1)\n"
    "    pid = libc.syscall(56, 0x1000 | 17, 0, ctypes.byref(fd), 0, 0)\n"  # x86_64 clone(CLONE_PIDFD|SIGCHLD)
    "    if pid == 0:\n        os._exit(0)\n    if pid < 0:\n        raise OSError(ctypes.get_errno(), 'refused')\n"
    "    os.waitpid(pid, 0)\n"
    "def inherited_socket():\n    return socket.socket(fileno=os.dup(3))\n"  # CHANNEL_FD, W's socket between P and T
    "def peer_pidfd():\n    inherited_socket().getsockopt(socket.SOL_SOCKET, 77)\n"
    "def signal_own_child():\n    pid = os.fork()\n    if pid == 0:\n        import time\n        time.sleep(5)\n"
    "        os._exit(0)\n    os.kill(pid, 9)\n    return os.waitpid(pid, 0)[1] == 9\n"
    "def refused():\n    calls = {\n"
    "        'inet socket': (lambda: socket.socket(), errno.EPERM),\n"
    "        'inet6 socket': (lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM), errno.EPERM),\n"
    "        'netlink socket': (lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW), errno.EPERM),\n"
    "        'unix socket': (lambda: socket.socket(socket.AF_UNIX), errno.EPERM),\n"
    "        'socketpair': (lambda: socket.socketpair(), errno.EPERM),\n"
    "        'pipe': (os.pipe, errno.EPERM),\n"
    "        'pipe2': (lambda: os.pipe2(os.O_CLOEXEC), errno.EPERM),\n"
    "        'mq_open': (lambda: syscall(240, b'/q', 0o100, 0o600, None), errno.ENOSYS),\n"
    "        'io_setup': (lambda: syscall(206, 1, ctypes.byref(ctypes.c_ulong(0))), errno.ENOSYS),\n"
    "        'userfaultfd': (lambda: syscall(323, 1), errno.ENOSYS),\n"
    "        'memfd_secret': (lambda: syscall(447, 0), errno.ENOSYS),\n"
    "        'unshare(user, mount)': (lambda: syscall(272, 0x10020000), errno.EPERM),\n"
    "        'unshare(user)': (lambda: syscall(272, 0x10000000), errno.EPERM),\n"
    "        'clone(CLONE_NEWUSER)': (lambda: syscall(56, 0x10000000 | 17, 0, 0, 0, 0), errno.EPERM),\n"
    "        'setns': (lambda: syscall(308, 0, 0), errno.EPERM),\n"
    "        'mount': (lambda: syscall(165, b'none', b'/tmp', b'tmpfs', 0xF, None), errno.EPERM),\n"
    "        'umount2 of /proc\\'s cover': (lambda: syscall(166, b'/proc', 2), errno.EPERM),\n"
    "        'io_uring_setup': (lambda: syscall(425, 4, ctypes.create_string_buffer(120)), errno.ENOSYS),\n"
    "        'memfd_create': (lambda: os.memfd_create('x'), errno.EPERM),\n"
    "        'shmget': (lambda: syscall(29, 0, 16, 0o600), errno.EPERM),\n"
    "        'shared anonymous mmap': (lambda: mmap.mmap(-1, 4096), errno.EPERM),\n"
    "        'pidfd_open': (lambda: os.pidfd_open(os.getpid()), errno.ENOSYS),\n"
    "        'clone(CLONE_PIDFD)': (clone_pidfd, errno.EPERM),\n"
    "        'SO_PEERPIDFD': (peer_pidfd, errno.ENOPROTOOPT),\n"
    "        'SO_COOKIE': (lambda: inherited_socket().getsockopt(socket.SOL_SOCKET, 57, 8), errno.ENOPROTOOPT),\n"
    "        'sysinfo': (lambda: syscall(99, ctypes.create_string_buffer(256)), errno.ENOSYS),\n"
    "        'setsid': (setsid_in_a_fork, errno.EPERM),\n"
    "        'signal to the parent (the zygote)': (lambda: os.kill(os.getppid(), 0), errno.EPERM),\n"
    "        'a lookup under /proc': (lambda: os.stat('/proc/self'), errno.ENOENT),\n"
    "        'a lookup under /sys': (lambda: os.stat('/sys/kernel'), errno.ENOENT),\n"
    "        'a link into /proc': (lambda: os.stat('/dev/stdin'), errno.ENOENT),\n"
    "    }\n"
    "    return {name: attempt(call) for name, (call, expected) in calls.items() if attempt(call) != expected}\n"
    "def still_works():\n    import numpy, threading\n"
    "    from concurrent.futures import ThreadPoolExecutor\n"
    "    t = threading.Thread(target=int)\n    t.start()\n    t.join()\n"
    "    with ThreadPoolExecutor(2) as pool:\n        squares = list(pool.map(lambda x: x * x, range(4)))\n"
    "    own_child = signal_own_child()\n"  # its own processes: it signals them
    "    mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE)\n"
    "    return squares == [0, 1, 4, 9] and own_child and float(numpy.linalg.inv(numpy.eye(3) + 1).sum()) == 0.75\n"
)


@pytest.mark.docker
def test_a_job_s_processes_cannot_move_what_the_whole_host_counts(docker_sandbox):
    """Sockets of every family, pipes, message queues, AIO rings, userfaultfd, secret
    memory, io_uring, memfds, SysV shared memory and shared anonymous memory, pidfds,
    socket cookies, sysinfo, new sessions and namespaces, mounts, signals to processes
    outside the job's own, and every lookup under /proc and /sys are refused to the
    program's process and the test's (x86_64 numbers); what programs use (threads, a
    thread pool, fork, numpy) works."""
    import platform

    if platform.machine() != "x86_64":
        pytest.skip("the raw system call numbers here are x86_64's")
    program = REFUSED_CALLS + "def probe():\n    return refused()\n"
    [outcome] = docker_sandbox.run(RunRequest(program, ["assert probe() == {}\nassert still_works()"]))
    assert outcome.status == "passed", outcome
    [outcome] = docker_sandbox.run(RunRequest("def f():\n    return 0\n",
                                              [REFUSED_CALLS + "assert refused() == {}\nassert still_works()"]))
    assert outcome.status == "passed", outcome


HOST_FILES = ("/proc/stat", "/proc/vmstat", "/proc/loadavg", "/proc/meminfo", "/proc/uptime", "/proc/diskstats",
              "/proc/interrupts", "/proc/softirqs", "/proc/pressure", "/proc/sys/fs", "/proc/sys/kernel/random",
              "/sys/devices", "/sys/block", "/sys/kernel",
              "/proc/kcore", "/proc/keys", "/proc/timer_list", "/sys/firmware")  # the last: Docker's own


@pytest.mark.docker
def test_the_host_s_counters_are_masked(docker_sandbox):
    """Files and folders of host-wide counters are unreadable in a container: masked
    (Docker's own masked paths too), and closed to a job with the rest of /proc and
    /sys (landlock.py); numpy, pytest and os.cpu_count() work without them."""
    program = (
        "import os\n"
        f"PATHS = {HOST_FILES!r}\n"
        "def readable():\n    found = []\n    for path in PATHS:\n        try:\n"
        "            if (os.listdir(path) if os.path.isdir(path) else open(path, 'rb').read(1)):\n"
        "                found.append(path)\n        except OSError:\n            pass\n    return found\n"
    )
    test = "import numpy, pytest, os\nassert readable() == []\nassert os.cpu_count() >= 1\nassert numpy.ones(3).sum() == 3"
    [outcome] = docker_sandbox.run(RunRequest(program, [test]))
    assert outcome.status == "passed", outcome


# The worker's own CPU time is work a program sets (each byte it prints is read by the
# worker: 2 MB cost it ~8 ms), and any process could read it: its CPU-time clock needs
# no permission, and /proc/1/sched shows it to the nanosecond. A sender printed until
# the worker's CPU time was its secret modulo 256 ms; the next job read it back, 20
# secrets of 20 (6 bits per job; measured on the previous worker, 2026-12-02).
WORKER_ACCOUNTING = (
    "import os, time\n"
    "def readings():\n    found = {}\n"
    "    try:\n        found['clock'] = time.clock_gettime(((~1) << 3) | 2)\n    except OSError:\n        pass\n"
    "    for name in ('stat', 'status', 'sched', 'schedstat', 'statm', 'io', 'oom_score', 'task/1/sched'):\n"
    "        try:\n            text = open(f'/proc/1/{name}').read()\n        except OSError:\n            continue\n"
    "        if text:\n            found[name] = len(text)\n"
    "    return sorted(found)\n"
)


@pytest.mark.docker
def test_the_worker_s_cpu_time_and_memory_are_unreadable(docker_sandbox):
    """Neither /proc/1's accounting files nor the worker's CPU-time clock answer a job;
    its own clocks do (time.process_time, a CPU clock of its own PID)."""
    test = ("assert readings() == []\nimport time\nassert time.process_time() > 0\n"
            "assert time.clock_gettime(((~0) << 3) | 2) > 0")
    [outcome] = docker_sandbox.run(RunRequest(WORKER_ACCOUNTING + "def f():\n    return 0\n", [test]))
    assert outcome.status == "passed", outcome


# What a program may do without retiring its worker (a fork, a file in /tmp, a left
# process or socket retire it: the next job then runs in a fresh container).
SWAYS = ("pass", "print('x' * (1 << 20))", "bytearray(50 << 20)", "sum(range(3_000_000))",
         "raise ValueError('no')")


@pytest.mark.docker
def test_a_job_s_descriptors_say_nothing_of_earlier_jobs(sandbox_opener):
    """The pipes and socket W gives a job were made when the worker started (stock.py):
    their inode numbers, which the job reads with fstat, step by one kit from job to
    job whatever the earlier program did. Made per job, they showed how many numbers
    W's CPU gave out since the last job (18-23 on, measured, over pairs of jobs in which
    the first program did nothing)."""
    from collections import Counter

    program = "import os\ndef numbers():\n    return [os.fstat(fd).st_ino for fd in (1, 3)]\n"
    sandbox = sandbox_opener("docker", workers=1)
    try:
        steps = []
        for sway in SWAYS * 2:
            [sent] = sandbox.run(RunRequest(program, [f"before = numbers()\ntry:\n    {sway}\nfinally:\n"
                                                      f"    assert before == 0"], timeout_s=20))
            [received] = sandbox.run(RunRequest(program, ["assert numbers() == 0"], timeout_s=20))
            before, after = _got(sent), _got(received)
            steps.append(tuple(a - b for a, b in zip(after, before)))
        assert sandbox.replacements == 0
        # One kit a job: a socket pair and three pipes, five numbers. Other processes of
        # the host that made pipes on the worker's CPU while it made its kits, or a batch
        # boundary crossed then, may shift a few steps; what the sender did shifts none.
        common, count = Counter(steps).most_common(1)[0]
        assert common == (5, 5) and count >= len(steps) - 3, steps
        # A kit's pipes wait at one page (the kernel counts pipe buffers per user, for
        # the host) and get sixteen when their job takes them.
        [sized] = sandbox.run(RunRequest("import fcntl\ndef size():\n    return fcntl.fcntl(1, fcntl.F_GETPIPE_SZ)\n",
                                         ["assert size() == 65536"]))
        assert sized.status == "passed", sized
    finally:
        sandbox.close()
