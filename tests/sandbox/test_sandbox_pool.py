"""The pool around the workers: concurrency, recycling, replacement, clean-up."""
from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

from sandbox import RunRequest, SandboxConfig, SandboxUnavailable
from sandbox.docker_backend import SECCOMP_BASE
from tests.helpers import run_in_threads, wait_until

ADD = "def add(a, b):\n    return a + b\n"
# Prints something that names the worker: the container's hostname is its id; a
# process worker is the program's grandparent (the worker forks a zygote, which forks
# the program's process), the leader of the zygote's process group (no /proc needed).
WHO = (
    "import os, socket\n"
    "zygote = os.getppid()\n"
    "worker = os.getpgid(zygote)\n"
    "print(socket.gethostname() if worker == 1 else worker)"
)


def worker_identity(sandbox) -> str:
    [outcome] = sandbox.run(RunRequest(WHO, ["pass"]))
    assert outcome.status == "passed", outcome
    return outcome.output.strip()


def test_concurrent_calls_from_many_threads_queue_and_stay_correct(make_sandbox):
    sandbox = make_sandbox(workers=2)
    results: dict[int, list] = {}

    def call(index: int) -> None:
        program = f"def f():\n    return {index}\n"
        tests = [f"assert f() == {index}", f"assert f() == {index + 1}", "import time; time.sleep(0.05)"]
        results[index] = sandbox.run(RunRequest(program, tests))

    errors = run_in_threads(call, [(index,) for index in range(8)], timeout_s=60)
    assert not errors
    assert sorted(results) == list(range(8))
    for index, outcomes in results.items():
        assert [o.status for o in outcomes] == ["passed", "failed", "passed"]
        assert outcomes[1].detail == f"assert f() == {index + 1}  # got {index}"
    assert sandbox.replacements == 0


# Each test prints when it ran, read from the host kernel's clock (shared by containers).
SPAN = "import time\nstart = time.time()\ntime.sleep(1.5)\nprint(start, time.time())"


def test_two_workers_run_in_parallel(make_sandbox):
    sandbox = make_sandbox(workers=2)
    barrier = threading.Barrier(2)
    spans: list[tuple[float, float]] = []

    def call() -> None:
        barrier.wait()
        [outcome] = sandbox.run(RunRequest("", [SPAN]))
        assert outcome.status == "passed", outcome
        start, end = map(float, outcome.output.split())
        spans.append((start, end))

    threads = [threading.Thread(target=call) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(spans) == 2
    # The two sleeps overlapped: the later one began before the earlier one ended.
    (_, first_end), (second_start, _) = sorted(spans)
    assert second_start < first_end, spans


def test_worker_is_recycled_after_its_share_of_jobs(make_sandbox):
    sandbox = make_sandbox(workers=1, jobs_per_container=3)
    identities = [worker_identity(sandbox) for _ in range(7)]
    # jobs 1-3 on the first worker, 4-6 on the second, 7 on the third
    assert len(set(identities[0:3])) == 1
    assert len(set(identities[3:6])) == 1
    assert len({identities[0], identities[3], identities[6]}) == 3
    assert sandbox.replacements == 2


def _kill_worker(backend: str, identity: str) -> None:
    """Kill the worker that `worker_identity` named, from the outside."""
    if backend == "docker":
        import docker

        client = docker.from_env()
        client.containers.get(identity).kill()
        client.close()
    else:
        os.kill(int(identity), signal.SIGKILL)


def test_a_dead_worker_is_replaced(backend, make_sandbox):
    sandbox = make_sandbox(workers=1)
    before = worker_identity(sandbox)
    _kill_worker(backend, before)
    wait_until(lambda: all(slot.channel is None or slot.channel.ended
                           for domain in sandbox._pool._domains.values() for slot in domain.slots),
               "the host to notice the killed worker's stream closing")
    outcomes = sandbox.run(RunRequest(ADD, ["assert add(1, 2) == 3"]))
    assert [o.status for o in outcomes] == ["passed"], outcomes
    assert sandbox.replacements == 1
    assert worker_identity(sandbox) != before


def test_a_worker_that_stops_answering_is_replaced(backend, make_sandbox, monkeypatch):
    """The host's guard timeout fires when the worker itself hangs; the job then runs
    again on a fresh worker (an earlier job may have damaged this one), and only a
    second failure is the job's outcome."""
    import sandbox._pool as pool

    monkeypatch.setattr(pool, "GUARD_MARGIN_S", 1.0)
    sandbox = make_sandbox(workers=1)
    # SIGSTOP freezes the worker: ignored by PID 1 of a container, so stop it from
    # the host side instead; for a process worker the test can do it itself.
    if backend == "docker":
        import docker

        client = docker.from_env()
        container = client.containers.get(worker_identity(sandbox))

        def paused() -> bool:  # runc's freezer gives up now and then on a loaded machine: again
            try:
                container.pause()
            except docker.errors.APIError as exc:
                if "unable to freeze" not in str(exc):
                    raise
                return False
            return True

        wait_until(paused, "docker pause to freeze the worker", interval_s=0.5)
        client.close()
        test = "pass"
    else:
        # the program's grandparent: the worker (its parent is the zygote), which leads
        # the zygote's process group
        test = (
            "import os, signal\n"
            "zygote = os.getppid()\n"
            "worker = os.getpgid(zygote)\n"
            "os.kill(worker, signal.SIGSTOP)"
        )
    [outcome] = sandbox.run(RunRequest("", [test], timeout_s=1.0))
    if backend == "docker":  # paused from outside: the fresh worker runs the job
        assert outcome.status == "passed", outcome
        assert sandbox.replacements == 1
    else:  # the job stops its worker each time: the second failure is its outcome
        assert outcome.status == "timeout", outcome
        assert "did not answer in time; it was replaced" in outcome.detail
        assert sandbox.replacements == 1  # the rerun's worker; the next job replaces it in turn
        [healthy] = sandbox.run(RunRequest("", ["pass"]))
        assert healthy.status == "passed" and sandbox.replacements == 2
    assert worker_identity(sandbox)


def test_closed_sandbox_refuses_work(make_sandbox):
    sandbox = make_sandbox(workers=1)
    sandbox.close()
    with pytest.raises(RuntimeError, match="closed"):
        sandbox.run(RunRequest(ADD, ["assert True"]))


@pytest.mark.docker
def test_docker_containers_are_locked_down_and_removed_on_close(sandbox_opener):
    import docker

    sandbox = sandbox_opener("docker", workers=1)
    client = docker.from_env()
    try:
        container = client.containers.get(worker_identity(sandbox))
        host = container.attrs["HostConfig"]
        assert host["NetworkMode"] == "none"
        assert host["ReadonlyRootfs"] is True
        assert host["CapDrop"] == ["ALL"]
        assert host["SecurityOpt"][0] == "no-new-privileges"
        # Docker's default profile plus one call: the zygote's unshare, with exactly its flags.
        assert host["SecurityOpt"][1].startswith("seccomp=")
        profile = json.loads(host["SecurityOpt"][1][len("seccomp="):])
        base = json.loads(Path(SECCOMP_BASE).read_text())
        added = profile["syscalls"][len(base["syscalls"]):]
        assert profile["syscalls"][:len(base["syscalls"])] == base["syscalls"] and len(host["SecurityOpt"]) == 2
        # unshare(CLONE_NEWUSER | CLONE_NEWNS) and the zygote's two mounts, with exactly their flags.
        assert [(rule["names"], rule["args"]) for rule in added] == [
            (["unshare"], [{"index": 0, "value": 0x10020000, "valueTwo": 0, "op": "SCMP_CMP_EQ"}]),
            (["mount"], [{"index": 3, "value": 0x44000, "valueTwo": 0, "op": "SCMP_CMP_EQ"}]),
            (["mount"], [{"index": 3, "value": 0xF, "valueTwo": 0, "op": "SCMP_CMP_EQ"}])]
        assert host["Memory"] == host["MemorySwap"] > 0
        assert host["PidsLimit"] == SandboxConfig().limits.pids
        assert host["NanoCpus"] == int(SandboxConfig().limits.cpus * 1e9)
        assert host["LogConfig"]["Type"] == "none"
        assert "/tmp" in host["Tmpfs"]
        assert container.attrs["Config"]["User"] == "65534:65534"
        assert all(not var.startswith(("HARNESS", "ANTHROPIC", "OPENAI")) for var in container.attrs["Config"]["Env"] or [])
        [outcome] = sandbox.run(RunRequest("import os\n", ["assert os.getuid() == 65534 and os.getpid() != 1"]))
        assert outcome.status == "passed", outcome
    finally:
        sandbox.close()
    def gone() -> bool:
        try:
            client.containers.get(container.id)
        except docker.errors.NotFound:
            return True
        return False

    wait_until(gone, "the container to be removed after close()", interval_s=0.2)
    client.close()


@pytest.mark.docker
def test_stale_containers_of_dead_runs_are_removed(sandbox_opener):
    import docker

    from sandbox._engine import resolve_image
    from sandbox.docker_backend import OWNER_LABEL, remove_stale_containers

    probe = sandbox_opener("docker", workers=1)  # skips when there is no engine/image
    probe.close()
    client = docker.from_env()
    dead_pid = 2**22 + 17  # above pid_max's default: no such process
    stale = client.containers.create(
        resolve_image(SandboxConfig().image), command=["sleep", "600"],
        labels={"reflexion-harness.sandbox": "worker", OWNER_LABEL: f"{socket.gethostname()}:{dead_pid}"},
        network_mode="none",
    )
    try:
        # Not started: a dead owner makes it stale whatever its state, and other runs on a
        # shared engine sweep the same containers, so the sweep follows the create at once.
        assert remove_stale_containers(client) >= 1
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(stale.id)
    finally:
        try:
            stale.remove(force=True)
        except docker.errors.DockerException:
            pass
        client.close()


def test_docker_without_engine_says_how_to_get_one(monkeypatch, tmp_path):
    from sandbox.docker_backend import DockerSandbox

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    with pytest.raises(SandboxUnavailable) as caught:
        DockerSandbox(SandboxConfig())
    message = str(caught.value)
    assert "no Docker engine answers" in message
    assert "apt-get install -y docker.io" in message
    assert "--sandbox process" in message


@pytest.mark.docker
def test_docker_with_missing_image_says_to_build_it(sandbox_opener):
    from sandbox.docker_backend import DockerSandbox

    sandbox_opener("docker", workers=1).close()  # skips when there is no engine/image
    with pytest.raises(SandboxUnavailable, match=r"missing; run `python -m harness sandbox build`"):
        DockerSandbox(SandboxConfig(image="reflexion-harness-sandbox:no-such-tag"))


def test_process_backend_warns_every_time(sandbox_opener, capsys):
    for _ in range(2):
        sandbox_opener("process", workers=1).close()
    assert capsys.readouterr().err.count("WITHOUT isolation") == 2


def test_process_backend_removes_the_folders_of_a_run_that_was_killed(sandbox_opener, tmp_path, monkeypatch):
    """A run killed with SIGKILL leaves its workers' private folders; the next one that
    opens the process backend removes them (deep and unreadable ones too), and leaves
    those of live processes and any other name alone."""
    import subprocess
    import sys
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()  # a PID that no longer runs
    stale = tmp_path / f"harness-sandbox-{ended.pid}-abc123"
    (stale / "scratch").mkdir(parents=True)
    _deep_folder(stale / "scratch", 1100)  # deeper than Python's recursion limit
    (stale / "scratch").chmod(0o000)
    readable = tmp_path / f"harness-sandbox-{ended.pid}-def456"  # deep, and readable
    readable.mkdir()
    _deep_folder(readable, 1100)
    (stale / "link").symlink_to(tmp_path / "outside")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "kept").write_text("not followed")
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    live = tmp_path / f"harness-sandbox-{running.pid}-live"
    live.mkdir()
    other = tmp_path / "harness-sandbox-notapid"
    other.mkdir()
    sandbox = sandbox_opener("process", workers=1)
    try:
        [outcome] = sandbox.run(RunRequest("def f():\n    return 1\n", ["assert f() == 1"]))
        assert outcome.status == "passed", outcome
        assert not stale.exists() and not readable.exists()
        assert live.exists() and other.exists() and (tmp_path / "outside" / "kept").exists()
        mine = [p for p in tmp_path.iterdir() if p.name.startswith(f"harness-sandbox-{os.getpid()}-")]
        assert len(mine) == 1 and (mine[0] / "worker").is_dir(), mine  # this pool's worker's own
    finally:
        sandbox.close()
        running.kill()
        running.wait()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(f"harness-sandbox-{os.getpid()}-")]


def _deep_folder(top, depth: int) -> None:
    """`depth` nested folders under `top`, made through descriptors (the whole path is
    longer than a path may be), with a file at the bottom."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(os.open("f", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
    finally:
        os.close(fd)


CHANNEL_PROBE = (
    "import os, socket\n"
    "def probe():\n"
    "    seen = []\n"
    "    for folder in ('/run/harness-channel', '/run'):\n"
    "        try:\n"
    "            seen.append(sorted(os.listdir(folder)))\n"
    "        except OSError as exc:\n"
    "            seen.append(exc.errno)\n"
    "    try:\n"  # no job makes a socket (confine.py); the socket is gone anyway
    "        socket.socket(socket.AF_UNIX).connect('/run/harness-channel/worker.sock')\n"
    "        seen.append('connected')\n"
    "    except OSError as exc:\n"
    "        seen.append(exc.errno)\n"
    "    seen.append(os.path.exists('/run/harness-channel/worker.sock'))\n"
    "    return seen\n"
)


@pytest.mark.docker
def test_the_host_s_channel_to_a_worker_is_closed_to_its_jobs(sandbox_opener, monkeypatch):
    """The worker takes its jobs over a unix socket the host listens on in a private
    folder mounted into the container; the host takes the worker's one connection and
    removes the socket and the folder before any job runs. A job can neither list the
    folder (Landlock: nothing under /run) nor make a socket (confine.py), the socket is
    gone, and nothing of the channel is left on the host."""
    import errno
    import tempfile

    made = []
    real_mkdtemp = tempfile.mkdtemp

    def mkdtemp(*args, **kwargs):
        made.append(real_mkdtemp(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    sandbox = sandbox_opener("docker", workers=1)
    [outcome] = sandbox.run(RunRequest(CHANNEL_PROBE, ["assert probe() == 0"], blind=False))
    assert outcome.detail.endswith(f"# got [{errno.EACCES}, {errno.EACCES}, {errno.EPERM}, False]"), outcome
    channels = [path for path in made if os.path.basename(path).startswith("harness-channel-")]
    assert channels, made  # the worker was spoken to over a channel
    assert not [path for path in channels if os.path.exists(path)]
    sandbox.close()


def test_the_socket_channel_is_used_only_where_a_host_folder_reaches_the_container() -> None:
    """An image whose worker takes --channel, on an engine of this machine reached over its
    unix socket: the socket channel. An older image, an engine over TCP, or Docker
    Desktop (a VM): the attached stdin and stdout."""
    from types import SimpleNamespace

    from sandbox.docker_backend import CHANNEL_LABEL, speaks_over_socket

    def client(label: str | None, base_url: str, system: str):
        image = SimpleNamespace(labels={CHANNEL_LABEL: label} if label else {})
        return SimpleNamespace(images=SimpleNamespace(get=lambda name: image),
                               api=SimpleNamespace(base_url=base_url),
                               info=lambda: {"OperatingSystem": system})

    local = "http+docker://localhost"
    assert speaks_over_socket(client("socket", local, "Debian GNU/Linux 12 (bookworm)"), "i")
    assert not speaks_over_socket(client(None, local, "Debian GNU/Linux 12 (bookworm)"), "i")
    assert not speaks_over_socket(client("socket", "http://10.0.0.2:2375", "Ubuntu 24.04"), "i")
    assert not speaks_over_socket(client("socket", local, "Docker Desktop"), "i")


def test_channel_folders_of_killed_runs_are_removed(request) -> None:
    """A harness killed while a worker started leaves its channel folder (and the socket
    no one listens on): the next Docker sandbox removes those of dead processes only."""
    import shutil
    import subprocess
    import sys
    import tempfile

    from sandbox.docker_backend import remove_stale_channel_folders

    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                           text=True, check=True)
    # A short folder of its own in /tmp: a socket's path has at most 107 bytes, and
    # tmp_path is longer under pytest-xdist (a folder per worker).
    tmp_path = Path(tempfile.mkdtemp(prefix="hc-"))
    request.addfinalizer(lambda: shutil.rmtree(tmp_path, ignore_errors=True))
    dead = tmp_path / f"harness-channel-{int(ended.stdout)}-abc123"
    mine = tmp_path / f"harness-channel-{os.getpid()}-def456"
    other = tmp_path / "harness-channel-notapid"
    for folder in (dead, mine, other):
        folder.mkdir()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(dead / "worker.sock"))
    listener.close()  # the socket file stays, as a killed run's does
    assert remove_stale_channel_folders(str(tmp_path)) == 1
    assert not dead.exists() and mine.exists() and other.exists()


@pytest.mark.docker
def test_a_worker_serves_its_jobs_past_select_s_range(sandbox_opener):
    """Each job's descriptors come from the stock made when the worker started
    (worker/stock.py), which waits above descriptor 1023 and comes down when taken: W
    watches with select(). Made in place, the kits of jobs past ~125 had numbers select()
    refuses, and the worker failed and was replaced every ~125 jobs."""
    sandbox = sandbox_opener("docker", workers=1)
    outcomes = sandbox.run(RunRequest("def f(x):\n    return x\n", [f"assert f({i}) == {i}" for i in range(300)]))
    assert [o.status for o in outcomes] == ["passed"] * 300
    assert sandbox.replacements == 0
