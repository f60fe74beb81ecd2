"""A task kind is one module (harness/kinds/): outside it, no module of harness/ branches
on a kind's name (`kind == "io"`), counted as an `ast` walk over comparisons."""
from __future__ import annotations

import ast
from pathlib import Path

from harness.kinds import kind_names, kind_of

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = {("harness", "tasks", "jsonl.py")}  # the JSONL loader reads a row's "kind" field to parse it


def test_every_kind_is_a_module_with_its_templates():
    assert set(kind_names()) >= {"function", "io"}
    for name in kind_names():
        kind = kind_of(name)
        assert kind.name == name
        for role in ("actor_task", "actor_retry", "actor_system", "testgen", "reflection"):
            template, block = kind.template(role).split(":")
            source = (ROOT / "harness" / "prompts" / f"{template}.j2").read_text(encoding="utf-8")
            assert f"{{% block {block} %}}" in source, (name, role)


def test_no_module_outside_the_kinds_branches_on_a_kind_name():
    names = set(kind_names())
    found = []
    for path in sorted((ROOT / "harness").rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if "kinds" in parts or parts in ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                for side in [node.left, *node.comparators]:
                    if isinstance(side, ast.Constant) and side.value in names:
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
