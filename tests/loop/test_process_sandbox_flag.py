"""The process sandbox with an API model must be asked for by name (issue 9, point 5)."""
from __future__ import annotations

import pytest

from harness.config import ConfigError, RunConfig


@pytest.mark.parametrize("model", ["anthropic:claude-sonnet-4-5", "openai:gpt-4o@http://127.0.0.1:9/v1"])
def test_process_sandbox_with_an_api_model_needs_the_flag(model):
    with pytest.raises(ConfigError, match="can read this process's environment \\(your API keys\\)"):
        RunConfig(model=model, sandbox="process").validate()
    assert RunConfig(model=model, sandbox="process", allow_process_sandbox_with_api=True).validate()
    assert RunConfig(model=model, sandbox="docker").validate()


def test_process_sandbox_with_a_local_model_only_warns_at_start():
    assert RunConfig(model="scripted:/dev/null", sandbox="process").validate()


def test_the_flag_on_the_command_line(tmp_path, capsys):
    from harness.cli import main

    code = main(["run", "--sandbox", "process", "--model", "anthropic:claude-sonnet-4-5", "--out", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--allow-process-sandbox-with-api" in err[0]
