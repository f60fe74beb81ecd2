"""What the two HTTP API backends share: error translation, reply capping, stop reasons.

Retries are the SDKs' own: both retry 408/409/429/5xx, timeouts and connection
errors with exponential backoff (0.5 s doubling, at most 8 s, with jitter) and wait
what a `retry-after` / `retry-after-ms` header asks (the openai SDK gives up at once
when that exceeds 120 s). `tests/models` measures that the wait is honoured.
"""
from __future__ import annotations

import json
import logging
import re
import time
from typing import Any, Callable, Sequence, TypeVar

from harness.models.base import Message, ModelConfigError, ModelError, ModelSettings
from harness.models.limiter import RateLimiter, Ticket, estimate_tokens

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
}


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


def describe(sdk: Any, spec: str, identity: str, base_url: Any, served_model: str | None) -> dict[str, Any]:
    """What run.json records of an API model: the base URL the client uses and, once the
    server has replied, the model name as it reports it; the engine is the client SDK
    (the server's own engine is not known)."""
    found: dict[str, Any] = {
        "spec": spec, "identity": identity, "engine": f"{sdk.__name__}-sdk", "engine_version": sdk.__version__,
        "base_url": str(base_url).rstrip("/"),
    }
    if served_model is not None:
        found["served_model"] = served_model
    return found


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


def prompt_chars(system: str | None, messages: Sequence[Message]) -> int:
    return len(system or "") + sum(len(m.content) for m in messages)


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
) -> tuple[T, float, Ticket | None]:
    """One SDK request under the shared limiter: (reply, latency, ticket to settle).

    The caller settles the ticket with the real token count; a failed request
    settles at zero and comes back as a ModelError saying what failed.
    """
    ticket = None
    if limiter.active:
        ticket = limiter.acquire(estimate_tokens(prompt_chars(system, messages), max_tokens))
    started = time.monotonic()
    try:
        reply = request()
    except Exception as exc:  # translated: the run records a ModelError and goes on
        if ticket is not None:
            ticket.settle(0)
        raise translate_error(
            sdk, exc, spec, timeout_s=settings.timeout_s, max_retries=settings.max_retries
        ) from exc
    return reply, time.monotonic() - started, ticket


def translate_error(sdk, exc: Exception, spec: str, *, timeout_s: float, max_retries: int) -> ModelError:
    """A ModelError that says what failed, for an exception raised by an SDK call.

    `sdk` is the `anthropic` or `openai` module; both have the same exception names.
    The messages never include request headers, so the API key cannot leak through them.
    """
    attempts = f"{max_retries + 1} attempt{'s' if max_retries else ''}"
    if isinstance(exc, sdk.APITimeoutError):
        return ModelError(f"{spec}: no response within {timeout_s:g} s ({attempts})")
    if isinstance(exc, sdk.APIConnectionError):
        return ModelError(f"{spec}: cannot connect to {_url(exc)} ({attempts}): {exc.__cause__ or exc}")
    if isinstance(exc, sdk.APIStatusError):
        retried = exc.status_code in (408, 409, 429) or exc.status_code >= 500
        how = f"after {attempts}" if retried else "(not retried)"
        return ModelError(f"{spec}: HTTP {exc.status_code} from {_url(exc)} {how}: {_api_message(exc)}")
    if isinstance(exc, (sdk.APIResponseValidationError, json.JSONDecodeError)):
        return ModelError(f"{spec}: malformed response from the server: {exc}")
    if isinstance(exc, sdk.APIError):
        return ModelError(f"{spec}: {type(exc).__name__}: {exc}")
    return ModelError(f"{spec}: {type(exc).__name__}: {exc}")


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
