"""`openai:<model>[@<base-url>]`: any OpenAI-compatible chat-completions server.

vLLM, Ollama, llama-server, LM Studio, or OpenAI itself, through the `openai` SDK.
The key comes from OPENAI_API_KEY when set; local servers need none, so a placeholder
is sent then. Without a base URL the SDK's default (api.openai.com, or
OPENAI_BASE_URL) is used, and a key is required.

A model that rejects the temperature (HTTP 400 naming it, as reasoning models do) is
asked again without one; from then on the backend sends none, warns once, and each
Completion says `temperature_ignored` (the model samples at its own default).

Tool calls: ToolSpecs go as `tools` (function tools), an assistant message's calls as
its `tool_calls`, "tool" messages as role "tool" with their `tool_call_id`; the reply's
`tool_calls` come back as ToolCalls with the arguments exactly as the server sent them.
With ModelSettings.stream the reply is streamed and assembled here: text deltas joined,
tool-call deltas accumulated by their index (id and name from the first, the arguments'
fragments concatenated), usage from the final chunk (`stream_options.include_usage`).
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

from harness.models import _api
from harness.models.base import Capabilities, Completion, Message, ModelConfigError, ModelError, ModelSettings, Usage
from harness.models.tools import ToolSpec, check_tool_choice

KEY_ENV = "OPENAI_API_KEY"
_NO_KEY = "no-key"  # local servers ignore the key, but the SDK insists on one


def _rejects_temperature(error: ModelError) -> bool:
    text = str(error)
    return "HTTP 400" in text and "temperature" in text.lower()


class OpenAIModel(_api.APIModel):
    usage = "openai:<model>@<base-url>"
    requires = ("openai",)
    install_hint = "needs the openai SDK: pip install openai"
    # A remote API by declaration: even a server on this machine is reached with
    # OPENAI_API_KEY from the environment when it is set.
    capabilities = Capabilities(tools=True, seeds=True, streaming=True, prompt_cache=True, remote_api=True)
    accepts_temperature = True  # until the server rejects one
    prefix = "openai"

    @classmethod
    def open(cls, argument: str | None, settings: ModelSettings) -> "OpenAIModel":
        """`argument` is what follows `openai:`."""
        model_id, base_url = _api.split_model_url(argument or "", "openai")
        key = os.environ.get(KEY_ENV, "").strip()
        if not key:
            if base_url is None and not os.environ.get("OPENAI_BASE_URL"):
                raise ModelConfigError(
                    f"openai:{model_id} without a base URL talks to api.openai.com and needs "
                    f"{KEY_ENV}; set it, or name your server: openai:{model_id}@http://host:port/v1"
                )
            key = _NO_KEY
        return cls(model_id, settings, api_key=key, base_url=base_url)

    def __init__(
        self,
        model_id: str,
        settings: ModelSettings,
        *,
        api_key: str,
        base_url: str | None = None,
    ) -> None:
        import openai

        super().__init__(openai, openai.OpenAI, model_id, settings, api_key=api_key, base_url=base_url)
        self._temperature_lock = threading.Lock()

    def describe(self) -> dict[str, Any]:
        found = super().describe()
        if self._settings.stream:
            found["stream"] = True
        return found

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
        kwargs: dict[str, Any] = {
            "model": self.model_id,
            "messages": _api.openai_messages(system, messages),
            # `max_tokens`, not `max_completion_tokens`: the compatible servers (vLLM,
            # Ollama, llama-server) all read the older name.
            "max_tokens": max_tokens,
        }
        if self.accepts_temperature:
            kwargs["temperature"] = temperature
        if stop:
            kwargs["stop"] = list(stop)
        if seed is not None:
            kwargs["seed"] = seed
        if tools:
            check_tool_choice(tool_choice, tools)
            kwargs["tools"] = _api.openai_tools(tools)
            kwargs["tool_choice"] = _api.openai_tool_choice(tool_choice)
        streaming = self._settings.stream
        if streaming:
            kwargs["stream"] = True
            kwargs["stream_options"] = {"include_usage": True}

        def request() -> Any:
            reply = self._client.chat.completions.create(**kwargs)
            return _assemble(reply) if streaming else reply

        def send() -> tuple[Any, float, Any, tuple]:
            return self._send(request, system=system, messages=messages, max_tokens=max_tokens, tools=tools)

        try:
            reply, latency, ticket, retries = send()
        except ModelError as exc:
            if "temperature" not in kwargs or not _rejects_temperature(exc):
                raise
            with self._temperature_lock:
                if self.accepts_temperature:
                    self.accepts_temperature = False
                    _api.log.warning(
                        "%s rejects the temperature; sampling at its own default from now on "
                        "(records say temperature_used null; its answers are not cached)", self.spec,
                    )
            kwargs.pop("temperature")
            reply, latency, ticket, more = send()
            retries = exc.retries + more
        choices = reply.choices if isinstance(reply, _Assembled) else getattr(reply, "choices", None)
        if not choices:
            raise ModelError(f"{self.spec}: the server answered with no choices", retries=retries)
        choice = choices[0]
        return self._completion(
            reply,
            text=choice.message.content or "",
            stop=choice.finish_reason,
            usage=_usage(reply.usage),
            tool_calls=_api.openai_tool_calls(choice.message.tool_calls),
            max_tokens=max_tokens, latency_s=latency, ticket=ticket, retries=retries,
            temperature_ignored="temperature" not in kwargs,
        )


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    details = getattr(raw, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", None) or 0) if details is not None else 0
    # OpenAI counts cached tokens inside prompt_tokens; split them out as Anthropic does.
    prompt = raw.prompt_tokens or 0
    return Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=raw.completion_tokens or 0,
        cache_read_tokens=cached,
    )


@dataclass
class _Message:
    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Choice:
    message: _Message = field(default_factory=_Message)
    finish_reason: str | None = None


@dataclass
class _Assembled:
    """A streamed reply, put together in the shape of a non-streamed one."""

    model: str | None = None
    usage: Any = None
    choices: list[_Choice] = field(default_factory=list)


def _assemble(stream: Any) -> _Assembled:
    """Reads a chat-completions stream to its end: text deltas joined, tool-call deltas
    accumulated by index (the first delta of a call has its id and name, later ones
    fragments of its arguments), the finish reason and the usage of the last chunks."""
    out = _Assembled()
    choice = _Choice()
    calls: dict[int, dict[str, Any]] = {}
    text: list[str] = []
    try:
        for chunk in stream:
            out.model = out.model or getattr(chunk, "model", None)
            if getattr(chunk, "usage", None) is not None:
                out.usage = chunk.usage
            for part in getattr(chunk, "choices", None) or ():
                if part.index != 0:
                    continue
                delta = part.delta
                if delta is not None:
                    if delta.content:
                        text.append(delta.content)
                    for tc in delta.tool_calls or ():
                        index = tc.index if tc.index is not None else len(calls)
                        call = calls.setdefault(index, {"id": None, "function": {"name": "", "arguments": ""}})
                        if tc.id:
                            call["id"] = tc.id
                        if tc.function is not None:
                            if tc.function.name:
                                call["function"]["name"] += tc.function.name
                            if tc.function.arguments:
                                call["function"]["arguments"] += tc.function.arguments
                if part.finish_reason:
                    choice.finish_reason = part.finish_reason
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    choice.message = _Message("".join(text), [calls[i] for i in sorted(calls)])
    out.choices = [choice]
    return out


