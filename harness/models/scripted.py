"""`scripted:<file>`: replays recorded answers. For tests and demos, never a default.

A script is a list of rules. A rule with `match` answers any call whose prompt
(system + messages) contains that text, as often as asked; rules without `match`
form a queue, consumed one per call, in order. Matching rules are tried first, so
a script can be deterministic however calls interleave across workers.

File format (JSON Lines): `{"reply": "..."}` or `{"match": "...", "reply": "..."}`;
a reply may be (or include) tool calls: `{"tool_calls": [{"name": "python", "arguments":
{"code": "print(1)"}}], "reply": "optional text"}` (arguments as an object, or as the
raw text a model would write, malformed or not; an `id` is optional); `"retries":
[["429", 1.0]]` plays the retries a backend made before this answer; a line
`{"latency_s": 0.2}` makes every call take that long (demos, interruption tests).
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence, Union

from harness.models.base import (
    Capabilities,
    ChatModel,
    Completion,
    Message,
    ModelConfigError,
    ModelError,
    ModelSettings,
    Retry,
    Usage,
)
from harness.models.tools import ToolCall, ToolSpec, check_tool_choice


@dataclass(frozen=True)
class ScriptedReply:
    """One scripted answer: text and/or tool calls, and the retries it pretends to have
    needed. A call's id may be left empty: the model numbers it (call_<call>_<index>)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    retries: tuple[Retry, ...] = ()


Reply = Union[str, ScriptedReply, ToolCall]
Responder = Callable[[str | None, Sequence[Message]], Union[Reply, None]]


@dataclass(frozen=True)
class Call:
    """What the model was asked, recorded for tests to inspect."""

    system: str | None
    messages: tuple[Message, ...]
    max_tokens: int
    temperature: float
    seed: int | None
    stop: tuple[str, ...] | None = None
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: str = "auto"

    @property
    def prompt(self) -> str:
        """Everything the model saw, as one string (tool calls' arguments included)."""
        parts = [self.system or ""]
        for m in self.messages:
            parts.append(m.content)
            parts.extend(f"{c.name} {c.arguments}" for c in m.tool_calls)
        return "\n".join(parts)


class ScriptedModel(ChatModel):
    """A fake model: a queue of replies, rules by substring, and a record of calls.

    A reply is text, a ScriptedReply (text and/or tool calls) or one ToolCall. A text
    reply of the form ``"!error: <reason>"`` raises ModelError, so tests can script a
    backend failure that survived its retries (a ScriptedReply's retries go with it).
    """

    usage = "scripted:<file>"
    capabilities = Capabilities(tools=True, seeds=True)

    @classmethod
    def open(cls, argument: str | None, settings: ModelSettings) -> "ScriptedModel":
        return cls.from_file(argument or "")

    def __init__(
        self,
        replies: Sequence[Reply] = (),
        *,
        rules: Sequence[tuple[str, Reply]] = (),
        responder: Responder | None = None,
        spec: str = "scripted:inline",
        latency_s: float = 0.0,
        identity: str | None = None,
        accepts_temperature: bool = True,
    ) -> None:
        self.spec = spec
        # What the response cache keys on: the script file's digest, so an edited
        # script is never answered from an older version's cache entries.
        self.identity = identity or spec
        # False plays a model that ignores the temperature (samples at its own default).
        self.accepts_temperature = accepts_temperature
        self._queue: deque[Reply] = deque(replies)
        self._rules = list(rules)
        self._responder = responder
        self._latency_s = latency_s
        self._lock = threading.Lock()
        self.calls: list[Call] = []
        self.file_sha256: str | None = None  # the script file's, when read from one

    @property
    def identity(self) -> str:
        return self._identity

    @identity.setter
    def identity(self, value: str) -> None:
        self._identity = value

    def describe(self) -> dict[str, Any]:
        """What run.json records of the model: the script file's sha256 decides the answers."""
        found: dict[str, Any] = {**super().describe(), "engine": "scripted"}
        if self.file_sha256:
            found["file_sha256"] = self.file_sha256
        return found

    @classmethod
    def from_file(cls, path: str | Path) -> "ScriptedModel":
        path = Path(path)
        if not path.is_file():
            raise ModelConfigError(f"scripted model file not found: {path}")
        replies: list[Reply] = []
        rules: list[tuple[str, Reply]] = []
        latency_s = 0.0
        raw = path.read_bytes()
        for lineno, line in enumerate(raw.decode("utf-8").split("\n"), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if isinstance(row, dict) and set(row) == {"latency_s"}:
                    latency_s = float(row["latency_s"])
                    continue
                reply = _reply_of(row)
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise ModelConfigError(
                    f"{path}:{lineno}: expected a JSON object with a 'reply' or 'tool_calls' field ({exc})"
                ) from None
            if "match" in row:
                rules.append((str(row["match"]), reply))
            else:
                replies.append(reply)
        digest = hashlib.sha256(raw).hexdigest()
        model = cls(replies, rules=rules, spec=f"scripted:{path}", latency_s=latency_s,
                    identity=f"scripted:sha256:{digest}")
        model.file_sha256 = digest
        return model

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
        if tools:
            check_tool_choice(tool_choice, tools)
        call = Call(system, tuple(messages), max_tokens, temperature, seed, tuple(stop) if stop else None,
                    tuple(tools), tool_choice)
        with self._lock:
            self.calls.append(call)
            number = len(self.calls)
            reply = _as_reply(self._pick(call))
        if self._latency_s:
            time.sleep(self._latency_s)
        if reply.text.startswith("!error:") and not reply.tool_calls:
            raise ModelError(f"{self.spec}: {reply.text[len('!error:'):].strip()}", retries=reply.retries)
        calls = tuple(
            c if c.id else ToolCall(f"call_{number}_{i}", c.name, c.arguments)
            for i, c in enumerate(reply.tool_calls)
        )
        words = len(call.prompt.split())
        return Completion(
            text=reply.text,
            model=self.spec,
            usage=Usage(input_tokens=words,
                        output_tokens=len(reply.text.split()) + sum(len(c.arguments.split()) for c in calls)),
            latency_s=self._latency_s,
            temperature_ignored=not self.accepts_temperature,
            stop_reason="tool_use" if calls else "",
            tool_calls=calls,
            retries=reply.retries,
        )

    def _pick(self, call: Call) -> Reply:
        if self._responder is not None:
            reply = self._responder(call.system, call.messages)
            if reply is not None:
                return reply
        prompt = call.prompt
        for needle, reply in self._rules:
            if needle in prompt:
                return reply
        if self._queue:
            return self._queue.popleft()
        raise ModelError(f"{self.spec}: script exhausted after {len(self.calls)} calls")

    def close(self) -> None:
        pass


def _as_reply(reply: Reply) -> ScriptedReply:
    if isinstance(reply, ScriptedReply):
        return reply
    if isinstance(reply, ToolCall):
        return ScriptedReply(tool_calls=(reply,))
    return ScriptedReply(text=str(reply))


def _reply_of(row: Any) -> Reply:
    """A script line's reply: {"reply": text} and/or {"tool_calls": [...]}, "retries"."""
    if not isinstance(row, dict):
        raise TypeError("not an object")
    if "reply" not in row and "tool_calls" not in row:
        raise KeyError("reply")
    text = str(row.get("reply", ""))
    calls = []
    for item in row.get("tool_calls") or ():
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ValueError("each tool call needs a 'name'")
        arguments = item.get("arguments", {})
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append(ToolCall(str(item.get("id") or ""), item["name"], arguments))
    retries = tuple(Retry(str(status), float(waited)) for status, waited in row.get("retries") or ())
    if not calls and not retries:
        return text
    return ScriptedReply(text, tuple(calls), retries)
