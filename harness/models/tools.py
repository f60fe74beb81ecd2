"""Tool calls in the model contract: what a model is offered (ToolSpec), what it asks
for (ToolCall), and a check of a call's arguments against the tool's JSON schema.

A ToolCall keeps the arguments as the raw JSON text the model (or its server) wrote:
a call whose arguments are not JSON, or miss a field, is still a call, and the tool
layer answers it with `argument_problem`'s text instead of running it.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

# How a call may be steered: the model decides ("auto"), must call some tool
# ("required"), must not ("none"); any other value is the name of the one tool to call.
TOOL_CHOICE_MODES = ("auto", "required", "none")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


@dataclass(frozen=True)
class ToolCall:
    """One call a model asked for. `id` pairs it with its result (Message role "tool")."""

    id: str
    name: str
    arguments: str  # raw JSON text, as written: parse it with `arguments_of`

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: its name, what it does, and its arguments as a JSON
    schema of type object (`properties`, `required`)."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})

    def __post_init__(self) -> None:
        if not _NAME.match(self.name) or self.name in TOOL_CHOICE_MODES:
            raise ValueError(
                f"tool name {self.name!r}: letters, digits, _ . - (at most 64, not starting with a digit), "
                f"and not one of {', '.join(TOOL_CHOICE_MODES)}"
            )
        if not isinstance(self.parameters, Mapping) or self.parameters.get("type", "object") != "object":
            raise ValueError(f"tool {self.name!r}: parameters must be a JSON schema of type object")

    @property
    def properties(self) -> Mapping[str, Any]:
        props = self.parameters.get("properties") or {}
        return props if isinstance(props, Mapping) else {}

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(str(r) for r in self.parameters.get("required") or ())

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": _plain(self.parameters)}


def check_tool_choice(tool_choice: str, tools: tuple[ToolSpec, ...] | list[ToolSpec]) -> None:
    """Raises ValueError for a tool_choice that names no offered tool."""
    if tool_choice in TOOL_CHOICE_MODES:
        return
    if tool_choice not in {t.name for t in tools}:
        offered = ", ".join(t.name for t in tools) or "none"
        raise ValueError(
            f"tool_choice {tool_choice!r} is not one of {', '.join(TOOL_CHOICE_MODES)} nor an offered tool ({offered})"
        )


def arguments_of(call: ToolCall) -> dict[str, Any] | None:
    """The call's arguments as a dict, or None when they are not a JSON object."""
    try:
        value = json.loads(call.arguments) if call.arguments.strip() else {}
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def argument_problem(call: ToolCall, tools: tuple[ToolSpec, ...] | list[ToolSpec]) -> str | None:
    """Why `call` cannot run with the tools offered (one short sentence for the model to
    read), or None when its tool exists and its arguments fit the schema: a JSON object,
    every required field present, each field of its declared type, no unknown field when
    the schema says `additionalProperties: false`."""
    spec = next((t for t in tools if t.name == call.name), None)
    if spec is None:
        offered = ", ".join(t.name for t in tools) or "none"
        return f"unknown tool {call.name!r}; the tools are: {offered}"
    args = arguments_of(call)
    if args is None:
        return f"the arguments of {call.name} are not a JSON object: {call.arguments[:200]!r}"
    missing = [name for name in spec.required if name not in args]
    if missing:
        return f"{call.name} needs the argument(s) {', '.join(missing)}"
    props = spec.properties
    for name, value in args.items():
        schema = props.get(name)
        if schema is None:
            if spec.parameters.get("additionalProperties") is False:
                return f"{call.name} has no argument {name!r}; its arguments are: {', '.join(props) or 'none'}"
            continue
        wanted = schema.get("type") if isinstance(schema, Mapping) else None
        kinds = [wanted] if isinstance(wanted, str) else list(wanted or [])
        if kinds and not any(_is_type(value, kind) for kind in kinds):
            return f"argument {name!r} of {call.name} must be of type {' or '.join(kinds)}, got {type(value).__name__}"
    return None


def _is_type(value: Any, kind: str) -> bool:
    types = _JSON_TYPES.get(kind)
    if types is None:
        return True  # a type this check does not know: the tool decides
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    return isinstance(value, types)


def _plain(value: Any) -> Any:
    """A schema as plain dicts and lists (JSON-ready, stable for cache keys)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
