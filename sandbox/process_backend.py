"""Backend `process`: the same worker as host subprocesses. NOT isolated.

The code under test runs as the harness's own user on this machine: it gets a clean
environment, resource limits, its own scratch directory and the same two-process
verdict as in a container, but it can read and delete the user's files, read other
processes' environments through /proc (the harness's API keys), use the network and
signal the user's processes. Choose it only for code you trust, or where no Docker
engine can run.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import weakref
from pathlib import Path
from typing import Iterator

from sandbox._engine import copy_worker, recipe_digest
from sandbox._pool import WorkerPool, _Channel, stale_folders
from sandbox.base import RunRequest, SandboxConfig, SandboxUnavailable, TestOutcome

WARNING = (
    "WARNING: sandbox 'process' runs model-written code on this machine WITHOUT "
    "isolation, as your user: it can read and delete your files, read the harness's "
    "environment (API keys included, through /proc), reach the network, and signal or "
    "stop your processes; only resource limits apply. Files it leaves outside its scratch "
    "folder (in /var/tmp, /dev/shm, your home) survive into later tests, so a program can "
    "carry a hidden test's inputs into the feedback of a later internal test, and from "
    "there into a prompt. Verdicts are still computed apart from the program. Use the "
    "docker sandbox for untrusted code."
)


def remove_stale_homes(root: str | None = None) -> int:
    """Remove the workers' private folders (`harness-sandbox-<pid>-*`, named after the
    harness process that made them, this user's) whose harness process no longer runs (a
    program may have left them unreadable); how many went."""
    removed = 0
    for path in stale_folders("harness-sandbox", root):
        _remove_tree(path)
        removed += not os.path.lexists(path)
    return removed


def _remove_tree(path: str) -> None:
    """Remove a folder a program may have left unreadable, unwritable and deep (beyond
    any recursion limit): coreutils' `chmod -R` and `rm -rf` walk it without recursion
    and follow no symbolic link."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:  # shutil's walk recurses (Python 3.11)
        pass
    if not os.path.lexists(path):
        return
    for command in (["chmod", "-R", "u+rwx", "--", path], ["rm", "-rf", "--", path]):
        try:
            subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired):
            pass


class _ProcessChannel(_Channel):
    def __init__(self) -> None:
        super().__init__()
        # A private copy of the worker and a private scratch root: the tests may delete
        # or fill them without touching the checkout or the user's /tmp.
        self._home = tempfile.mkdtemp(prefix=f"harness-sandbox-{os.getpid()}-")
        worker = copy_worker(Path(self._home) / "worker")
        scratch = Path(self._home) / "scratch"
        scratch.mkdir(mode=0o700)
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-B", str(worker), "--scratch-root", str(scratch)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"},
            cwd=str(scratch),
            start_new_session=True,  # no terminal signals from the harness's session
            close_fds=True,
        )
        self._stderr = b""
        self._send_lock = threading.Lock()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self._start_reader(self._stdout_chunks(), f"sandbox-process-{self._process.pid}")

    def _stdout_chunks(self) -> Iterator[bytes]:
        stream = self._process.stdout
        while True:
            chunk = stream.read1(65536)
            if not chunk:
                return
            yield chunk

    def _drain_stderr(self) -> None:
        for line in self._process.stderr:
            self._stderr = (self._stderr + line)[-2000:]

    def _send(self, data: bytes) -> None:
        with self._send_lock:
            self._process.stdin.write(data)
            self._process.stdin.flush()

    def describe_death(self) -> str:
        code = self._process.poll()
        tail = self._stderr.decode(errors="replace").strip().splitlines()
        how = "exited" if code is None or code >= 0 else f"was killed by signal {-code}"
        return how + (f" ({tail[-1][:200]})" if tail else "")

    def close(self) -> None:
        # End of input first: the worker finishes the last job's clean-up (which kills
        # what that job left running) and exits. Killed at once, it would leave those
        # processes to the machine's init, alive.
        try:
            with self._send_lock:
                self._process.stdin.close()
            if not self.ended and not self.broken:  # one that failed a job (hung, say) is killed at once
                self._process.wait(timeout=2)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass
        if self._process.poll() is None:
            self._process.kill()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            try:
                stream.close()
            except OSError:
                pass
        _remove_tree(self._home)


class ProcessSandbox:
    """Sandbox backend `process`: `config.workers` host subprocesses, unsafe by design."""

    name = "process"

    def __init__(self, config: SandboxConfig) -> None:
        if config.language != "python":
            raise SandboxUnavailable(
                f"the process sandbox runs Python only; {config.language} programs need the docker sandbox "
                f"(`python -m harness sandbox build --language {config.language}`)")
        print(WARNING, file=sys.stderr, flush=True)
        remove_stale_homes()
        self.config = config
        self._pool = WorkerPool(
            _ProcessChannel,
            size=config.workers,
            limits=config.limits,
            jobs_per_worker=config.jobs_per_container,
        )
        self._finalizer = weakref.finalize(self, self._pool.close)

    @property
    def replacements(self) -> int:
        """Workers started to replace a dead, hung or worn-out one."""
        return self._pool.replacements

    def run(self, request: RunRequest) -> list[TestOutcome]:
        return self._pool.run(request)

    def describe(self) -> dict:
        """What ran the tests: the worker's code on this host (its files' digest; no image)."""
        return {"backend": self.name, "image": None, "image_digest": None, "recipe": recipe_digest()}

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> "ProcessSandbox":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
