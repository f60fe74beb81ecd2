"""A scriptable HTTP server speaking the Anthropic Messages and OpenAI Chat Completions APIs.

For tests and benchmarks: the real SDK clients talk HTTP to it on 127.0.0.1, so
retries, timeouts and error handling are exercised for real. Each request takes the
next scripted behaviour (or the default one), and every request is recorded.

    with StubServer(latency_s=1.0) as stub:
        stub.script(RateLimited(retry_after=1), Reply("def f(): ..."))
        client = anthropic.Anthropic(base_url=stub.url, api_key="test")
        ...
        stub.requests  # what arrived

Routes: POST /v1/messages (Anthropic), POST /v1/chat/completions and
/chat/completions (OpenAI). The Anthropic route also imitates prompt caching: a
prefix ending in a `cache_control` block is a cache write the first time it is seen
and a cache read afterwards, so usage accounting can be tested.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Union

# -- behaviours ----------------------------------------------------------------------


@dataclass(frozen=True)
class StubRequest:
    """One request as the server received it."""

    api: str  # "anthropic" or "openai"
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any  # the parsed JSON body (None if it was not JSON)
    raw: bytes
    received_at: float  # time.monotonic()

    @property
    def prompt_text(self) -> str:
        """All text the request carries (system + messages), for matching."""
        return "\n".join(_texts(self.body))


@dataclass(frozen=True)
class Reply:
    """Answer 200 with `text`, or with `text(request)` when it is a function."""

    text: Union[str, Callable[[StubRequest], str]] = "ok"
    stop_reason: str | None = None  # None: "end_turn" / "stop"
    delay_s: float = 0.0


@dataclass(frozen=True)
class Status:
    """Answer an HTTP error status with an API-shaped error body."""

    code: int = 500
    retry_after: float | None = None  # seconds, sent as the `retry-after` header
    message: str = "stub error"


def RateLimited(retry_after: float | None = 1.0) -> Status:  # noqa: N802 - reads as a behaviour
    return Status(429, retry_after=retry_after, message="rate limited by stub")


@dataclass(frozen=True)
class Stall:
    """Accept the request, then say nothing for `seconds` (the client should time out)."""

    seconds: float = 30.0


@dataclass(frozen=True)
class Malformed:
    """Answer 200 with a body that is not valid JSON."""

    body: bytes = b'{"id": "msg_broken", "content": [{"type": "text", "text": "trunc'


@dataclass(frozen=True)
class LongReply:
    """Answer 200 with `chars` characters of text (more than max_tokens allows)."""

    chars: int = 1_000_000
    stop_reason: str | None = None  # None: "max_tokens" / "length"


Behaviour = Union[Reply, Status, Stall, Malformed, LongReply]

# -- server --------------------------------------------------------------------------


class StubServer:
    """ThreadingHTTPServer on 127.0.0.1 with an ephemeral port; a context manager."""

    def __init__(
        self,
        *,
        default: Behaviour = Reply("ok"),
        latency_s: float = 0.0,
        model: str | None = None,
    ) -> None:
        self.default = default
        self.latency_s = latency_s  # added before every answer
        self.model = model  # model id to report; None echoes the request's model
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._seen_prefixes: set[str] = set()
        self.requests: list[StubRequest] = []
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.stub = self
        self._thread: threading.Thread | None = None
        self._active = 0
        self.max_active = 0  # most requests in flight at once, for concurrency checks

    # -- lifecycle
    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """Base URL for the Anthropic SDK (it appends /v1/messages)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL for the OpenAI SDK (it appends /chat/completions)."""
        return f"{self.url}/v1"

    def start(self) -> "StubServer":
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes stalled handlers
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "StubServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting
    def script(self, *behaviours: Behaviour) -> None:
        """Queue behaviours; each request takes the next one, then the default."""
        with self._lock:
            self._queue.extend(behaviours)

    def _next(self, request: StubRequest) -> Behaviour:
        with self._lock:
            self.requests.append(request)
            return self._queue.popleft() if self._queue else self.default

    def _enter(self) -> None:
        with self._lock:
            self._active += 1
            self.max_active = max(self.max_active, self._active)

    def _leave(self) -> None:
        with self._lock:
            self._active -= 1

    def _cache_usage(self, body: Any) -> tuple[int, int]:
        """(cache write, cache read) tokens for the prefix ending at the last cache_control."""
        prefix = _cached_prefix(body)
        if not prefix:
            return 0, 0
        tokens = _count_tokens(prefix)
        key = hashlib.sha256(prefix.encode()).hexdigest()
        with self._lock:
            if key in self._seen_prefixes:
                return 0, tokens
            self._seen_prefixes.add(key)
            return tokens, 0


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256  # the default listen backlog of 5 drops bursts of 32+ clients
    stub: StubServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # quiet: tests read `stub.requests` instead

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        stub = self.server.stub
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        if path in ("/v1/messages", "/messages"):
            api = "anthropic"
        elif path in ("/v1/chat/completions", "/chat/completions"):
            api = "openai"
        else:
            self._send(404, {"error": {"type": "not_found_error", "message": f"no route {path}"}})
            return
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        request = StubRequest(
            api=api,
            path=path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw=raw,
            received_at=time.monotonic(),
        )
        behaviour = stub._next(request)
        stub._enter()
        try:
            if stub.latency_s and stub._stopping.wait(stub.latency_s):
                return
            self._answer(stub, request, behaviour)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout): nothing to answer
        finally:
            stub._leave()

    def _answer(self, stub: StubServer, request: StubRequest, behaviour: Behaviour) -> None:
        if isinstance(behaviour, Stall):
            stub._stopping.wait(behaviour.seconds)
            self.close_connection = True
            return
        if isinstance(behaviour, Status):
            headers = {}
            if behaviour.retry_after is not None:
                headers["retry-after"] = _fmt_seconds(behaviour.retry_after)
            self._send(behaviour.code, _error_body(request.api, behaviour), headers)
            return
        if isinstance(behaviour, Malformed):
            self._send_raw(200, behaviour.body, "application/json")
            return
        if isinstance(behaviour, LongReply):
            text = ("x" * 63 + "\n") * (behaviour.chars // 64) + "x" * (behaviour.chars % 64)
            stop = behaviour.stop_reason or ("max_tokens" if request.api == "anthropic" else "length")
        else:
            if behaviour.delay_s and stub._stopping.wait(behaviour.delay_s):
                return
            text = behaviour.text(request) if callable(behaviour.text) else behaviour.text
            stop = behaviour.stop_reason
        if request.api == "anthropic":
            self._send(200, _anthropic_message(stub, request, text, stop or "end_turn"))
        else:
            self._send(200, _openai_completion(stub, request, text, stop or "stop"))

    def _send(self, code: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(code, json.dumps(payload).encode(), "application/json", headers)

    def _send_raw(
        self, code: int, data: bytes, ctype: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_stub_{uuid.uuid4().hex[:12]}")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


# -- API shapes ----------------------------------------------------------------------


def _anthropic_message(stub: StubServer, request: StubRequest, text: str, stop: str) -> dict:
    body = request.body or {}
    cache_write, cache_read = stub._cache_usage(body)
    total_in = _count_tokens(request.prompt_text)
    return {
        "id": f"msg_stub_{uuid.uuid4().hex[:16]}",
        "type": "message",
        "role": "assistant",
        "model": stub.model or body.get("model", "stub"),
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            # As the real API reports it: input_tokens excludes cached prefix tokens.
            "input_tokens": max(total_in - cache_write - cache_read, 0),
            "output_tokens": _count_tokens(text),
            "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read,
        },
    }


def _openai_completion(stub: StubServer, request: StubRequest, text: str, stop: str) -> dict:
    body = request.body or {}
    prompt_tokens = _count_tokens(request.prompt_text)
    completion_tokens = _count_tokens(text)
    return {
        "id": f"chatcmpl-stub{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": stub.model or body.get("model", "stub"),
        "system_fingerprint": "stub",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": stop,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _error_body(api: str, behaviour: Status) -> dict:
    kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(behaviour.code, "api_error")
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": behaviour.message}}
    return {"error": {"type": kind, "message": behaviour.message, "code": None, "param": None}}


def _texts(body: Any) -> list[str]:
    """Every text string in a Messages / Chat Completions request body, in order."""
    if not isinstance(body, dict):
        return []
    out: list[str] = []
    system = body.get("system")
    out.extend(_block_texts(system))
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            out.extend(_block_texts(message.get("content")))
    return out


def _block_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b.get("text", "") for b in content if isinstance(b, dict)]
    return []


def _cached_prefix(body: Any) -> str:
    """The text up to and including the last block that carries cache_control."""
    if not isinstance(body, dict):
        return ""
    blocks: list[dict] = []
    system = body.get("system")
    if isinstance(system, list):
        blocks.extend(b for b in system if isinstance(b, dict))
    elif isinstance(system, str):
        blocks.append({"text": system})
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            blocks.extend(b for b in content if isinstance(b, dict))
        elif isinstance(content, str):
            blocks.append({"text": content})
    last = max((i for i, b in enumerate(blocks) if "cache_control" in b), default=-1)
    return "\n".join(b.get("text", "") for b in blocks[: last + 1])


def _count_tokens(text: str) -> int:
    # A stand-in tokenizer: one token per whitespace-separated word.
    return len(text.split())


def _fmt_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"

