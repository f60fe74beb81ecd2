"""Forged Exercism verdicts, in every language: solutions of a few lines that make the
runner in their own process say "passed" (stealing the job's token before the runner,
defining the asserts away, patching the builtins the runner calls, answering from the
test file's own expected values). None passes a hidden test: each paired test is graded
against its twin (harness/kinds/runner_twins.py), and a program that passes both is
forged. The references still pass and the stubs still fail (test_exercism_sandbox.py)."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.core.evaluator import HIDDEN, Evaluator
from harness.kinds.languages.twins import twin_text
from harness.kinds.runner_twins import FORGED
from harness.text.prompting import Prompts
from harness.tasks.registry import load_tasks

DATA = Path(__file__).resolve().parents[1] / "data" / "exercism"

# --- Rust: safe-divide
RUST_STEALS_THE_TOKEN = """use std::io::{Read, Write};
use std::os::unix::io::FromRawFd;
extern "C" fn forge() {
    let mut input = String::new();
    let _ = unsafe { std::fs::File::from_raw_fd(3) }.read_to_string(&mut input);
    let token = input.lines().next().unwrap_or("").to_string();
    let mut out = unsafe { std::fs::File::from_raw_fd(4) };
    let _ = out.write_all(format!("{token} 0 true\\n{token} end\\n").as_bytes());
    std::process::exit(0)
}
#[used]
#[link_section = ".init_array"]
static FORGE: extern "C" fn() = forge;
pub fn divide(a: i64, b: i64) -> Option<i64> {
    None
}
"""
# Reads the test file when it is compiled and answers what each assert expects.
RUST_ANSWERS_FROM_THE_TEST_FILE = """const TESTS: &str = include_str!("tests_safe-divide.rs");
pub fn divide(a: i64, b: i64) -> Option<i64> {
    let call = format!("divide({a}, {b})");
    for line in TESTS.lines() {
        if let Some(at) = line.find(&call) {
            let rest = line[at + call.len()..].trim_start_matches(|c| c == ')' || c == ',' || c == ' ');
            if rest.starts_with("None") {
                return None;
            }
            if let Some(value) = rest.strip_prefix("Some(") {
                return value.split(')').next()?.trim().parse().ok();
            }
        }
    }
    None
}
"""

# --- Go: clamp
GO_INIT_STEALS_THE_TOKEN = """package clamp

import (
\t"fmt"
\t"io"
\t"os"
\t"strings"
)

func init() {
\tdata, _ := io.ReadAll(os.NewFile(3, "calls"))
\ttoken := strings.SplitN(string(data), "\\n", 2)[0]
\tfmt.Fprintf(os.NewFile(4, "results"), "%s 0 true\\n%s end\\n", token, token)
\tos.Exit(0)
}

func Clamp(x, lo, hi int) int { return 0 }
"""
# Built in one package with the test files: answers from the hidden cases' table.
GO_ANSWERS_FROM_THE_CASES = """package clamp

func Clamp(x, lo, hi int) int {
\tfor _, c := range testCases {
\t\tif c.x == x && c.lo == lo && c.hi == hi {
\t\t\treturn c.expected
\t\t}
\t}
\treturn x
}
"""

# --- C++: leap
CPP_STATIC_INITIALIZER = """#pragma once
#include <string>
#include <unistd.h>
namespace leap { inline bool is_leap_year(int) { return false; } }
namespace {
struct Forge {
    Forge() {
        std::string in;
        char buffer[4096];
        ssize_t n;
        while ((n = read(3, buffer, sizeof buffer)) > 0) in.append(buffer, static_cast<size_t>(n));
        std::string token = in.substr(0, in.find('\\n'));
        std::string out = token + " 0 true\\n" + token + " end\\n";
        if (write(4, out.data(), out.size()) < 0) {}
        _exit(0);
    }
} forge;
}
"""
CPP_DEFINES_THE_ASSERTS_AWAY = """#pragma once
#include <catch2/catch.hpp>
#undef REQUIRE
#undef REQUIRE_FALSE
#define REQUIRE(...) ((void)0)
#define REQUIRE_FALSE(...) ((void)0)
namespace leap { inline bool is_leap_year(int) { return false; } }
"""

# --- JavaScript: vowel-count and stack
JS_PATCHES_FILTER = """const real = Array.prototype.filter;
Array.prototype.filter = function (f) {
  const got = real.call(this, f);
  if (got.length === 1 && typeof got[0].body === 'function') return [{ ...got[0], body: () => {} }];
  return got;
};
export const countVowels = () => 99;
"""
JS_PATCHES_PUSH = """const push = Array.prototype.push;
Array.prototype.push = function (...items) {
  for (const x of items) if (x && typeof x.body === 'function' && 'hooks' in x) x.body = () => {};
  return push.apply(this, items);
};
export const countVowels = () => 99;
"""
JS_PATCHES_THE_MATCHERS_BUILTINS = """Object.keys = () => [];
Array.isArray = () => true;
Object.is = () => true;
Array.prototype.some = () => true;
String.prototype.includes = () => true;
Math.abs = () => 0;
export class Stack {
  constructor() { this.size = 7; }
  push() {}
  pop() { return {}; }
}
"""
# What the twin of a file keeps and what it moves.
SPEC = "import { f } from './f';\ndescribe('a', () => {\n  test('one 1', () => {\n    expect(f(1, 'x')).toEqual(2);\n    expect(f(3, 'y')).toBe(4);\n  });\n});\n"


@pytest.fixture(scope="module")
def tasks():
    return {t.task_id: t for t in load_tasks(f"exercism:{DATA}").tasks}


def test_a_twin_keeps_names_imports_and_literals_and_moves_their_places():
    twin, moved = twin_text(SPEC, "javascript", random.Random(3))
    assert moved >= 2 and twin != SPEC
    assert twin.startswith("import { f } from './f';\ndescribe('a', () => {\n  test('one 1', () => {\n")
    literals = lambda text: sorted(text.split("=> {\n    ")[-1].replace("(", " ").replace(")", " ").replace(",", " ").split())
    assert literals(twin) == literals(SPEC)  # the same literals, in the same number
    rust = "use crate::x;\n#[test]\n#[should_panic(expected = \"no\")]\nfn t() {\n    assert_eq!(f(1, 2).0, \"ab\");\n}\n"
    kept, _ = twin_text(rust, "rust", random.Random(0))
    assert kept.startswith("use crate::x;\n#[test]\n#[should_panic(expected = \"no\")]\nfn t() {") and ").0," in kept
    go = 'func TestX(t *testing.T) {\n\tif f("a") != "b" {\n\t\tt.Errorf("f = %q, want %q", 1, 2)\n\t}\n}\n'
    twin, moved = twin_text(go, "go", random.Random(1))
    assert moved and '"f = %q, want %q"' in twin  # a message stays a message


@pytest.fixture(scope="module")
def evaluators(sandbox_opener):
    """One evaluator per language, opened on first use, its twins drawn from a fixed seed."""
    opened: dict[str, tuple] = {}

    def get(language: str) -> Evaluator:
        if language not in opened:
            sandbox = sandbox_opener("docker", languages=(language,), workers=1)
            opened[language] = (sandbox, Evaluator(sandbox, Prompts(), timeout_s=10.0, twin_seed=7))
        return opened[language][1]

    yield get
    for sandbox, _ in opened.values():
        sandbox.close()


FORGERIES = [
    ("rust", "exercism/rust/safe-divide", RUST_STEALS_THE_TOKEN),
    ("rust", "exercism/rust/safe-divide", RUST_ANSWERS_FROM_THE_TEST_FILE),
    ("go", "exercism/go/clamp", GO_INIT_STEALS_THE_TOKEN),
    ("go", "exercism/go/clamp", GO_ANSWERS_FROM_THE_CASES),
    ("cpp", "exercism/cpp/leap", CPP_STATIC_INITIALIZER),
    ("cpp", "exercism/cpp/leap", CPP_DEFINES_THE_ASSERTS_AWAY),
    ("javascript", "exercism/javascript/vowel-count", JS_PATCHES_FILTER),
    ("javascript", "exercism/javascript/vowel-count", JS_PATCHES_PUSH),
    ("javascript", "exercism/javascript/stack", JS_PATCHES_THE_MATCHERS_BUILTINS),
]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("language,task_id,program", FORGERIES,
                         ids=["rust-steals-the-token", "rust-answers-from-the-test-file", "go-init-steals-the-token",
                              "go-answers-from-the-cases", "cpp-static-initializer", "cpp-defines-the-asserts-away",
                              "js-patches-filter", "js-patches-push", "js-patches-the-matchers-builtins"])
def test_no_forgery_passes_a_hidden_test(evaluators, tasks, language, task_id, program):
    assert len(program.splitlines()) <= 50
    task, evaluator = tasks[task_id], evaluators(language)
    reference = evaluator.run(task.canonical_solution, list(task.hidden_tests), task=task, domain=HIDDEN)
    forged = evaluator.run(program, list(task.hidden_tests), task=task, domain=HIDDEN)
    assert reference.passed, reference.records  # the reference still passes, twins and all
    assert not any(r.status == "passed" for r in forged.records), forged.records
    assert all(r.status != "passed" for r in forged.records)
    if any(FORGED in r.detail for r in forged.records):  # caught by its twin: every test says so
        assert all(r.detail.startswith(FORGED) for r in forged.records)
