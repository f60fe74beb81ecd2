"""Build and check the sandbox image from the recipe in sandbox/image/.

Online: FROM the official python:3.11-slim, pip installs pytest and numpy, apt git.
Offline (no registry answers): mmdebstrap a minimal Debian bookworm with python3,
python3-pytest, python3-numpy and git from Debian's mirror, `docker import` it as the base,
then the same Dockerfile on top. The base is kept, so a rebuild after a worker change
takes seconds.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal

from sandbox._engine import (
    DOCKERFILE_PATH,
    LABEL,
    LANGUAGE_LABEL,
    PYTHON,
    RECIPE_LABEL,
    connect,
    copy_worker,
    image_problem,
    recipe_digest,
    resolve_image,
    setup_files,
)
from sandbox.base import SandboxConfig, SandboxUnavailable

Mode = Literal["auto", "online", "offline"]
ONLINE_BASE = "python:3.11-slim"
OFFLINE_SUITE = "bookworm"
# git and bash (bash is in minbase): a workspace's diff and patches (sandbox/workspace.py).
OFFLINE_PACKAGES = ("python3", "python3-pytest", "python3-numpy", "git")
DEFAULT_MIRROR = "http://deb.debian.org/debian"


class BuildError(RuntimeError):
    """The image could not be built; the message says why and what to do."""


@dataclass(frozen=True)
class ReadyStatus:
    engine_ok: bool
    image_ok: bool
    detail: str  # one paragraph: what is ready, or what is wrong and what to do

    @property
    def ready(self) -> bool:
        return self.engine_ok and self.image_ok


@dataclass(frozen=True)
class BuildResult:
    image: str
    mode: Literal["online", "offline", "unchanged"]
    seconds: float


def offline_base_tag(image: str, language: str = PYTHON) -> str:
    """The base image's tag: one per language and set of packages (a changed package list
    makes a new base)."""
    import hashlib
    import json

    repository = image.rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else image
    if language == PYTHON:
        key = hashlib.sha256(json.dumps(OFFLINE_PACKAGES).encode()).hexdigest()[:8]
        return f"{repository}-base:{OFFLINE_SUITE}-{key}"
    from sandbox.toolchains import toolchain

    chain = toolchain(language)
    packages = [OFFLINE_PACKAGES, chain.packages, chain.apt_suites]
    key = hashlib.sha256(json.dumps(packages).encode()).hexdigest()[:8]
    return f"{repository}-base:{OFFLINE_SUITE}-{key}"


def check(image: str = SandboxConfig().image, language: str = PYTHON) -> ReadyStatus:
    image = resolve_image(image, language)
    try:
        client = connect()
    except SandboxUnavailable as exc:
        return ReadyStatus(False, False, str(exc))
    try:
        version = client.version().get("Version", "?")
        problem = image_problem(client, image, language)
    finally:
        client.close()
    if problem:
        return ReadyStatus(True, False, f"Docker engine {version} answers, but {problem}.")
    return ReadyStatus(True, True, f"Docker engine {version} answers; image {image} is up to date.")


def build(
    image: str = SandboxConfig().image,
    mode: Mode = "auto",
    force: bool = False,
    mirror: str = DEFAULT_MIRROR,
    log: Callable[[str], None] = print,
    language: str = PYTHON,
) -> BuildResult:
    """Build `image` (for `language`: its own image, `<image>-<language>`) unless it is
    already built from the current recipe (or `force`). Another language builds offline
    only: its toolchain's Debian packages go into the mmdebstrap base."""
    import docker

    image = resolve_image(image, language)
    started = time.monotonic()
    client = connect()
    try:
        if not force and image_problem(client, image, language) is None:
            log(f"{image} is up to date (recipe {recipe_digest(language)}); --force rebuilds it")
            return BuildResult(image, "unchanged", time.monotonic() - started)
        used: Literal["online", "offline"]
        if language != PYTHON:
            if mode == "online":
                raise BuildError(f"the {language} image is built offline only (from Debian's packages)")
            used = "offline"
            base = offline_base_tag(image, language)
            _offline_base(client, base, force, mirror, log, language)
            buildargs = {"BASE": base, "PIP_PACKAGES": ""}
        elif mode in ("auto", "online") and _online_base(client, log):
            used = "online"
            buildargs = {"BASE": ONLINE_BASE}
        elif mode == "online":
            raise BuildError(
                f"cannot get {ONLINE_BASE} from a registry; build offline with "
                "`python -m harness sandbox build --offline`"
            )
        else:
            used = "offline"
            base = offline_base_tag(image)
            _offline_base(client, base, force, mirror, log)
            buildargs = {"BASE": base, "PIP_PACKAGES": ""}
        previous = _image_id(client, image)
        _build_top(client, image, buildargs, log, language)
        if previous and previous != _image_id(client, image):
            try:  # the image this build replaced, now untagged; kept if containers use it
                client.images.remove(previous)
            except docker.errors.DockerException:
                pass
        seconds = time.monotonic() - started
        log(f"built {image} ({used}) in {seconds:.1f} s")
        return BuildResult(image, used, seconds)
    except docker.errors.DockerException as exc:
        raise BuildError(f"building {image} failed: {exc}") from None
    finally:
        client.close()


def _image_id(client, image: str) -> str | None:
    import docker

    try:
        return client.images.get(image).id
    except docker.errors.ImageNotFound:
        return None


def _online_base(client, log: Callable[[str], None]) -> bool:
    import docker

    try:
        client.images.get(ONLINE_BASE)
        return True
    except docker.errors.ImageNotFound:
        pass
    log(f"pulling {ONLINE_BASE} ...")
    try:
        client.images.pull(ONLINE_BASE)
        return True
    except docker.errors.DockerException as exc:
        log(f"no registry answers ({str(exc).splitlines()[0][:200]}); building offline")
        return False


def _mmdebstrap(command: list[str], tarball: Path, log: Callable[[str], None]) -> subprocess.CompletedProcess:
    """Runs mmdebstrap, once more when it fails: with several builds at once its clean-up
    can find the chroot's /proc still busy ("umount /proc: target is busy", "rm failed"),
    a failure of the moment, not of the recipe."""
    for attempt in (1, 2):
        # stdin closed: without a tty mmdebstrap would read a sources.list from it.
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        if done.returncode == 0:
            return done
        tarball.unlink(missing_ok=True)
        if attempt == 1:
            log(f"mmdebstrap failed (exit {done.returncode}): {done.stdout.strip().splitlines()[-1:]}; once more")
    return done


def _offline_base(client, base: str, force: bool, mirror: str, log: Callable[[str], None],
                  language: str = PYTHON) -> None:
    import docker

    if not force:
        try:
            client.images.get(base)
            log(f"reusing base image {base}")
            return
        except docker.errors.ImageNotFound:
            pass
    if shutil.which("mmdebstrap") is None:
        raise BuildError(
            "offline build needs mmdebstrap: as root, `apt-get install -y mmdebstrap`"
        )
    packages, sources = list(OFFLINE_PACKAGES), [mirror]
    if language != PYTHON:
        from sandbox.toolchains import toolchain

        chain = toolchain(language)
        packages += chain.packages
        # One sources line per suite when the toolchain needs more than bookworm's.
        if chain.apt_suites:
            sources = [f"deb {mirror} {suite} main" for suite in (OFFLINE_SUITE, *chain.apt_suites)]
    with tempfile.TemporaryDirectory(prefix="sandbox-rootfs-") as tmp:
        tarball = Path(tmp) / "rootfs.tar"
        command = [
            "mmdebstrap",
            "--variant=minbase",
            "--include=" + ",".join(packages),
            OFFLINE_SUITE,
            str(tarball),
            *sources,
        ]
        log("$ " + " ".join(command))
        started = time.monotonic()
        done = _mmdebstrap(command, tarball, log)
        if done.returncode != 0:
            tail = "\n".join(done.stdout.strip().splitlines()[-15:])
            raise BuildError(f"mmdebstrap failed (exit {done.returncode}, twice):\n{tail}")
        log(f"mmdebstrap: {tarball.stat().st_size / 1e6:.0f} MB in {time.monotonic() - started:.0f} s")
        repository, tag = base.rsplit(":", 1)
        client.api.import_image_from_file(
            str(tarball), repository=repository, tag=tag,
            changes=[f"LABEL {LABEL}=base", "ENV PATH=/usr/local/bin:/usr/bin:/bin"],
        )
        log(f"imported {base}")


def _build_top(client, image: str, buildargs: dict[str, str], log: Callable[[str], None],
               language: str = PYTHON) -> None:
    import docker

    with tempfile.TemporaryDirectory(prefix="sandbox-context-") as context:
        shutil.copy(DOCKERFILE_PATH, Path(context) / "Dockerfile")
        copy_worker(Path(context) / "worker")
        setup = Path(context) / "setup"
        setup.mkdir()
        script = ""
        if language != PYTHON:
            from sandbox.toolchains import toolchain

            script = toolchain(language).setup
            for path in setup_files():
                shutil.copyfile(path, setup / path.name)
        (setup / "setup.sh").write_text(script, encoding="utf-8")
        stream = client.api.build(
            path=context, tag=image, buildargs=buildargs, rm=True, forcerm=True,
            pull=False, decode=True,
            labels={LABEL: "image", RECIPE_LABEL: recipe_digest(language), LANGUAGE_LABEL: language},
        )
        for chunk in stream:
            if "error" in chunk:
                raise BuildError(f"docker build failed: {chunk['error'].strip()}")
            text = chunk.get("stream", "").rstrip()
            if text.startswith("Step ") or text.startswith("Successfully"):
                log(text)
    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        raise BuildError(f"docker build finished but {image} does not exist") from None
