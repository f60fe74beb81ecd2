"""The conformance suite runs every case against both backends."""
from __future__ import annotations

import pytest

@pytest.fixture(
    params=[
        pytest.param("process", id="process"),
        pytest.param("docker", id="docker", marks=pytest.mark.docker),
    ]
)
def backend(request) -> str:
    return request.param


@pytest.fixture
def sandbox(backend, request):
    """The session-wide pool of the backend under test."""
    return request.getfixturevalue(f"{backend}_sandbox")


@pytest.fixture
def make_sandbox(backend, sandbox_opener):
    """Opens a private pool of the backend (for cases that need their own config)."""
    opened = []

    def make(**overrides):
        opened.append(sandbox_opener(backend, **overrides))
        return opened[-1]

    yield make
    for sandbox in opened:
        sandbox.close()
