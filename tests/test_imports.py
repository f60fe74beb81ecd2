"""The packages' import graph: no circle anywhere, and no lower layer importing a higher one.

Every import statement counts, wherever it is (module level, inside a function: the
lazy ones, under `if TYPE_CHECKING:`), read with `ast` from the source, never by
importing it.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "sandbox")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module of ours `name` refers to (a module, or the package that holds it)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from pkg import mod` imports pkg.mod when that is a module of ours
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for name in names:
            target = _resolve(name, modules)
            if target is not None and target != module:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _in(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


# (what, the modules it concerns, the modules they must not import)
CLI = ("harness.cli", "harness.commands", "harness.__main__")
RENDERERS = ("harness.report", "harness.view")
DRIVER = ("harness.run.runner", "harness.executors", "harness.run.units")
RULES = [
    ("the sandbox knows nothing of the harness", ("sandbox",), ("harness",)),
    ("models, tasks and run data know nothing of the CLI, the report or the view",
     ("harness.models", "harness.tasks", "harness.rundata"), (*CLI, *RENDERERS)),
    ("the report and the view raise their own errors: only the CLI knows UsageError", RENDERERS, CLI),
    ("the driver and its executors are below the CLI", DRIVER, (*CLI, *RENDERERS)),
    ("executors and units are below the runner", ("harness.executors", "harness.run.units"), ("harness.run.runner",)),
    ("units are below the executors", ("harness.run.units",), ("harness.executors",)),
    ("the core and its steps are below the driver and know no strategy",
     ("harness.core", "harness.core.actor", "harness.core.testgen", "harness.core.reflection", "harness.core.evaluator", "harness.core.memory",
      "harness.kinds", "harness.core.calls"),
     ("harness.strategies", *DRIVER, *CLI, *RENDERERS)),
    ("strategies are below the driver", ("harness.strategies",), (*DRIVER, *CLI, *RENDERERS)),
]
REGISTRY = ("harness.strategies", "harness.strategies.base", "harness.strategies.registry")


def test_run_data_the_report_and_the_view_reach_strategies_only_through_the_registry():
    graph = import_graph()
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in graph.items() if _in(module, ("harness.rundata", *RENDERERS, *CLI))
        for target in targets if _in(target, ("harness.strategies",)) and target not in REGISTRY
    )
    assert wrong == []


def test_no_import_circle_in_the_packages():
    assert _cycles(import_graph()) == []


@pytest.mark.parametrize("what, lower, higher", RULES, ids=[r[0] for r in RULES])
def test_no_lower_layer_imports_a_higher_one(what, lower, higher):
    graph = import_graph()
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in graph.items() if _in(module, lower)
        for target in targets if _in(target, higher)
    )
    assert wrong == [], what


def test_the_graph_reader_sees_lazy_relative_and_from_imports(tmp_path):
    """The walker itself: a lazy import inside a function, a relative import and
    `from package import module` are all edges; a circle made of them is found."""
    modules = {"p": tmp_path / "p" / "__init__.py", "p.a": tmp_path / "p" / "a.py", "p.b": tmp_path / "p" / "b.py"}
    for path in modules.values():
        path.parent.mkdir(exist_ok=True)
    modules["p"].write_text("")
    modules["p.a"].write_text("def f():\n    from p import b\n    return b\n")
    modules["p.b"].write_text("from . import a\n")
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert graph == {"p": set(), "p.a": {"p.b"}, "p.b": {"p.a"}}
    assert _cycles(graph) == [["p.a", "p.b"]]
