"""An exercise's own tests, as the harness keeps them: the test file's tests by name
(`RunnerTest`), each holding the suite it belongs to (`Suite`: the exercise's files the
program is built with, and the solution's path), and how each language's test file names
its tests (`TEST_NAMES`), read as data: nothing here runs or compiles a test.

The sandbox runs them with the language's test runner (sandbox/toolchains/, "Test
runners"), one process per test; the verdict is the runner's, in the program's process.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Callable


@dataclass(frozen=True)
class Suite:
    """The files a program is built with to run the tests (path -> text, in the exercise's
    layout), where the program goes, and which file holds the tests."""

    program_path: str
    test_path: str
    files: tuple[tuple[str, str], ...]

    @cached_property
    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(json.dumps([self.program_path, self.test_path, self.files]).encode()).hexdigest()

    def file(self, path: str) -> str:
        return next((text for name, text in self.files if name == path), "")

    def with_tests(self, text: str) -> "Suite":
        """The same exercise with another test file (the agent's own tests in its place)."""
        return Suite(self.program_path, self.test_path,
                     tuple((path, text if path == self.test_path else body) for path, body in self.files))


@dataclass(frozen=True)
class RunnerTest:
    """One test of a suite, by the name its runner knows it by."""

    __test__ = False

    test: str
    suite: Suite

    def name(self) -> str:
        return self.test

    def as_dict(self) -> dict:
        return {"runner_test": self.test, "suite": self.suite.digest}


def _rust(text: str) -> list[str]:
    return re.findall(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*(?:pub\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)", _no_comments(text))


def _go(text: str) -> list[str]:
    found = re.findall(r"^func\s+(Test[A-Za-z0-9_]*)\s*\(\s*\w+\s+\*testing\.T\s*\)", text, re.MULTILINE)
    return [name for name in found if name == "Test" or not name[4:5].islower()]


def _cpp(text: str) -> list[str]:
    found = re.findall(r'\bTEST_CASE\s*\(\s*"((?:[^"\\\n]|\\.)*)"', _without_benchmarks(_no_comments(text)))
    return [bytes(name, "utf-8").decode("unicode_escape") if "\\" in name else name for name in found]


_JS_TOKEN = re.compile(r"""//[^\n]*|/\*.*?\*/|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`|[{}()]|"""
                       r"""\b(describe|xdescribe|fdescribe|test|it|xtest|xit|fit)(?:\.(?:skip|only))?\s*\(\s*""",
                       re.DOTALL)


def _javascript(text: str) -> list[str]:
    """jest's full test names: the enclosing describes' names and the test's, joined by a
    space; the names must be plain string literals."""
    names: list[str] = []
    stack: list[tuple[str, int]] = []  # (describe name, depth its body opened at)
    depth = 0
    pending: str | None = None  # the call just seen, waiting for its name
    for m in _JS_TOKEN.finditer(text):
        token = m.group(0)
        if m.group(1):
            pending = m.group(1)
            literal = re.match(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`[^`$\\]*`""", text[m.end():])
            if literal is None:
                pending = None
                depth += 1
                continue
            name = _js_string(literal.group(0))
            depth += 1  # the call's own parenthesis, which the token took
            if pending.endswith("describe"):
                stack.append((name, depth))
            else:
                names.append(" ".join([*(n for n, _ in stack), name]))
            pending = None
            continue
        if token in "({":
            depth += 1
        elif token in ")}":
            depth -= 1
            while stack and depth < stack[-1][1]:
                stack.pop()
    return names


def _js_string(literal: str) -> str:
    body = literal[1:-1]
    if literal[0] == "'":
        body = body.replace('\\"', '"').replace('"', '\\"').replace("\\'", "'")
    if literal[0] == "`":
        body = body.replace('"', '\\"')
    try:
        return json.loads('"' + body + '"', strict=False)
    except ValueError:
        return body


def _no_comments(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.DOTALL)


_CPP_IF = re.compile(r"^\s*#\s*if(n?def)?\b")
_CPP_ENDIF = re.compile(r"^\s*#\s*endif\b")


def _without_benchmarks(text: str) -> str:
    """A C++ test file without its `#if defined(EXERCISM_INCLUDE_BENCHMARK)` blocks: a
    benchmark is not a test, and Exercism's runner does not build it."""
    kept: list[str] = []
    skipping, depth = False, 0
    for line in text.splitlines():
        if skipping:
            depth += 1 if _CPP_IF.match(line) else -1 if _CPP_ENDIF.match(line) else 0
            skipping = depth > 0
            continue
        if _CPP_IF.match(line) and "EXERCISM_INCLUDE_BENCHMARK" in line:
            skipping, depth = True, 1
            continue
        kept.append(line)
    return "\n".join(kept)


def _cpp_libraries(files: dict[str, str]) -> str | None:
    """Why a C++ exercise cannot be built here: it includes Boost (Exercism's gigasecond
    and meetup), which the C++ image does not hold."""
    for name, text in files.items():
        if re.search(r"^\s*#\s*include\s*[<\"]boost/", text, re.MULTILINE):
            return f"{name} includes Boost, which the sandbox's C++ image does not hold"
    return None


def _cargo_dependencies(files: dict[str, str]) -> str | None:
    """Why a Rust exercise cannot be built offline: its Cargo.toml needs crates."""
    manifest = files.get("Cargo.toml", "")
    for section in re.findall(r"^\[((?:dev-|build-)?dependencies)\]\s*\n(.*?)(?=^\[|\Z)", manifest, re.MULTILINE | re.DOTALL):
        crates = [line.split("=", 1)[0].strip() for line in section[1].splitlines() if "=" in line and not line.strip().startswith("#")]
        if crates:
            return f"Cargo.toml needs crates ({', '.join(crates)}) that are not available offline"
    return None


def _crate(files: dict[str, str], program_path: str) -> dict[str, str]:
    found = re.search(r'^\s*name\s*=\s*"([A-Za-z0-9_-]+)"', files.get("Cargo.toml", ""), re.MULTILINE)
    return {"crate": found.group(1).replace("-", "_") if found else ""}


def _package(files: dict[str, str], program_path: str) -> dict[str, str]:
    found = re.search(r"^package\s+(\w+)", files.get(program_path, ""), re.MULTILINE)
    return {"package": found.group(1) if found else ""}


def _js_module(files: dict[str, str], program_path: str) -> dict[str, str]:
    return {"module": program_path[:-3] if program_path.endswith(".js") else program_path}


@dataclass(frozen=True)
class ExerciseLayout:
    """What an Exercism exercise of one language is made of, as the loader reads it."""

    test_names: Callable[[str], list[str]]  # a test file's tests, as its runner names them
    program: tuple[str, ...]  # the solution file that is the program: the first with one of these endings
    merged: tuple[str, ...] = ()  # solution files put after the program in one answer (C++'s .cpp after its header)
    support: tuple[str, ...] = ()  # files of the exercise the build needs besides its tests
    problem: Callable[[dict[str, str]], str | None] = lambda files: None  # why it cannot be built, or None
    # What the test writer's prompt names (the crate, the package, the module): (files, program path) -> values.
    naming: Callable[[dict[str, str], str], dict[str, str]] = lambda files, program_path: {}


RUST_EXERCISE = ExerciseLayout(_rust, (".rs",), support=("Cargo.toml",), problem=_cargo_dependencies, naming=_crate)
GO_EXERCISE = ExerciseLayout(_go, (".go",), naming=_package)
CPP_EXERCISE = ExerciseLayout(_cpp, (".h", ".hpp"), merged=(".cpp", ".cc"), problem=_cpp_libraries)
JAVASCRIPT_EXERCISE = ExerciseLayout(_javascript, (".js",), naming=_js_module)


def runner_test_names(language: str, text: str) -> list[str]:
    """The tests of a test file, in order, each name once."""
    from harness.kinds.languages import get_language

    layout = get_language(language).exercise
    if layout is None:
        return []
    seen: dict[str, None] = {}
    for name in layout.test_names(text):
        seen.setdefault(name)
    return list(seen)


__all__ = ["CPP_EXERCISE", "ExerciseLayout", "GO_EXERCISE", "JAVASCRIPT_EXERCISE", "RUST_EXERCISE", "RunnerTest",
           "Suite", "runner_test_names"]
