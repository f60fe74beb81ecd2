"""`python -m harness model serve [NAME]`: the embedded model as an OpenAI-compatible
server on 127.0.0.1 (harness.models.serve), until Ctrl-C or SIGTERM."""
from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from harness.cli import UsageError


def add_parser(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser("serve", help="serve a local model over HTTP as an OpenAI-compatible API on 127.0.0.1")
    serve.add_argument("name", nargs="?", default=None, metavar="NAME",
                       help="a model of `model list` or a .gguf path (default: the offline default model)")
    serve.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (default 8080)")
    serve.add_argument("--api-key", default=None,
                       help="a key every request must carry as its bearer token (default: none)")
    serve.add_argument("--slots", type=int, default=1,
                       help="requests generated together (default 1: answers depend on the request alone)")
    serve.add_argument("--n-ctx", type=int, default=4096, help="context tokens per slot (default 4096)")
    serve.add_argument("--threads", type=int, default=None, help="engine threads (default: the cores available)")
    serve.add_argument("--models-dir", type=Path, default=None)
    serve.set_defaults(func=_serve)


def _serve(args: argparse.Namespace) -> int:
    from harness.models.base import ModelConfigError
    from harness.models.serve import ServeConfig, start_server

    config = ServeConfig(name=args.name, port=args.port, api_key=args.api_key, slots=args.slots, n_ctx=args.n_ctx,
                         threads=args.threads, models_dir=args.models_dir)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        served = start_server(config)
    except ModelConfigError as exc:
        raise UsageError(str(exc)) from None
    stop = threading.Event()

    def _stop(_sig: int, _frame: FrameType | None) -> None:
        stop.set()

    for sig in handlers:  # the engine installs its own; the command owns them
        signal.signal(sig, _stop)
    key = "the key given by --api-key" if args.api_key else "any key (no --api-key given)"
    print(f"serving {served.path.name} at {served.url} as model {served.model!r}; requests carry {key}; "
          "Ctrl-C stops it", flush=True)
    print(f"  e.g. python -m harness run --model openai:{served.model}@{served.url}", flush=True)
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        del served
    print("stopped", file=sys.stderr)
    return 0
