"""`scripted:<file>`: replays recorded answers. For tests and demos, never a default.

A script is a list of rules. A rule with `match` answers any call whose prompt
(system + messages) contains that text, as often as asked; rules without `match`
form a queue, consumed one per call, in order. Matching rules are tried first, so
a script can be deterministic however calls interleave across workers.

File format (JSON Lines): `{"reply": "..."}` or `{"match": "...", "reply": "..."}`;
a line `{"latency_s": 0.2}` makes every call take that long (demos, interruption tests).
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from harness.models.base import Completion, Message, ModelConfigError, ModelError, Usage

Responder = Callable[[str | None, Sequence[Message]], str | None]


@dataclass(frozen=True)
class Call:
    """What the model was asked, recorded for tests to inspect."""

    system: str | None
    messages: tuple[Message, ...]
    max_tokens: int
    temperature: float
    seed: int | None
    stop: tuple[str, ...] | None = None

    @property
    def prompt(self) -> str:
        """Everything the model saw, as one string."""
        return "\n".join([self.system or "", *(m.content for m in self.messages)])


class ScriptedModel:
    """A fake model: a queue of replies, rules by substring, and a record of calls.

    A reply of the form ``"!error: <reason>"`` raises ModelError, so tests can
    script a backend failure that survived its retries.
    """

    def __init__(
        self,
        replies: Sequence[str] = (),
        *,
        rules: Sequence[tuple[str, str]] = (),
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
        self._queue: deque[str] = deque(replies)
        self._rules = list(rules)
        self._responder = responder
        self._latency_s = latency_s
        self._lock = threading.Lock()
        self.calls: list[Call] = []
        self.file_sha256: str | None = None  # the script file's, when read from one

    def describe(self) -> dict[str, object]:
        """What run.json records of the model: the script file's sha256 decides the answers."""
        found: dict[str, object] = {"spec": self.spec, "identity": self.identity, "engine": "scripted"}
        if self.file_sha256:
            found["file_sha256"] = self.file_sha256
        return found

    @classmethod
    def from_file(cls, path: str | Path) -> "ScriptedModel":
        path = Path(path)
        if not path.is_file():
            raise ModelConfigError(f"scripted model file not found: {path}")
        replies: list[str] = []
        rules: list[tuple[str, str]] = []
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
                reply = row["reply"]
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ModelConfigError(
                    f"{path}:{lineno}: expected a JSON object with a 'reply' field ({exc})"
                ) from None
            if "match" in row:
                rules.append((str(row["match"]), str(reply)))
            else:
                replies.append(str(reply))
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
    ) -> Completion:
        call = Call(system, tuple(messages), max_tokens, temperature, seed, tuple(stop) if stop else None)
        with self._lock:
            self.calls.append(call)
            reply = self._pick(call)
        if self._latency_s:
            time.sleep(self._latency_s)
        if reply.startswith("!error:"):
            raise ModelError(f"{self.spec}: {reply[len('!error:'):].strip()}")
        words = len(call.prompt.split())
        return Completion(
            text=reply,
            model=self.spec,
            usage=Usage(input_tokens=words, output_tokens=len(reply.split())),
            latency_s=self._latency_s,
            temperature_ignored=not self.accepts_temperature,
        )

    def _pick(self, call: Call) -> str:
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
