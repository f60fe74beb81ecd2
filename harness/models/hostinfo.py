"""Facts about the machine the harness runs on."""
from __future__ import annotations

import os


def available_cores() -> int:
    """Cores this process may run on (respects taskset / container CPU sets)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
