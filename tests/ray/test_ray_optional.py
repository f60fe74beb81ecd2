"""Ray is optional: without it, `--executor ray` says how to install it (no cluster needed)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
