"""Every prompt renders byte for byte as recorded in tests/data/prompt_renderings.json
(written by tests/prompt_renderings.py): each (role, kind, language) through the one
mapping (`TaskKind.template`, `Language.template`), every strategy's own templates, in
the plain and the sandboxed environment."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from harness.kinds import kind_of
from harness.kinds.languages import get_language
from harness.text.prompting import Prompts, PromptSetError

DATA = Path(__file__).parent / "data" / "prompt_renderings.json"
ENTRIES = json.loads(DATA.read_text(encoding="utf-8"))


def reference(entry: dict) -> str:
    if "template" in entry:
        return entry["template"]
    role, kind, language = entry["role"], entry["kind"], get_language(entry["language"])
    if role == "feedback":
        return "feedback:io" if kind == "io" else "feedback:function"
    if kind == "runner" or language.is_python:
        return kind_of(kind).template(role)
    return language.template(role, kind)


@pytest.mark.parametrize("sandboxed", [False, True])
def test_every_prompt_renders_as_before(sandboxed: bool) -> None:
    prompts = Prompts(sandboxed=sandboxed)
    changed = []
    for entry in ENTRIES:
        text = prompts.render(reference(entry), **entry["values"])
        if "full_text" in entry:
            assert text == entry["full_text"], entry["key"]
        if hashlib.sha256(text.encode()).hexdigest() != entry["sha256"]:
            changed.append(entry["key"])
    assert not changed
    assert len(ENTRIES) > 100


def test_an_override_extends_the_default_and_replaces_one_block(tmp_path: Path) -> None:
    (tmp_path / "actor_retry.j2").write_text('{% extends "default/actor_retry.j2" %}{% block io %}Try again.{% endblock %}')
    prompts = Prompts(tmp_path)
    entry = next(e for e in ENTRIES if e["key"] == "actor_retry/function/python")
    assert prompts.render("actor_retry:io", **entry["values"]) == "Try again."
    assert prompts.render("actor_retry:function", **entry["values"]) == entry["full_text"]
    assert prompts.overridden() == ["actor_retry"]
    assert prompts.digest() != Prompts().digest()


def test_an_old_template_name_says_what_replaces_it(tmp_path: Path) -> None:
    (tmp_path / "actor_retry_io_lang.j2").write_text("x")
    with pytest.raises(PromptSetError, match=r"actor_retry_io_lang\.j2 is an old template name.*block `io_lang` of actor_retry\.j2"):
        Prompts(tmp_path)
