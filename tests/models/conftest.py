"""Fixtures for the model backend tests: a stub API server and fake keys."""
from __future__ import annotations

import pytest

from harness.models import ModelSettings
from tests.doubles.stub_server import StubServer

FAKE_ANTHROPIC_KEY = "sk-ant-test-0000-SECRET-never-in-results"
FAKE_OPENAI_KEY = "sk-openai-test-0000-SECRET-never-in-results"


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


@pytest.fixture(autouse=True)
def fake_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake keys only; no base URL from the environment may send a test elsewhere."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_ANTHROPIC_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    for name in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def settings() -> ModelSettings:
    # Short timeout and two retries keep the failure tests fast.
    return ModelSettings(timeout_s=2.0, max_retries=2)
