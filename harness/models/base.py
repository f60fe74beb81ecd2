"""The ChatModel contract shared by every backend.

A backend is a subclass of ChatModel. Its class declares how a spec names it (`usage`,
`argument`), what it needs installed (`requires`, `install_hint`) and what it can do
(`capabilities`), so the registry can answer "is this spec a remote API?" without
opening anything; `open(argument, settings)` makes an instance.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Mapping, NamedTuple, Sequence

from harness.models.tools import ToolCall, ToolSpec

Role = Literal["user", "assistant", "tool"]
ROLES = ("user", "assistant", "tool")
TOOL_PROTOCOLS = ("native", "text", "auto")


@dataclass(frozen=True)
class Message:
    """One turn. An assistant turn may carry `tool_calls`; a "tool" turn is the result
    of the call whose id is `tool_call_id` (`name`: that call's tool)."""

    role: Role
    content: str
    # Marks the end of the stable prefix of a conversation (system + task): backends
    # with prompt caching (Anthropic) put their cache breakpoint here.
    cache_prefix: bool = False
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"message role {self.role!r} is not one of {', '.join(ROLES)}")
        if not isinstance(self.tool_calls, tuple) or any(isinstance(c, dict) for c in self.tool_calls):
            # (a record's events hold calls as {id, name, arguments})
            calls = tuple(ToolCall(**c) if isinstance(c, dict) else c for c in self.tool_calls)
            object.__setattr__(self, "tool_calls", calls)
        if self.tool_calls and self.role != "assistant":
            raise ValueError(f"a {self.role} message cannot carry tool calls (only an assistant message)")
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool message (a tool's result) needs the tool_call_id of its call")
        if self.role != "tool" and self.tool_call_id is not None:
            raise ValueError(f"a {self.role} message has no tool_call_id (only a tool message)")


def valid_text(text: str) -> str:
    """`text` as valid UTF-8: lone surrogates become \\udXXX escapes (other text unchanged)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


class Retry(NamedTuple):
    """One failed attempt that was retried: its status ("429", "500", "503", ...,
    "timeout", "connection") and the seconds waited before the next attempt."""

    status: str
    waited_s: float


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
    # The calls the model asked for (natively, or parsed from its text by the text
    # protocol); empty when it asked for none.
    tool_calls: tuple[ToolCall, ...] = ()
    # Text protocol only: why the reply gave no usable call although it tried (an
    # unclosed block, a block that is not JSON, ...); None otherwise.
    tool_parse_error: str | None = None
    # The failed attempts the backend retried before this answer (empty on a cache hit).
    retries: tuple[Retry, ...] = ()
    # Speculative decoding (the local engine): tokens its drafter proposed for this answer
    # and how many of them the model accepted; None where no drafter ran (or a cache hit).
    draft_tokens: int | None = None
    draft_accepted: int | None = None

    def __post_init__(self) -> None:
        # A reply can carry lone surrogates (an API's JSON may hold "\ud800", a local
        # model may cut a character in half); text that is not valid UTF-8 would stop
        # the first writer that stores it. Every reply is valid text from here on.
        object.__setattr__(self, "text", valid_text(self.text))
        if not isinstance(self.tool_calls, tuple):
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
        if not isinstance(self.retries, tuple):
            object.__setattr__(self, "retries", tuple(Retry(*r) for r in self.retries))


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do. Declared on the class (the registry reads it without
    opening a model); an instance may refine it (the local model knows its context)."""

    tools: bool = False  # native tool calls (else the text protocol serves them)
    seeds: bool = False  # a seed makes sampled answers reproducible
    streaming: bool = False  # can stream replies (ModelSettings.stream)
    prompt_cache: bool = False  # reuses a prompt prefix across calls (provider or engine)
    # A remote API reached with a key from this process's environment: the key must be
    # kept from the unsafe process sandbox (config.py refuses that pairing).
    remote_api: bool = False
    context_tokens: int | None = None  # the context window, when known

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class ChatModel(ABC):
    """One abstract call, `complete`; implementations are safe to call from many threads.

    Subclasses declare, at class level: `usage` (how a spec names the backend, for
    messages), `argument` ("required", "optional" or "none": the part after the
    colon), `requires` (modules it imports) with an `install_hint`, and
    `capabilities`; and implement `open` (the registry's factory) and `complete`.
    """

    usage: ClassVar[str] = "<prefix>:<argument>"
    argument: ClassVar[str] = "required"
    requires: ClassVar[tuple[str, ...]] = ()
    install_hint: ClassVar[str] = ""
    capabilities: Capabilities = Capabilities()  # the class's declaration; instances may refine it

    spec: str = ""  # the spec string it was opened with, e.g. "anthropic:claude-sonnet-4-5"
    # False once the backend knows the model samples at its own default temperature.
    accepts_temperature: bool = True
    # A line for the run's start saying how calls overlap (the local engine's slots).
    concurrency_note: str | None = None

    @classmethod
    def open(cls, argument: str | None, settings: "ModelSettings") -> "ChatModel":
        """The registry's factory: `argument` is what follows `<prefix>:` (None without a colon)."""
        raise ModelConfigError(f"{cls.__name__} cannot be opened from a spec")

    @property
    def identity(self) -> str:
        """What decides the answers (the response cache keys on it); by default the spec."""
        return self.spec

    @property
    def preferred_tool_protocol(self) -> str:
        """The tool protocol `tool_protocol = "auto"` picks: "native" or "text"."""
        return "native" if self.capabilities.tools else "text"

    def describe(self) -> dict[str, Any]:
        """What run.json records of the model ("model_identity"); backends add their facts."""
        return {
            "spec": self.spec,
            "identity": self.identity,
            "capabilities": self.capabilities.to_dict(),
            "tool_protocol": "native" if self.capabilities.tools else "none",
        }

    def as_sent(
        self, messages: Sequence[Message], *, system: str | None = None,
        tools: Sequence[ToolSpec] = (), tool_choice: str = "auto",
    ) -> tuple[str | None, tuple[Message, ...], tuple[ToolSpec, ...]]:
        """(system, messages, tools) as this model hands them to its backend for a call
        with these arguments: unchanged, except behind the text protocol (instructions in
        the system prompt, tool turns as text, no tools). What a record should keep as
        "what the model saw"."""
        return system, tuple(messages), tuple(tools)

    @abstractmethod
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
    ) -> Completion: ...

    def close(self) -> None:
        pass


class WrappedModel(ChatModel):
    """A model around another, `inner` (the response cache, the run's prices, the text
    tool protocol): what the inner model declares and knows passes through unchanged;
    a subclass implements `complete` and changes only what it is for."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.spec = inner.spec

    @property
    def identity(self) -> str:
        return self.inner.identity

    @property
    def capabilities(self) -> Capabilities:  # type: ignore[override]
        return self.inner.capabilities

    @property
    def accepts_temperature(self) -> bool:  # type: ignore[override]
        return self.inner.accepts_temperature

    @property
    def concurrency_note(self) -> str | None:  # type: ignore[override]
        return self.inner.concurrency_note

    @property
    def preferred_tool_protocol(self) -> str:
        return self.inner.preferred_tool_protocol

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def as_sent(
        self, messages: Sequence[Message], *, system: str | None = None,
        tools: Sequence[ToolSpec] = (), tool_choice: str = "auto",
    ) -> tuple[str | None, tuple[Message, ...], tuple[ToolSpec, ...]]:
        return self.inner.as_sent(messages, system=system, tools=tools, tool_choice=tool_choice)

    def close(self) -> None:
        self.inner.close()


class ModelError(RuntimeError):
    """A call failed after the backend's retries; the run records it and goes on.

    `retries`: the failed attempts retried before giving up; `status`: the last
    attempt's ("429", "500", "timeout", "connection", ...), None when not an HTTP call.
    """

    def __init__(self, message: str, *, retries: Sequence[Retry] = (), status: str | None = None) -> None:
        super().__init__(message)
        self.retries: tuple[Retry, ...] = tuple(Retry(*r) for r in retries)
        self.status = status

    def __reduce__(self) -> Any:  # pickled whole (Ray sends errors between processes)
        return (_model_error, (str(self), self.retries, self.status))


def _model_error(message: str, retries: tuple[Retry, ...], status: str | None) -> ModelError:
    return ModelError(message, retries=retries, status=status)


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
    # Local model: the speculative decoding drafter (harness/models/speculative.py):
    # "auto" (the catalogue's measured best), "off", "ngram-mod", "draft", ...
    speculative: str = "auto"
    # A limiter shared beyond this model (e.g. one for a whole Ray cluster); None: the
    # model makes its own RateLimiter from requests_per_minute / tokens_per_minute.
    limiter: Any = None
    # The run's BudgetGate (harness/models/gate.py): --max-calls and --max-cost, checked
    # before every call that reaches the backend; None: no budget.
    budget: Any = None
    # How tool calls reach the model: "native" (the backend's own tool calls), "text"
    # (the text protocol, harness/models/text_tools.py) or "auto" (the model's
    # preferred one: the catalogue's per-model choice for a local model, else native
    # where the backend has tool calls).
    tool_protocol: str = "auto"
    stream: bool = False  # stream replies where the backend can (openai)
