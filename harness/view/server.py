"""Serving the view app with uvicorn on 127.0.0.1, in the foreground or in a thread."""
from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import uvicorn

from harness.view.app import create_app

DEFAULT_PORT = 8765
HOST = "127.0.0.1"  # local only: the pages show model output and file paths


def free_port(preferred: int) -> int:
    """`preferred` if it is free on 127.0.0.1, else one the system picks."""
    for port in (preferred, 0):
        with socket.socket() as s:
            try:
                s.bind((HOST, port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise OSError("no free port on 127.0.0.1")


class ViewServer:
    """uvicorn serving the view of `root`; `start()` runs it in a daemon thread (beside a run)."""

    def __init__(self, root: Path, port: int = DEFAULT_PORT, labels: dict[str, str] | None = None,
                 *, warm: bool = True) -> None:
        self.app = create_app(root, labels, warm=warm, bound=HOST)
        self.port = port
        self.server = uvicorn.Server(uvicorn.Config(self.app, host=HOST, port=port, log_level="warning",
                                                    access_log=False, lifespan="off"))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"

    def serve(self) -> None:
        """Blocks until Ctrl-C."""
        self.server.run()

    def start(self, timeout_s: float = 10.0) -> None:
        self._thread = threading.Thread(target=self.server.run, name="view-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self.server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if not self.server.started:
            raise OSError(f"the view server did not start on {self.url}")

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
