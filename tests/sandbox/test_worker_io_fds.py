"""An io job closes each descriptor it opened once, and only once: a second close of
its stdin pipe, after the number was given to the socket of the next blank child (the
zygote announces it during the job, and the kernel hands out the lowest free number),
closed that child's socket; a later job that took the child then failed inside the
worker (EBADF) and retired it. Run in a fresh interpreter, where the numbers are laid
out by hand so that the stdin pipe takes the lowest two."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import os, stat, sys
sys.path.insert(0, sys.argv[1])
from sandbox.worker.supervisor import _Worker

# Two numbers below everything the worker holds, free again when the job starts: the
# job's stdin pipe takes them, so the blank child announced during the job gets the
# number of the pipe's write end, closed early (the input is empty).
held = [os.open(os.devnull, os.O_RDONLY) for _ in range(2)]
worker = _Worker(sys.argv[2])
worker.zygote.known_blanks()
for fd in held:
    os.close(fd)
job = {"kind": "io", "program": "import time\ntime.sleep(0.2)\nprint(6)\n", "stdin": "", "expected": "6\n",
       "compare": "lcb", "timeout_s": 10, "memory_mb": 512, "max_output_bytes": 65536, "max_file_mb": 16,
       "pids": 64}
for number in range(1, 4):
    answer = worker.run(dict(job, id=number))
    assert answer["status"] == "passed", (number, answer)
    worker.after()
    assert not worker.dirty, (number, worker.dirty)
    worker.zygote.known_blanks()
    for pid, sock in worker.zygote.blanks:
        try:
            mode = os.fstat(sock.fileno()).st_mode
        except OSError as exc:
            raise AssertionError(f"after job {number}: the socket of blank child {pid} (fd {sock.fileno()}) "
                                 f"was closed under the worker: {exc}") from None
        assert stat.S_ISSOCK(mode), f"after job {number}: fd {sock.fileno()} of blank child {pid} is no socket"
print("ok")
"""


def test_an_io_job_leaves_the_next_blank_child_s_socket_open(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir(mode=0o700)
    done = subprocess.run([sys.executable, "-I", "-c", SCRIPT, str(ROOT), str(scratch)], capture_output=True,
                          text=True, timeout=60, cwd=scratch, start_new_session=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok"
