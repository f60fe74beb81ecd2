"""Workspace backend `process`: a temporary folder on this machine. NOT isolated.

Commands run as the harness's own user with no container: they can read the user's
files, reach the network and see the machine's processes. What holds: the folder's file
API refuses paths that leave it, a command's processes all end with it (a subreaper
launcher, sandbox/_workspace_launch.py), output is capped, files are capped in size,
and the start the diff is taken from is kept outside the folder. What it cannot contain
(memory, process count, network, reads outside through a command) it does not pretend
to: the conformance suite marks those cases docker-only. It has no image: a spec that
names another image than the sandbox's own is refused.
"""
from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path
from typing import Sequence

from sandbox._engine import resolve_image
from sandbox._workspace_ops import ScriptedWorkspace, files_tar
from sandbox.base import SandboxConfig, SandboxUnavailable
from sandbox.process_backend import _remove_tree
from sandbox.workspace import (
    BASE_SCRIPT,
    COMMAND_ENV,
    GIT_ENV,
    LAYOUT_SCRIPT,
    CommandResult,
    OutputCap,
    WorkspaceError,
    WorkspaceSpec,
)

LAUNCHER = Path(__file__).resolve().parent / "_workspace_launch.py"
WARNING = ("WARNING: workspace 'process' runs commands on this machine WITHOUT isolation, as your user: "
           "they can read and change your files, reach the network and signal your processes. "
           "Use the docker sandbox for untrusted code.")
GRACE_S = 10.0  # after SIGTERM, for the launcher to end what the command left


def _pump(process: subprocess.Popen, out: OutputCap, deadline: float | None) -> bool:
    """Read `process`'s stdout into `out` until it closes; SIGTERM the process at
    `deadline`, then allow GRACE_S. True when the deadline was reached."""
    reached = False
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        fd = process.stdout.fileno()
        while True:
            now = time.monotonic()
            if deadline is not None and now >= deadline and not reached:
                reached = True
                process.send_signal(signal.SIGTERM)
                deadline = now + GRACE_S
            elif reached and deadline is not None and now >= deadline:
                process.kill()
                break
            if not selector.select(None if deadline is None else max(0.0, deadline - now)):
                continue
            data = os.read(fd, 65536)
            if not data:
                break
            out.add(data)
    return reached


class ProcessWorkspace(ScriptedWorkspace):
    name = "process"

    def __init__(self, config: SandboxConfig, spec: WorkspaceSpec) -> None:
        super().__init__()
        if spec.image not in (config.image, resolve_image(config.image)):
            raise SandboxUnavailable(
                f"the process backend has no images: it cannot start from {spec.image} "
                f"(only the sandbox's own, {config.image}); use the docker backend")
        print(WARNING, file=sys.stderr, flush=True)
        self.spec = spec
        self._home = tempfile.mkdtemp(prefix=f"harness-workspace-{os.getpid()}-")
        self._finalizer = weakref.finalize(self, _remove_tree, self._home)
        self._root = os.path.join(os.path.realpath(self._home), "folder")
        self._tmp = os.path.join(self._home, "tmp")
        self._scratch = os.path.join(self._home, "diff")
        for folder in (self._root, self._tmp, self._scratch):
            os.mkdir(folder, 0o755 if folder == self._root else 0o700)
        self._base = None
        code, out = self._script(LAYOUT_SCRIPT, [self._root], stdin=files_tar(spec.files).read(), cap=4096)
        if code != 0:
            self.close()
            raise WorkspaceError(f"laying out the workspace failed: {out.text()[-300:]}")
        if shutil.which("git") is not None:
            base = os.path.join(self._home, "base.git")
            steps = [[base, "bare"]] + ([[os.path.join(self._root, ".git"), "copy", base]] if spec.git_base else [])
            for step in steps:
                code, out = self._script(BASE_SCRIPT, [self._root, *step], cap=4096)
                if code != 0:
                    self.close()
                    raise WorkspaceError(f"making the workspace's git base failed: {out.text()[-300:]}")
            self._base = base

    def _env(self, extra: dict[str, str]) -> dict[str, str]:
        return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": self._tmp, **extra}

    def _script(self, script: str, args: Sequence[str], *, stdin: bytes | None = None,
                cap: int, timeout_s: float = 300.0) -> tuple[int | None, OutputCap]:
        # Trusted scripts: no launcher, stderr apart (a read's content is stdout alone).
        try:
            done = subprocess.run(["bash", "-c", script, "workspace", *args], input=stdin or b"",
                                  capture_output=True, timeout=timeout_s, cwd=self._root,
                                  env=self._env({**GIT_ENV, "TMPDIR": self._tmp}))
        except subprocess.TimeoutExpired:
            raise WorkspaceError(f"a workspace step took over {timeout_s:.0f} s") from None
        out = OutputCap(cap)
        out.add(done.stdout)
        if done.returncode not in (0, 10, 11, 12, 13, 14):
            out.add(done.stderr)
        return done.returncode, out

    def run(self, command: str, *, timeout_s: float | None = None) -> CommandResult:
        limits = self.spec.limits
        timeout = limits.timeout_s if timeout_s is None else timeout_s
        with self._lock:
            started = time.monotonic()
            process = subprocess.Popen(
                [sys.executable, "-I", "-B", str(LAUNCHER), command, str(limits.max_file_mb * 1024 * 1024)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=self._root,
                env=self._env({**COMMAND_ENV, "HOME": self._tmp, "PYTHONPYCACHEPREFIX": os.path.join(self._tmp, ".pycache")}),
                start_new_session=True)
            out = OutputCap(limits.max_output_bytes)
            try:
                timed_out = _pump(process, out, started + timeout)
                status = process.stderr.read(4096).decode(errors="replace").strip().splitlines()
                process.wait()
            finally:
                process.stdout.close()
                process.stderr.close()
            duration = time.monotonic() - started
        verdict = status[-1] if status else ""
        if verdict.startswith("exit "):
            return CommandResult(int(verdict.split()[1]), out.text(), False, duration)
        # No verdict and no time limit: the command killed its launcher (it can: same user).
        return CommandResult(None, out.text(), timed_out or verdict == "timeout", duration)

    def close(self) -> None:
        self._finalizer()
