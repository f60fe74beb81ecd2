"""The embedded engine as an OpenAI-compatible HTTP server on the loopback interface.

`harness model serve [NAME]` calls `start_server`: xllamacpp's server (llama.cpp's own
C++ server, the engine the `local` model uses in-process) listening on 127.0.0.1 at a
port, with an optional API key, so that another tool, or a second harness run with
`--model openai:<name>@http://127.0.0.1:<port>/v1`, can use the same GGUF. It binds the
loopback address only: nothing outside this machine reaches it.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.models.hostinfo import available_cores
from harness.models.base import ModelConfigError
from harness.models.fetch import catalogue, default_model_name, is_ready, model_path, resolve_models_dir
from harness.models.gguf import GGUFError, context_length, read_metadata

HOST = "127.0.0.1"


@dataclass(frozen=True)
class ServeConfig:
    """What `harness model serve` was asked for."""

    name: str | None = None  # a catalogue name or a .gguf path; None: the default model
    port: int = 8080
    api_key: str | None = None
    slots: int = 1
    n_ctx: int = 4096  # per slot
    threads: int | None = None
    models_dir: Path | None = None


@dataclass(frozen=True)
class Served:
    """A running server: `server` keeps it alive; `model` is the name requests give."""

    server: Any
    path: Path
    model: str
    url: str


def resolve_gguf(name: str | None, models_dir: Path | None) -> Path:
    """The GGUF file for a catalogue name, a path, or the default model; one clear
    ModelConfigError when it is not there."""
    known = catalogue()
    if name is None or (name in known and not Path(name).expanduser().is_file()):
        key = name or default_model_name()
        info = known[key]
        folder = resolve_models_dir(models_dir)
        if not is_ready(info, folder):
            raise ModelConfigError(f"{key}: the model is not in {folder}; run `python -m harness model fetch {key}` first")
        return model_path(info, folder)
    path = Path(name).expanduser()
    if not path.is_file() or path.suffix.lower() != ".gguf":
        raise ModelConfigError(f"{name}: neither a model of `python -m harness model list` "
                               f"({', '.join(sorted(known))}) nor a .gguf file")
    return path


def start_server(config: ServeConfig) -> Served:
    """Loads the model and starts the server on 127.0.0.1:<port>; it serves until the
    returned value is dropped."""
    import xllamacpp

    if not 0 < config.port < 65536:
        raise ModelConfigError(f"--port must be 1-65535, got {config.port}")
    if config.slots < 1:
        raise ModelConfigError(f"--slots must be >= 1, got {config.slots}")
    path = resolve_gguf(config.name, config.models_dir)
    try:
        meta = read_metadata(path)
    except (GGUFError, OSError) as exc:
        raise ModelConfigError(f"cannot read {path} as a GGUF model: {exc}") from None
    alias = config.name if config.name and not config.name.endswith(".gguf") else \
        (default_model_name() if config.name is None else path.stem)
    trained = context_length(meta)
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = {alias}
    params.n_parallel = config.slots
    params.kv_unified = False
    n_ctx = min(config.n_ctx, trained) if trained else config.n_ctx
    params.n_ctx = n_ctx * config.slots
    params.cont_batching = True
    threads = config.threads or available_cores()
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.use_jinja = True
    params.warmup = False
    params.verbosity = 0
    params.hostnames = [HOST]
    params.port = config.port
    params.api_keys = [config.api_key] if config.api_key else []
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:
        raise ModelConfigError(f"the engine cannot serve {path} on {HOST}:{config.port} ({exc})") from None
    return Served(server=server, path=path, model=alias, url=f"http://{HOST}:{config.port}/v1")


def new_api_key() -> str:
    return secrets.token_urlsafe(24)
