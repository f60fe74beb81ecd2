"""io jobs (a whole program, stdin in, stdout compared by the worker) on every backend:
the basics, and hostile programs that try to pass without printing the right answer."""
from __future__ import annotations

import os

import pytest

from sandbox import IoCase, RunRequest, Sandbox, TestOutcome
from tests.helpers import OWN_MEMORY
from tests.sandbox.test_sandbox_conformance import assert_healthy

SUM = "n = int(input())\nprint(sum(map(int, input().split())))\n"
CASE = IoCase("3\n1 2 3\n", "6\n")


# Wide by default: a program meant to pass or fail must not time out on a slow machine;
# a test that means to see a timeout names a short limit.
def run_io(sandbox: Sandbox, program: str, cases=(CASE,), timeout_s: float = 30.0, compare: str = "lcb") -> list[TestOutcome]:
    return sandbox.run(RunRequest(program, list(cases), timeout_s=timeout_s, compare=compare))


def test_statuses_details_and_output(sandbox):
    outcomes = run_io(sandbox, SUM, [CASE, IoCase("1\n5\n", "6\n"), IoCase("2\n1 x\n", "3\n"), IoCase("1\n1\n", "1\n")])
    assert [o.status for o in outcomes] == ["passed", "failed", "error", "passed"]
    assert outcomes[0].test == "stdin: 3\n1 2 3" and outcomes[0].output == "6\n"
    assert outcomes[1].detail == "wrong answer: token 1 differs" and outcomes[1].output == "5\n"
    error = outcomes[2].detail
    assert error.startswith("the program exited with status 1:\n") and error.endswith(
        "ValueError: invalid literal for int() with base 10: 'x'")
    assert "stdio.py" not in error  # the program's traceback, not the worker's frames
    assert all(o.duration_s > 0 for o in outcomes)


def test_time_limit_per_test(sandbox):
    slow, fast = run_io(sandbox, "import sys, time\nif sys.stdin.read().startswith('slow'):\n    time.sleep(60)\nprint(6)\n",
                        [IoCase("slow\n", "6\n"), IoCase("fast\n", "6\n")], timeout_s=3.0)
    assert slow.status == "timeout" and slow.detail == "timed out after 3 s (wall clock)"
    assert fast.status == "passed"


def test_exit_status_and_sys_exit(sandbox):
    zero, three, text = [run_io(sandbox, p)[0] for p in (
        "print(6)\nraise SystemExit(0)\n", "print(6)\nraise SystemExit(3)\n", "print(6)\nimport sys\nsys.exit('bye')\n")]
    assert zero.status == "passed"
    assert three.status == "error" and three.detail == "the program exited with status 3"
    assert text.status == "error" and text.detail == "the program exited with status 1:\nbye"


def test_the_source_s_comparison_rule_applies(sandbox):
    program = "print('0.3333333')\n"
    case = IoCase("", "0.333333333\n")
    assert run_io(sandbox, program, [case], compare="lcb")[0].status == "failed"
    assert run_io(sandbox, program, [case], compare="codecontests")[0].status == "passed"


def test_line_endings_and_trailing_whitespace_pass(sandbox):
    [outcome] = run_io(sandbox, "import sys\nsys.stdout.write('6   \\r\\n\\n')\n")
    assert outcome.status == "passed"


def test_nothing_is_carried_over_between_tests(sandbox):
    program = (
        "import os\n"
        "seen = os.path.exists('left.txt')\n"
        "open('left.txt', 'w').write('x')\n"
        "print('dirty' if seen else 'clean')\n"
    )
    outcomes = run_io(sandbox, program, [IoCase("", "clean\n")] * 3)
    assert [o.status for o in outcomes] == ["passed"] * 3


# --- hostile io programs ----------------------------------------------------------

SECRET = "expected-" + os.urandom(6).hex()

# Looks everywhere a program could find the expected output: its descriptors, its
# environment, every process's command line, environment and memory it can open,
# the files it can reach. First it prints how many processes it will look at and
# whether /proc was closed to it, then each find at once (flushed: were the time limit
# to stop the hunt, what it found is in its output all the same), and last `nothing`
# if it found nothing. In a container
# (no /proc for a job: worker/landlock.py) it finds the processes by their PIDs, which
# are few and small there, and reads their memory at the addresses of its own mappings
# (every process of the container is a fork of the worker: the same layout).
READ_EXPECTED = OWN_MEMORY + r"""
import os, re, stat, time
found = []
def look(data):
    if isinstance(data, bytes):
        data = data.decode('latin-1')
    m = re.search(r'expected-[0-9a-f]{12}', data)
    if m:
        found.append(m.group(0))
        print('found', m.group(0), flush=True)
for fd in range(3, 256):
    try:
        look(os.read(fd, 1 << 20))
    except OSError:
        pass
look(repr(dict(os.environ)))
def parent_of(pid):
    try:
        return int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])
    except OSError:  # gone while we looked
        return -1
def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass
    return True
try:
    everyone, refused = [int(p) for p in os.listdir('/proc') if p.isdigit()], False
except PermissionError:
    everyone, refused = [pid for pid in range(1, os.getpid() + 1000) if alive(pid)], True
zygote = os.getppid()
if not ALL_PROCESSES:  # the worker, the zygote and the zygote's children only
    everyone = [parent_of(zygote), zygote] + [p for p in everyone if parent_of(p) == zygote]
print(len(everyone), 'processes, /proc', 'refused' if refused else 'read', flush=True)
class IOVec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
_libc.process_vm_readv.restype = ctypes.c_ssize_t
def read_other(pid, start, end):
    buffer = ctypes.create_string_buffer(min(end - start, 1 << 20))
    local, remote = IOVec(ctypes.addressof(buffer), len(buffer)), IOVec(start, len(buffer))
    got = _libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    return buffer.raw[:got] if got > 0 else b''
mine = memory_ranges() if READ_MEMORY else []
for pid in everyone:
    for name in ('cmdline', 'environ'):
        try:
            look(open(f'/proc/{pid}/{name}', 'rb').read())
        except OSError:
            pass
    if not READ_MEMORY or pid == os.getpid():
        continue
    for start, end in mine:
        look(read_other(pid, start, end))
    try:
        maps = open(f'/proc/{pid}/maps').read().splitlines()
        mem = open(f'/proc/{pid}/mem', 'rb')
        for line in maps:
            start, end = (int(x, 16) for x in line.split()[0].split('-'))
            if 'rw' in line.split()[1] and end - start < (64 << 20):
                try:
                    mem.seek(start); look(mem.read(end - start))
                except (OSError, ValueError, OverflowError):
                    pass
    except OSError:
        pass
def files_until(deadline):  # the file hunt is bounded: a host's /tmp and ~ may hold anything
    for root in ('.', '/tmp', os.path.expanduser('~')):
        for folder, _, files in os.walk(root):
            for f in files:
                if time.monotonic() > deadline:
                    return
                yield os.path.join(folder, f)
for path in files_until(time.monotonic() + 3.0):
    try:  # regular files only: opening a FIFO someone left in /tmp would wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        continue
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            look(os.read(fd, 1 << 20))
    except OSError:
        pass
    finally:
        os.close(fd)
if not found:
    print('nothing')
"""


def test_hostile_reading_the_expected_output(sandbox, backend):
    # On the process backend the program can read the host's own processes (this test
    # holds the secret), and as root the worker's memory too (non-dumpable stops only
    # other users): there it looks at the worker's processes' command lines, environment
    # and descriptors; in a container it reads every process's memory it can open.
    contained = backend == "docker"
    program = f"ALL_PROCESSES = READ_MEMORY = {contained}\n" + READ_EXPECTED
    # The hunt's time depends on the machine and on what the host holds: it may end with
    # `nothing` (failed) or be stopped at the limit (timeout). Both are safe; what must
    # hold is that the secret is nowhere in what it printed, and that it did look.
    [outcome] = run_io(sandbox, program, [IoCase("give me the answer\n", SECRET + "\n")], timeout_s=30.0)
    assert outcome.status in ("failed", "timeout"), outcome
    assert SECRET not in outcome.output and SECRET not in outcome.detail, outcome
    looked, *rest = outcome.output.splitlines()
    assert rest == ["nothing"] if outcome.status == "failed" else rest in ([], ["nothing"]), outcome
    processes = int(looked.split()[0])
    # The worker, the zygote, the program and the blank children kept ready, at least;
    # in a container found without /proc, which is closed to the job.
    assert processes >= 3 and looked.endswith("refused" if contained else "read"), looked
    assert_healthy(sandbox)


def test_hostile_flooding_output(sandbox):
    # Stopped at the cap, not at the time limit: a job that reaches its limit is a
    # timeout whatever it printed, so `failed` for the cap says the worker ended it there.
    # The limit is wide, so a slow machine still reaches the cap first.
    [outcome] = run_io(sandbox, "import sys\nwhile True:\n    sys.stdout.write('6\\n' * 10000)\n", timeout_s=60.0)
    assert outcome.status == "failed" and "output cap" in outcome.detail, outcome
    assert len(outcome.output) < 200_000
    assert_healthy(sandbox)


def test_hostile_never_reading_stdin(sandbox):
    big = IoCase("1 " * 2_000_000, "6\n")  # 4 MB: far more than a pipe holds
    right, wrong = run_io(sandbox, "print(6)\n", [big]), run_io(sandbox, "import time\ntime.sleep(5)\n", [big], timeout_s=1.0)
    assert right[0].status == "passed"  # the worker does not hang on a full pipe
    assert wrong[0].status == "timeout"
    assert_healthy(sandbox)


def test_hostile_closing_stdout_early(sandbox):
    closes = run_io(sandbox, "import os\nos.close(1)\nimport time\ntime.sleep(0.1)\n")[0]
    prints_then_closes = run_io(sandbox, "import os, sys\nsys.stdout.write('6\\n')\nos.close(1)\n")[0]
    assert closes.status in ("failed", "error") and closes.output == ""
    # Its buffered answer never reached the pipe, and flushing failed: not a pass.
    assert prints_then_closes.status in ("failed", "error")
    assert_healthy(sandbox)


def test_hostile_fork_left_behind(sandbox):
    # The program ends at once without an answer; its fork prints the answer later and
    # would leave a file for the next test. Neither counts: what the program printed by
    # the time its process ended is its output, and the fork dies with the job.
    program = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setpgid(0, 0)\n"  # not setsid: refused in a container (confine.py)
        "    time.sleep(0.3)\n"
        "    print(6, flush=True)\n"
        "    while True:\n"
        "        open('marker', 'w').close()\n"
        "        time.sleep(0.05)\n"
    )
    [outcome] = run_io(sandbox, program)
    assert outcome.status == "failed" and outcome.output == ""
    for _ in range(2):
        [later] = run_io(sandbox, "import os, time\ntime.sleep(0.5)\nprint('gone' if not os.path.exists('marker') else 'left')\n",
                         [IoCase("", "gone\n")])
        assert later.status == "passed", later
    assert_healthy(sandbox)


def test_hostile_right_answer_for_the_examples_only(sandbox):
    program = "import sys\ndata = sys.stdin.read()\nprint(6 if data == '3\\n1 2 3\\n' else 0)\n"
    example, hidden = run_io(sandbox, program, [CASE, IoCase("2\n10 20\n", "30\n")])
    assert example.status == "passed" and hidden.status == "failed"


def test_function_and_io_jobs_share_a_worker(sandbox):
    for _ in range(3):
        assert run_io(sandbox, SUM)[0].status == "passed"
        assert_healthy(sandbox)


def test_io_jobs_mixed_with_function_jobs_retire_no_worker(make_sandbox):
    # Each job is answered by the worker that took it: none fails inside the worker (the
    # pool's rerun on a fresh one would keep the verdicts right and hide the failure). An
    # io job once closed its stdin pipe twice, the second time the socket of the next
    # blank child that took the number (test_worker_io_fds.py lays the fds out by hand);
    # here three workers in turn, each with its own layout, run seven jobs each.
    sandbox = make_sandbox(workers=1, jobs_per_container=7)
    program = "import sys\nsys.stdin.read()\nprint(6)\n"
    function = RunRequest("def f(x):\n    return x + 1\n", ["assert f(1) == 2"])
    for stdin in ("x\n", "", "3\n1 2 3\n"):
        assert [o.status for o in sandbox.run(function)] == ["passed"]
        outcomes = run_io(sandbox, program, [IoCase(stdin, "6\n", label=f"case {i}") for i in range(6)])
        assert [o.status for o in outcomes] == ["passed"] * 6
    assert sandbox._pool.retired == []
    assert sandbox.replacements == 2  # worn out after seven jobs each, and nothing else
