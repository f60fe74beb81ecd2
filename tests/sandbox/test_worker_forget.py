"""The zygote forgets the worker's modules once, before it forks, so that no blank child
has them by name and none pays for removing them (~30 pages copied a process, and
~150 more for walking sys.modules); a worker module imported since is forgotten all the
same when it is called again. Run in a fresh interpreter: forgetting is for real."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import sys, types
sys.path.insert(0, sys.argv[1])
from sandbox.worker import zygote
names = zygote._worker_module_names()
assert "sandbox.worker.zygote" in names and "sandbox.worker.judge" in names, names
held = zygote._forget_worker_modules()
assert not [n for n in sys.modules if n.startswith("sandbox.worker")], "a worker module is left"
assert all(module is not None for module in held[:-1]) and len(held) == len(names) + 1
assert sys.modules["__main__"].__dict__.keys() <= {"__name__", "__doc__", "__package__", "__loader__", "__spec__"}

# A worker module imported since goes too.
sys.modules["sandbox.worker.late"] = types.ModuleType("sandbox.worker.late")
zygote._forget_worker_modules()
assert "sandbox.worker.late" not in sys.modules
assert not [n for n in sys.modules if n.startswith("sandbox.worker")]
print("ok")
"""


def test_the_zygote_forgets_the_worker_modules_before_it_forks() -> None:
    done = subprocess.run([sys.executable, "-I", "-c", SCRIPT, str(ROOT)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
