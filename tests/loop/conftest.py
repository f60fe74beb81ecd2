"""Fixtures for the loop tests."""
from __future__ import annotations

import pytest


@pytest.fixture(params=[
    pytest.param("process", id="process"),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
])
def loop_sandbox(request):
    """Each loop test runs on both sandboxes: without Docker, the process sandbox still
    exercises the loop, extraction and feedback (and the docker case skips, or fails
    under HARNESS_REQUIRE_DOCKER=1)."""
    return request.getfixturevalue(f"{request.param}_sandbox")
