"""Shared fixtures. Markers: docker (needs an engine + the sandbox image), slow,
model (loads a real GGUF). CI runs them all."""
from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "docker: needs a Docker engine and the sandbox image")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
    config.addinivalue_line("markers", "model: loads a real local model (GGUF)")
    config.addinivalue_line("markers", "browser: drives a headless Chromium")
