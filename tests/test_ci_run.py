""".ci/run: pytest's exit status is CI's, the tests run only after the setup succeeded,
and the last line says how long each half took.

The real script runs in a scratch copy of the repository's layout where `.ci/setup`
and `.venv/bin/python` are fakes: each records that it ran (and with what) and exits
with the status the test asks for."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TIMES = re.compile(r"ci: setup \d+ s, tests \d+ s, pytest exit (\d+)")


def run_ci(tmp_path: Path, setup_exit: int, pytest_exit: int) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Runs .ci/run with the fakes; returns its result and the fakes' log lines."""
    (tmp_path / ".ci").mkdir()
    shutil.copy(REPO / ".ci" / "run", tmp_path / ".ci" / "run")
    log = tmp_path / "log"
    (tmp_path / ".ci" / "setup").write_text(f'echo "setup $*" >>"{log}"\nexit {setup_exit}\n')
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\necho "python $* docker=$HARNESS_REQUIRE_DOCKER" >>"{log}"\nexit {pytest_exit}\n')
    python.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_REQUIRE_")}
    done = subprocess.run(["bash", str(tmp_path / ".ci" / "run")], cwd="/", env=env, capture_output=True,
                          text=True, timeout=60)
    return done, log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize("pytest_exit", [0, 1, 2, 5])  # passed, a test failed, interrupted, none collected
def test_pytest_s_exit_status_is_ci_s_and_the_last_line_times_both_halves(tmp_path, pytest_exit):
    done, log = run_ci(tmp_path, setup_exit=0, pytest_exit=pytest_exit)
    assert done.returncode == pytest_exit, done
    assert log == ["setup --tests", "python -m pytest docker=1"]
    last = done.stdout.strip().splitlines()[-1]
    assert TIMES.fullmatch(last) and TIMES.fullmatch(last).group(1) == str(pytest_exit), last


def test_a_failed_setup_fails_ci_and_runs_no_test(tmp_path):
    done, log = run_ci(tmp_path, setup_exit=3, pytest_exit=0)
    assert done.returncode == 3, done
    assert log == ["setup --tests"]
    assert re.fullmatch(r"ci: setup failed \(exit 3\) after \d+ s; no test ran", done.stdout.strip().splitlines()[-1])
