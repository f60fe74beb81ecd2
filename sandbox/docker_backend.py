"""The default backend: a pool of long-lived locked-down containers, one worker each.

Each container runs the worker (sandbox/worker/, shipped as a folder) as PID 1; the host
talks to it over a unix socket: the host listens in a private folder it mounts read-only
into the container, the worker connects once as it starts, and the host then removes
the socket and its folder, before any job runs (`_SocketChannel`; the engine is not in
the way of each job and answer, as it was over the container's attached stdin and
stdout, which an image without the channel label still uses: `_ContainerChannel`).
Every test is a job that the worker runs in a fresh forked child, so a container serves
hundreds of tests at ~10 ms each.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import socket
import tempfile
import threading
import weakref
from typing import Iterator

from sandbox._engine import LABEL, connect, image_problem, recipe_digest, resolve_image
from sandbox._pool import STARTUP_TIMEOUT_S, WorkerPool, _Channel, pid_alive, stale_folders
from sandbox.base import PYTHON, RunRequest, SandboxConfig, SandboxUnavailable, TestOutcome
from sandbox.compiled import Compiler
from sandbox.worker.namespace import COVER_FLAGS, PRIVATE_FLAGS, UNSHARE_FLAGS

OWNER_LABEL = "reflexion-harness.sandbox.owner"  # "<host>:<pid>" of the harness process
TMPFS_MB = 64
TMPFS_INODES = 20000  # files and directories in /tmp (and in /dev/shm) at once
# The worker, its zygote, the blank children kept ready, the test's process and the
# /tmp tmpfs share the container's memory cgroup with the program; RLIMIT_AS
# (Limits.memory_mb) is what caps the program's process (and the test's) itself.
MEMORY_HEADROOM_MB = 160 + TMPFS_MB
COMPILE_TMPFS_MB = 512  # a compile container's /tmp: the compiler's intermediate files
CHANNEL_LABEL = "reflexion-harness.sandbox.channel"  # "socket": the worker takes --channel
CHANNEL_DIR = "/run/harness-channel"  # where the host's folder with the socket is mounted
CHANNEL_SOCKET = "worker.sock"


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


# Docker's own default list, kept: setting MaskedPaths replaces it (engine 20.10).
DOCKER_MASKED_PATHS = ("/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                       "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware")
# Counters of the whole host that a program can move and a later one read, in this
# container or another (forks since boot in /proc/stat, pages and faults in vmstat,
# idle time in uptime, free memory, disk reads, interrupts, open files and dentries in
# /proc/sys/fs, and the same again per NUMA node and block device under /sys). No
# program needs them; the worker reads only /proc/<pid>, /proc/sys/kernel/ns_last_pid,
# /proc/net and /proc/sysvipc. Files become empty, folders empty and read-only (a
# masked /proc/stat leaves os.cpu_count() to the CPU affinity: the same answer). A job
# cannot open anything under /proc or /sys anyway (worker/landlock.py): the masks are a
# second line.
HOST_COUNTER_PATHS = (
    "/proc/stat", "/proc/vmstat", "/proc/loadavg", "/proc/meminfo", "/proc/uptime", "/proc/diskstats",
    "/proc/interrupts", "/proc/softirqs", "/proc/zoneinfo", "/proc/buddyinfo", "/proc/pagetypeinfo",
    "/proc/slabinfo", "/proc/schedstat", "/proc/pressure", "/proc/key-users", "/proc/locks", "/proc/cgroups",
    "/proc/program_cpu", "/proc/sys/fs", "/proc/sys/kernel/random", "/proc/sys/kernel/pty",
    "/sys/block", "/sys/bus", "/sys/class", "/sys/dev", "/sys/devices", "/sys/fs", "/sys/kernel",
    "/sys/module", "/sys/power",
)
# The worker's own accounting (it is PID 1 when the masks are made): its CPU time and
# memory, which a program moves by the output it makes the worker read, and a later job
# would read back (its CPU-time clock is refused by worker/confine.py).
WORKER_ACCOUNTING_PATHS = tuple(
    f"/proc/1/{folder}{name}" for folder in ("", "task/1/")
    for name in ("stat", "status", "sched", "schedstat", "statm", "io", "oom_score")
)
MASKED_PATHS = DOCKER_MASKED_PATHS + HOST_COUNTER_PATHS + WORKER_ACCOUNTING_PATHS


# Docker's default seccomp profile as moby v20.10.24 ships it (Apache-2.0: the file is
# moby's profiles/seccomp/default.json at that tag), the engine Debian 12 packages.
SECCOMP_BASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "image", "seccomp-moby-v20.10.24.json")
# unshare(CLONE_NEWUSER | CLONE_NEWNS) with exactly these flags, and mount with exactly
# the zygote's two sets of flags: the zygote's namespace, in which /proc and /sys are
# covered for every job (worker/namespace.py). Nothing else gains: a mount still needs
# CAP_SYS_ADMIN where it is made (W holds no capability; the zygote holds them only in
# its own namespace, and drops them), and the jobs' filter (worker/confine.py) refuses
# unshare and mount to them.
ZYGOTE_UNSHARE_FLAGS = UNSHARE_FLAGS
ZYGOTE_MOUNT_FLAGS = (PRIVATE_FLAGS, COVER_FLAGS)


@functools.lru_cache(maxsize=1)
def seccomp_profile() -> str:
    """The seccomp profile of every container the harness starts, as the engine takes it
    (JSON text): Docker's default plus the zygote's one unshare. The image's user space
    is fixed (Debian 12), so one engine's profile serves it whatever the host's engine."""
    try:
        with open(SECCOMP_BASE, encoding="utf-8") as handle:
            profile = json.load(handle)
    except (OSError, ValueError) as exc:
        raise SandboxUnavailable(f"cannot read the sandbox's seccomp profile {SECCOMP_BASE}: {exc}") from exc
    allowed = [("unshare", 0, ZYGOTE_UNSHARE_FLAGS)] + [("mount", 3, flags) for flags in ZYGOTE_MOUNT_FLAGS]
    for name, index, value in allowed:
        profile["syscalls"].append({
            "names": [name], "action": "SCMP_ACT_ALLOW",
            "args": [{"index": index, "value": value, "valueTwo": 0, "op": "SCMP_CMP_EQ"}],
            "comment": "reflexion-harness: the zygote's user and mount namespace (worker/namespace.py)",
            "includes": {}, "excludes": {}})
    return json.dumps(profile, sort_keys=True, separators=(",", ":"))


def seccomp_digest() -> str:
    return hashlib.sha256(seccomp_profile().encode()).hexdigest()


def container_options(config: SandboxConfig) -> dict:
    """Keyword arguments for the low-level `APIClient.create_container` (all but the
    host config: `host_options`)."""
    return dict(
        image=resolve_image(config.image, config.language),
        detach=False,  # with stdin_open: attach stdin, and close it when we detach
        stdin_open=True,
        tty=False,
        environment={},  # nothing from the host's environment enters
        use_config_proxy=False,  # nor proxy variables from ~/.docker/config.json
        user="65534:65534",
        labels={LABEL: "worker", OWNER_LABEL: _owner()},
    )


def host_options(config: SandboxConfig, tmpfs_mb: int = TMPFS_MB) -> dict:
    """Keyword arguments for `APIClient.create_host_config`: the lockdown, in one place
    (with MASKED_PATHS, which it takes no argument for: `create_container` adds them).
    Another language's containers may execute the files of /tmp (a compiled program is
    one; Landlock still decides what a job may execute), and a compile container's /tmp
    is `tmpfs_mb` (the compiler's intermediate files)."""
    from docker.types import LogConfig

    limits = config.limits
    memory = f"{limits.memory_mb + MEMORY_HEADROOM_MB - TMPFS_MB + tmpfs_mb}m"
    exec_flag = ",exec" if config.language != PYTHON else ""
    return dict(
        network_mode="none",
        mem_limit=memory,
        memswap_limit=memory,  # no swap beyond the memory cap
        pids_limit=limits.pids,
        nano_cpus=int(limits.cpus * 1e9),
        read_only=True,
        # nr_inodes bounds how many files and directories a test can leave for the
        # worker to remove between jobs (the size bound alone allows ~10^5 empty ones).
        tmpfs={"/tmp": f"size={tmpfs_mb}m,nr_inodes={TMPFS_INODES},mode=1777{exec_flag}",
               "/dev/shm": f"size=16m,nr_inodes={TMPFS_INODES},mode=1777",
               # An empty folder over the cgroup filesystem: its counters (the memory
               # high-water mark, CPU time used, pids and OOM events) add up every job's
               # and no job can reset them, so a later program could read an earlier one's.
               "/sys/fs/cgroup": "ro,size=4k,mode=0555"},
        cap_drop=["ALL"],
        security_opt=["no-new-privileges", f"seccomp={seccomp_profile()}"],
        log_config=LogConfig(type=LogConfig.types.NONE),
        auto_remove=True,  # a container whose worker exits (host gone) removes itself
    )


# The warm-up's report per image id: once per harness process and image (its pages stay
# in the host's page cache, charged to the warm-up container's cgroup, after it exits).
_WARMED: dict[str, dict] = {}
_WARM_LOCK = threading.Lock()
WARM_TIMEOUT_S = 300


def readable_problem(warmed: dict, greeting: dict) -> str | None:
    """Whether a worker lets its jobs read exactly what the warm-up read into the page
    cache (both compute `landlock.readable_paths()` after the same imports; were they to
    differ, a job could load a cold page of a file the warm-up skipped: a bit a later
    job reads back). None when they agree, or when the warm-up reported no list (an
    image from before the warm-up, run by bench/grade_humaneval.py --against-image)."""
    expected = warmed.get("paths")
    if expected is None or greeting.get("readable") == expected:
        return None
    found = greeting.get("readable")
    extra = sorted(set(found or []) - set(expected))[:3] if isinstance(found, list) else found
    return (f"its jobs may read other files than the page-cache warm-up read "
            f"(not warmed: {extra!r}); the image's worker and warm-up disagree")


def warm_page_cache(client, config: SandboxConfig) -> dict:
    """Read every file a job may read into the host's page cache, from a one-shot
    container of the image (worker/warm.py), before the pool runs a job; its report
    (files, bytes, seconds, the kernel's Landlock ABI). Raises SandboxUnavailable when
    the warm-up fails or the kernel cannot confine jobs with Landlock: without it a job
    could read and evict any file of the image, and the page cache would carry ~1 kbit
    per job to later ones (README, threat model); or when the zygote cannot cover /proc
    and /sys for its jobs (worker/namespace.py)."""
    import docker

    image = resolve_image(config.image, config.language)
    image_id = client.images.get(image).id
    with _WARM_LOCK:
        if image_id in _WARMED:
            return _WARMED[image_id]
        options = host_options(config)
        # Its own cgroup with no memory cap: what it reads must stay, and no job's
        # memory pressure can reclaim it (a job's reclaim scans its container's pages).
        for key in ("mem_limit", "memswap_limit", "pids_limit", "nano_cpus", "log_config", "auto_remove"):
            options.pop(key, None)
        host_config = client.api.create_host_config(**options)
        created = client.api.create_container(
            host_config=host_config, image=image, user="65534:65534", environment={}, use_config_proxy=False,
            command=["python3", "-I", "-B", "/opt/sandbox/worker", "--warm"],
            labels={LABEL: "warm-up", OWNER_LABEL: _owner()})
        container = client.containers.prepare_model({"Id": created["Id"]})
        try:
            container.start()
            status = container.wait(timeout=WARM_TIMEOUT_S).get("StatusCode")
            output = container.logs(stdout=True, stderr=True).decode(errors="replace")
        except (docker.errors.DockerException, OSError) as exc:  # OSError: requests' timeout
            raise SandboxUnavailable(f"the page-cache warm-up container of {image} failed: {exc}") from exc
        finally:
            try:
                container.remove(force=True)
            except docker.errors.DockerException:
                pass
        report = next((json.loads(line) for line in output.splitlines() if line.startswith('{"warmed"')), None)
        if status != 0 or report is None:
            raise SandboxUnavailable(f"the page-cache warm-up in {image} exited {status}: {output.strip()[-300:]}")
        if report["landlock_problem"]:
            raise SandboxUnavailable(
                f"jobs cannot be confined to the files the warm-up reads ({report['landlock_problem']}; "
                f"Landlock ABI {report['landlock_abi']}): Linux 5.13+ with Landlock enabled is needed")
        if report.get("namespace_problem"):  # absent: an image from before the namespace
            raise SandboxUnavailable(
                f"jobs cannot be kept from /proc and /sys ({report['namespace_problem']}): the kernel must "
                f"let an unprivileged process make a user namespace (user.max_user_namespaces > 0; on "
                f"Ubuntu, kernel.apparmor_restrict_unprivileged_userns = 0)")
        _WARMED[image_id] = report
        return report


def create_container(client, config: SandboxConfig, channel_folder: str | None = None,
                     worker_args: tuple[str, ...] = (), tmpfs_mb: int = TMPFS_MB):
    """A created (not started) worker container. Through the low-level API: the
    high-level `containers.create` has no argument for the masked paths, and the host
    config the low-level one builds is a plain dict the engine reads them from.
    `channel_folder`: the host folder with the socket the worker is to connect to;
    `worker_args`: more of the worker's options (`--compile`, `--spare-pipes N`)."""
    options = host_options(config, tmpfs_mb)
    options_container = container_options(config)
    if channel_folder is not None:
        options["binds"] = {channel_folder: {"bind": CHANNEL_DIR, "mode": "ro"}}
        options_container["command"] = [*WORKER_COMMAND, "--channel", f"{CHANNEL_DIR}/{CHANNEL_SOCKET}",
                                        "--jobs", str(config.jobs_per_container), *worker_args]
        options_container["stdin_open"] = False  # the worker reads nothing there
    elif worker_args:
        options_container["command"] = [*WORKER_COMMAND, *worker_args]
    host_config = client.api.create_host_config(**options)
    host_config["MaskedPaths"] = list(MASKED_PATHS)
    created = client.api.create_container(host_config=host_config, **options_container)
    return client.containers.prepare_model({"Id": created["Id"]})


WORKER_COMMAND = ("python3", "-I", "-B", "/opt/sandbox/worker", "--scratch-root", "/tmp")  # as the image's CMD


def speaks_over_socket(client, image: str) -> bool:
    """Whether the host talks to the image's workers over a unix socket of its own
    (`_SocketChannel`): the image's worker takes --channel (its label says so), and the
    engine runs on this machine's kernel, reached over its local unix socket, so that a
    folder of the host mounted into a container is the same folder and a socket in it
    can be connected to from inside. Not so for an engine over TCP or SSH (its mounts
    name its own machine's folders) nor Docker Desktop (the engine runs in a VM): those
    keep the attached stdin and stdout."""
    if (client.images.get(image).labels or {}).get(CHANNEL_LABEL) != "socket":
        return False
    if client.api.base_url != "http+docker://localhost":  # docker-py's name for a unix socket
        return False
    return "docker desktop" not in str(client.info().get("OperatingSystem", "")).lower()


def remove_stale_channel_folders(root: str | None = None) -> int:
    """Remove the channel folders (`harness-channel-<pid>-*`) of harness processes that
    no longer run: one killed while a worker started had no time to remove its own (it
    holds only the socket no one listens on any more); how many went."""
    removed = 0
    for path in stale_folders("harness-channel", root):
        shutil.rmtree(path, ignore_errors=True)
        removed += not os.path.lexists(path)
    return removed


def _death(stderr: bytearray) -> str:
    """How a worker ended, with the last line it wrote on stderr."""
    tail = bytes(stderr).decode(errors="replace").strip().splitlines()
    return "exited" + (f" ({tail[-1][:200]})" if tail else "")


class _SocketChannel(_Channel):
    """A worker container the host talks to over a unix socket (module docstring).

    The folder is the host's own (0711: the worker's user can reach the socket by its
    name, and nobody can list the folder); the socket accepts one connection, the
    worker's, made as it starts, before it has forked anything, so before any job runs;
    then the host closes it and removes the socket and the folder, so nothing in the
    container (the worker's jobs included) can connect to the host afterwards. A job could
    not reach the folder anyway: Landlock allows it nothing under /run."""

    def __init__(self, client, config: SandboxConfig, worker_args: tuple[str, ...] = (), tmpfs_mb: int = TMPFS_MB) -> None:
        super().__init__()
        import docker

        self._folder = tempfile.mkdtemp(prefix=f"harness-channel-{os.getpid()}-")
        self._connection: socket.socket | None = None
        self._stderr = bytearray()
        try:
            os.chmod(self._folder, 0o711)
            path = os.path.join(self._folder, CHANNEL_SOCKET)
            self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._listener.bind(path)
            os.chmod(path, 0o666)  # the worker runs as 65534
            self._listener.listen(1)
            self._container = create_container(client, config, channel_folder=self._folder,
                                               worker_args=worker_args, tmpfs_mb=tmpfs_mb)
            # stderr only: a worker that dies as it starts says why there.
            self._socket = self._container.attach_socket(params={"stderr": 1, "stream": 1})
            getattr(self._socket, "_sock", self._socket).settimeout(None)
            self._container.start()
        except (OSError, docker.errors.DockerException):
            self.close()
            raise
        self._send_lock = threading.Lock()
        threading.Thread(target=self._read_stderr, name=f"sandbox-{self._container.short_id}-stderr",
                         daemon=True).start()
        self._start_reader(self._chunks(), f"sandbox-{self._container.short_id}")

    def _chunks(self) -> Iterator[bytes]:
        self._listener.settimeout(STARTUP_TIMEOUT_S)
        try:
            connection, _ = self._listener.accept()
        except OSError:  # no worker connected in time: the greeting's wait says so
            return
        finally:
            self._forget_folder()
        connection.settimeout(None)  # idle between jobs is normal; the pool keeps deadlines
        self._connection = connection
        while data := connection.recv(65536):
            yield data

    def _forget_folder(self) -> None:
        listener = getattr(self, "_listener", None)
        if listener is not None:
            listener.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    def _read_stderr(self) -> None:
        from docker.utils.socket import STDERR, frames_iter

        try:
            for stream, data in frames_iter(self._socket, tty=False):
                if stream == STDERR:
                    self._stderr = (self._stderr + data)[-2000:]
        except Exception:
            pass

    def _send(self, data: bytes) -> None:
        if self._connection is None:
            raise OSError("the worker has not connected")
        with self._send_lock:
            self._connection.sendall(data)

    def describe_death(self) -> str:
        return _death(self._stderr)

    def close(self) -> None:
        import docker

        container = getattr(self, "_container", None)
        if container is not None:
            try:
                container.remove(force=True)
            except docker.errors.DockerException:
                pass  # already gone (auto_remove) or being removed
        for closing in (self._connection, getattr(self, "_socket", None)):
            try:
                if closing is not None:
                    closing.close()
            except OSError:
                pass
        self._forget_folder()


class _ContainerChannel(_Channel):
    def __init__(self, client, config: SandboxConfig, worker_args: tuple[str, ...] = (), tmpfs_mb: int = TMPFS_MB) -> None:
        super().__init__()
        import docker

        self._container = create_container(client, config, worker_args=worker_args, tmpfs_mb=tmpfs_mb)
        self._stderr = bytearray()
        try:
            # Attach before start so the greeting is not missed.
            self._socket = self._container.attach_socket(
                params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
            )
            self._raw = getattr(self._socket, "_sock", self._socket)
            self._raw.settimeout(None)  # idle between jobs is normal; the pool keeps deadlines
            self._container.start()
        except docker.errors.DockerException:
            self.close()
            raise
        self._send_lock = threading.Lock()
        self._start_reader(self._stdout_chunks(), f"sandbox-{self._container.short_id}")

    def _stdout_chunks(self) -> Iterator[bytes]:
        from docker.utils.socket import STDERR, frames_iter

        for stream, data in frames_iter(self._socket, tty=False):
            if stream == STDERR:
                self._stderr = (self._stderr + data)[-2000:]
            else:
                yield data

    def _send(self, data: bytes) -> None:
        with self._send_lock:
            self._raw.sendall(data)

    def describe_death(self) -> str:
        return _death(self._stderr)

    def close(self) -> None:
        import docker

        try:
            self._container.remove(force=True)
        except docker.errors.DockerException:
            pass  # already gone (auto_remove) or being removed
        for closing in (getattr(self, "_socket", None), getattr(self, "_raw", None)):
            try:
                if closing is not None:
                    closing.close()
            except OSError:
                pass


def remove_stale_containers(client, kind: str = "worker") -> int:
    """Remove sandbox containers (of `kind`: "worker", "workspace") left by harness
    processes that no longer run here.

    Usually there are no workers: a container's worker exits when its host process goes
    (stdin closes) and the engine removes it. A workspace's container waits until its
    harness process removes it, or, when that process died first, this does.
    Containers of live processes, here or on other hosts sharing the engine, are left
    alone whatever their state (they may be starting, or paused on purpose).
    """
    import docker

    removed = 0
    host = socket.gethostname()
    # sparse: the list answer itself, no inspect per container. A non-sparse list
    # inspects each one and fails with NotFound when one removes itself meanwhile
    # (exactly what a killed run's containers do while the next run starts).
    for container in client.containers.list(all=True, sparse=True, filters={"label": f"{LABEL}={kind}"}):
        labels = container.attrs.get("Labels") or {}
        owner_host, _, pid = labels.get(OWNER_LABEL, ":").partition(":")
        if owner_host == host:
            stale = not (pid.isdigit() and pid_alive(int(pid)))
        else:
            stale = container.status in ("exited", "dead")
        if stale:
            try:
                container.remove(force=True)
                removed += 1
            except docker.errors.DockerException:
                pass
    return removed


class DockerSandbox:
    """Sandbox backend `docker`: runs tests in a pool of `config.workers` containers."""

    name = "docker"

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        self._client = connect()
        language = config.language
        problem = image_problem(self._client, config.image, language)
        if problem:
            self._client.close()
            raise SandboxUnavailable(problem)
        import docker

        client = self._client  # the pool must not keep `self` alive
        self._compiler: Compiler | None = None
        compile_pool = None
        try:
            remove_stale_containers(client)
            remove_stale_channel_folders()
            warmed = warm_page_cache(client, config)
            channel = _SocketChannel if speaks_over_socket(client, resolve_image(config.image, language)) else _ContainerChannel
            run_args: tuple[str, ...] = ()
            if language != PYTHON:
                from sandbox.toolchains import toolchain

                chain = toolchain(language)
                if chain.spare_pipes:
                    run_args = ("--spare-pipes", str(chain.spare_pipes))
            self._pool = WorkerPool(
                lambda: channel(client, config, run_args),
                size=config.workers,
                limits=config.limits,
                jobs_per_worker=config.jobs_per_container,
                check_greeting=lambda greeting: readable_problem(warmed, greeting),
            )
            if language != PYTHON and chain.build("", None).steps:
                compile_config = Compiler.container_config(config, chain)
                compile_pool = WorkerPool(
                    lambda: channel(client, compile_config, ("--compile",), COMPILE_TMPFS_MB),
                    size=config.workers,
                    limits=compile_config.limits,
                    jobs_per_worker=config.jobs_per_container,
                    check_greeting=lambda greeting: readable_problem(warmed, greeting),
                )
            if language != PYTHON:
                self._compiler = Compiler(chain, config, compile_pool)
        except SandboxUnavailable:
            client.close()
            raise
        except docker.errors.DockerException as exc:
            client.close()
            raise SandboxUnavailable(f"the Docker engine failed while starting the sandbox pool: {exc}") from exc
        # Containers also go when the interpreter exits without close() (finalize
        # runs at exit); a killed harness's containers see stdin close and exit.
        self._finalizer = weakref.finalize(self, DockerSandbox._shutdown, self._pool, client, compile_pool)
        image = resolve_image(config.image, language)
        self._identity = {"backend": self.name, "image": image, "language": language,
                          "image_digest": client.images.get(image).id, "recipe": recipe_digest(language),
                          "landlock_abi": warmed["landlock_abi"],
                          "seccomp_profile": seccomp_digest(),
                          "kernel_views": "covered" if "namespace_problem" in warmed else "open (image before 2026-12-03)",
                          # What the warm-up read, not how long it took: the identity must be the
                          # same in every session and on every node with this image.
                          "page_cache_warmed": {key: warmed[key] for key in ("files", "bytes")}}

    def describe(self) -> dict:
        """What ran the tests: the image (its name and Docker's content digest), the
        digest of the files it was built from, the Landlock ABI that confines each job to
        the files read into the page cache before the pool started, the digest of the
        seccomp profile, whether /proc and /sys are covered for jobs, and what that
        warm-up read (files, bytes) (what run.json records; the same in every session, so a
        resume or another Ray node compares equal)."""
        return dict(self._identity)

    @property
    def replacements(self) -> int:
        """Containers started to replace a dead, hung or worn-out one."""
        return self._pool.replacements

    def run(self, request: RunRequest) -> list[TestOutcome]:
        if request.language != self.config.language:
            raise ValueError(f"a {request.language} program reached the {self.config.language} sandbox "
                             "(open_sandbox with SandboxConfig.languages opens one per language)")
        if self._compiler is None:
            return self._pool.run(request)
        return self._compiler.run(request, self._pool)

    def compile(self, request: RunRequest):
        """How `request.program` compiles (sandbox.compiled.Compiler): once per program."""
        if self._compiler is None:
            raise ValueError(f"the {self.config.language} sandbox compiles nothing")
        return self._compiler.compile(request)

    def close(self) -> None:
        self._finalizer()

    @staticmethod
    def _shutdown(pool: WorkerPool, client, compile_pool: WorkerPool | None = None) -> None:
        pool.close()
        if compile_pool is not None:
            compile_pool.close()
        client.close()

    def __enter__(self) -> "DockerSandbox":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
