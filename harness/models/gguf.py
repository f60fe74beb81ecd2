"""Reads the key-value metadata at the head of a GGUF file (no dependency, no weights read).

The local backend checks a file before it hands it to the engine: that it is a GGUF at
all, that it carries a chat template (`tokenizer.chat_template`), its name and the
context length it was trained for. Arrays (the vocabulary, ~150k strings) are skipped.
"""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

MAGIC = b"GGUF"

# GGUF value types -> struct format of a scalar
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


class GGUFError(ValueError):
    """The file is not a GGUF file this reader understands."""


def read_metadata(path: Path) -> dict[str, Any]:
    """The file's scalar and string metadata, by key (arrays are left out)."""
    with open(path, "rb") as f:
        if f.read(4) != MAGIC:
            raise GGUFError(f"{path} is not a GGUF file (no GGUF magic at its start)")
        (version,) = _unpack(f, "<I")
        if version < 2:
            raise GGUFError(f"{path}: GGUF version {version} is too old (2 or later)")
        _tensors, n_kv = _unpack(f, "<QQ")
        out: dict[str, Any] = {}
        for _ in range(n_kv):
            key = _string(f)
            (kind,) = _unpack(f, "<I")
            value = _value(f, kind)
            if value is not _SKIPPED:
                out[key] = value
        return out


_SKIPPED = object()


def _unpack(f: BinaryIO, fmt: str) -> tuple[Any, ...]:
    size = struct.calcsize(fmt)
    data = f.read(size)
    if len(data) != size:
        raise GGUFError("the GGUF header ends early (a truncated file?)")
    return struct.unpack(fmt, data)


def _string(f: BinaryIO) -> str:
    (n,) = _unpack(f, "<Q")
    data = f.read(n)
    if len(data) != n:
        raise GGUFError("the GGUF header ends early (a truncated file?)")
    return data.decode("utf-8", "replace")


def _value(f: BinaryIO, kind: int) -> Any:
    if kind in _SCALARS:
        return _unpack(f, _SCALARS[kind])[0]
    if kind == _STRING:
        return _string(f)
    if kind == _ARRAY:
        (item, count) = _unpack(f, "<IQ")
        if item in _SCALARS:
            f.seek(struct.calcsize(_SCALARS[item]) * count, 1)
        elif item == _STRING:
            for _ in range(count):
                (n,) = _unpack(f, "<Q")
                f.seek(n, 1)
        else:
            for _ in range(count):
                _value(f, item)
        return _SKIPPED
    raise GGUFError(f"unknown GGUF value type {kind}")


def context_length(meta: dict[str, Any]) -> int | None:
    """The context the model was trained for (`<arch>.context_length`), if the file says."""
    arch = meta.get("general.architecture")
    value = meta.get(f"{arch}.context_length") if arch else None
    return int(value) if isinstance(value, int) else None
