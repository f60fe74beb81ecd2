"""Fixtures for the view: run folders (viewruns.py) and a real server on 127.0.0.1."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from harness.view.server import ViewServer, free_port
from viewruns import header, two_strategy_records, write_run


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    write_run(root / "run-a", header(), two_strategy_records())
    return root


@pytest.fixture
def serve() -> Callable[..., ViewServer]:
    """`serve(root, labels=None)` starts the view on a free loopback port; stopped after the test."""
    started: list[ViewServer] = []

    def start(root: Path, labels: dict[str, str] | None = None) -> ViewServer:
        server = ViewServer(root, free_port(0), labels, warm=False)
        server.start()
        started.append(server)
        return server

    yield start
    for s in started:
        s.stop()
