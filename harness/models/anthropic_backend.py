"""`anthropic:<model>[@<base-url>]`: Claude through the `anthropic` SDK.

Prompt caching: the system prompt and the message flagged `cache_prefix=True` carry a
`cache_control` breakpoint, so a task's later trials read the stable prefix (system +
task) from Anthropic's cache at a tenth of the input price.

Claude models from Opus 4.7 / Sonnet 5 on reject sampling parameters; for those (and
for models missing from harness/data/prices.toml) the temperature is left out, and a
warning says so once, whatever temperature was asked for (0 included: the answers are
then samples, not the greedy answer); each Completion says so (`temperature_ignored`).

Tool calls: ToolSpecs go as `tools` (`input_schema`), an assistant message's calls as
`tool_use` blocks, "tool" messages as `tool_result` blocks in the next user turn (the
results of one turn's calls, and any user text after them, in one user message, as the
API asks); the reply's `tool_use` blocks come back as ToolCalls, their input as JSON.
"""
from __future__ import annotations

import json
import os
import threading
from typing import Any, Sequence

from harness.models import _api
from harness.models.base import Capabilities, Completion, Message, ModelConfigError, ModelSettings, Usage
from harness.models.prices import load_table, lookup
from harness.models.tools import TOOL_CHOICE_MODES, ToolCall, ToolSpec, check_tool_choice

KEY_ENV = "ANTHROPIC_API_KEY"
_EPHEMERAL = {"type": "ephemeral"}


class AnthropicModel(_api.APIModel):
    usage = "anthropic:<model>[@<base-url>]"
    requires = ("anthropic",)
    install_hint = "needs the anthropic SDK: pip install anthropic"
    # The Messages API has no seed; its answers are never reproducible by one.
    capabilities = Capabilities(tools=True, seeds=False, streaming=False, prompt_cache=True, remote_api=True)
    prefix = "anthropic"

    @classmethod
    def open(cls, argument: str | None, settings: ModelSettings) -> "AnthropicModel":
        """`argument` is what follows `anthropic:`."""
        model_id, base_url = _api.split_model_url(argument or "", "anthropic")
        key = os.environ.get(KEY_ENV, "").strip()
        if not key:
            raise ModelConfigError(
                f"anthropic:{model_id} needs an API key: set {KEY_ENV} in the environment"
            )
        return cls(model_id, settings, api_key=key, base_url=base_url)

    def __init__(
        self,
        model_id: str,
        settings: ModelSettings,
        *,
        api_key: str,
        base_url: str | None = None,
    ) -> None:
        import anthropic

        super().__init__(anthropic, anthropic.Anthropic, model_id, settings, api_key=api_key, base_url=base_url)
        self._table = load_table()
        facts = lookup(model_id, self._table)
        self.accepts_temperature = facts.accepts_temperature if facts else False
        self._warned_temperature = threading.Event()

    def request_body(
        self,
        messages: Sequence[Message],
        *,
        system: str | None,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] | None,
        tools: Sequence[ToolSpec] = (),
        tool_choice: str = "auto",
    ) -> dict[str, Any]:
        """The keyword arguments of `messages.create` for one call."""
        body: dict[str, Any] = {
            "model": self.model_id,
            "max_tokens": max_tokens,
            "messages": anthropic_messages(messages),
        }
        if tools:
            check_tool_choice(tool_choice, tools)
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.to_dict()["parameters"]}
                for t in tools
            ]
            body["tool_choice"] = _tool_choice(tool_choice)
        if system:
            body["system"] = [{"type": "text", "text": system, "cache_control": _EPHEMERAL}]
        if stop:
            body["stop_sequences"] = list(stop)
        if self.accepts_temperature:
            # The SDK no longer has a `temperature` argument; older models still take it.
            body["extra_body"] = {"temperature": temperature}
        elif not self._warned_temperature.is_set():
            self._warned_temperature.set()
            _api.log.warning(
                "%s does not accept a temperature; it samples at its own default instead of %g "
                "(records say temperature_used null; its answers are not cached)",
                self.spec, temperature,
            )
        return body

    def complete(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        seed: int | None = None,  # the Messages API has no seed; it is part of the cache key only
        tools: Sequence[ToolSpec] = (),
        tool_choice: str = "auto",
    ) -> Completion:
        body = self.request_body(
            messages, system=system, max_tokens=max_tokens, temperature=temperature, stop=stop,
            tools=tools, tool_choice=tool_choice,
        )
        reply, latency, ticket, retries = self._send(
            lambda: self._client.messages.create(**body),
            system=system, messages=messages, max_tokens=max_tokens, tools=tools,
        )
        raw_usage = reply.usage
        usage = Usage(
            input_tokens=raw_usage.input_tokens or 0,
            output_tokens=raw_usage.output_tokens or 0,
            cache_read_tokens=raw_usage.cache_read_input_tokens or 0,
            cache_write_tokens=raw_usage.cache_creation_input_tokens or 0,
        )
        return self._completion(
            reply,
            text="".join(block.text for block in reply.content if block.type == "text"),
            stop=reply.stop_reason,
            usage=usage,
            tool_calls=tuple(
                ToolCall(id=block.id, name=block.name, arguments=json.dumps(block.input, ensure_ascii=False))
                for block in reply.content if block.type == "tool_use"
            ),
            max_tokens=max_tokens, latency_s=latency, ticket=ticket, retries=retries,
            temperature_ignored=not self.accepts_temperature,
        )


def anthropic_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The Messages API's `messages`: tool results (and any user text after them) join
    one user turn; an assistant's calls are tool_use blocks after its text."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
            _append_user_block(out, block)
        elif m.role == "user" and out and out[-1]["role"] == "user" and _has_tool_results(out[-1]):
            _append_user_block(out, _text_block(m))
        elif m.tool_calls:
            blocks: list[dict[str, Any]] = [_text_block(m)] if m.content else []
            blocks.extend({"type": "tool_use", "id": c.id, "name": c.name, "input": _input_of(c)}
                          for c in m.tool_calls)
            out.append({"role": "assistant", "content": blocks})
        elif m.cache_prefix:
            out.append({"role": m.role, "content": [_text_block(m)]})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def _text_block(m: Message) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": m.content}
    if m.cache_prefix:
        block["cache_control"] = _EPHEMERAL
    return block


def _has_tool_results(message: dict[str, Any]) -> bool:
    content = message["content"]
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def _append_user_block(out: list[dict[str, Any]], block: dict[str, Any]) -> None:
    if out and out[-1]["role"] == "user" and _has_tool_results(out[-1]):
        out[-1]["content"].append(block)
    else:
        out.append({"role": "user", "content": [block]})


def _input_of(call: ToolCall) -> dict[str, Any]:
    """A call's arguments as the object tool_use needs; arguments that were not a JSON
    object (a model's malformed call from another backend) are kept as one string."""
    try:
        value = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"raw_arguments": call.arguments}


def _tool_choice(tool_choice: str) -> dict[str, str]:
    if tool_choice in TOOL_CHOICE_MODES:
        return {"type": {"auto": "auto", "required": "any", "none": "none"}[tool_choice]}
    return {"type": "tool", "name": tool_choice}
