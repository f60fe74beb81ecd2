"""Pulls code and unit tests out of model answers."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


# A closing fence on its own line: what follows a code block is commentary, so calls
# that want code stop there (saves output tokens; the extractor accepts the open block).
END_OF_CODE_BLOCK = ("\n```\n",)


class UnparseableOutput(ValueError):
    """The model's answer holds no usable code; the message says why."""


def code_blocks(text: str) -> list[str]:
    """Fenced blocks (an unterminated last block counts: answers get cut at max_tokens)."""
    blocks = [body for lang, body in _FENCE.findall(text) if lang.lower() in ("", "python", "py", "python3")]
    return blocks or [text]


def _parses(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _defines(tree: ast.Module, name: str) -> bool:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return True
    return False


def extract_code(text: str, entry_point: str) -> str:
    """The implementation in an Actor's answer: the first block that defines `entry_point`."""
    if not text.strip():
        raise UnparseableOutput("the answer was empty")
    blocks = code_blocks(text)
    syntax_error = ""
    for block in blocks:
        tree = _parses(block)
        if tree is None:
            try:
                ast.parse(block)
            except SyntaxError as exc:
                syntax_error = f"SyntaxError: {exc.msg} (line {exc.lineno})"
            continue
        if _defines(tree, entry_point):
            return block.strip("\n") + "\n"
    if syntax_error:
        raise UnparseableOutput(f"the code does not parse: {syntax_error}")
    raise UnparseableOutput(f"no code block defines `{entry_point}`")


@dataclass(frozen=True)
class ExtractedTests:
    kept: list[str]
    unparseable: int  # candidate asserts that did not parse, or were not one assert on the function
    over_limit: int  # parseable ones beyond the limit


def extract_tests(text: str, entry_point: str, max_tests: int) -> ExtractedTests:
    """Single `assert` statements that call `entry_point`, deduplicated, at most `max_tests`."""
    candidates: list[str] = []
    for block in code_blocks(text):
        lines = block.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i].strip()
            if not line.startswith("assert"):
                i += 1
                continue
            # An assert may continue over several lines (open brackets); grow until it parses.
            stmt, j = line, i
            while _parses(stmt) is None and j + 1 < len(lines) and j - i < 10:
                j += 1
                stmt = stmt + "\n" + lines[j]
            if _parses(stmt) is not None:
                candidates.append(stmt)
                i = j + 1
            else:
                candidates.append(line)
                i += 1
    kept: list[str] = []
    unparseable = 0
    over = 0
    for stmt in candidates:
        tree = _parses(stmt)
        ok = (
            tree is not None
            and len(tree.body) == 1
            and isinstance(tree.body[0], ast.Assert)
            and any(isinstance(n, ast.Name) and n.id == entry_point for n in ast.walk(tree.body[0]))
        )
        if not ok:
            unparseable += 1
            continue
        normal = ast.unparse(tree)
        if normal in kept:
            continue
        if len(kept) >= max_tests:
            over += 1
            continue
        kept.append(normal)
    return ExtractedTests(kept, unparseable, over)


def prompt_imports(prompt: str) -> str:
    """The prompt's top-level imports, so an answer that omits them still runs."""
    tree = _parses(prompt)
    if tree is not None:
        lines = [ast.get_source_segment(prompt, n) or "" for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    else:
        lines = [ln for ln in prompt.splitlines() if re.match(r"^(import|from)\s+\w", ln)]
    return "\n".join(ln for ln in lines if ln)


def assemble_program(prompt: str, code: str) -> str:
    imports = prompt_imports(prompt)
    return f"{imports}\n\n{code}" if imports else code
