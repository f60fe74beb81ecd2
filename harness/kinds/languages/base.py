"""What a language is to the harness: its fences, how its code and tests are taken out of
an answer, how its tests are given to the sandbox, its prompt templates and its export
form. Python's is the harness's own (extract.py, the Python sandbox); every other
language is a `Language` with a toolchain in the sandbox (sandbox/toolchains/)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from harness.kinds.languages.literals import LiteralError, parse_assert

# The templates a language other than Python has its own of (`<name>_lang`, or
# `<name>_io_lang` for an io task): they take `language` and `fence` besides the usual.
LANG_TEMPLATES = ("actor_system", "actor_task", "actor_retry", "testgen_system", "testgen",
                  "reflection_system", "reflection")
LANG_IO_TEMPLATES = ("actor_system", "actor_task", "actor_retry", "reflection")
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.#-]*)[^\n]*\n(.*?)(?:\n[ \t]*```|\Z)", re.DOTALL)
_MAX_TEST_LINES = 1000


class UnusableAnswer(ValueError):
    """An answer with no code of the language in it; the message says why."""


@dataclass(frozen=True)
class CallSpec:
    """One call of a language-neutral test: arguments and expected value as JSON values."""

    args: tuple
    expected: object
    label: str = ""

    def as_dict(self) -> dict:
        return {"args": list(self.args), "expected": self.expected, **({"label": self.label} if self.label else {})}


@dataclass(frozen=True)
class Language:
    name: str
    display: str  # as prompts name it: "Rust"
    fences: tuple[str, ...]  # code-fence tags its answers use, the first the one prompts ask for
    assert_form: str  # a test line as the test writer is asked to write it
    main_function: str = ""  # a regular expression for the start of a `main` a function task's answer drops
    comment: str = "//"
    extension: str = ""
    exercise: object = None  # its Exercism exercises' layout (runner.ExerciseLayout); None: it has none
    aliases: tuple[str, ...] = ()  # other names task files and datasets give it (MultiPL-E's suffixes)

    @property
    def fence(self) -> str:
        return self.fences[0]

    @property
    def is_python(self) -> bool:
        return self.name == "python"

    def template(self, name: str, kind: str) -> str:
        """The template a role uses for a task of this language and kind."""
        if kind == "io":
            return f"{name}:io_lang" if name in LANG_IO_TEMPLATES else f"{name}:io"
        return f"{name}:lang" if name in LANG_TEMPLATES else f"{name}:function"

    def template_values(self, entry_point: str = "") -> dict:
        return {"language": self.display, "fence": self.fence,
                "assert_form": self.assert_form.replace("f(", f"{entry_point or 'f'}(")}

    # --- code out of answers

    def blocks(self, text: str) -> list[str]:
        """Fenced blocks tagged as this language (or untagged); with no fence, the text."""
        found = [(tag.lower(), body) for tag, body in _FENCE.findall(text)]
        tagged = [body for tag, body in found if tag in self.fences]
        if tagged:
            return tagged
        untagged = [body for tag, body in found if tag == ""]
        if untagged:
            return untagged
        return [] if found else [text]

    def extract_code(self, text: str, entry_point: str) -> str:
        """The function task's code: the first block that defines `entry_point`, without
        a `main` of its own (the driver has one)."""
        if not text.strip():
            raise UnusableAnswer("the answer was empty")
        defining = re.compile(r"\b" + re.escape(entry_point) + r"\b")
        for block in self.blocks(text):
            if defining.search(block):
                return self.without_main(block).strip("\n") + "\n"
        raise UnusableAnswer(f"no {self.display} code block defines `{entry_point}`")

    def extract_program(self, text: str) -> str:
        """An io task's program: the longest block."""
        blocks = [block for block in self.blocks(text) if block.strip()]
        if not blocks:
            raise UnusableAnswer(f"no {self.display} code block in the answer")
        return max(blocks, key=len).strip("\n") + "\n"

    def without_main(self, code: str) -> str:
        """`code` without a top-level main function (its braces matched), if it has one."""
        if not self.main_function:
            return code
        match = re.search(self.main_function, code, re.MULTILINE)
        if match is None:
            return code
        start = code.find("{", match.end() - 1)
        if start < 0:
            return code
        depth, index = 0, start
        while index < len(code):
            depth += {"{": 1, "}": -1}.get(code[index], 0)
            if depth == 0:
                return code[:match.start()] + code[index + 1:]
            index += 1
        return code

    def graded_program(self, prompt: str, code: str, entry_point: str) -> str:
        """What is compiled: the code when it defines the entry point (a whole function),
        else the prompt then the code (a body completing the prompt's signature, as
        HumanEval's and MultiPL-E's completions are)."""
        if entry_point and re.search(r"\b" + re.escape(entry_point) + r"\s*[(<]", code) and not _only_calls(code, entry_point, self):
            return code
        return prompt + code

    # --- tests

    def parse_test_lines(self, text: str, entry_point: str, max_tests: int) -> tuple[list[CallSpec], int, int, int]:
        """(calls, unparseable, no_call, over_limit) from a test writer's answer: one test
        line each (see literals.py)."""
        kept: list[CallSpec] = []
        seen: set[str] = set()
        unparseable = no_call = over = 0
        lines = [line for block in self.blocks(text) for line in block.splitlines()][:_MAX_TEST_LINES]
        for line in lines:
            stripped = line.strip()
            if not stripped or stripped.startswith(self.comment):
                continue
            if not re.search(r"\b" + re.escape(entry_point) + r"\s*\(", stripped):
                if "assert" in stripped:
                    no_call += 1
                continue
            try:
                parsed = parse_assert(stripped, entry_point)
            except (LiteralError, RecursionError):
                unparseable += 1
                continue
            key = json.dumps([parsed.args, parsed.expected])
            if key in seen:
                continue
            if len(kept) >= max_tests:
                over += 1
                continue
            seen.add(key)
            kept.append(CallSpec(tuple(parsed.args), parsed.expected, parsed.label))
        return kept, unparseable, no_call, over


def _only_calls(code: str, entry_point: str, language: Language) -> bool:
    """Whether the code only calls the entry point (a body), never defines it."""
    definitions = {
        "rust": r"\bfn\s+" + re.escape(entry_point) + r"\b",
        "go": r"\bfunc\s+" + re.escape(entry_point) + r"\b",
        "javascript": r"(\bfunction\s+" + re.escape(entry_point) + r"\b|\b(const|let|var)\s+" + re.escape(entry_point) + r"\s*=)",
        "cpp": r"\b" + re.escape(entry_point) + r"\s*\([^;{]*\)\s*(const\s*)?\{",
    }
    pattern = definitions.get(language.name)
    return pattern is not None and re.search(pattern, code) is None


@dataclass(frozen=True)
class CallTest:
    """A hidden or internal test of a function task in another language: calls made in one
    process of the program, each result compared outside it (sandbox CallCase)."""

    __test__ = False

    calls: tuple[CallSpec, ...]
    label: str = ""
    tolerance: float | None = None

    def name(self) -> str:
        if self.label:
            return self.label
        return "; ".join(call.label or f"{json.dumps(list(call.args))} -> {json.dumps(call.expected)}" for call in self.calls)[:300]

    def as_dict(self) -> dict:
        out: dict = {"calls": [call.as_dict() for call in self.calls]}
        if self.label:
            out["label"] = self.label
        if self.tolerance is not None:
            out["tolerance"] = self.tolerance
        return out


__all__ = ["CallSpec", "CallTest", "LANG_TEMPLATES", "Language", "UnusableAnswer", "field"]
