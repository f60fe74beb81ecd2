"""Workspace backend `docker` (the default): one locked-down container per workspace.

The container is made with the sandbox's own lockdown (docker_backend.host_options: no
network, memory, process and CPU caps, read-only root, cap-drop ALL, no-new-privileges,
the seccomp profile, log driver none, masked paths) plus tmpfs: the folder (owned by
the commands' user, 65534), /tmp, the start's git directory (root's: commands can read
it, never write it) and the diff's scratch folder. PID 1 is a shell of the commands' user that only waits,
and on SIGUSR1 (sent by the engine at a time limit: no process needs to start) kills
every other process of that user. Every exec the harness makes as that user (a command,
a file operation) first kills every process of the user but itself (`kill -KILL -1`;
the kernel spares PID 1), so nothing an earlier command left runs while the harness
reads or writes; a command's exec does so again when the command ends.
"""
from __future__ import annotations

import posixpath
import re
import select
import socket
import struct
import tarfile
import tempfile
import time
import weakref
from typing import BinaryIO, Sequence

from sandbox._engine import LABEL, connect, resolve_image
from sandbox._workspace_ops import ScriptedWorkspace, files_tar
from sandbox.base import Limits, SandboxConfig, SandboxUnavailable
from sandbox.docker_backend import MASKED_PATHS, OWNER_LABEL, TMPFS_INODES, _owner, host_options, remove_stale_containers
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

USER = "65534:65534"
BASE_DIR = "/run/workspace-base"  # the start's git directory, root's tmpfs
BASE_GIT = f"{BASE_DIR}/start.git"
SCRATCH_DIR = "/run/workspace-diff"  # the diff's index and objects (emptied by each diff)
# PID 1: waits; on SIGUSR1 kills every process of its user but itself.
PID1 = ("trap 'kill -KILL -1 2>/dev/null' USR1; trap '' TERM INT HUP; "
        "while :; do sleep 2147483647 & wait $!; done")
# Prefix of every exec as the commands' user: what an earlier command left ends first.
SWEEP = "kill -KILL -1 2>/dev/null; ulimit -f {blocks}; "
# A command: its output all on stdout; the wrapper's own stderr carries only its end
# (with the exit code), so a missing end means the command killed its wrapper, and PID 1
# is told to end what it left.
RUN = ('bash -c "$1" </dev/null 2>&1; code=$?; kill -KILL -1 2>/dev/null; '
       'printf "workspace-end %d\\n" "$code" >&2; exit $code')
_END = re.compile(rb"workspace-end (\d+)\n")
GRACE_S = 10.0  # after the time limit's sweep, for the exec's stream to close
SPOOL_BYTES = 64 * 1024 * 1024  # an image's content beyond this waits on disk, not in memory
_STDERR = 2


def _read_frames(raw: socket.socket, out: OutputCap, err: OutputCap | None, deadline: float) -> bool:
    """Demultiplex an exec's stream (8-byte headers: stream, size) into `out` (stdout,
    and stderr too when `err` is None) until it closes; False when `deadline` passed
    first. Holds at most one read's bytes beyond the caps."""
    pending = b""
    need = 0  # bytes left of the current frame's payload
    target = out
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([raw], [], [], left)[0]:
            return False
        data = raw.recv(65536)
        if not data:
            return True
        pending += data
        while pending:
            if need == 0:
                if len(pending) < 8:
                    break
                stream, need = pending[0], struct.unpack(">I", pending[4:8])[0]
                target = err if (stream == _STDERR and err is not None) else out
                pending = pending[8:]
                continue
            chunk, pending = pending[:need], pending[need:]
            need -= len(chunk)
            target.add(chunk)


def _send(raw: socket.socket, data: bytes | BinaryIO) -> None:
    """Write an exec's stdin whole, then close it (a file is sent a megabyte at a time)."""
    if isinstance(data, bytes):
        raw.sendall(data)
    else:
        while chunk := data.read(1024 * 1024):
            raw.sendall(chunk)
    raw.shutdown(socket.SHUT_WR)


class DockerWorkspace(ScriptedWorkspace):
    name = "docker"

    def __init__(self, config: SandboxConfig, spec: WorkspaceSpec) -> None:
        super().__init__()
        import docker

        self.spec = spec
        self._root = posixpath.normpath(spec.root)
        taken = ("/tmp", "/proc", "/sys", "/dev", "/run/workspace-base", SCRATCH_DIR)
        if not self._root.startswith("/") or self._root == "/" or any(
                self._root == folder or self._root.startswith(folder + "/") for folder in taken):
            raise WorkspaceError(f"the workspace's root must be an absolute folder outside {', '.join(taken)} "
                                 f"and not /; not {spec.root!r}")
        self._image = resolve_image(spec.image)
        self._client = connect()
        self._base = None
        self._scratch = SCRATCH_DIR
        self._container = None
        self._finalizer = weakref.finalize(self, DockerWorkspace._shutdown, self._client, [None])
        try:
            self._client.images.get(self._image)
        except docker.errors.ImageNotFound:
            self.close()
            raise SandboxUnavailable(f"the workspace's image {self._image} is missing; build or pull it "
                                     "(the sandbox's own: `python -m harness sandbox build`)") from None
        try:
            remove_stale_containers(self._client, kind="workspace")
            self._create()
            image_content = self._image_content()
            self._container.start()
            self._lay_out(image_content)
        except docker.errors.DockerException as exc:
            self.close()
            raise SandboxUnavailable(f"the Docker engine failed while starting a workspace: {exc}") from exc
        except BaseException:
            self.close()
            raise

    def _create(self) -> None:
        limits = self.spec.limits
        options = host_options(SandboxConfig(limits=Limits(memory_mb=limits.memory_mb, pids=limits.pids,
                                                           cpus=limits.cpus)), tmpfs_mb=limits.tmp_mb)
        # The folder's tmpfs comes on top (and the start and the diff's scratch: copies of it).
        memory = f"{int(options['mem_limit'][:-1]) + 2 * limits.disk_mb}m"
        options["mem_limit"] = options["memswap_limit"] = memory
        options["auto_remove"] = True
        tmpfs = options["tmpfs"]
        tmpfs["/tmp"] += ",exec"  # a command's own scripts and builds run from there
        tmpfs[self._root] = f"size={limits.disk_mb}m,nr_inodes={4 * TMPFS_INODES},mode=0755,uid=65534,gid=65534,exec"
        tmpfs[BASE_DIR] = f"size={limits.disk_mb}m,mode=0755"
        tmpfs[SCRATCH_DIR] = f"size={limits.disk_mb}m,mode=0700,uid=65534,gid=65534"
        host_config = self._client.api.create_host_config(**options)
        host_config["MaskedPaths"] = list(MASKED_PATHS)
        created = self._client.api.create_container(
            image=self._image, entrypoint=["bash", "-c", PID1, "workspace"], command=[], user=USER,
            working_dir=self._root, environment={}, use_config_proxy=False, host_config=host_config,
            labels={LABEL: "workspace", OWNER_LABEL: _owner()})
        self._container = self._client.containers.prepare_model({"Id": created["Id"]})
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, DockerWorkspace._shutdown, self._client, [self._container])

    def _image_content(self) -> tarfile.TarFile | None:
        """What the image holds at the folder (read before the tmpfs covers it), its
        members' paths made relative to the folder; spooled to disk when large."""
        import docker

        try:
            stream, _ = self._client.api.get_archive(self._container.id, self._root)
        except docker.errors.NotFound:
            return None
        spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
        for chunk in stream:
            spool.write(chunk)
        spool.seek(0)
        source = tarfile.open(fileobj=spool, mode="r:")
        members = []
        for member in source.getmembers():
            _, _, rest = member.name.partition("/")
            if not rest:
                continue
            member.name = rest
            if member.islnk():  # a hard link names its target by its path in the archive
                member.linkname = member.linkname.partition("/")[2]
            members.append(member)
        source.members = members
        return source if members else None

    def _lay_out(self, image_content: tarfile.TarFile | None) -> None:
        code, out = self._script(LAYOUT_SCRIPT, [self._root], stdin=files_tar(self.spec.files, image_content), cap=4096)
        if code != 0:
            raise WorkspaceError(f"laying out the workspace failed (exit {code}): {out.text()[-300:]}")
        if b"no git" in bytes(out.head):
            return  # diff and apply_patch say so when asked
        code, out, _ = self._exec(["bash", "-c", BASE_SCRIPT, "workspace", self._root, BASE_GIT, "bare"],
                                  user="0:0", env=GIT_ENV, cap=4096, timeout_s=300.0)
        if code != 0:
            raise WorkspaceError(f"making the workspace's start failed: {out.text()[-300:]}")
        self._base = BASE_GIT
        if self.spec.git_base:
            code, out = self._script(BASE_SCRIPT, [self._root, f"{self._root}/.git", "copy", BASE_GIT], cap=4096)
            if code != 0:
                raise WorkspaceError(f"making the folder's git failed: {out.text()[-300:]}")

    # --- execs --------------------------------------------------------------------

    def _exec(self, argv: list[str], *, user: str, env: dict[str, str], cap: int, timeout_s: float,
              stdin: bytes | BinaryIO | None = None,
              merge: bool = True) -> tuple[int | None, OutputCap, OutputCap | None]:
        """One exec: its stdout (with its stderr when `merge`, else apart) in caps, and its
        exit code; None when `timeout_s` passed (PID 1 then ends its processes)."""
        api = self._client.api
        created = self._exec_create(argv, user=user, env=env, stdin=stdin is not None)
        sock = api.exec_start(created, socket=True)
        raw = getattr(sock, "_sock", sock)
        out = OutputCap(cap)
        err = None if merge else OutputCap(8192)
        try:
            if stdin is not None:
                _send(raw, stdin)
            if not _read_frames(raw, out, err, time.monotonic() + timeout_s):
                api.kill(self._container.id, signal="SIGUSR1")
                if not _read_frames(raw, out, err, time.monotonic() + GRACE_S):
                    self.close()
                    raise WorkspaceError("a command's processes outlived its time limit; the workspace is closed")
                return None, out, err
        finally:
            for closing in (raw, sock):
                try:
                    closing.close()
                except OSError:
                    pass
        if err is not None and (end := _END.findall(bytes(err.head + err.tail))):
            return int(end[-1]), out, err
        for _ in range(50):  # the engine records the exit code just after the stream ends
            found = api.exec_inspect(created)
            if not found.get("Running"):
                break
            time.sleep(0.01)
        return found.get("ExitCode"), out, err

    def _exec_create(self, argv: list[str], *, user: str, env: dict[str, str], stdin: bool) -> str:
        """exec_create, retried a few times after a sweep: at the process cap (a fork
        bomb's leftovers) the engine cannot start the exec's first process."""
        import docker

        for attempt in range(6):
            try:
                created = self._client.api.exec_create(
                    self._container.id, argv, stdout=True, stderr=True, stdin=stdin, user=user,
                    workdir=self._root, environment=[f"{key}={value}" for key, value in env.items()])
                return created["Id"]
            except docker.errors.APIError:
                if attempt == 5:
                    raise
                self._client.api.kill(self._container.id, signal="SIGUSR1")
                time.sleep(0.1 * 2 ** attempt)
        raise AssertionError("unreachable")

    def _as_user(self, script: str) -> str:
        return SWEEP.format(blocks=self.spec.limits.max_file_mb * 1024) + script

    def _script(self, script: str, args: Sequence[str], *, stdin: bytes | BinaryIO | None = None,
                cap: int, timeout_s: float = 300.0) -> tuple[int | None, OutputCap]:
        import docker

        try:
            code, out, err = self._exec(["bash", "-c", self._as_user(script), "workspace", *args], user=USER,
                                        env=GIT_ENV, cap=cap, timeout_s=timeout_s, stdin=stdin, merge=False)
        except docker.errors.DockerException as exc:
            raise WorkspaceError(f"the Docker engine failed a workspace step (the container gone?): {exc}") from exc
        if code is None:
            raise WorkspaceError(f"a workspace step took over {timeout_s:.0f} s")
        if err is not None and code not in (0, 10, 11, 12, 13, 14):
            out.add(bytes(err.head + err.tail))  # a failed script's own words
        return code, out

    def run(self, command: str, *, timeout_s: float | None = None) -> CommandResult:
        import docker

        limits = self.spec.limits
        timeout = limits.timeout_s if timeout_s is None else timeout_s
        with self._lock:
            started = time.monotonic()
            try:
                code, out, err = self._exec(["bash", "-c", self._as_user(RUN), "workspace", command], user=USER,
                                            env=COMMAND_ENV, cap=limits.max_output_bytes, timeout_s=timeout,
                                            merge=False)
                if code is not None and not _END.search(bytes(err.head + err.tail)):
                    self._client.api.kill(self._container.id, signal="SIGUSR1")
            except docker.errors.DockerException as exc:
                raise WorkspaceError(f"the Docker engine failed to run a command in the workspace: {exc}") from exc
            return CommandResult(code, out.text(), code is None, time.monotonic() - started)

    @property
    def container_id(self) -> str:
        return self._container.id

    def close(self) -> None:
        self._finalizer()

    @staticmethod
    def _shutdown(client, containers: list) -> None:
        import docker

        for container in containers:
            if container is not None:
                try:
                    container.remove(force=True)
                except docker.errors.DockerException:
                    pass
        client.close()
