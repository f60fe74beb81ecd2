"""Renders the prompt templates in harness/prompts/ (all prompt text lives there).

A core role's template holds one block per kind and language (`actor_retry.j2`: blocks
function, io, lang, io_lang, runner); the harness names one as `<role>:<block>` (what
`TaskKind.template` and `Language.template` return) and renders that file with `variant`
set to the block. A run may override any template with `--prompts DIR`: DIR/<name>.j2
replaces the default of that name, the others stay; it may extend the default
(`{% extends "default/actor_retry.j2" %}`) and redefine only the blocks it changes. The
names and the variables each template receives are listed in harness/prompts/README.md.
run.json records a digest of the set actually used.
"""
from __future__ import annotations

import hashlib
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping

import jinja2
import jinja2.sandbox

from harness.kinds.languages import other_languages

PROMPTS_DIR = Path(__file__).parents[1] / "prompts"
# The templates of the core's roles and the task kinds; a strategy's own templates sit in
# the same folder (or in its package's folder, `Strategy.template_folder`) and declare
# their sample values in the strategy (`Strategy.templates`). An override folder may
# hold any template of the set.
TEMPLATE_NAMES = (
    "actor_system", "actor_task", "actor_retry",
    "testgen_system", "testgen",
    "reflection_system", "reflection",
    "feedback", "runner_tests",
)

# The variables each template receives (documented in harness/prompts/README.md),
# with sample values: `Prompts.check` renders every template with them at start-up.
_STUB = 'def add(a: int, b: int) -> int:\n    """Return the sum of a and b."""\n'
_IO_STUB = "Read n, then n integers on one line; print their sum.\n"
VARIABLES: dict[str, dict[str, Any]] = {
    "actor_system": {},
    "actor_task": {"prompt": _STUB, "entry_point": "add", "lessons": ["Return a + b, not a - b."],
                   "recalled": ["Check the empty input first."]},
    "actor_retry": {"feedback": "Tests failed:\nassert add(1, 2) == 3  # got -1", "lessons": ["Return a + b."],
                    "recalled": ["Check the empty input first."], "entry_point": "add"},
    "testgen_system": {},
    "testgen": {"prompt": _STUB, "entry_point": "add", "max_tests": 6},
    "reflection_system": {},
    "reflection": {"prompt": _STUB, "code": "def add(a, b):\n    return a - b\n", "feedback": "Tests failed: ..."},
    "feedback": {"error": None, "passed": ["assert add(0, 0) == 0"], "failed": ["assert add(1, 2) == 3  # got -1"]},
    "actor_system_io": {},
    "actor_task_io": {"prompt": _IO_STUB, "entry_point": "", "lessons": ["Read all the numbers, not only the first line."],
                      "recalled": ["Strip the trailing newline before splitting."]},
    "actor_retry_io": {"feedback": "Test failed (wrong answer): ...", "lessons": ["Print the sum."],
                       "recalled": ["Strip the trailing newline before splitting."], "entry_point": ""},
    "testgen_system_io": {},
    "testgen_io": {"prompt": _IO_STUB, "entry_point": "", "max_tests": 6},
    "reflection_system_io": {},
    "reflection_io": {"prompt": _IO_STUB, "code": "print(0)\n", "feedback": "Test failed: ..."},
    "feedback_io": {"error": None, "passed": 1, "failed": [
        {"input": "2\n1 2", "expected": "3", "printed": "0", "status": "failed", "detail": "wrong answer: line 1 differs", "error": ""},
        {"input": "1\n5", "expected": "5", "printed": "", "status": "error", "detail": "", "error": "ValueError: ..."},
    ]},
}


# The samples are written here under the names of the blocks' former files (`<role>_io`:
# block io of <role>.j2) and keyed by `<template>:<block>` below (OLD_NAMES).
# Another language's blocks (harness/kinds/languages/base.py): `lang` for a function task,
# `io_lang` for an io task; their twins' variables, and `language`, `fence` and `assert_form`.
LANGUAGE_TEMPLATE_NAMES = (
    "actor_system_lang", "actor_task_lang", "actor_retry_lang", "testgen_system_lang", "testgen_lang",
    "reflection_system_lang", "reflection_lang",
    "actor_system_io_lang", "actor_task_io_lang", "actor_retry_io_lang", "reflection_io_lang",
)
_LANG = {"language": "Rust", "fence": "rust", "assert_form": "assert_eq!(add(...), ...);"}
VARIABLES.update({name: {**VARIABLES[name[: -len("_lang")]], **_LANG} for name in LANGUAGE_TEMPLATE_NAMES})
# An exercise's blocks (harness/kinds/runner.py, `runner`): their twins' variables and the
# exercise's (`exercise`: its solution and test files' paths, the crate, package or module
# its tests name; `stub`: the solution file as the exercise gives it), and runner_tests.j2's
# block per language, included by testgen's runner block, saying what a test file is.
_EXERCISE = {"language": "Rust", "language_name": "rust", "fence": "rust", "stub": "pub fn add(a: i64, b: i64) -> i64 {\n    todo!()\n}\n",
             "exercise": {"slug": "add", "solution_path": "src/lib.rs", "test_path": "tests/add.rs", "merged": [],
                          "crate": "add", "package": "add", "module": "add"}}
RUNNER_TEMPLATE_NAMES = ("actor_system_runner", "actor_task_runner", "actor_retry_runner", "testgen_system_runner",
                         "testgen_runner", "reflection_system_runner", "reflection_runner")
VARIABLES.update({name: {**VARIABLES[name[: -len("_runner")]], **_EXERCISE} for name in RUNNER_TEMPLATE_NAMES})
VARIABLES.update({f"runner_tests_{language}": _EXERCISE for language in other_languages()})

# The templates' names before each role became one file with a block per kind and language:
# old name -> (template, block). An override folder holding one gets an error naming both.
_SUFFIXES = (("_io_lang", "io_lang"), ("_lang", "lang"), ("_io", "io"), ("_runner", "runner"))


def _new_reference(old: str) -> tuple[str, str]:
    if old.startswith("runner_tests_"):
        return "runner_tests", old[len("runner_tests_"):]
    for suffix, block in _SUFFIXES:
        if old.endswith(suffix):
            return old[: -len(suffix)], block
    return old, "function"


OLD_NAMES: dict[str, tuple[str, str]] = {old: _new_reference(old) for old in VARIABLES}
# The samples by reference (`<template>:<block>`), the form `Prompts.render` takes.
VARIABLES = {":".join(OLD_NAMES[old]): values for old, values in VARIABLES.items()}


def split_reference(name: str) -> tuple[str, str | None]:
    """`actor_retry:io` -> ("actor_retry", "io"); a template without blocks -> (name, None)."""
    template, _, block = name.partition(":")
    return template, block or None

# The workspace tools' templates (harness/agent/workspace_tools.py): their variables.
_CUT = {"head": "tests/test_core.py::test_add FAILED", "cut": 120, "tail": "1 failed, 4 passed"}
VARIABLES.update({
    "workspace_tool_bash": {"timeout_s": 60, "output_chars": 8000},
    "workspace_tool_editor": {},
    "workspace_tool_submit": {},
    "workspace_tool_error": {"problem": "does_not_parse", "detail": "line 3: invalid syntax", "path": "pkg/core.py"},
    "workspace_result_bash": {"timed_out": False, "exit_code": 1, "seconds": 0.4, "timeout_s": 60, "output": _CUT},
    "workspace_result_editor": {"command": "view", "path": "pkg/core.py", "directory": False, "shown": _CUT},
    "workspace_result_submit": {"files": ["pkg/core.py"], "excluded": ["tests/test_mine.py"], "problems": []},
})


class PromptSetError(ValueError):
    """An override folder is wrong; the message names the file."""


class Prompts:
    """The default templates, with those in `override` (if any) taking their place.
    `sandboxed`: render in jinja2's sandbox, where a template reaches no Python beyond
    its values (what renders anything named by run data, e.g. the view, uses)."""

    def __init__(self, override: Path | None = None, *, defaults: Path = PROMPTS_DIR,
                 extra: tuple[Path, ...] = (), sandboxed: bool = False) -> None:
        self.defaults = defaults
        self.sandboxed = sandboxed
        self.extra = tuple(extra)  # plug-in strategies' own template folders, after the defaults
        self.override = override
        if override is not None:
            if not override.is_dir():
                raise PromptSetError(f"--prompts {override}: not a folder")
            names = self.template_names()
            old = sorted(p.stem for p in override.glob("*.j2") if p.stem not in names and p.stem in OLD_NAMES)
            if old:
                template, block = OLD_NAMES[old[0]]
                raise PromptSetError(
                    f"--prompts {override}: {old[0]}.j2 is an old template name; its text is now block "
                    f"`{block}` of {template}.j2: write {template}.j2 as {{% extends \"default/{template}.j2\" %}}"
                    f"{{% block {block} %}}...{{% endblock %}} (see harness/prompts/README.md)")
            unknown = sorted(p.stem for p in override.glob("*.j2") if p.stem not in names)
            if unknown:
                raise PromptSetError(
                    f"--prompts {override}: unknown template(s) {', '.join(f'{u}.j2' for u in unknown)}; "
                    f"the names are: {', '.join(f'{n}.j2' for n in names)} (see harness/prompts/README.md)"
                )

    def template_names(self) -> tuple[str, ...]:
        """Every template of the set: the core's, then the others of the folders, by name."""
        found = {p.stem for folder in (self.defaults, *self.extra) if folder.is_dir() for p in folder.glob("*.j2")}
        return (*TEMPLATE_NAMES, *sorted(found - set(TEMPLATE_NAMES)))

    @cached_property
    def _env(self) -> jinja2.Environment:
        folders = [str(self.defaults), *map(str, self.extra)]
        if self.override is not None:
            folders.insert(0, str(self.override))
        kind = jinja2.sandbox.SandboxedEnvironment if self.sandboxed else jinja2.Environment
        defaults = jinja2.FileSystemLoader([str(self.defaults), *map(str, self.extra)])
        return kind(
            # "default/<name>.j2" is always the default (what an override extends); otherwise
            # the first folder holding the name wins
            loader=jinja2.ChoiceLoader([jinja2.PrefixLoader({"default": defaults}), jinja2.FileSystemLoader(folders)]),
            undefined=jinja2.StrictUndefined,  # a missing variable is a bug, not an empty string
            keep_trailing_newline=False,
            autoescape=False,  # plain text for a model, not HTML
        )

    def source_of(self, name: str) -> Path:
        """The file a template name (or `<template>:<block>`) is read from."""
        name = split_reference(name)[0]
        if self.override is not None and (self.override / f"{name}.j2").is_file():
            return self.override / f"{name}.j2"
        for folder in self.extra:
            if not (self.defaults / f"{name}.j2").is_file() and (folder / f"{name}.j2").is_file():
                return folder / f"{name}.j2"
        return self.defaults / f"{name}.j2"

    def overridden(self) -> list[str]:
        return [n for n in self.template_names() if self.override is not None and self.source_of(n).parent == self.override]

    def digest(self) -> str:
        """sha256 over every template's name and text as used: equal digests, equal prompts."""
        h = hashlib.sha256()
        for name in self.template_names():
            h.update(name.encode() + b"\0" + self.source_of(name).read_bytes() + b"\0")
        return "sha256:" + h.hexdigest()

    def describe(self) -> dict[str, Any]:
        """What run.json records about the prompt set."""
        return {
            "digest": self.digest(),
            "folder": str(self.override) if self.override is not None else None,
            "overridden": self.overridden(),
        }

    def check(self, samples: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        """Renders every template with sample values (the core's here, a strategy's from
        its `templates`: `samples`); raises PromptSetError at once rather than in the
        middle of a run."""
        given = {**VARIABLES, **(samples or {})}
        for name in self.template_names():
            blocks = [ref for ref in given if split_reference(ref)[0] == name and ":" in ref]
            if name not in given and not blocks:
                raise PromptSetError(f"{self.source_of(name)}: no sample values for template {name!r}; a strategy "
                                     "declares them in its `templates` (see docs/extending.md)")
            for ref in blocks or [name]:
                self.render(ref, **given[ref])

    def render(self, name: str, **values: Any) -> str:
        """Renders template `name`, or one block of it: `<template>:<block>`."""
        template_name, block = split_reference(name)
        if block is not None:
            values = {**values, "variant": block}
        try:
            template = self._env.get_template(f"{template_name}.j2")
            return template.render(**values).strip()
        except jinja2.UndefinedError as exc:
            raise PromptSetError(f"{self.source_of(name)}: {exc} (variables: see harness/prompts/README.md)") from None
        except jinja2.TemplateSyntaxError as exc:
            raise PromptSetError(f"{exc.filename or self.source_of(name)}:{exc.lineno}: {exc.message}") from None
        except jinja2.sandbox.SecurityError as exc:
            raise PromptSetError(f"{self.source_of(name)}: reaches outside its values ({exc})") from None
