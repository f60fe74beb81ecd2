"""`python -m harness compare RUN_DIR RUN_DIR [...]`: several runs in one report."""
from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compare",
        help="put several runs side by side in one report",
        description="Writes one report (report.html, report.md, CSV tables, plots) with the same tables "
        "and plots as `report`, one row or series per run x strategy.",
    )
    p.add_argument("run_dirs", metavar="RUN_DIR", type=Path, nargs="+", help="run folders to compare")
    p.add_argument("--out", metavar="DIR", type=Path, default=None,
                   help="output folder (default: compare-<UTC time> beside the first run folder)")
    p.add_argument("--view-port", metavar="N", type=int, default=8765,
                   help="port the report's links to `python -m harness view` point at (default 8765, view's own)")
    p.add_argument("--label", action="append", default=[], metavar="RUN=NAME",
                   help="name run folder RUN as NAME in tables and plots (repeatable; as in `harness view`)")
    p.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    from harness.cli import UsageError
    from harness.commands.view import parse_labels
    from harness.report import write_compare
    from harness.rundata.folder import FolderError

    if len(args.run_dirs) < 2:
        raise UsageError("compare needs at least two run folders; for one run use `python -m harness report RUN_DIR`")
    labels = parse_labels(args.label)
    unknown = sorted(set(labels) - {Path(p).name for p in args.run_dirs})
    if unknown:
        raise UsageError(f"--label {unknown[0]}=...: no such run among the folders given")
    try:
        print(write_compare(args.run_dirs, args.out, view_port=args.view_port, labels=labels))
    except FolderError as exc:
        raise UsageError(str(exc)) from None
    return 0
