"""`python -m harness memory ...`: long-term memory and the pool recall reads.

show TASK_ID            the lessons long-term memory holds for a task
pool SOURCE             the lessons recall would read from SOURCE, as a run would freeze them
search SOURCE QUERY     those lessons ranked for QUERY by recall's own BM25 ranking
export SOURCE           those lessons as JSON Lines (stdout or --out), with the source digest

SOURCE: an earlier run folder, namespace:NAME (in --memory-dir), or frozen:RUN_DIR (the
pool a reflexion+recall run froze at its start, with its per-task exclusions).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.cli import UsageError, terminal_safe
from harness.config import RunConfig
from harness.core.memory import MemoryStore


def _print(*parts: object, **kwargs) -> None:
    """`print`, with control characters shown as escapes: every line these commands
    print may quote a lessons file or a run folder (task ids, run ids, model names)
    that someone else wrote."""
    print(*(terminal_safe(str(p)) for p in parts), **kwargs)


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

    d = RunConfig()
    source_help = ("an earlier run folder, namespace:NAME (in --memory-dir), or frozen:RUN_DIR (the pool a "
                   "reflexion+recall run froze at its start)")
    for name, help_text, func in (
        ("pool", "print the pool of lessons from other tasks that recall reads from a source", pool_command),
        ("search", "rank a source's lessons for a query, as recall does (BM25, bm25s)", search_command),
        ("export", "write a source's pool as JSON Lines, one lesson a line", export_command),
    ):
        sp = msub.add_parser(name, help=help_text)
        sp.add_argument("source", metavar="SOURCE", help=source_help)
        if name == "search":
            sp.add_argument("query", help="text to rank by, e.g. a task's prompt")
            sp.add_argument("--k", type=int, default=d.recall_k, help="how many lessons (default %(default)s)")
            sp.add_argument("--task", metavar="TASK_ID",
                            help="with frozen:RUN_DIR: leave out what that run excluded for this task")
        if name == "export":
            sp.add_argument("--out", type=Path, metavar="FILE", help="write here instead of stdout")
        sp.add_argument("--memory-dir", type=Path, default=d.out.parent / "reflections",
                        help="memory folder of namespace:NAME sources (default %(default)s)")
        sp.add_argument("--max-chars", type=int, default=d.recall_max_chars,
                        help="cut each lesson to this many characters, as a run would (default %(default)s)")
        sp.add_argument("--oracle", action="store_true",
                        help="keep lessons written with oracle feedback (an oracle-feedback run recalls them)")
        sp.set_defaults(func=func)


def _pool(args: argparse.Namespace):
    from harness.core.recall import RecallError, open_pool

    try:
        return open_pool(args.source, args.memory_dir, max_chars=args.max_chars, oracle_feedback=args.oracle)
    except RecallError as exc:
        raise UsageError(str(exc)) from None


def _solved(value: bool | None) -> str:
    return {True: "source attempt solved", False: "source attempt unsolved", None: "outcome unknown"}[value]


def pool_command(args: argparse.Namespace) -> int:
    pool = _pool(args)
    left = ", ".join(f"{k} {v}" for k, v in sorted(pool.counts.items()) if k != "source_lessons" and v)
    _print(f"source {pool.source} ({pool.source_kind}), digest {pool.source_digest}")
    _print(f"{len(pool.lessons)} lesson(s) recall may read" + (f"; left out or cut: {left}" if left else ""))
    for lesson in pool.lessons:
        oracle = " [ORACLE feedback]" if lesson.oracle_feedback else ""
        _print(f"  {lesson.id} ({lesson.source_task_set}; {_solved(lesson.source_solved)}){oracle}:")
        _print(f"    {lesson.text}")
    if pool.excluded:
        pairs = sum(len(v) for v in pool.excluded.values())
        _print(f"excluded for {len(pool.excluded)} task(s) of the run ({pairs} task-lesson pairs); "
              "see them with: memory export frozen:RUN_DIR")
    return 0


def search_command(args: argparse.Namespace) -> int:
    from harness.core.recall import Recall

    pool = _pool(args)
    if args.k < 1:
        raise UsageError(f"--k must be >= 1, got {args.k}")
    if args.task and not args.source.startswith("frozen:"):
        raise UsageError("--task applies the exclusions a run froze: give SOURCE as frozen:RUN_DIR")
    recall = Recall.from_pool(pool, args.k)
    found = recall.ranked(args.query, args.task)
    if not found:
        _print(f"no lesson of {len(pool.lessons)} shares a word with the query (BM25 score 0)")
    for r in found:
        _print(f"{r.rank}. score {r.score:.4f}  {r.source_task} (run {r.source_run}, {r.id})")
        _print(f"   {r.lesson}")
    return 0


def export_command(args: argparse.Namespace) -> int:
    import sys
    from dataclasses import asdict

    pool = _pool(args)
    lines = [json.dumps({**asdict(x), "source": pool.source, "source_digest": pool.source_digest,
                         "excluded_for": sorted(t for t, ids in pool.excluded.items() if x.id in ids)},
                        ensure_ascii=False, sort_keys=True) for x in pool.lessons]
    text = "".join(line + "\n" for line in lines)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
        _print(f"{len(lines)} lesson(s) from {pool.source} (digest {pool.source_digest}) written to {args.out}",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _stored_task_ids(root: Path, namespaces: list[str]) -> set[str]:
    """Task ids that have lessons in these namespaces (read from the lessons themselves)."""
    ids: set[str] = set()
    for ns in namespaces:
        folder = root / ns
        for path in folder.glob("*.jsonl") if folder.is_dir() else []:
            for line in path.read_text(encoding="utf-8").split("\n")[:1]:
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
            _print(f"(no lessons for {task_id!r}; showing {close[0]!r}: task ids carry the task set's prefix)")
            task_id = close[0]
        elif close:
            raise UsageError(f"no lessons for {task_id!r}; did you mean one of: {', '.join(close[:10])}?")
    found = 0
    for ns in namespaces:
        lessons = MemoryStore(root, ns).lessons(task_id)
        if not lessons:
            continue
        _print(f"[{ns}]")
        for lesson in lessons:
            found += 1
            origin = f"run {lesson.run_id}" + (f", model {lesson.model}" if lesson.model else "")
            oracle = " [from ORACLE feedback: hidden tests]" if lesson.oracle_feedback else ""
            _print(f"  {lesson.strategy} attempt {lesson.attempt}, about trial {lesson.trial} ({origin}, {lesson.time}){oracle}:")
            _print(f"    {lesson.text}")
    if not found:
        where = f"namespace {args.namespace}" if args.namespace else f"{root}"
        stored = sorted(_stored_task_ids(root, namespaces))
        hint = (f"; tasks with lessons there: {', '.join(stored[:5])}{', ...' if len(stored) > 5 else ''} "
                "(ids include the task set's prefix, e.g. HumanEval/0)") if stored else "; it holds no lessons yet"
        _print(f"no lessons for {task_id} in {where}{hint}")
    return 0
