"""Exercism's exercises in their own layout, as Aider's polyglot benchmark keeps them:
`exercism:<folder>[:<language>]`, where the folder is a polyglot-benchmark checkout
(`<language>/exercises/practice/<slug>/`) or one language's `exercises/practice` folder.

An exercise is a folder: `.docs/` (introduction.md, instructions.md, instructions.append.md:
the prompt, in Aider's order), `.meta/config.json` (`files`: `solution`, `test`,
`example`, and Go's `editor` files such as cases_test.go), the stub solution, the test
file, and what the language's build needs (Rust's Cargo.toml).
A task is `exercism/<language>/<slug>`, a runner task (harness/kinds/runner.py): its
hidden tests are its test file's tests, by name, run with the language's test runner;
its reference solution is the example, its stub the exercise's stub.

Data is input, never code: every file is read inside its exercise's folder and never
through a link at any component (harness/tasks/folder.py), each name normalised and
read once, with limits per file, per exercise and per task set, as UTF-8 text; a
folder that is not an exercise the harness can run is a TaskError naming the file and
the reason, except an exercise whose build needs what is not offline (a Rust exercise
whose Cargo.toml names crates), which is left out and counted (`prompt_form`), as is one whose test file has no test
the runner would run.
"""
from __future__ import annotations

import os
from fnmatch import fnmatch
from pathlib import Path

from harness.kinds.languages import canonical, get_language, language_names
from harness.kinds.languages.runner import ExerciseLayout, RunnerTest, Suite
from harness.kinds.runner import VERDICT
from harness.tasks.base import JsonError, Task, TaskError, TaskSet, parse_json
from harness.tasks.folder import Folder, PathNameError, TooLarge, normal_name, open_folder
from harness.tasks.rows import default_limits, size_text
from sandbox.base import TestSuite
from sandbox.toolchains import toolchain

FILE_MAX_BYTES = 2 * 1024 * 1024  # any one file of an exercise (Catch2's header is 660 KB)
EXERCISE_MAX_BYTES = 8 * 1024 * 1024
CONFIG_MAX_BYTES = 256 * 1024
DOCS = (".docs/introduction.md", ".docs/instructions.md", ".docs/instructions.append.md")
PRACTICE = ("exercises", "practice")


class _Refused(Exception):
    """An exercise left out, counted: its build needs what is not offline, or its test
    file has no test the runner would run."""


class _Files:
    """One exercise's files by normal name, each read once and counted against the
    exercise's limit and the task set's (`budget`: bytes the set may still read)."""

    def __init__(self, folder: Folder, budget: list[int]) -> None:
        self.folder, self.budget, self.total = folder, budget, 0
        self.texts: dict[str, str] = {}

    def exists(self, name: str) -> bool:
        return self.folder.kind(name) != "missing"

    def text(self, name: str, limit: int = FILE_MAX_BYTES) -> str:
        if name in self.texts:
            return self.texts[name]
        exercise_left = EXERCISE_MAX_BYTES - self.total
        try:
            data = self.folder.read(name, min(limit, exercise_left, self.budget[0]))
        except TooLarge:
            if limit <= min(exercise_left, self.budget[0]):
                raise
            if exercise_left <= self.budget[0]:
                raise TaskError(f"{self.folder.path}: the exercise's files are larger than {EXERCISE_MAX_BYTES:,} "
                                f"bytes (at {name})") from None
            raise TaskError(f"{self.folder.path / name}: the task set's files pass "
                            f"{size_text(default_limits().per_set)}, the limit per task set") from None
        self.total += len(data)
        self.budget[0] -= len(data)
        try:
            self.texts[name] = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise TaskError(f"{self.folder.path / name}: not UTF-8 text (byte 0x{data[exc.start]:02x} at byte "
                            f"{exc.start + 1})") from None
        return self.texts[name]


def _names(config: dict, key: str, where: Path, required: bool) -> list[str]:
    """The file names `files.<key>` lists, each normalised (`./x` is `x`), once each."""
    value = config["files"].get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value) or (required and not value):
        raise TaskError(f"{where}: field 'files.{key}': expected a list of file names"
                        + (" (at least one)" if required else ""))
    try:
        return list(dict.fromkeys(normal_name(name, "the exercise") for name in value))
    except PathNameError as exc:
        raise TaskError(f"{where}: field 'files.{key}': {exc}") from None


def _pick(names: list[str], suffixes: tuple[str, ...]) -> str | None:
    return next((n for n in names if n.endswith(suffixes)), None)


def _merged(program: str, others: list[str], header: str) -> str:
    """One answer of several solution files: the program's file, then the others, each
    without the line that includes the program's file (C++'s .cpp after its header)."""
    parts = [program.rstrip("\n") + "\n"]
    for text in others:
        lines = [line for line in text.splitlines() if not (line.lstrip().startswith("#include")
                                                            and f'"{Path(header).name}"' in line)]
        parts.append("\n".join(lines).strip("\n") + "\n")
    return "\n".join(parts)


def _config(files: _Files) -> dict:
    where = files.folder.path / ".meta" / "config.json"
    if not files.exists(".meta/config.json"):
        raise TaskError(f"{where}: missing (every exercise has .meta/config.json naming its files)")
    try:
        config = parse_json(files.text(".meta/config.json", CONFIG_MAX_BYTES))
    except JsonError as exc:
        raise TaskError(f"{where}: {exc}") from None
    if not isinstance(config, dict) or not isinstance(config.get("files"), dict):
        raise TaskError(f"{where}: expected an object with a 'files' object")
    return config


def _exercise(practice: Folder, slug: str, language: str, layout: ExerciseLayout, budget: list[int]) -> Task:
    with Folder.inside(practice, slug) as opened:
        return _exercise_in(_Files(opened, budget), language, layout)


def _exercise_in(reader: _Files, language: str, layout: ExerciseLayout) -> Task:
    folder = reader.folder.path
    where = folder / ".meta" / "config.json"
    config = _config(reader)
    solution = _names(config, "solution", where, True)
    tests = _names(config, "test", where, True)
    example = _names(config, "example", where, True)
    editor = _names(config, "editor", where, False)
    program_path = _pick(solution, layout.program)
    if program_path is None:
        raise TaskError(f"{where}: field 'files.solution': no file ending in {' or '.join(layout.program)} "
                        f"(the {get_language(language).display} solution)")
    reference_path = _pick(example, layout.program)
    if reference_path is None:
        raise TaskError(f"{where}: field 'files.example': no file ending in {' or '.join(layout.program)}")
    files: dict[str, str] = {}
    companions = sorted(name for pattern in layout.companions for name in reader.folder.glob(pattern))  # no link
    editor = list(dict.fromkeys([*editor, *(name for name in companions if name not in tests and name not in solution)]))
    for name in dict.fromkeys([*solution, *tests, *editor, *layout.support]):
        if not reader.exists(name):
            raise TaskError(f"{folder / name}: missing (named by .meta/config.json)" if name not in layout.support
                            else f"{folder / name}: missing (a {get_language(language).display} exercise's build needs it)")
        files[name] = reader.text(name)
    why = layout.problem(files)
    if why:
        raise _Refused(f"{folder.name} ({why})")
    merged = [n for n in solution if n.endswith(layout.merged)] if layout.merged else []
    stub = _merged(files[program_path], [files[n] for n in merged], program_path)
    examples = {name: reader.text(name) for name in example}
    reference = _merged(examples[reference_path], [examples[n] for n in example if n.endswith(layout.merged)],
                        program_path) if merged else examples[reference_path]
    test_path = next((t for t in tests if layout.test_names(files[t])), None)
    if test_path is None:
        raise _Refused(f"{folder.name} ({tests[0]}: no test the {get_language(language).display} runner would run)")
    names: dict[str, None] = {}
    for name in layout.test_names(files[test_path]):
        names.setdefault(name)
    for path in [*tests, *editor]:  # Go's other test files (cases_test.go) hold data, or tests of their own
        if path != test_path:
            for name in layout.test_names(files[path]):
                names.setdefault(name)
    docs = [reader.text(doc).strip() for doc in DOCS if reader.exists(doc)]
    if not docs:
        raise TaskError(f"{folder / DOCS[1]}: missing (the exercise's instructions are its prompt)")
    # The suite: every file but the program's own and the merged ones (the answer holds them).
    suite_files = tuple((name, text) for name, text in files.items() if name != program_path and name not in merged)
    hidden = tuple(name for name, _ in suite_files if name in tests
                   or any(fnmatch(name, pattern) for pattern in layout.test_data))
    suite = Suite(program_path, test_path, suite_files, hidden)
    try:  # what the sandbox's toolchain cannot build (several test crates, no package name) is left out here
        toolchain(language).build_runner(reference, TestSuite(program_path, suite_files))
    except ValueError as exc:
        raise _Refused(f"{folder.name} ({exc})") from None
    slug = folder.name
    exercise = {"slug": slug, "solution_path": program_path, "test_path": test_path,
                "merged": merged, **layout.naming(files, program_path)}
    return Task(task_id=f"exercism/{language}/{slug}", prompt="\n\n".join(docs) + "\n", entry_point="",
                hidden_tests=tuple(RunnerTest(name, suite) for name in names), language=language,
                canonical_solution=reference, kind="runner",
                meta={"source": str(folder), "exercise": exercise, "stub": stub, "verdict": VERDICT})


def _real_folder(root: Path, below: tuple[str, ...]) -> bool:
    """True when root/below is a folder reached through no link below `root`."""
    try:
        os.close(open_folder(root, below))
    except TaskError:
        return False
    return True


def _practice_folders(root: Path, language: str | None) -> list[tuple[str, tuple[str, ...]]]:
    """(language, the exercises/practice folder's parts below `root`) pairs the spec names."""
    found = []
    for lang in ([language] if language else list(language_names())):
        if get_language(lang).exercise is not None and _real_folder(root, (lang, *PRACTICE)):
            found.append((lang, (lang, *PRACTICE)))
    if found:
        return found
    below = PRACTICE if _real_folder(root, PRACTICE) else ()  # one language's track: <root>/exercises/practice
    track = root.joinpath(*below)
    with Folder(open_folder(root, below), track) as practice:
        holds = any(kind == "folder" and practice.kind(f"{name}/.meta/config.json") == "file"
                    for name, kind in practice.entries())
    if holds:
        if language is None:  # .../<language>/exercises/practice names its language
            parts = track.resolve().parts
            guess = parts[-3] if len(parts) >= 3 and parts[-2:] == PRACTICE else ""
            try:
                language = canonical(guess)
            except ValueError:
                raise TaskError(f"exercism: {track} holds exercises but names no language; "
                                "add it: exercism:<folder>:rust (or go, cpp, javascript)") from None
        return [(language, below)]
    raise TaskError(f"exercism: {root} holds no exercises (expected <language>/exercises/practice/<slug>/ "
                    "or <slug>/.meta/config.json)")


def _exercises(root: Path, lang: str, below: tuple[str, ...], budget: list[int],
               tasks: list[Task], left_out: list[str]) -> None:
    """Each exercise of one practice folder into `tasks`, or `left_out` with why."""
    layout = get_language(lang).exercise
    with Folder(open_folder(root, below), root.joinpath(*below)) as practice:
        for name, kind in practice.entries():
            if name.startswith(".") or kind not in ("folder", "link"):
                continue
            if kind == "link":
                left_out.append(f"{lang}/{name} (a link; links in a task folder are never followed)")
                continue
            try:
                tasks.append(_exercise(practice, name, lang, layout, budget))  # type: ignore[arg-type]
            except _Refused as exc:
                left_out.append(f"{lang}/{exc}")


class ExercismSource:
    """`exercism:<folder>[:<language>]`."""

    prefix = "exercism"
    usage = "exercism:<folder>[:{languages}]  (a polyglot-benchmark checkout, or one language's exercises/practice)"

    def load(self, arg: str) -> TaskSet:
        folder, _, language = arg.rpartition(":") if ":" in arg else (arg, "", "")
        if not folder:
            raise TaskError("exercism: expected exercism:<folder>[:<language>], e.g. exercism:polyglot-benchmark:rust")
        chosen = None
        if language:
            try:
                chosen = canonical(language)
            except ValueError as exc:
                raise TaskError(f"exercism: {exc}") from None
            if get_language(chosen).exercise is None:
                raise TaskError(f"exercism: the harness runs no {chosen} exercises; "
                                f"it runs {', '.join(n for n in language_names() if get_language(n).exercise)}")
        root = Path(folder).expanduser()
        if not root.is_dir():
            raise TaskError(f"exercism: {root} is not a folder (a polyglot-benchmark checkout, or exercises/practice)")
        tasks: list[Task] = []
        left_out: list[str] = []
        budget = [default_limits().per_set]  # bytes the task set may still read
        for lang, below in _practice_folders(root, chosen):
            _exercises(root, lang, below, budget, tasks, left_out)
        if not tasks:
            raise TaskError(f"exercism: no exercise of {root} can be run" + (f" (first left out: {left_out[0]})" if left_out else ""))
        form = f"Exercism's layout; the exercise's own test file run with the language's test runner ({VERDICT})"
        if left_out:
            shown = "; ".join(reason[:160] for reason in left_out[:10]) + ("; ..." if len(left_out) > 10 else "")
            form += (f"; {len(left_out)} exercise(s) left out: a build that needs what is not offline or that the "
                     f"sandbox's toolchain cannot make, or no test to run ({shown})")
        return TaskSet(spec=f"exercism:{arg}", name=f"exercism:{chosen or 'all'}", tasks=tuple(tasks), prompt_form=form)
