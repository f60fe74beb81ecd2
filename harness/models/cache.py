"""A response cache on disk, wrapped around any ChatModel.

Key: sha256 of (model identity, system, messages, max_tokens, temperature, stop, seed,
and, when tools are offered, the tools (name, description, schema) and tool_choice).
Messages enter the key with their tool calls and tool-call ids; a call offering no
tools, over messages that carry none, has the same key it always had. The identity is
what decides the answers, not the spec string that named the model: the backend's
`identity` (the file's sha256 for `local` and `scripted:<file>`, the resolved base
URL for the API backends). Editing a script,
replacing a GGUF or pointing ANTHROPIC_BASE_URL elsewhere therefore misses the cache.
Only temperature-0 calls are cached unless `cache_all` (their seeded samples are then
reproducible too); an answer from a model that ignored the temperature is not. One JSON file per key, written to a temporary name and renamed into
place, so any number of threads and processes can share a cache folder: a reader sees
a whole entry or none, and two writers of one key write the same answer.

A hit returns the stored Completion (text and tool calls) with `cached=True` and no
retries; its usage and cost are those
of the original call (what the answer cost when it was made), and no model call is made:
the run's accounting (harness/core/calls.py) keeps that cost apart from money spent.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, Sequence

from harness.models.base import ChatModel, Completion, Message, Usage, WrappedModel
from harness.models.tools import ToolCall, ToolSpec

log = logging.getLogger(__name__)

_FORMAT = 2  # bump when the key or entry layout changes; old entries are then ignored


class CachedModel(WrappedModel):
    """A ChatModel that answers repeated calls from disk; `inner` is the model it wraps."""

    def __init__(self, inner: ChatModel, cache_dir: Path, *, cache_all: bool = False) -> None:
        super().__init__(inner)
        self._identity = inner.identity  # the key's, fixed for the cache's life
        self.cache_dir = Path(cache_dir)
        self.cache_all = cache_all
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._key_locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def identity(self) -> str:
        return self._identity

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
        kwargs: dict[str, Any] = dict(system=system, max_tokens=max_tokens, temperature=temperature,
                                      stop=stop, seed=seed)
        if tools:
            kwargs.update(tools=tuple(tools), tool_choice=tool_choice)
        if temperature != 0 and not self.cache_all:
            return self.inner.complete(messages, **kwargs)
        key = cache_key(self.identity, messages, **kwargs)
        # One caller per key at a time in this process: concurrent identical calls
        # (common with many workers) make one model call, not several.
        with self._lock_for(key):
            hit = self._read(key)
            if hit is not None:
                self.hits += 1
                return hit
            completion = self.inner.complete(messages, **kwargs)
            self.misses += 1
            if not completion.temperature_ignored or self.cache_all:
                # An answer sampled at the model's own default temperature is not the
                # deterministic answer a temperature-0 key promises.
                self._write(key, completion)
            return completion

    # -- storage
    def path_for(self, key: str) -> Path:
        return self.cache_dir / key[:2] / f"{key}.json"

    def _lock_for(self, key: str) -> threading.Lock:
        with self._locks_guard:
            return self._key_locks.setdefault(key, threading.Lock())

    def _read(self, key: str) -> Completion | None:
        path = self.path_for(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable cache entry %s: %s", path, exc)
            return None
        if not isinstance(entry, dict) or entry.get("format") != _FORMAT:
            return None
        try:
            return _completion_of(entry["completion"])
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("ignoring unreadable cache entry %s: %s", path, exc)
            return None

    def _write(self, key: str, completion: Completion) -> None:
        path = self.path_for(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        usage = completion.usage
        record: dict[str, Any] = {
            "text": completion.text, "model": completion.model,
            "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                      "cache_read_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens},
            "latency_s": completion.latency_s, "cost_usd": completion.cost_usd, "cached": False,
            "stop_reason": completion.stop_reason, "temperature_ignored": completion.temperature_ignored,
        }
        if completion.tool_calls:  # (an entry without calls reads as before)
            record["tool_calls"] = [c.to_dict() for c in completion.tool_calls]
        if completion.tool_parse_error is not None:
            record["tool_parse_error"] = completion.tool_parse_error
        entry = {"format": _FORMAT, "spec": self.spec, "identity": self.identity,
                 "completion": record}
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(entry, out)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


# An entry keeps the Completion's fields but `retries` (a hit made no call); tool_calls
# only when there are any, so an entry without calls is what it always was.
def _completion_of(data: dict[str, Any]) -> Completion:
    calls = tuple(ToolCall(str(c["id"]), str(c["name"]), str(c["arguments"])) for c in data.get("tool_calls") or ())
    return Completion(
        text=str(data["text"]),
        model=str(data["model"]),
        usage=Usage(**data["usage"]),
        latency_s=float(data.get("latency_s") or 0.0),
        cost_usd=data.get("cost_usd"),
        cached=True,
        stop_reason=str(data.get("stop_reason") or ""),
        temperature_ignored=bool(data.get("temperature_ignored")),
        tool_calls=calls,
        tool_parse_error=data.get("tool_parse_error"),
    )


def cache_key(
    identity: str,
    messages: Sequence[Message],
    *,
    system: str | None,
    max_tokens: int,
    temperature: float,
    stop: Sequence[str] | None,
    seed: int | None,
    tools: Sequence[ToolSpec] = (),
    tool_choice: str = "auto",
) -> str:
    payload: dict[str, Any] = {
        "format": _FORMAT,
        "model": identity,
        "system": system,
        # cache_prefix only places a provider cache breakpoint: it does not change the answer.
        "messages": [_message_key(m) for m in messages],
        "max_tokens": max_tokens,
        "temperature": float(temperature),
        "stop": list(stop) if stop else None,
        "seed": seed,
    }
    if tools:
        payload["tools"] = [t.to_dict() for t in tools]
        payload["tool_choice"] = tool_choice
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def _message_key(m: Message) -> list[Any]:
    key: list[Any] = [m.role, m.content]
    extra: dict[str, Any] = {}
    if m.tool_calls:
        extra["tool_calls"] = [c.to_dict() for c in m.tool_calls]
    if m.tool_call_id is not None:
        extra["tool_call_id"] = m.tool_call_id
    if m.name is not None:
        extra["name"] = m.name
    if extra:
        key.append(extra)
    return key
