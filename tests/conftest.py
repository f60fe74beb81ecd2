"""Shared fixtures. Markers: docker (needs an engine + the sandbox image), slow,
model (loads a real GGUF), browser, ray (a local Ray cluster). CI runs them all; shared
helpers (the one place a skip CI could hit is decided, CLI runs, polling) are in
tests/helpers.py."""
from __future__ import annotations

import pytest

from tests.helpers import skip_or_fail


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "docker: needs a Docker engine and the sandbox image")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
    config.addinivalue_line("markers", "model: loads a real local model (GGUF)")
    config.addinivalue_line("markers", "browser: drives a headless Chromium")
    config.addinivalue_line("markers", "ray: starts a local multi-node Ray cluster (needs ray: pip install -e .[ray])")


# --- running side by side (pytest-xdist, `--dist loadgroup` in pyproject's addopts) ---------
# Tests go one by one to whichever worker is free, but a test that uses a fixture shared
# wider than itself (module, package or class scope: a Ray cluster, the loaded model, a
# browser, a private sandbox pool) runs in the worker that runs the rest of its module,
# so that fixture opens once, as it does in a serial run. Session fixtures (the shared
# sandbox pools) open once per worker. A test (or module) that names its own
# `xdist_group` keeps it.
SHARED_SCOPES = frozenset({"module", "package", "class"})


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook turns the marks into groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        info = getattr(item, "_fixtureinfo", None)
        definitions = info.name2fixturedefs.values() if info else ()
        if any(d.scope in SHARED_SCOPES for defs in definitions for d in defs):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


# --- sandbox fixtures -------------------------------------------------------------
# `docker_sandbox` skips when no engine or image answers, but fails when
# HARNESS_REQUIRE_DOCKER=1 (CI sets it: there, a skipped Docker test is a defect).


# A test's job gets this wall-clock limit unless it names its own: wide, so that a job
# meant to pass (or to end at a cap) is never a timeout on a slow or loaded machine; a
# test that means to see a timeout names a short limit of its own.
TEST_TIMEOUT_S = 30.0


def _open_test_sandbox(backend: str, **overrides):
    """A sandbox for tests; docker skips (or fails, under CI) when it cannot start."""
    from sandbox import Limits, SandboxConfig, SandboxUnavailable, open_sandbox

    defaults = {"workers": 2, "limits": Limits(timeout_s=TEST_TIMEOUT_S)}
    config = SandboxConfig(backend=backend, **{**defaults, **overrides})
    try:
        return open_sandbox(config)
    except SandboxUnavailable as exc:
        if backend != "docker":
            raise
        skip_or_fail("DOCKER", f"the docker sandbox is unavailable: {exc}")


@pytest.fixture(scope="session")
def sandbox_opener():
    """`opener(backend, **SandboxConfig fields)`; the caller closes what it opens."""
    return _open_test_sandbox


@pytest.fixture(scope="session")
def docker_sandbox():
    sandbox = _open_test_sandbox("docker")
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="session")
def process_sandbox():
    sandbox = _open_test_sandbox("process")
    yield sandbox
    sandbox.close()


# --- a headless Chromium for the browser tests (report and view) ---------------------
# The flags keep Debian's Chromium off the network it cannot reach here.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


@pytest.fixture(scope="module")
def browser():
    import os
    import shutil
    from pathlib import Path

    from tests.helpers import skip_or_fail

    try:
        from playwright import sync_api
    except ImportError:
        skip_or_fail("BROWSER", "playwright is not installed (pip install playwright)")
    exe = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(exe).exists():
        skip_or_fail("BROWSER", f"no chromium binary at {exe} (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        yield b
        b.close()
