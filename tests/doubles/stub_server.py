"""A scriptable HTTP server speaking the Anthropic Messages and OpenAI Chat Completions APIs.

For tests and benchmarks: the real SDK clients talk HTTP to it on 127.0.0.1, so
retries, timeouts and error handling are exercised for real. Each request takes the
next scripted behaviour (or the default one), and every request is recorded.

    with StubServer(latency_s=1.0) as stub:
        stub.script(RateLimited(retry_after=1), Reply("def f(): ..."))
        client = anthropic.Anthropic(base_url=stub.url, api_key="test")
        ...
        stub.requests  # what arrived
        stub.billed  # the usage it reported with each answer it gave

Routes: POST /v1/messages (Anthropic), POST /v1/chat/completions and
/chat/completions (OpenAI; a request with `"stream": true` is answered as server-sent
events, the text and each tool call's arguments cut into small deltas). A Reply can
carry tool calls (tool_use blocks / tool_calls). The Anthropic route also imitates prompt caching: a
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
    """Answer 200 with `text`, or with `text(request)` when it is a function; with
    `tool_calls` ({"id", "name", "arguments": raw JSON text}) too, if any."""

    text: Union[str, Callable[[StubRequest], str]] = "ok"
    stop_reason: str | None = None  # None: "end_turn" / "stop", or "tool_use" / "tool_calls"
    delay_s: float = 0.0
    tool_calls: tuple[dict, ...] = ()


@dataclass(frozen=True)
class GarbageStream:
    """Answer a streamed request with events whose data is not JSON."""

    data: str = '{"id": "chatcmpl-broken", "choices": [{"delta": {"content": "trunc'


@dataclass(frozen=True)
class CutStream:
    """Start a streamed answer, then drop the connection mid-body."""

    text: str = "this answer never ends"


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


Behaviour = Union[Reply, Status, Stall, Malformed, LongReply, GarbageStream, CutStream]

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
        # What the server billed: the usage it reported with each answer it gave (200),
        # as the API's own fields (prompt_tokens/completion_tokens, or input_tokens/...).
        self.billed: list[dict[str, int]] = []

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

    def _bill(self, usage: dict[str, int]) -> None:
        with self._lock:
            self.billed.append(dict(usage))

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
        streamed = request.api == "openai" and isinstance(request.body, dict) and request.body.get("stream")
        if isinstance(behaviour, GarbageStream):
            self._send_events([behaviour.data], done=False)
            return
        if isinstance(behaviour, CutStream):
            completion = _openai_completion(stub, request, behaviour.text, "stop", ())
            self._send_events(_openai_chunks(completion, request)[:2], done=False, cut=True)
            return
        calls: tuple[dict, ...] = ()
        if isinstance(behaviour, LongReply):
            text = ("x" * 63 + "\n") * (behaviour.chars // 64) + "x" * (behaviour.chars % 64)
            stop = behaviour.stop_reason or ("max_tokens" if request.api == "anthropic" else "length")
        else:
            if behaviour.delay_s and stub._stopping.wait(behaviour.delay_s):
                return
            text = behaviour.text(request) if callable(behaviour.text) else behaviour.text
            stop = behaviour.stop_reason
            calls = behaviour.tool_calls
        if request.api == "anthropic":
            message = _anthropic_message(stub, request, text, stop or ("tool_use" if calls else "end_turn"), calls)
            stub._bill(message["usage"])
            self._send(200, message)
            return
        completion = _openai_completion(stub, request, text, stop or ("tool_calls" if calls else "stop"), calls)
        stub._bill(completion["usage"])
        if streamed:
            self._send_events(_openai_chunks(completion, request))
        else:
            self._send(200, completion)

    def _send_events(self, events: list, *, done: bool = True, cut: bool = False) -> None:
        """Server-sent events in a chunked body; `cut` drops the connection before its end."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for event in [*events, *(["[DONE]"] if done else [])]:
            data = event if isinstance(event, str) else json.dumps(event)
            payload = f"data: {data}\n\n".encode()
            self.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
            self.wfile.flush()
        if cut:
            self.close_connection = True
            self.wfile.flush()
            self.connection.shutdown(2)  # no closing chunk: the body is incomplete
            return
        self.wfile.write(b"0\r\n\r\n")

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


def _anthropic_message(stub: StubServer, request: StubRequest, text: str, stop: str,
                       calls: tuple[dict, ...] = ()) -> dict:
    body = request.body or {}
    cache_write, cache_read = stub._cache_usage(body)
    total_in = _count_tokens(request.prompt_text)
    content: list[dict] = [{"type": "text", "text": text}] if text or not calls else []
    content.extend({"type": "tool_use", "id": c["id"], "name": c["name"], "input": json.loads(c["arguments"])}
                   for c in calls)
    return {
        "id": f"msg_stub_{uuid.uuid4().hex[:16]}",
        "type": "message",
        "role": "assistant",
        "model": stub.model or body.get("model", "stub"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            # As the real API reports it: input_tokens excludes cached prefix tokens.
            "input_tokens": max(total_in - cache_write - cache_read, 0),
            "output_tokens": _count_tokens(text) + sum(_count_tokens(c["arguments"]) for c in calls),
            "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read,
        },
    }


def _openai_completion(stub: StubServer, request: StubRequest, text: str, stop: str,
                       calls: tuple[dict, ...] = ()) -> dict:
    body = request.body or {}
    prompt_tokens = _count_tokens(request.prompt_text)
    completion_tokens = _count_tokens(text) + sum(_count_tokens(c["arguments"]) for c in calls)
    message: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
    if calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in calls
        ]
    return {
        "id": f"chatcmpl-stub{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": stub.model or body.get("model", "stub"),
        "system_fingerprint": "stub",
        "choices": [
            {
                "index": 0,
                "message": message,
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


def _openai_chunks(completion: dict, request: StubRequest, piece: int = 5) -> list[dict]:
    """A chat completion as the chunks of a stream: the role, the text in pieces, each
    tool call as a first delta (index, id, name) and fragments of its arguments, the
    finish reason, and the usage last when the request asked for it."""
    head = {k: completion[k] for k in ("id", "created", "model", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    choice = completion["choices"][0]
    message = choice["message"]
    out = [chunk({"role": "assistant", "content": ""})]
    text = message.get("content") or ""
    out.extend(chunk({"content": text[i:i + piece]}) for i in range(0, len(text), piece))
    for index, call in enumerate(message.get("tool_calls") or ()):
        function = call["function"]
        out.append(chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                          "function": {"name": function["name"], "arguments": ""}}]}))
        args = function["arguments"]
        out.extend(chunk({"tool_calls": [{"index": index, "function": {"arguments": args[i:i + piece]}}]})
                   for i in range(0, len(args), piece))
    out.append(chunk({}, choice["finish_reason"]))
    options = (request.body or {}).get("stream_options") or {}
    if options.get("include_usage"):
        out.append({**head, "choices": [], "usage": completion["usage"]})
    return out


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
        out = []
        for b in content:
            if not isinstance(b, dict):
                continue
            inner = b.get("content")  # a tool_result block
            out.append(b.get("text") or (inner if isinstance(inner, str) else ""))
        return out
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

