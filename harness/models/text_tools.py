"""The text tool protocol: tool calls for a model or server that gives none natively.

The model is told (harness/prompts/tool_protocol/instructions.j2, appended to the system prompt)
to write each call as a fenced block tagged `tool_call` holding one JSON object:

    ```tool_call
    {"name": "python", "arguments": {"code": "print(1 + 1)"}}
    ```

and the harness parses the reply (`parse_tool_calls`). The rules, fixed:

- A block is a CommonMark fenced block (``` or ~~~, three or more, closed by a fence
  of the same character at least as long, with no info string). Text inside any other
  block is never read as a call, whatever it holds (a `tool_call` block quoted inside
  a ```markdown block is not a call).
- A block tagged `tool_call` is a call: a JSON object with "name" (a string) and
  "arguments" (an object, or a string holding the JSON; "parameters" is read as
  "arguments"; an object with neither gives its other keys), or a JSON list of such
  objects. Literal newlines and tabs inside its strings are accepted (JSON's
  non-strict mode): models write code that way. A `tool_call` block that is not
  closed, not JSON, or has no name gives no call and a `tool_parse_error` saying why.
- A block tagged `json` holding such an object counts only when its name is a tool
  offered: small models write their calls so (measured, bench/RESULTS.md); any
  other `json` block is data, silently.
- Several blocks are several calls, in the order written; text around them is the
  reply's text. Nothing else (a bare JSON line, a ```python block) is a call.
- One repair, for the way small models break the JSON of a call (measured,
  bench/RESULTS.md): code with its own unescaped quotes (a docstring's triple quotes)
  inside the one string argument. A block that is not valid JSON but reads
  `{"name": "<tool>", "arguments": {"<argument>": "<text>"}}`, the tool offered and the
  argument a string of its schema, is that call: <text> is everything between the
  argument's opening quote and the block's final `"}}`, with JSON's escapes (a
  backslash before n, t, a quote, a backslash, or u and four hex digits) decoded and every other character, bare quotes included,
  kept as written. Another argument of the tool may follow only as a proper JSON string
  at the end (`, "stdin": ""`); a call that may hold one anywhere else is never guessed at.

A parse failure is never an exception: the Completion has no tool calls, and
`tool_parse_error` says what was wrong when the reply tried. Calls' ids are
`text_<turn>_<n>` (turn: the assistant turn's number in the conversation).

History goes back in text: an assistant turn's calls as the blocks it wrote (rendered
by tool_protocol/call.j2 when its text does not already hold them), each "tool" turn as
a user turn (tool_protocol/result.j2), the results of one turn and the user text after
them joined into one user message. No tools are sent to the backend.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import jinja2

from harness.models.base import TOOL_PROTOCOLS, ChatModel, Completion, Message, ModelConfigError, WrappedModel
from harness.models.tools import ToolCall, ToolSpec, arguments_of, check_tool_choice

# A folder of its own: the run's prompt set is harness/prompts/*.j2, and these belong
# to the model layer (run.json records their digest in the model's identity).
PROMPTS_DIR = Path(__file__).resolve().parents[1] / "prompts" / "tool_protocol"
TEMPLATES = ("instructions", "call", "result")
CALL_TAG = "tool_call"
_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_MAX_CALLS = 16  # a reply asking for more is cut to this many: no turn runs an unbounded list


@dataclass(frozen=True)
class ParsedCalls:
    """What a reply asked for: its calls, or why it gave none although it tried."""

    calls: tuple[ToolCall, ...]
    error: str | None = None


def parse_tool_calls(text: str, tools: Sequence[ToolSpec] = (), *, turn: int = 1) -> ParsedCalls:
    """The calls written in `text` under the rules above; never raises."""
    offered = {t.name for t in tools}
    calls: list[ToolCall] = []
    errors: list[str] = []
    for info, body, closed in _blocks(text):
        tag = info.split()[0].lower() if info.split() else ""
        if tag not in (CALL_TAG, "json"):
            continue
        strict_tag = tag == CALL_TAG
        if not closed:
            if strict_tag:
                errors.append("a tool_call block is not closed (was the reply cut at max_tokens?)")
            continue
        try:
            value = json.loads(body, strict=False)
        except (ValueError, RecursionError) as exc:
            repaired = _repaired(body, tools)
            if repaired is not None:
                calls.append(ToolCall(f"text_{turn}_{len(calls) + 1}", *repaired))
            elif strict_tag:
                errors.append(f"a tool_call block is not valid JSON ({_short(exc)})")
            continue
        items = value if isinstance(value, list) else [value]
        for item in items:
            call, why = _call_of(item)
            if call is None:
                if strict_tag:
                    errors.append(f"a tool_call block {why}")
                continue
            if not strict_tag and call[0] not in offered:
                continue  # a json block that names no tool is data
            name, arguments = call
            calls.append(ToolCall(f"text_{turn}_{len(calls) + 1}", name, arguments))
    if calls:
        return ParsedCalls(tuple(calls[:_MAX_CALLS]))
    return ParsedCalls((), "; ".join(dict.fromkeys(errors)) or None)


def _blocks(text: str) -> list[tuple[str, str, bool]]:
    """(info string, body, closed) of each top-level fenced block, in order."""
    out: list[tuple[str, str, bool]] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if m is None or (m["fence"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        fence = m["fence"]
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        j = i + 1
        while j < len(lines) and not closing.match(lines[j]):
            j += 1
        out.append((m["info"].strip(), "\n".join(lines[i + 1:j]), j < len(lines)))
        i = j + 1
    return out


def _call_of(item: Any) -> tuple[tuple[str, str] | None, str]:
    if not isinstance(item, dict):
        return None, "does not hold a JSON object"
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        return None, 'has no "name"'
    if "arguments" in item:
        arguments = item["arguments"]
    elif "parameters" in item:
        arguments = item["parameters"]
    else:
        arguments = {k: v for k, v in item.items() if k != "name"}
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return (name.strip(), raw), ""


_LOOSE_HEAD = re.compile(r'\A\s*\{\s*"name"\s*:\s*"(?P<name>[A-Za-z_][\w.-]{0,63})"\s*,\s*'
                         r'"(?:arguments|parameters)"\s*:\s*\{\s*"(?P<key>[A-Za-z_]\w{0,63})"\s*:\s*"')
_JSON_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_JSON_STRING_BODY = re.compile(r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*')


def _repaired(body: str, tools: Sequence[ToolSpec]) -> tuple[str, str] | None:
    """(name, arguments as JSON) of a call whose one string argument holds unescaped
    quotes (the repair rule above), or None. Linear in the block's length."""
    head = _LOOSE_HEAD.match(body)
    if head is None:
        return None
    spec = next((t for t in tools if t.name == head["name"]), None)
    properties = (spec.parameters or {}).get("properties") if spec is not None else None
    if not isinstance(properties, dict) or (properties.get(head["key"]) or {}).get("type") != "string":
        return None
    tail = body.rstrip()
    for closing in ("}", "}", '"'):  # the block ends `"}}`, blanks allowed between
        if not tail.endswith(closing):
            return None
        tail = tail[:-1].rstrip() if closing == "}" else tail[:-1]
    if len(tail) < head.end():
        return None
    raw = tail[head.end():]
    arguments: dict[str, Any] = {}
    others = "|".join(re.escape(str(k)) for k in properties if k != head["key"] and isinstance(k, str))
    if others:
        keys = list(re.finditer(r'"\s*,\s*"(' + others + r')"\s*:\s*"', raw))
        # A last argument written properly (a JSON string to the end: `"stdin": ""`) is read as one.
        if keys and _JSON_STRING_BODY.fullmatch(raw, keys[-1].end()):  # (the closing quote is cut off)
            arguments[keys[-1][1]] = json.loads(raw[keys[-1].end() - 1:] + '"')
            raw, keys = raw[:keys[-1].start()], keys[:-1]
        if keys:
            return None  # another argument of the tool may be inside: which text is which is a guess
    return head["name"], json.dumps({head["key"]: _loose_string(raw), **arguments}, ensure_ascii=False)


def _loose_string(raw: str) -> str:
    """A JSON string's body with its escapes decoded and any other character (a bare
    quote, a lone backslash) kept as written."""
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "\\" and i + 1 < n:
            nxt = raw[i + 1]
            if nxt in _JSON_ESCAPES:
                out.append(_JSON_ESCAPES[nxt])
                i += 2
                continue
            if nxt == "u" and _HEX4.fullmatch(raw, i + 2, i + 6) and not 0xD800 <= int(raw[i + 2:i + 6], 16) <= 0xDFFF:
                out.append(chr(int(raw[i + 2:i + 6], 16)))
                i += 6
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _short(exc: Exception) -> str:
    return str(exc).split("\n")[0][:120]


# -- rendering -------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(PROMPTS_DIR)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
    )


def _render(template: str, **values: Any) -> str:
    return _env().get_template(f"{template}.j2").render(**values).strip()


def templates_digest() -> str:
    """sha256 over the protocol's templates: run.json records it with the protocol."""
    h = hashlib.sha256()
    for name in TEMPLATES:
        h.update(name.encode() + b"\0" + (PROMPTS_DIR / f"{name}.j2").read_bytes() + b"\0")
    return "sha256:" + h.hexdigest()


def instructions(tools: Sequence[ToolSpec], tool_choice: str = "auto") -> str:
    """The protocol's instructions and the tool list, for the system prompt."""
    described = []
    for tool in tools:
        required = set(tool.required)
        described.append({
            "name": tool.name,
            "description": tool.description,
            "arguments": [
                {"name": name, "type": _type_of(schema), "required": name in required,
                 "description": str(schema.get("description", "")) if isinstance(schema, dict) else ""}
                for name, schema in tool.properties.items()
            ],
        })
    return _render("instructions", tools=described, tool_choice=tool_choice, example=_example(tools[0]))


def render_call(call: ToolCall) -> str:
    """A call as the protocol writes it (parse_tool_calls reads it back as the same call)."""
    args = arguments_of(call)
    body = json.dumps({"name": call.name, "arguments": args if args is not None else call.arguments},
                      ensure_ascii=False)
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    return _render("call", fence="`" * max(3, longest + 1), call_json=body)


def render_result(message: Message) -> str:
    return _render("result", name=message.name or "the tool", id=message.tool_call_id,
                   content=message.content)


def _type_of(schema: Any) -> str:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    return str(kind or "any")


def _example(tool: ToolSpec) -> str:
    placeholder = {"string": "...", "integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}
    args = {name: placeholder.get(_type_of(tool.properties.get(name)), "...") for name in tool.required}
    return json.dumps({"name": tool.name, "arguments": args}, ensure_ascii=False)


def to_text_messages(messages: Sequence[Message]) -> list[Message]:
    """The conversation with its tool turns written as text (see the module's doc)."""
    out: list[Message] = []
    pending_user: list[str] = []  # tool results (and user text after them) for one user turn

    def flush() -> None:
        if pending_user:
            out.append(Message("user", "\n\n".join(pending_user)))
            pending_user.clear()

    for m in messages:
        if m.role == "tool":
            pending_user.append(render_result(m))
        elif m.role == "user" and pending_user:
            pending_user.append(m.content)
        elif m.role == "assistant" and m.tool_calls:
            flush()
            written = parse_tool_calls(m.content, ()).calls
            same = [(c.name, arguments_of(c)) for c in written] == [(c.name, arguments_of(c)) for c in m.tool_calls]
            text = m.content if same and m.content else "\n\n".join(
                [m.content.strip()] * bool(m.content.strip()) + [render_call(c) for c in m.tool_calls])
            out.append(Message("assistant", text))
        else:
            flush()
            out.append(Message(m.role, m.content, cache_prefix=m.cache_prefix))
    flush()
    return out


# -- the wrapper -----------------------------------------------------------------------


class TextToolModel(WrappedModel):
    """A model whose tool calls go through the text protocol; `inner` is the backend
    (or the response cache around it), which is sent no tools."""

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "tool_protocol": "text", "tool_protocol_templates": templates_digest()}

    def as_sent(
        self, messages: Sequence[Message], *, system: str | None = None,
        tools: Sequence[ToolSpec] = (), tool_choice: str = "auto",
    ) -> tuple[str | None, tuple[Message, ...], tuple[ToolSpec, ...]]:
        if not tools and not any(m.role == "tool" or m.tool_calls for m in messages):
            return self.inner.as_sent(messages, system=system)
        if tools:
            check_tool_choice(tool_choice, tools)
            if tool_choice != "none":
                told = instructions(tools, tool_choice)
                system = f"{system}\n\n{told}" if system else told
        return self.inner.as_sent(to_text_messages(messages), system=system)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
        tools: Sequence[ToolSpec] = (),
        tool_choice: str = "auto",
    ) -> Completion:
        plain = dict(max_tokens=max_tokens, temperature=temperature, stop=stop, seed=seed)
        sent_system, sent, _ = self.as_sent(messages, system=system, tools=tools, tool_choice=tool_choice)
        reply = self.inner.complete(list(sent), system=sent_system, **plain)
        if not tools or tool_choice == "none":
            return reply
        turn = 1 + sum(1 for m in messages if m.role == "assistant")
        parsed = parse_tool_calls(reply.text, tools, turn=turn)
        return Completion(
            text=reply.text, model=reply.model, usage=reply.usage, latency_s=reply.latency_s,
            cost_usd=reply.cost_usd, cached=reply.cached,
            stop_reason="tool_use" if parsed.calls and reply.stop_reason == "end_turn" else reply.stop_reason,
            temperature_ignored=reply.temperature_ignored, tool_calls=parsed.calls,
            tool_parse_error=parsed.error, retries=reply.retries,
            draft_tokens=reply.draft_tokens, draft_accepted=reply.draft_accepted,
        )


def with_tool_protocol(model: ChatModel, setting: str) -> ChatModel:
    """`model` as the tool protocol `setting` ("native", "text" or "auto") asks."""
    if setting not in TOOL_PROTOCOLS:
        raise ModelConfigError(f"tool_protocol must be one of {', '.join(TOOL_PROTOCOLS)}, got {setting!r}")
    chosen = model.preferred_tool_protocol if setting == "auto" else setting
    if chosen == "native":
        if not model.capabilities.tools:
            raise ModelConfigError(
                f"{model.spec}: this model has no native tool calls (a local model's: its GGUF chat template "
                f"renders no tools); use tool_protocol = \"text\" (or \"auto\")"
            )
        return model
    return TextToolModel(model)
