"""`python -m harness tasks list SPEC`, `tasks show SPEC TASK_ID` and `tasks check SPEC`."""
from __future__ import annotations

import argparse

from harness.cli import UsageError, terminal_safe
from harness.registry import REGISTRY
from harness.tasks import known_forms, IoTest, Task, TaskError, TaskSet, load_tasks


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tasks",
        help="list a task set, or show one task with its hidden tests",
        description="Task set specs: " + ", ".join(known_forms()) + ".",
    )
    actions = p.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)
    ls = actions.add_parser("list", help="one line per task: id, tags, number of hidden tests")
    ls.add_argument("spec", metavar="SPEC", help="task set, e.g. builtin, humaneval, tasks/mine.jsonl")
    ls.set_defaults(func=list_command)
    show = actions.add_parser("show", help="a task's prompt, entry point, hidden tests and canonical solution")
    show.add_argument("spec", metavar="SPEC")
    show.add_argument("task_id", metavar="TASK_ID")
    show.set_defaults(func=show_command)
    check = actions.add_parser(
        "check", help="grade each task's reference solution (must pass) and a stub (must fail) on its hidden tests",
        description="Grades each task's reference solution on its hidden tests (it must pass them all) and a stub "
                    "(an entry point that returns None; for an io task a program that prints nothing: it must fail "
                    "one), in the sandbox, and prints the broken tasks with the reason. Exit status 1 when any task "
                    "is broken, 0 otherwise; a task without a reference solution is listed as not checked. "
                    "`run --check-tasks` does the same first and leaves broken tasks out of the run.")
    check.add_argument("spec", metavar="SPEC")
    check.add_argument("--limit", type=int, metavar="N", help="only the first N tasks")
    check.add_argument("--task-ids", metavar="ID,...", help="only these tasks")
    check.add_argument("--sandbox", choices=REGISTRY.names("sandboxes"), default="docker",
                       help="docker (default) or process: UNSAFE, the references run on this host without isolation")
    check.add_argument("--sandbox-workers", type=int, metavar="N", default=None, help="gradings at once (default: CPU cores)")
    check.add_argument("--test-timeout", dest="test_timeout_s", type=float, default=5.0, metavar="SEC",
                       help="per-test time limit when the task sets none (default 5)")
    check.set_defaults(func=check_command)


def _load(spec: str) -> TaskSet:
    try:
        return load_tasks(spec)
    except TaskError as exc:
        raise UsageError(str(exc)) from None


def list_command(args: argparse.Namespace) -> int:
    task_set = _load(args.spec)
    width = max(len(t.task_id) for t in task_set.tasks)
    tag_width = max(len(",".join(t.tags) or "-") for t in task_set.tasks)
    width, tag_width = max(width, len("task")), max(tag_width, len("tags"))
    print(f"{'task':<{width}}  {'tags':<{tag_width}}  hidden tests")
    for task in task_set.tasks:
        _say(f"{task.task_id:<{width}}  {','.join(task.tags) or '-':<{tag_width}}  {len(task.hidden_tests):>12}")
    total = sum(len(t.hidden_tests) for t in task_set.tasks)
    print(f"{_count(len(task_set.tasks), 'task')}, {_count(total, 'hidden test')} in {task_set.name} ({task_set.digest})")
    if task_set.prompt_form != "as published":
        _say(f"prompt form: {task_set.prompt_form}")
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _say(text: str) -> None:
    """A line of task text on the terminal: a dataset's escape sequences are shown, not obeyed."""
    print(terminal_safe(text))


def _section(title: str, body: str) -> None:
    _say(f"--- {title} ---")
    _say(body.rstrip("\n"))


def _shown(test) -> str:
    if isinstance(test, IoTest):
        return f"input:\n{test.input.rstrip()}\nexpected output:\n{test.output.rstrip()}"
    if hasattr(test, "suite"):  # a runner test: its name, as its test runner knows it, in its file
        return f"{test.test}  (in {test.suite.test_path})"
    if not isinstance(test, str):  # another language's calls: each call and its expected value
        import json

        return "\n".join(call.label or f"{json.dumps(list(call.args))} -> {json.dumps(call.expected)}" for call in test.calls)
    return test


def show_command(args: argparse.Namespace) -> int:
    from harness.kinds.languages.kind import kind_for

    task_set = _load(args.spec)
    try:
        task: Task = task_set.select(task_ids=[args.task_id]).tasks[0]
    except TaskError:
        near = [t.task_id for t in task_set.tasks if args.task_id.lower() in t.task_id.lower()][:5]
        hint = f"; did you mean: {', '.join(near)}" if near else f"; see: python -m harness tasks list {args.spec}"
        raise UsageError(f"no task {args.task_id!r} in {task_set.name}{hint}") from None
    _say(f"task:        {task.task_id}  ({task_set.name})")
    _say(f"kind:        {task.kind}: {kind_for(task).summary(task)}")
    if task.language != "python":
        _say(f"language:    {task.language}")
    if task.entry_point:
        _say(f"entry point: {task.entry_point}")
    _say(f"tags:        {', '.join(task.tags) or '-'}")
    if task.timeout_s is not None:
        _say(f"timeout:     {task.timeout_s:g} s per hidden test")
    _section("prompt (what the agent sees)", task.prompt)
    for i, test in enumerate(task.hidden_tests, start=1):
        _section(f"hidden test {i} of {len(task.hidden_tests)}", _shown(test))
    for i, test in enumerate(task.public_tests, start=1):
        _section(f"public example {i} of {len(task.public_tests)}", _shown(test))
    _section("canonical solution", task.canonical_solution or "(none)")
    return 0


def check_command(args: argparse.Namespace) -> int:
    from harness.models.hostinfo import available_cores
    from harness.run.taskcheck import BROKEN, UNCHECKED, check_tasks, summary_line
    from sandbox import SandboxConfig, SandboxUnavailable, open_sandbox

    task_set = _load(args.spec)
    ids = [t.strip() for t in args.task_ids.split(",") if t.strip()] if args.task_ids else None
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit must be an integer >= 1, got {args.limit}")
    try:
        task_set = task_set.select(task_ids=ids, limit=args.limit)
    except TaskError as exc:
        raise UsageError(str(exc)) from None
    workers = args.sandbox_workers or available_cores()
    try:
        languages = tuple(sorted({t.language for t in task_set.tasks} - {"python"}))
        sandbox = open_sandbox(SandboxConfig(backend=args.sandbox, workers=workers, domains=("hidden",),
                                             languages=languages))
    except SandboxUnavailable as exc:
        raise UsageError(str(exc)) from None
    try:
        verdicts = check_tasks(task_set.tasks, sandbox, timeout_s=args.test_timeout_s, workers=workers)
    finally:
        sandbox.close()
    for v in verdicts:
        if v.status == BROKEN:
            _say(f"BROKEN {v.task_id}: {v.reason}")
    for v in verdicts:
        if v.status == UNCHECKED:
            _say(f"not checked {v.task_id}: {v.reason}")
    print(f"{summary_line(verdicts)} in {task_set.name} ({task_set.digest})")
    return 1 if any(v.status == BROKEN for v in verdicts) else 0
