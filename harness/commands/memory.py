"""`python -m harness memory show TASK_ID`: the lessons long-term memory holds for a task."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.cli import UsageError, terminal_safe
from harness.config import RunConfig
from harness.memory import MemoryStore


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("memory", help="inspect long-term memory (lessons)")
    msub = p.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    show = msub.add_parser("show", help="print the lessons stored for a task")
    show.add_argument("task_id")
    show.add_argument("--memory-dir", type=Path, default=RunConfig().out.parent / "reflections",
                      help="memory folder: the run's --memory-dir, by default reflections/ beside its --out folder "
                           "(default %(default)s)")
    show.add_argument("--namespace", help="only this namespace (a run id, or a shared name); default all")
    show.set_defaults(func=show_command)


def _stored_task_ids(root: Path, namespaces: list[str]) -> set[str]:
    """Task ids that have lessons in these namespaces (read from the lessons themselves)."""
    ids: set[str] = set()
    for ns in namespaces:
        folder = root / ns
        for path in folder.glob("*.jsonl") if folder.is_dir() else []:
            for line in path.read_text(encoding="utf-8").splitlines()[:1]:
                try:
                    ids.add(str(json.loads(line)["task_id"]))
                except (ValueError, KeyError, TypeError):
                    continue
    return ids


def _matching(task_id: str, stored: set[str]) -> list[str]:
    """Stored ids the user probably meant: `0` or `/0` for `HumanEval/0`, any case."""
    want = task_id.lower().lstrip("/")
    return sorted(t for t in stored if t.lower().endswith("/" + want) or t.lower() == want)


def show_command(args: argparse.Namespace) -> int:
    root: Path = args.memory_dir
    if not root.is_dir():
        raise UsageError(f"memory folder {root} does not exist (lessons are written there by `harness run`; "
                         "give the run's --memory-dir)")
    namespaces = [args.namespace] if args.namespace else sorted(p.name for p in root.iterdir() if p.is_dir())
    task_id = args.task_id
    if not any(MemoryStore(root, ns).lessons(task_id) for ns in namespaces):
        stored = _stored_task_ids(root, namespaces)
        close = _matching(task_id, stored)
        if len(close) == 1:
            print(f"(no lessons for {task_id!r}; showing {close[0]!r}: task ids carry the task set's prefix)")
            task_id = close[0]
        elif close:
            raise UsageError(f"no lessons for {task_id!r}; did you mean one of: {', '.join(close[:10])}?")
    found = 0
    for ns in namespaces:
        lessons = MemoryStore(root, ns).lessons(task_id)
        if not lessons:
            continue
        print(f"[{ns}]")
        for lesson in lessons:
            found += 1
            origin = f"run {lesson.run_id}" + (f", model {lesson.model}" if lesson.model else "")
            oracle = " [from ORACLE feedback: hidden tests]" if lesson.oracle_feedback else ""
            print(f"  {lesson.strategy} attempt {lesson.attempt}, about trial {lesson.trial} ({origin}, {lesson.time}){oracle}:")
            print(f"    {terminal_safe(lesson.text)}")
    if not found:
        where = f"namespace {args.namespace}" if args.namespace else f"{root}"
        stored = sorted(_stored_task_ids(root, namespaces))
        hint = (f"; tasks with lessons there: {', '.join(stored[:5])}{', ...' if len(stored) > 5 else ''} "
                "(ids include the task set's prefix, e.g. HumanEval/0)") if stored else "; it holds no lessons yet"
        print(f"no lessons for {task_id} in {where}{hint}")
    return 0
