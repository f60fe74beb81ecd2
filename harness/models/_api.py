"""What the HTTP API backends share: the SDK backends' base class (`APIModel`), the retry
loop, error translation, reply capping, stop reasons, and the OpenAI chat format
(messages, tools) the openai and local backends send.

Retries are this module's own (the SDK clients are made with max_retries=0), so each
one is counted: `send` retries HTTP 408, 409, 429 and 5xx, timeouts and connection
errors, up to ModelSettings.max_retries times, waiting what a `retry-after-ms` /
`retry-after` header asks (seconds or an HTTP date; more than 120 s is not waited
for: the call gives up at once) or else an exponential backoff (0.5 s doubling, at
most 8 s, less 0-25% jitter), and obeying `x-should-retry`. The Completion, or the
ModelError that gave up, carries each retry as (status, seconds waited).
"""
from __future__ import annotations

import email.utils
import json
import logging
import math
import random
import re
import time
from typing import Any, Callable, ClassVar, Mapping, Sequence, TypeVar

from harness.models.base import ChatModel, Completion, Message, ModelConfigError, ModelError, ModelSettings, Retry, Usage
from harness.models.limiter import RateLimiter, Ticket, estimate_tokens
from harness.models.prices import ModelFacts, cost_usd, price_for
from harness.models.tools import TOOL_CHOICE_MODES, ToolCall, ToolSpec

T = TypeVar("T")

log = logging.getLogger("harness.models")

# A server that ignores max_tokens could send megabytes; no real token is this long,
# so longer replies are cut here and reported as stopped by max_tokens.
MAX_CHARS_PER_TOKEN = 32

# Stop reasons in one vocabulary (Anthropic's) whatever the backend says.
_STOP_REASONS = {
    "stop": "end_turn",
    "eos": "end_turn",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "end_turn": "end_turn",
    "stop_sequence": "stop_sequence",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "tool_use": "tool_use",
}

INITIAL_RETRY_DELAY_S = 0.5
MAX_RETRY_DELAY_S = 8.0
MAX_RETRY_AFTER_S = 120.0  # a server asking for a longer wait is not retried


_MODEL_AT_URL = re.compile(r"^(?P<model>[^@]*)@(?P<url>.*)$")


def split_model_url(rest: str, prefix: str) -> tuple[str, str | None]:
    """`<model>[@<base-url>]` -> (model, base_url or None)."""
    match = _MODEL_AT_URL.match(rest)
    model, url = (match["model"], match["url"]) if match else (rest, None)
    if not model.strip():
        raise ModelConfigError(
            f"{prefix}:{rest}: no model name; write {prefix}:<model>[@<base-url>]"
        )
    if url is not None and not re.match(r"^https?://[^/\s]+", url):
        raise ModelConfigError(
            f"{prefix}:{rest}: base URL {url!r} must start with http:// or https:// "
            f"(e.g. {prefix}:{model}@http://127.0.0.1:8000/v1)"
        )
    return model.strip(), (url.rstrip("/") if url else None)


class APIModel(ChatModel):
    """What the SDK backends (anthropic, openai) share: a client of the SDK made with its
    own retries off (`send` retries and counts them), the rate limiter, the identity at
    the base URL the client really uses, what run.json records, and the Completion of
    a reply. Calls run concurrently, bounded only by the limiter."""

    prefix: ClassVar[str] = ""  # the spec's, e.g. "anthropic"

    def __init__(
        self, sdk: Any, client: Callable[..., Any], model_id: str, settings: ModelSettings, *,
        api_key: str, base_url: str | None,
    ) -> None:
        self._sdk = sdk
        self.model_id = model_id
        self.spec = f"{self.prefix}:{model_id}" + (f"@{base_url}" if base_url else "")
        self._settings = settings
        self._served_model: str | None = None
        self._client = client(
            api_key=api_key,
            base_url=base_url,  # None: the SDK's default (or its environment variable)
            timeout=settings.timeout_s,
            max_retries=0,  # retried and counted by send
        )
        self._limiter = settings.limiter if settings.limiter is not None else RateLimiter(
            settings.requests_per_minute, settings.tokens_per_minute
        )
        self._table: Mapping[str, ModelFacts] = {}  # the shipped prices this backend knows

    def describe(self) -> dict[str, Any]:
        """What run.json records of an API model: the base URL the client uses and, once the
        server has replied, the model name as it reports it; the engine is the client SDK
        (the server's own engine is not known)."""
        found: dict[str, Any] = {
            **super().describe(),
            "engine": f"{self._sdk.__name__}-sdk", "engine_version": self._sdk.__version__,
            "base_url": str(self._client.base_url).rstrip("/"),
        }
        if self._served_model is not None:
            found["served_model"] = self._served_model
        return found

    @property
    def identity(self) -> str:
        """What the response cache keys on: the model id at the base URL the client
        really uses (the spec's, else the SDK's environment variable, else its default)."""
        return f"{self.prefix}:{self.model_id}@{str(self._client.base_url).rstrip('/')}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r})"  # never the client: it holds the key

    @property
    def limiter(self) -> RateLimiter:
        return self._limiter

    def _send(
        self, request: Callable[[], T], *, system: str | None, messages: Sequence[Message],
        max_tokens: int, tools: Sequence[ToolSpec],
    ) -> tuple[T, float, Ticket | None, tuple[Retry, ...]]:
        """`send` with this model's SDK, spec, settings and limiter."""
        return send(self._sdk, self.spec, self._settings, self._limiter, request,
                    system=system, messages=messages, max_tokens=max_tokens, tools=tools)

    def _completion(
        self, reply: Any, *, text: str, stop: str | None, usage: Usage, tool_calls: tuple[ToolCall, ...],
        max_tokens: int, latency_s: float, ticket: Ticket | None, retries: tuple[Retry, ...],
        temperature_ignored: bool,
    ) -> Completion:
        """The Completion of a reply (`reply.model`: the model as the server names it;
        `stop`: the server's stop reason): the limiter's ticket settled at the real token
        count, the text capped, the answer priced."""
        if ticket is not None:
            ticket.settle(usage.input_tokens + usage.output_tokens
                          + usage.cache_read_tokens + usage.cache_write_tokens)
        text, reason = cap_reply(self.spec, text, max_tokens, stop_reason(stop))
        model = reply.model or self.model_id
        if self._served_model is None:
            self._served_model = reply.model or None  # as the server reports it, in its first reply
        return Completion(
            text=text,
            model=model,
            usage=usage,
            latency_s=latency_s,
            cost_usd=cost_usd(usage, price_for(model, self._settings.prices, self._table)),
            stop_reason=reason,
            temperature_ignored=temperature_ignored,
            tool_calls=tool_calls,
            retries=retries,
        )

    def close(self) -> None:
        self._client.close()


def stop_reason(raw: str | None) -> str:
    return _STOP_REASONS.get(raw or "", raw or "")


def cap_reply(spec: str, text: str, max_tokens: int, reason: str) -> tuple[str, str]:
    limit = max(max_tokens, 1) * MAX_CHARS_PER_TOKEN
    if len(text) <= limit:
        return text, reason
    log.warning(
        "%s: reply of %d characters exceeds max_tokens=%d; cut to %d characters",
        spec, len(text), max_tokens, limit,
    )
    return text[:limit], "max_tokens"


def prompt_chars(system: str | None, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()) -> int:
    return (len(system or "") + sum(len(m.content) + sum(len(c.arguments) for c in m.tool_calls) for m in messages)
            + sum(len(json.dumps(t.to_dict())) for t in tools))


def send(
    sdk: Any,
    spec: str,
    settings: ModelSettings,
    limiter: RateLimiter,
    request: Callable[[], T],
    *,
    system: str | None,
    messages: Sequence[Message],
    max_tokens: int,
    tools: Sequence[ToolSpec] = (),
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[T, float, Ticket | None, tuple[Retry, ...]]:
    """One request under the shared limiter, retried as the module says:
    (reply, latency including the retries, ticket to settle, the retries made).

    The caller settles the ticket with the real token count; a request that failed
    for good settles at zero and comes back as a ModelError saying what failed, with
    the retries made before it gave up.
    """
    ticket = None
    if limiter.active:
        ticket = limiter.acquire(estimate_tokens(prompt_chars(system, messages, tools), max_tokens))
    started = time.monotonic()
    retries: list[Retry] = []
    while True:
        try:
            reply = request()
        except Exception as exc:  # translated: the run records a ModelError and goes on
            status, wait, why_not = retry_plan(sdk, exc, len(retries))
            if why_not is None and len(retries) < settings.max_retries:
                log.info("%s: %s; retry %d of %d in %.2f s", spec, status, len(retries) + 1,
                         settings.max_retries, wait)
                retries.append(Retry(status or "error", round(wait, 3)))
                sleep(wait)
                continue
            if ticket is not None:
                ticket.settle(0)
            raise translate_error(
                sdk, exc, spec, timeout_s=settings.timeout_s, attempts=len(retries) + 1,
                retries=tuple(retries), status=status, why_not=why_not,
            ) from exc
        return reply, time.monotonic() - started, ticket, tuple(retries)


def retry_plan(sdk: Any, exc: Exception, retried: int) -> tuple[str | None, float, str | None]:
    """(status, seconds to wait, None) when `exc` is worth another attempt, else
    (status, 0, why not). Status: the HTTP code, "timeout" or "connection"."""
    if isinstance(exc, sdk.APITimeoutError) or _is_transport(exc, timeout=True):
        return "timeout", backoff(retried), None
    if isinstance(exc, sdk.APIConnectionError) or _is_transport(exc, timeout=False):
        return "connection", backoff(retried), None
    if isinstance(exc, sdk.APIStatusError):
        code = exc.status_code
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        asked = retry_after_s(headers)
        if asked is not None and asked > MAX_RETRY_AFTER_S:
            return str(code), 0.0, f"the server asks to wait {asked:.0f} s, more than {MAX_RETRY_AFTER_S:.0f} s"
        should = str(headers.get("x-should-retry", "")).lower()
        if should == "false":
            return str(code), 0.0, "the server said not to retry"
        if should != "true" and not (code in (408, 409, 429) or code >= 500):
            return str(code), 0.0, "not retried"
        wait = asked if asked is not None and asked > 0 else backoff(retried)
        return str(code), wait, None
    return None, 0.0, "not retried"


def backoff(retried: int) -> float:
    """The SDKs' backoff: 0.5 s doubling per retry, at most 8 s, less 0-25% jitter."""
    return min(INITIAL_RETRY_DELAY_S * 2.0 ** min(retried, 30), MAX_RETRY_DELAY_S) * (1 - 0.25 * random.random())


def retry_after_s(headers: Any) -> float | None:
    """Seconds a response asks to wait: `retry-after-ms`, else `retry-after` (seconds or
    an HTTP date); None when it asks nothing readable."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        return seconds if math.isfinite(seconds) else MAX_RETRY_AFTER_S + 1
    value = headers.get("retry-after")
    if value:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        return max(when.timestamp() - time.time(), 0.0)
    return None


def _is_transport(exc: Exception, *, timeout: bool) -> bool:
    """An HTTP library's own error, raised while a streamed reply was being read (the
    SDKs wrap only those of the request itself)."""
    module = type(exc).__module__.split(".")[0]
    if module not in ("httpx", "httpx2", "httpcore", "httpcore2"):
        return False
    is_timeout = "Timeout" in type(exc).__name__
    return is_timeout if timeout else not is_timeout


def translate_error(
    sdk: Any,
    exc: Exception,
    spec: str,
    *,
    timeout_s: float,
    attempts: int,
    retries: tuple[Retry, ...] = (),
    status: str | None = None,
    why_not: str | None = None,
) -> ModelError:
    """A ModelError that says what failed, for an exception raised by an SDK call.

    `sdk` is the `anthropic` or `openai` module; both have the same exception names.
    The messages never include request headers, so the API key cannot leak through them.
    """
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"

    def error(text: str) -> ModelError:
        return ModelError(f"{spec}: {text}", retries=retries, status=status)

    if isinstance(exc, sdk.APITimeoutError) or _is_transport(exc, timeout=True):
        return error(f"no response within {timeout_s:g} s ({tries})")
    if isinstance(exc, sdk.APIConnectionError) or _is_transport(exc, timeout=False):
        return error(f"cannot connect to {_url(exc)} ({tries}): {exc.__cause__ or exc}")
    if isinstance(exc, sdk.APIStatusError):
        how = f"after {tries}" if why_not is None else (
            f"({why_not})" if attempts == 1 else f"after {tries}; {why_not}")
        return error(f"HTTP {exc.status_code} from {_url(exc)} {how}: {_api_message(exc)}")
    if isinstance(exc, (sdk.APIResponseValidationError, json.JSONDecodeError)):
        return error(f"malformed response from the server: {exc}")
    return error(f"{type(exc).__name__}: {exc}")


# -- the OpenAI chat format (the openai backend, and the local engine's server) --------


def openai_messages(system: str | None, messages: Sequence[Message]) -> list[dict[str, Any]]:
    chat: list[dict[str, Any]] = []
    if system:
        chat.append({"role": "system", "content": system})
    for m in messages:
        if m.role == "tool":
            chat.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        elif m.tool_calls:
            chat.append({
                "role": "assistant",
                "content": m.content,
                "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in m.tool_calls
                ],
            })
        else:
            chat.append({"role": m.role, "content": m.content})
    return chat


def openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": t.to_dict()} for t in tools]


def openai_tool_choice(tool_choice: str) -> Any:
    if tool_choice in TOOL_CHOICE_MODES:
        return tool_choice
    return {"type": "function", "function": {"name": tool_choice}}


def openai_tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    """ToolCalls from a chat-completions message's `tool_calls` (SDK objects or dicts)."""
    out = []
    for i, item in enumerate(raw or ()):
        function = _field(item, "function")
        name = _field(function, "name")
        if not name:
            continue
        arguments = _field(function, "arguments")
        if not isinstance(arguments, str):  # some servers send an object
            arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
        out.append(ToolCall(id=str(_field(item, "id") or f"call_{i}"), name=str(name), arguments=arguments))
    return tuple(out)


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _url(exc: Exception) -> str:
    request = getattr(exc, "request", None)
    try:
        return str(request.url) if request is not None else "the server"
    except RuntimeError:
        return "the server"


def _api_message(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return f"{err.get('type', 'error')}: {err['message']}"
    return str(getattr(exc, "message", exc))
