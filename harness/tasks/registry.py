"""Task sources by spec prefix, imported lazily: `load_tasks(spec)`. Other packages
add sources through the entry point group `reflexion_harness.tasks` (prefix ->
`module:Class`, a class whose `load(arg)` returns a TaskSet); a prefix defined twice is
refused."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from harness.registry import REGISTRY, RegistryError
from harness.tasks.base import TaskError, TaskSet, TaskSource, require_clean_text, require_hidden_tests

# The default task set of a run: the project's own problems, no network needed. The
# `quick` subset keeps the no-flag run (embedded 0.5B model, 2 cores, 2 strategies,
# up to 3 trials) under 15 minutes: measured ~50 s a task.
DEFAULT_TASKS = "builtin:quick"


ENTRY_POINT_GROUP = "reflexion_harness.tasks"  # what the one registry reads for plug-ins' sources


def sources() -> dict[str, Any]:
    """prefix -> source class (or its "module:Class" for a plug-in not yet imported): the
    built-in sources and those of installed plug-ins, from the one registry."""
    try:
        return {name: member.target for name, member in REGISTRY.members("tasks").items()}
    except RegistryError as exc:
        raise TaskError(str(exc)) from None


def known_forms() -> tuple[str, ...]:
    """Every spec form a task set can be named by (`harness tasks --help`, `run --help`)."""
    from harness.kinds.languages import other_languages

    forms = []
    default = DEFAULT_TASKS.partition(":")[0]
    for prefix in sorted(sources(), key=lambda prefix: (prefix != default, prefix)):  # the default's first
        usage = getattr(_source_class(prefix), "usage", f"{prefix}:...")
        forms.append(usage.replace("{languages}", "|".join(other_languages())))
    return tuple(forms)


def _source_class(prefix: str) -> Any:
    try:
        return REGISTRY.get("tasks", prefix)
    except RegistryError as exc:
        raise TaskError(str(exc)) from None


def _source(prefix: str) -> TaskSource:
    return _source_class(prefix)()


def _is_path(spec: str) -> bool:
    # A missing *.jsonl is still meant as a path: let the loader say "no such file".
    return spec.endswith(".jsonl") or Path(spec).expanduser().exists()


def _kind(task: "Any", spec: str) -> "Any":
    try:
        from harness.kinds.languages.kind import kind_for

        return kind_for(task)
    except ValueError as exc:
        raise TaskError(f"task set {spec!r}: task {task.task_id!r}: {exc}") from None


def load_tasks(spec: str) -> TaskSet:
    """The task set a spec names; raises TaskError (what, where, what to do)."""
    spec = spec.strip()
    prefix, _, arg = spec.partition(":")
    if prefix in sources():
        task_set = _source(prefix).load(arg)
    elif spec and _is_path(spec):
        task_set = _source("jsonl").load(spec)
    else:
        raise TaskError(f"unknown task set {spec!r}; known forms: {', '.join(known_forms())}")
    for number, task in enumerate(task_set.tasks, start=1):  # whatever the source: no task without hidden
        require_hidden_tests(task, f"task set {spec!r}")  # tests, none the harness could not write or show
        _kind(task, spec).validate(task, f"task set {spec!r}")
        require_clean_text(task, f"task set {spec!r}: task {number} ({ascii(task.task_id[:80])})")
    return dataclasses.replace(task_set, spec=spec)
