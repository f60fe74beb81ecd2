"""The ChatModel contract shared by every backend."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping, Protocol, Sequence, runtime_checkable

Role = Literal["user", "assistant"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str
    # Marks the end of the stable prefix of a conversation (system + task): backends
    # with prompt caching (Anthropic) put their cache breakpoint here.
    cache_prefix: bool = False


def valid_text(text: str) -> str:
    """`text` as valid UTF-8: lone surrogates become \\udXXX escapes (other text unchanged)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True)
class Completion:
    text: str
    model: str  # the model id the backend reports
    usage: Usage = Usage()
    latency_s: float = 0.0
    cost_usd: float | None = None  # None when the backend has no price
    cached: bool = False  # served from the response cache: no model call was made
    stop_reason: str = ""
    # The backend sent no temperature (the model ignores or rejects it): the model
    # sampled at its own default, whatever was asked. Such answers are not cached.
    temperature_ignored: bool = False

    def __post_init__(self) -> None:
        # A reply can carry lone surrogates (an API's JSON may hold "\ud800", a local
        # model may cut a character in half); text that is not valid UTF-8 would stop
        # the first writer that stores it. Every reply is valid text from here on.
        object.__setattr__(self, "text", valid_text(self.text))


@runtime_checkable
class ChatModel(Protocol):
    """One abstract call. Implementations are safe to call from many threads."""

    spec: str  # the spec string it was opened with, e.g. "anthropic:claude-sonnet-4-5"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Completion: ...

    def close(self) -> None: ...


class ModelError(RuntimeError):
    """A call failed after the backend's retries; the run records it and goes on."""


class ModelConfigError(ValueError):
    """A model spec or setting is wrong (unknown backend, missing key, bad path).

    Raised at open time so the CLI can print one line and exit 2.
    """


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0


@dataclass(frozen=True)
class ModelSettings:
    """Everything a backend may need, from RunConfig; each backend reads its part."""

    timeout_s: float = 120.0
    max_retries: int = 5
    requests_per_minute: int | None = None  # shared limiter across workers
    tokens_per_minute: int | None = None
    prices: Mapping[str, Price] = field(default_factory=dict)  # overrides, by model id
    cache_dir: Path | None = None  # response cache; None disables it
    cache_all: bool = False  # also cache temperature > 0 calls (they are seeded)
    models_dir: Path | None = None  # where `model fetch` keeps GGUF files
    n_threads: int | None = None  # local model; None = available cores
    n_ctx: int = 4096  # local model context, per slot
    # Local model: sequences the engine generates together (continuous batching). One
    # slot: answers depend on the request alone; more: faster, but batch-dependent.
    local_slots: int = 1
    # A limiter shared beyond this model (e.g. one for a whole Ray cluster); None: the
    # model makes its own RateLimiter from requests_per_minute / tokens_per_minute.
    limiter: Any = None
