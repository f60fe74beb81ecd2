"""Reaching the Docker engine, and what to tell the user when it cannot be reached."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox.base import SandboxUnavailable

if TYPE_CHECKING:
    import docker

LABEL = "reflexion-harness.sandbox"  # on every container and image we make
RECIPE_LABEL = "reflexion-harness.sandbox.recipe"  # digest of the files the image came from
BUILD_HINT = "run `python -m harness sandbox build` (offline builds need `apt-get install -y mmdebstrap`)"
NO_ENGINE_HINT = (
    "To get one on Debian/Ubuntu, as root: `apt-get install -y docker.io`, then start the "
    "engine (`systemctl start docker`, or `dockerd >/var/log/dockerd.log 2>&1 &` where there "
    "is no systemd), then `python -m harness sandbox build`. Or choose `--sandbox process`: "
    "the model's code then runs on this machine WITHOUT isolation (only resource limits)."
)

_PACKAGE = Path(__file__).resolve().parent
WORKER_DIR = _PACKAGE / "worker"  # shipped as a folder: /opt/sandbox/worker in the image
DOCKERFILE_PATH = _PACKAGE / "image" / "Dockerfile"
SETUP_DIR = _PACKAGE / "image" / "setup"  # /opt/sandbox/setup in the image: the toolchain's set-up
LANGUAGE_LABEL = "reflexion-harness.sandbox.language"
PYTHON = "python"


def image_name(image: str, language: str = PYTHON) -> str:
    """The image of `language` for the sandbox image `image` (Python's is `image` itself;
    another language's is `<image>-<language>`, with the same tag if one is given)."""
    if language == PYTHON:
        return image
    if "@" in image:
        raise ValueError(f"a digest names one image ({image}); name the {language} image by tag instead")
    repository, colon, tag = image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "")
    if repository.endswith(f"-{language}"):  # already the language's image (resolved once)
        return image
    return f"{repository}-{language}{colon}{tag}"


def setup_files() -> list[Path]:
    return sorted(path for path in SETUP_DIR.iterdir() if path.is_file())


def worker_files() -> list[Path]:
    """Every file the worker is made of, as shipped (sources only, no caches)."""
    return sorted(path for path in WORKER_DIR.glob("*.py") if path.is_file())


def copy_worker(target: Path) -> Path:
    """The worker's files in a new folder `target` (a build context, a process worker's home)."""
    target.mkdir(mode=0o755)
    for path in worker_files():
        shutil.copyfile(path, target / path.name)
    return target


def recipe_digest(language: str = PYTHON) -> str:
    """Digest of the files an image is built from: any changed worker file means a stale
    image. Another language's image also covers its toolchain (packages, set-up) and the
    set-up files; Python's digest is what it was before there were other languages."""
    digest = hashlib.sha256()
    extra = setup_files() if language != PYTHON else []
    for path in (DOCKERFILE_PATH, *worker_files(), *extra):
        name = f"{path.parent.name}/{path.name}"  # worker/protocol.py, image/Dockerfile
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    if language != PYTHON:
        import json

        from sandbox.toolchains import toolchain

        digest.update(json.dumps(toolchain(language).identity(), sort_keys=True).encode())
    return digest.hexdigest()[:16]


def resolve_image(image: str, language: str = PYTHON) -> str:
    """`image` as given when it names a tag or digest; else tagged by the recipe digest;
    for another language, its own image (`image_name`).

    Untagged names get one tag per recipe, so checkouts with different sandbox files
    (two branches, two harness versions) each find their own image on one engine.
    """
    image = image_name(image, language)
    if "@" in image or ":" in image.rsplit("/", 1)[-1]:
        return image
    return f"{image}:{recipe_digest(language)}"


def connect(timeout: float = 10.0) -> "docker.DockerClient":
    """A client whose engine answered a ping, or SandboxUnavailable saying what to do."""
    try:
        import docker
    except ImportError as exc:
        raise SandboxUnavailable(
            f"the `docker` Python package is missing ({exc}); `pip install docker`"
        ) from None
    try:
        client = docker.from_env(timeout=int(timeout))
        client.ping()
    except Exception as exc:  # DockerException, requests errors, missing socket
        raise SandboxUnavailable(
            f"no Docker engine answers ({_first_line(exc)}). {NO_ENGINE_HINT}"
        ) from None
    return client


def image_problem(client: "docker.DockerClient", image: str, language: str = PYTHON) -> str | None:
    """None when `image` exists and was built from the current recipe; else what is wrong."""
    import docker

    hint = BUILD_HINT if language == PYTHON else BUILD_HINT.replace("build`", f"build --language {language}`")
    image = resolve_image(image, language)
    try:
        found = client.images.get(image)
    except docker.errors.ImageNotFound:
        return f"the sandbox image {image} is missing; {hint}"
    built_from = (found.labels or {}).get(RECIPE_LABEL)
    if built_from != recipe_digest(language):
        return (
            f"the sandbox image {image} was built from other sandbox files "
            f"(recipe {built_from or 'unknown'}, current {recipe_digest(language)}); "
            f"{hint.split('(')[0].strip()} to rebuild it"
        )
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]
