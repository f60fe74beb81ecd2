"""Renders the prompt templates in harness/prompts/ (all prompt text lives there)."""
from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import jinja2

PROMPTS_DIR = Path(__file__).parent / "prompts"


class Prompts:
    """A template environment over a folder; researchers may point it at their own."""

    def __init__(self, folder: Path = PROMPTS_DIR) -> None:
        self.folder = folder

    @cached_property
    def _env(self) -> jinja2.Environment:
        return jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(self.folder)),
            undefined=jinja2.StrictUndefined,  # a missing variable is a bug, not an empty string
            keep_trailing_newline=False,
            autoescape=False,  # plain text for a model, not HTML
        )

    def render(self, name: str, **values: Any) -> str:
        return self._env.get_template(f"{name}.j2").render(**values).strip()
