"""The runner's error path through `python -m harness run`: a sandbox that fails on its
Nth call leaves error.log, a line in errors.jsonl, exit status 1 and the resume
command; the resume then finishes the run with no trial done twice.

In-process (the CLI's own parser and command), with the process sandbox behind the
failing one, so no Docker engine is needed.
"""
from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

import sandbox as sandbox_package
from harness.rundata import read_errors, read_trials
from sandbox import RunRequest, SandboxConfig
from tests.helpers import cli
from tests.loop.test_cli_run import N_TASKS, write_script, write_task_file


class FailsOnCall:
    """A real sandbox, except that its `n`th run raises, as an engine gone away would."""

    def __init__(self, inner, n: int) -> None:
        self.inner, self.n = inner, n
        self.calls = 0
        self._lock = threading.Lock()

    def run(self, request: RunRequest):
        with self._lock:
            self.calls += 1
            failing = self.calls == self.n
        if failing:
            raise RuntimeError(f"the sandbox engine went away (call {self.n}, on purpose)")
        return self.inner.run(request)

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def failing_sandbox(monkeypatch):
    """`python -m harness run` gets a process sandbox that fails on its 3rd call."""
    opened: list[FailsOnCall] = []
    real_open = sandbox_package.open_sandbox

    def open_failing(config):
        opened.append(FailsOnCall(real_open(SandboxConfig(backend="process", workers=1)), n=3))
        return opened[-1]

    monkeypatch.setattr(sandbox_package, "open_sandbox", open_failing)
    return opened


def _argv(tmp_path: Path) -> list[str]:
    tasks, script = write_task_file(tmp_path), write_script(tmp_path)
    return ["run", "--tasks", f"jsonl:{tasks}", "--model", f"scripted:{script}", "--strategy", "reflexion",
            "--trials", "2", "--workers", "1", "--sandbox", "process", "--out", str(tmp_path / "out"),
            "--memory-dir", str(tmp_path / "mem"), "--no-report", "--no-cache"]


def test_a_failing_sandbox_call_is_logged_and_the_resume_finishes_the_run(
    tmp_path: Path, failing_sandbox, capsys, monkeypatch
):
    status = cli(*_argv(tmp_path))
    err = capsys.readouterr().err
    assert status == 1
    (run_dir,) = (tmp_path / "out").iterdir()
    assert failing_sandbox[0].calls > 3  # the run went on after the failure

    [error] = read_errors(run_dir / "errors.jsonl")
    assert error["kind"] == "unit_exception" and error["role"] is None
    assert "RuntimeError: the sandbox engine went away (call 3, on purpose)" in error["error"]
    log = (run_dir / "error.log").read_text()
    assert "Traceback" in log and "engine went away" in log and f"{error['task_id']}" in log
    [line] = [x for x in err.splitlines() if x.startswith("error:")]
    assert "1 attempt(s) did not finish" in line and str(run_dir / "errors.jsonl") in line
    assert line.endswith(f"python -m harness run --resume {run_dir}")

    broken = (error["task_id"], error["attempt"])
    before = read_trials(run_dir / "trials.jsonl")
    assert not any(r.final for r in before if (r.task_id, r.attempt) == broken)  # incomplete, not scored
    assert len({r.task_id for r in before if r.final}) == N_TASKS - 1

    monkeypatch.undo()  # the sandbox is fixed
    assert cli("run", "--resume", str(run_dir), "--no-report") == 0
    after = read_trials(run_dir / "trials.jsonl")
    keys = [(r.task_id, r.attempt, r.trial) for r in after]
    assert len(keys) == len(set(keys))  # no trial done twice
    assert {r.task_id for r in after if r.final} == {f"mul/{i}" for i in range(N_TASKS)}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["strategies"]["reflexion"]["attempts"] == N_TASKS
    assert summary["strategies"]["reflexion"]["incomplete_attempts"] == 0
