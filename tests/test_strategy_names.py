"""Outside harness/strategies/, no module of harness/ names a strategy: choices, groups,
pairings, plot styles, labels and the prompts a view shows all come from the registry
and the traits. Counted as an `ast` walk over string constants, so a name written in
any form of code (a comparison, a tuple, a dict value) is found; template names and
template variables (the `feedback` template and variable are the test feedback text,
not the strategy) are not strategy names."""
from __future__ import annotations

import ast
from pathlib import Path

from harness.text.prompting import TEMPLATE_NAMES
from harness.strategies import strategy_names

ROOT = Path(__file__).resolve().parents[1]


def _dict_keys(tree: ast.AST) -> set[int]:
    keys: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys.update(id(k) for k in node.keys if k is not None)
    return keys


def test_no_module_outside_the_strategies_names_a_strategy():
    names = set(strategy_names())
    assert {"reflexion", "baseline", "feedback", "resample"} <= names
    found = []
    for path in sorted((ROOT / "harness").rglob("*.py")):
        if "strategies" in path.relative_to(ROOT).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        keys = _dict_keys(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
                    and node.value not in TEMPLATE_NAMES and id(node) not in keys):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert found == []


def test_the_count_finds_a_name_where_one_is_written(tmp_path):
    tree = ast.parse('if strategy in ("reflexion", "x"):\n    pass\n')
    hits = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in set(strategy_names())]
    assert hits == ["reflexion"]
