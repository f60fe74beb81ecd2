"""`python -m harness report RUN_DIR`: report.html, report.md, CSVs and plots."""
from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report",
        help="write report.html, report.md, CSV tables and plots for a run (or a study)",
        description="Rebuilds summary.json, report.html (self-contained, opens offline), report.md, "
        "CSV tables and SVG plots inside RUN_DIR from its run.json and trials.jsonl. Given a study's folder "
        "(study.json), rebuilds the study report at its top from its cells' run folders.",
    )
    p.add_argument("run_dir", metavar="RUN_DIR", type=Path, help="a run folder, e.g. results/<run-id>, or a study's folder")
    p.add_argument("--view-port", metavar="N", type=int, default=8765,
                   help="port the report's links to `python -m harness view` point at (default 8765, view's own)")
    p.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    from harness.cli import UsageError
    from harness.report import write_report
    from harness.rundata.folder import FolderError

    from harness.run.study import STUDY_FILE, StudyError

    try:
        if (args.run_dir / STUDY_FILE).is_file() and not (args.run_dir / "run.json").is_file():
            from harness.report.study import write_study_report

            print(write_study_report(args.run_dir, view_port=args.view_port))
        else:
            print(write_report(args.run_dir, view_port=args.view_port))
    except (FolderError, StudyError) as exc:
        raise UsageError(str(exc)) from None
    return 0
