"""The image recipe, `sandbox build` / `sandbox check`, and their messages."""
from __future__ import annotations

import pytest

import sandbox._engine as engine
from sandbox import SandboxConfig, image
from tests.helpers import cli as run_cli
from tests.helpers import skip_or_fail


def test_recipe_digest_follows_every_worker_file(tmp_path, monkeypatch):
    """Each file of the worker's folder is in the digest: changing any one of them
    (not only the supervisor) makes the image stale."""
    files = engine.worker_files()
    assert {path.name for path in files} >= {"__main__.py", "protocol.py", "program.py", "judge.py",
                                            "zygote.py", "supervisor.py"}
    before = engine.recipe_digest()
    for index, path in enumerate(files):
        changed = tmp_path / str(index) / "worker" / path.name
        changed.parent.mkdir(parents=True)
        changed.write_text(path.read_text() + "\n# changed\n")
        monkeypatch.setattr(engine, "worker_files", lambda: [*files[:index], changed, *files[index + 1:]])
        assert engine.recipe_digest() != before, path.name


def test_the_worker_ships_as_exactly_its_files(tmp_path):
    copied = engine.copy_worker(tmp_path / "worker")
    assert sorted(p.name for p in copied.iterdir()) == sorted(p.name for p in engine.worker_files())


def test_offline_base_tag():
    assert image.offline_base_tag("reflexion-harness-sandbox:latest").startswith("reflexion-harness-sandbox-base:bookworm-")
    assert image.offline_base_tag("registry:5000/sandbox").startswith("registry:5000/sandbox-base:bookworm-")


def test_dockerfile_carries_the_worker_as_an_unprivileged_pid_1():
    text = engine.DOCKERFILE_PATH.read_text()
    assert "ARG BASE=python:3.11-slim" in text
    assert "COPY worker/ /opt/sandbox/worker/" in text
    assert "USER 65534:65534" in text
    assert '"-I", "-B", "/opt/sandbox/worker"' in text and "ENTRYPOINT" not in text


def test_check_without_engine_says_what_to_do(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/absent.sock")
    assert run_cli("sandbox", "check") == 1
    out = capsys.readouterr().out
    assert out.startswith("not ready: no Docker engine answers")
    assert "apt-get install -y docker.io" in out and "--sandbox process" in out


def test_build_without_engine_fails_with_advice(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/absent.sock")
    assert run_cli("sandbox", "build", "--offline") == 1
    assert "no Docker engine answers" in capsys.readouterr().err


def _require_engine_and_image() -> None:
    status = image.check()
    if not status.ready:
        skip_or_fail("DOCKER", status.detail)


@pytest.mark.docker
def test_check_and_build_when_ready_are_quick_and_idempotent(capsys):
    _require_engine_and_image()
    assert run_cli("sandbox", "check") == 0
    assert capsys.readouterr().out.startswith("ready: Docker engine")
    result = image.build(mode="auto", log=lambda line: None)
    assert result.mode == "unchanged"  # nothing rebuilt: the recipe digest matched


@pytest.mark.docker
def test_offline_build_of_the_top_layers_makes_a_ready_image():
    """The worker layers on the kept mmdebstrap base: what a worker change costs."""
    import docker

    _require_engine_and_image()
    client = docker.from_env()
    base = image.offline_base_tag(SandboxConfig().image)
    try:
        client.images.get(base)
    except docker.errors.ImageNotFound:
        skip_or_fail("DOCKER", f"{base} is absent (the image was built online, not by `sandbox build --offline`)")
    tag = "reflexion-harness-sandbox:test-offline-rebuild"
    lines: list[str] = []
    try:
        result = image.build(tag, mode="offline", force=False, log=lines.append)
        assert result.mode == "offline"
        assert any(line.startswith("reusing base image") for line in lines)
        assert image.check(tag).ready
        assert client.images.get(tag).labels[engine.RECIPE_LABEL] == engine.recipe_digest()
    finally:
        try:
            client.images.remove(tag, force=True)
        except docker.errors.DockerException:
            pass
        client.close()
