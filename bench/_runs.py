"""Running the harness from a bench script, as a researcher would type it."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def harness_run(args: list[str], log: Path) -> Path:
    """`python -m harness run ARGS`; the run folder it made (its exit code may be 1 when
    some attempt failed: that run is still measured, and says so)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    cmd = [sys.executable, "-m", "harness", "run", *args]
    print("$ " + " ".join(cmd[1:]), file=sys.stderr, flush=True)
    started = time.perf_counter()
    with log.open("w") as fh:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=fh, text=True)
    print(proc.stdout, end="", file=sys.stderr)
    found = re.search(r"^run folder: (.+)$", proc.stdout, re.M)
    if found is None:
        sys.exit(f"error: the run did not finish (exit {proc.returncode}); its log: {log}")
    print(f"  ({time.perf_counter() - started:.0f} s, exit {proc.returncode})", file=sys.stderr, flush=True)
    return Path(found.group(1))
