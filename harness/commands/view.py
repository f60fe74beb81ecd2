"""`python -m harness view [RESULTS_DIR]`: browse runs in a local web app."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli import UsageError
from harness.registry import REGISTRY


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "view",
        help="browse runs in a local web app (127.0.0.1)",
        description=(
            "Serves a local web app over the run folders under RESULTS_DIR (default: results): "
            "every run with its status, each run answer first, every task and trial, "
            "comparisons, and running runs updating live. Offline: nothing is fetched."
        ),
    )
    p.add_argument("results_dir", nargs="?", type=Path, default=Path("results"), metavar="RESULTS_DIR",
                   help="a folder of run folders, or one run folder (default: results)")
    p.add_argument("--port", type=int, default=None, metavar="N",
                   help="port on 127.0.0.1 (default 8765, or a free one if taken)")
    p.add_argument("--label", action="append", default=[], metavar="RUN=NAME",
                   help="show run folder RUN as NAME (repeatable)")
    p.add_argument("--check-self-tests", action="store_true",
                   help="first run each attempt's self-tests against the task's reference solution in the "
                        "sandbox, to mark wrong self-tests (writes self_tests.jsonl into each run folder)")
    p.add_argument("--sandbox", choices=REGISTRY.names("sandboxes"), default="docker",
                   help="sandbox for --check-self-tests (default docker; process is unsafe: no isolation)")
    p.set_defaults(func=view_command)


def parse_labels(items: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        run, sep, name = item.partition("=")
        if not sep or not run.strip() or not name.strip():
            raise UsageError(f"--label {item!r}: expected RUN=NAME, e.g. --label 20261130-010718-local-0198=qwen-0.5b")
        out[Path(run.strip()).name] = name.strip()
    return out


def _check_self_tests(root: Path, backend: str) -> None:
    from harness.view import selfcheck
    from sandbox import SandboxConfig, SandboxUnavailable, open_sandbox

    try:
        sandbox = open_sandbox(SandboxConfig(backend=backend))
    except SandboxUnavailable as exc:
        raise UsageError(f"--check-self-tests needs the sandbox: {exc}") from None
    try:
        for run_dir in selfcheck.iter_runs(root):
            done = run_dir / selfcheck.FILE
            if done.is_file() and done.stat().st_mtime >= (run_dir / "trials.jsonl").stat().st_mtime:
                continue
            checked, wrong, note = selfcheck.check_run(run_dir, sandbox)
            print(f"{run_dir.name}: {checked} self-tests checked against the reference solution, "
                  f"{wrong} wrong{note}", flush=True)
    finally:
        sandbox.close()


def view_command(args: argparse.Namespace) -> int:
    from harness.view.server import DEFAULT_PORT, ViewServer, free_port

    root: Path = args.results_dir
    if not root.is_dir():
        raise UsageError(f"{root}: no such folder; give the folder your runs are in (`--out` of `harness run`, "
                         "default results)")
    labels = parse_labels(args.label)
    if args.port is not None and not 0 < args.port < 65536:
        raise UsageError(f"--port {args.port}: give a port between 1 and 65535")
    port = args.port if args.port is not None else free_port(DEFAULT_PORT)
    if args.check_self_tests:
        _check_self_tests(root, args.sandbox)
    server = ViewServer(root, port, labels)
    print(f"harness view: {server.url} (runs under {root.resolve()}; Ctrl-C stops)", flush=True)
    try:
        server.serve()
    except OSError as exc:
        raise UsageError(f"cannot serve on 127.0.0.1:{port}: {exc}; try another --port") from None
    print("harness view: stopped", file=sys.stderr)
    return 0
