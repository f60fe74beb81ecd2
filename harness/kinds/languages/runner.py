"""An exercise's own tests, as the harness keeps them: the test file's tests by name
(`RunnerTest`), each holding the suite it belongs to (`Suite`: the exercise's files the
program is built with, and the solution's path), and how each language's test file names
its tests (each language module's `ExerciseLayout`), read as data: nothing here runs or compiles a test.

The sandbox runs them with the language's test runner (sandbox/toolchains/, "Test
runners"), one process per test; the verdict is the runner's, in the program's process,
and the hidden tests' are checked against twins (twins.py, harness/kinds/runner_twins.py).
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
    layout), where the program goes, which file holds the tests, and which files are the
    exercise's test files and test data (hidden: never in the agent's domain)."""

    program_path: str
    test_path: str
    files: tuple[tuple[str, str], ...]
    hidden: tuple[str, ...] = ()  # the test files and their data (Go's cases_test.go): the hidden tests' own

    @cached_property
    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(json.dumps([self.program_path, self.test_path, self.files,
                                                      self.hidden]).encode()).hexdigest()

    def file(self, path: str) -> str:
        return next((text for name, text in self.files if name == path), "")

    def with_tests(self, text: str) -> "Suite":
        """The agent's own tests in the test file's place, built with none of the
        exercise's test files or test data: what the program needs (its other modules, the
        manifest) and the agent's file alone."""
        kept = tuple((path, text if path == self.test_path else body) for path, body in self.files
                     if path == self.test_path or path not in self.hidden)
        return Suite(self.program_path, self.test_path, kept)


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


def no_comments(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.DOTALL)


@dataclass(frozen=True)
class ExerciseLayout:
    """What an Exercism exercise of one language is made of, as the loader reads it."""

    test_names: Callable[[str], list[str]]  # a test file's tests, as its runner names them
    program: tuple[str, ...]  # the solution file that is the program: the first with one of these endings
    merged: tuple[str, ...] = ()  # solution files put after the program in one answer (C++'s .cpp after its header)
    support: tuple[str, ...] = ()  # files of the exercise the build needs besides its tests
    # Files the language's tooling builds with the tests whether or not config.json names
    # them, as patterns in the exercise's folder (Go's every *_test.go: cases_test.go; Rust's
    # src/*.rs: a crate's other modules)
    companions: tuple[str, ...] = ()
    problem: Callable[[dict[str, str]], str | None] = lambda files: None  # why it cannot be built, or None
    # The exercise's test files and test data, as patterns in its folder, beside those
    # config.json names as tests (Go's cases_test.go, named as an editor file): never built
    # with the agent's own tests.
    test_data: tuple[str, ...] = ()
    # What the test writer's prompt names (the crate, the package, the module): (files, program path) -> values.
    naming: Callable[[dict[str, str], str], dict[str, str]] = lambda files, program_path: {}


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


__all__ = ["ExerciseLayout", "RunnerTest", "Suite", "no_comments", "runner_test_names"]
