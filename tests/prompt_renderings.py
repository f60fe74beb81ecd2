"""The prompts as the harness renders them, written once to tests/data/prompt_renderings.json
so that a change to the templates' layout can show every prompt is byte for byte the same
(tests/test_prompt_renderings.py). Run from the repository's root to write it anew:

    python tests/prompt_renderings.py

Each entry: the (role, kind, language) or strategy template it renders, the values it is
rendered with (the samples of harness/text/prompting.py and the strategies' `templates`,
in the language's words) and the sha256 of the text; a few entries keep the whole text."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "prompt_renderings.json"
ROLES = ("actor_system", "actor_task", "actor_retry", "testgen_system", "testgen",
         "reflection_system", "reflection", "feedback")
KINDS = ("function", "io", "runner")
FULL_TEXT = {"actor_retry/function/python", "actor_retry/io/rust", "testgen/runner/rust", "feedback/io/python"}


def cases() -> list[dict[str, Any]]:
    """Every (role, kind, language) the harness renders, then every strategy's own template."""
    from harness.kinds.languages import get_language, language_names
    from harness.strategies import template_samples
    from harness.text.prompting import VARIABLES, Prompts

    prompts = Prompts()
    out: list[dict[str, Any]] = []
    for language in language_names():
        lang = get_language(language)
        for kind in KINDS:
            if kind == "runner" and lang.exercise is None:
                continue
            for role in ROLES:
                if role == "feedback" and kind == "runner":
                    continue  # the runner kind renders the function kind's feedback
                values = _values(role, kind, lang, VARIABLES)
                out.append({"key": f"{role}/{kind}/{language}", "role": role, "kind": kind, "language": language,
                            "values": values, "text": prompts.render(_reference(role, kind, lang), **values)})
    for name, values in sorted(template_samples().items()):
        out.append({"key": f"strategy/{name}", "template": name, "values": values,
                    "text": prompts.render(name, **values)})
    return out


def _reference(role: str, kind: str, lang: Any) -> str:
    """The template (role, kind, language) renders, as `Prompts.render` names it."""
    from harness.kinds import kind_of

    if role == "feedback":
        return "feedback:io" if kind == "io" else "feedback:function"
    if kind == "runner" or lang.is_python:
        return kind_of(kind).template(role)
    return lang.template(role, kind)


def _values(role: str, kind: str, lang: Any, samples: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if role == "feedback":
        return dict(samples["feedback:io" if kind == "io" else "feedback:function"])
    values = dict(samples[f"{role}:{kind}"])  # another language's blocks take the Python twin's and its own
    if kind == "runner":
        values.update(language=lang.display, language_name=lang.name, fence=lang.fence)
    elif not lang.is_python:
        values.update(lang.template_values("add"))
    return values


def main() -> None:
    sys.path.insert(0, str(ROOT))
    entries = []
    for case in cases():
        text = case.pop("text")
        case["sha256"] = hashlib.sha256(text.encode()).hexdigest()
        if case["key"] in FULL_TEXT:
            case["full_text"] = text
        entries.append(case)
    DATA.write_text(json.dumps(entries, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(entries)} renderings -> {DATA.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
