"""`python -m harness memory show TASK_ID`: the lessons long-term memory holds for a task."""
from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli import UsageError
from harness.config import RunConfig
from harness.memory import MemoryStore


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("memory", help="inspect long-term memory (lessons)")
    msub = p.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    show = msub.add_parser("show", help="print the lessons stored for a task")
    show.add_argument("task_id")
    show.add_argument("--memory-dir", type=Path, default=RunConfig().memory_dir, help="memory folder (default %(default)s)")
    show.add_argument("--namespace", help="only this namespace (a run id, or a shared name); default all")
    show.set_defaults(func=show_command)


def show_command(args: argparse.Namespace) -> int:
    root: Path = args.memory_dir
    if not root.is_dir():
        raise UsageError(f"memory folder {root} does not exist")
    namespaces = [args.namespace] if args.namespace else sorted(p.name for p in root.iterdir() if p.is_dir())
    found = 0
    for ns in namespaces:
        lessons = MemoryStore(root, ns).lessons(args.task_id)
        if not lessons:
            continue
        print(f"[{ns}]")
        for lesson in lessons:
            found += 1
            origin = f"run {lesson.run_id}" + (f", model {lesson.model}" if lesson.model else "")
            oracle = " [from ORACLE feedback: hidden tests]" if lesson.oracle_feedback else ""
            print(f"  {lesson.strategy} attempt {lesson.attempt}, about trial {lesson.trial} ({origin}, {lesson.time}){oracle}:")
            print(f"    {lesson.text}")
    if not found:
        where = f"namespace {args.namespace}" if args.namespace else f"{root}"
        print(f"no lessons for {args.task_id} in {where}")
    return 0
