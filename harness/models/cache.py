"""A response cache on disk, wrapped around any ChatModel.

Key: sha256 of (model identity, system, messages, max_tokens, temperature, stop, seed).
The identity is what decides the answers, not the spec string that named the model: a
backend's `identity` attribute (the file's sha256 for `local` and `scripted:<file>`,
the resolved base URL for the API backends), else its spec. Editing a script,
replacing a GGUF or pointing ANTHROPIC_BASE_URL elsewhere therefore misses the cache.
Only temperature-0 calls are cached unless `cache_all` (their seeded samples are then
reproducible too); an answer from a model that ignored the temperature is not. One JSON file per key, written to a temporary name and renamed into
place, so any number of threads and processes can share a cache folder: a reader sees
a whole entry or none, and two writers of one key write the same answer.

A hit returns the stored Completion with `cached=True`; its usage and cost are those
of the original call (what the answer cost when it was made), and no model call is made:
the run's accounting (harness/calls.py) keeps that cost apart from money spent.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, Sequence

from harness.models.base import ChatModel, Completion, Message, Usage

log = logging.getLogger(__name__)

_FORMAT = 2  # bump when the key or entry layout changes; old entries are then ignored


class CachedModel:
    """A ChatModel that answers repeated calls from disk."""

    def __init__(self, inner: ChatModel, cache_dir: Path, *, cache_all: bool = False) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.identity = model_identity(inner)
        self.cache_dir = Path(cache_dir)
        self.cache_all = cache_all
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._key_locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __getattr__(self, name: str) -> Any:
        # Backend-specific attributes (e.g. the local model's `serialised`) stay visible.
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Completion:
        kwargs = dict(system=system, max_tokens=max_tokens, temperature=temperature,
                      stop=stop, seed=seed)
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

    def close(self) -> None:
        self.inner.close()

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
        if entry.get("format") != _FORMAT:
            return None
        data = dict(entry["completion"])
        data["usage"] = Usage(**data["usage"])
        data["cached"] = True
        return Completion(**data)

    def _write(self, key: str, completion: Completion) -> None:
        path = self.path_for(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = dataclasses.asdict(completion)
        record["cached"] = False
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


def model_identity(model: ChatModel) -> str:
    """What identifies the model that answers: its `identity` if it has one, else its spec."""
    identity = getattr(model, "identity", None)
    return str(identity) if identity else model.spec


def cache_key(
    identity: str,
    messages: Sequence[Message],
    *,
    system: str | None,
    max_tokens: int,
    temperature: float,
    stop: Sequence[str] | None,
    seed: int | None,
) -> str:
    payload = {
        "format": _FORMAT,
        "model": identity,
        "system": system,
        # cache_prefix only places a provider cache breakpoint: it does not change the answer.
        "messages": [[m.role, m.content] for m in messages],
        "max_tokens": max_tokens,
        "temperature": float(temperature),
        "stop": list(stop) if stop else None,
        "seed": seed,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()
