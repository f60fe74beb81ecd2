"""Twin test files: an exercise's test files with their literals shuffled, so that a
program that passes a twin's test while it passes the test itself is judged by
something other than the test's asserts (harness/kinds/runner_twins.py says how the pair
is graded).

A twin keeps every test's name, its place in the file and the file's shape: each string,
character and number literal of the test files (outside imports, includes, attributes
and the tests' own names) is moved to another place that holds a literal of the same
kind, in a random order drawn for the run (a message's format string stays). The twin holds the same literals as the
file, in the same number, so code that reads its own test file (its text, its binary, a
test function's source) sees a file like the real one; telling them apart means
knowing which pairing of inputs and expected values is right.

Data only: nothing here runs or compiles anything.
"""
from __future__ import annotations

import random
import re
from typing import Iterable

# Comments and raw or template strings are passed over whole (never shuffled); then
# strings, characters and numbers (not part of a name, not a tuple field `x.0`).
_TOKEN = re.compile(
    r"""(?P<skip>//[^\n]*|/\*.*?\*/|(?<!\w)b?r(?P<hashes>\#*)".*?"(?P=hashes)|`(?:[^`\\]|\\.)*`)"""
    r"""|(?P<string>(?<!\w)b?"(?:[^"\\\n]|\\.)*")"""
    r"""|(?P<quoted>(?<!\w)b?'(?:[^'\\\n]|\\.)*')"""
    r"""|(?P<number>(?<![\w.$])\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?(?P<suffix>[A-Za-z_]\w*)?)""",
    re.DOTALL)
# Spans whose literals are kept where they are: imports and includes, attributes and
# preprocessor lines, and the names of tests (a twin's tests are named as the file's).
_KEPT = re.compile(
    r"""^[ \t]*(?:\#|import\b|use\b|package\b|extern\b|mod\b)[^\n]*(?:\((?:[^()]|\n)*\))?"""
    r"""|\brequire\s*\([^)]*\)"""
    r"""|\b(?:x|f)?(?:describe|test|it)(?:\.\w+)?\s*\(\s*(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
    r"""|\b(?:TEST_CASE|SECTION|SCENARIO|GIVEN|WHEN|THEN|AND_THEN|TEMPLATE_TEST_CASE)\s*\((?:\s*"(?:[^"\\\n]|\\.)*"\s*,?)*""",
    re.MULTILINE)
# A test's messages (format strings: Go's and C's `%d`, Rust's `{}`) are not data: moved
# among the data, they would mark a twin (a case described "want %d").
_FORMAT = {"go": re.compile(r"%[-+ #0-9.*]*[a-zA-Z]"), "cpp": re.compile(r"%[-+ #0-9.*]*[a-zA-Z]"),
           "rust": re.compile(r"\{(?:[A-Za-z_]\w*|\d+)?(?::[^{}]*)?\}")}
KINDS = ("strings", "numbers")  # what a twin may shuffle: both, or one of them when both do not build


def _kind(match: re.Match, language: str) -> str | None:
    text = match.group(0)
    if match.group("string") is not None:
        return "string:" + text[:1]
    if match.group("quoted") is not None:
        # JavaScript's single quotes are strings; elsewhere a character (Rust's lifetimes
        # never match: they have no closing quote)
        return ("string:'" if language == "javascript" else "char:" + text[:1]) if len(text) > 2 else None
    if match.group("number") is not None:
        if re.match(r"0[xXbBoO]", text):
            return None
        suffix = match.group("suffix") or ""
        return f"number:{'.' in text}:{'e' in text.lower().rstrip(suffix.lower())}:{suffix}"
    return None


def _places(text: str, language: str, kinds: Iterable[str]) -> dict[str, list[tuple[int, int]]]:
    """Each kind of literal -> the (start, end) of its places the twin may shuffle."""
    kept = [m.span() for m in _KEPT.finditer(text)]
    wanted = tuple(kinds)
    places: dict[str, list[tuple[int, int]]] = {}
    for m in _TOKEN.finditer(text):
        kind = _kind(m, language)
        if kind is None or ("numbers" if kind.startswith("number") else "strings") not in wanted:
            continue  # characters go with strings (each kind keeps to itself all the same)
        start, end = m.span()
        if any(a <= start < b for a, b in kept):
            continue
        if kind.startswith("string") and language in _FORMAT and _FORMAT[language].search(m.group(0)):
            continue
        places.setdefault(kind, []).append((start, end))
    return places


def twin_text(text: str, language: str, rng: random.Random, kinds: Iterable[str] = KINDS) -> tuple[str, int]:
    """`text` with the literals of each kind shuffled among their places, and how many
    places now hold another literal. Of a few shuffles, the one that moves the most."""
    replaced: dict[tuple[int, int], str] = {}
    for spots in _places(text, language, tuple(kinds)).values():
        values = [text[a:b] for a, b in spots]
        best, moved = values, 0
        for _ in range(8):
            order = values[:]
            rng.shuffle(order)
            count = sum(x != y for x, y in zip(order, values))
            if count > moved:
                best, moved = order, count
        replaced.update(zip(spots, best))
    out, last, moved = [], 0, 0
    for (a, b), value in sorted(replaced.items()):
        out.append(text[last:a])
        out.append(value)
        moved += value != text[a:b]
        last = b
    out.append(text[last:])
    return "".join(out), moved





def twin_suite(suite, language: str, rng: random.Random, kinds: Iterable[str] = KINDS):
    """The suite with each of its test files (those in `suite.hidden` written in the test
    file's language: Go's cases_test.go too, never a bundled header) twinned; and how
    many literals moved in all."""
    from harness.kinds.languages.runner import Suite

    suffix = "." + suite.test_path.rsplit(".", 1)[-1]
    files, moved = [], 0
    for path, text in suite.files:
        if path in suite.hidden and path.endswith(suffix):
            text, count = twin_text(text, language, rng, kinds)
            moved += count
        files.append((path, text))
    return Suite(suite.program_path, suite.test_path, tuple(files), suite.hidden), moved
__all__ = ["KINDS", "twin_suite", "twin_text"]
