"""Fixtures for report tests; the synthetic run itself is described in synthrun.py."""
from __future__ import annotations

from pathlib import Path

import pytest

from synthrun import RUN_ID, header, synthetic_records, write_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return write_run(tmp_path / RUN_ID, header(), synthetic_records())
