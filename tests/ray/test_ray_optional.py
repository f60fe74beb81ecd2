"""Ray is optional: without it, `--executor ray` says how to install it (no cluster needed)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_without_ray_the_error_says_how_to_install_it(tmp_path: Path) -> None:
    hide_ray = (
        "import sys, importlib.abc\n"
        "class Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'ray' or name.startswith('ray.'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "from harness.cli import main\n"
        "sys.exit(main(['run', '--executor', 'ray', '--out', sys.argv[1]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", hide_ray, str(tmp_path / "results")],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "pip install 'reflexion-harness[ray]'" in done.stderr
    assert not (tmp_path / "results").exists()


def test_executor_is_a_setting_of_the_config_file_too(tmp_path: Path) -> None:
    from harness.config import ConfigError, RunConfig

    path = tmp_path / "run.toml"
    path.write_text('[run]\nexecutor = "ray"\nray-address = "10.0.0.5:6379"\n')
    config = RunConfig.from_dict(RunConfig.load_toml(path))
    assert (config.executor, config.ray_address) == ("ray", "10.0.0.5:6379")
    assert RunConfig().executor == "local"
    with pytest.raises(ConfigError, match="executor must be one of local, ray"):
        RunConfig(executor="dask").validate()
