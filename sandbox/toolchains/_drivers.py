"""The drivers' sources (drivers/), read once."""
from __future__ import annotations

import functools
from pathlib import Path

FOLDER = Path(__file__).resolve().parent / "drivers"


@functools.lru_cache(maxsize=None)
def driver(name: str) -> str:
    return (FOLDER / name).read_text(encoding="utf-8")


def files() -> list[Path]:
    return sorted(FOLDER.iterdir())
