"""Task sources by spec prefix, imported lazily: `load_tasks(spec)`. Other packages
add sources through the entry point group `reflexion_harness.tasks` (prefix ->
`module:Class`, a class whose `load(arg)` returns a TaskSet); a prefix defined twice is
refused."""
from __future__ import annotations

import dataclasses
import importlib
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.tasks.base import TaskError, TaskSet, TaskSource, require_clean_text, require_hidden_tests

# prefix -> "module:class"; the class's `load(arg)` gets the spec after "<prefix>:".
_SOURCES: dict[str, str] = {
    "builtin": "harness.tasks.jsonl:BuiltinSource",
    "humaneval": "harness.tasks.humaneval:HumanEvalSource",
    "mbpp": "harness.tasks.hf:MbppSource",
    "hf": "harness.tasks.hf:HfSource",
    "jsonl": "harness.tasks.jsonl:JsonlSource",
    "livecodebench": "harness.tasks.livecodebench:LiveCodeBenchSource",
    "codecontests": "harness.tasks.codecontests:CodeContestsSource",
    "apps": "harness.tasks.apps:AppsSource",
    "multipl-e": "harness.tasks.multiple:MultiplESource",
    "exercism": "harness.tasks.exercism:ExercismSource",
}
KNOWN_FORMS = (
    "builtin[:rust|go|cpp|javascript|polyglot][:<tag>]",
    "multipl-e:<folder>:<dataset>  (e.g. multipl-e:data:humaneval-rs)",
    "exercism:<folder>[:rust|go|cpp|javascript]  (a polyglot-benchmark checkout, or one language's exercises/practice)",
    "humaneval",
    "mbpp[:sanitized|:full][:with-example]",
    "hf:<dataset>[:<config>][:<split>]",
    "jsonl:<path>",
    "livecodebench[:<folder>][:release_vN][:after=YYYY-MM-DD][:before=YYYY-MM-DD][:difficulty=..][:platform=..][:with-example]",
    "codecontests[:<folder>][:test|valid|train][:difficulty=..][:platform=..][:with-example]",
    "apps[:<folder>][:test|train][:difficulty=..]",
    "<path to a .jsonl file or a folder of them>",
)
# The default task set of a run: the project's own problems, no network needed. The
# `quick` subset keeps the no-flag run (embedded 0.5B model, 2 cores, 2 strategies,
# up to 3 trials) under 15 minutes: measured ~50 s a task.
DEFAULT_TASKS = "builtin:quick"


ENTRY_POINT_GROUP = "reflexion_harness.tasks"


def sources() -> dict[str, str]:
    """prefix -> "module:class": the built-in sources and those of installed plug-ins."""
    found = dict(_SOURCES)
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in found and found[ep.name] != ep.value:
            raise TaskError(f"task source {ep.name!r} is defined twice: {found[ep.name]} and the entry point "
                            f"{ep.value}")
        found[ep.name] = ep.value
    return found


def _source(prefix: str, known: dict[str, str] | None = None) -> TaskSource:
    module_name, _, attr = (known or sources())[prefix].partition(":")
    try:
        return getattr(importlib.import_module(module_name), attr)()
    except (ImportError, AttributeError) as exc:
        raise TaskError(f"the task source {prefix!r} ({module_name}:{attr}) cannot be loaded: {exc}") from None


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
    known = sources()
    if prefix in known:
        task_set = _source(prefix, known).load(arg)
    elif spec and _is_path(spec):
        task_set = _source("jsonl").load(spec)
    else:
        raise TaskError(f"unknown task set {spec!r}; known forms: {', '.join(KNOWN_FORMS)}")
    for number, task in enumerate(task_set.tasks, start=1):  # whatever the source: no task without hidden
        require_hidden_tests(task, f"task set {spec!r}")  # tests, none the harness could not write or show
        _kind(task, spec).validate(task, f"task set {spec!r}")
        require_clean_text(task, f"task set {spec!r}: task {number} ({ascii(task.task_id[:80])})")
    return dataclasses.replace(task_set, spec=spec)
