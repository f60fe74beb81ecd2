"""Model backends by spec prefix, imported lazily.

`open_model("anthropic:claude-sonnet-4-5", settings)` finds the backend registered for
the prefix before the first colon, checks its optional dependencies (with an install
hint when one is missing), imports its module and calls its factory with the rest of
the spec. Every configuration problem (unknown prefix, missing key, bad path, model
not fetched) is a ModelConfigError raised here, at open time.
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import Callable

from harness.models.base import ChatModel, ModelConfigError, ModelSettings

LOCAL_INSTALL_HINT = (
    "the local model needs the xllamacpp engine: pip install xllamacpp "
    "(a prebuilt wheel, nothing to compile; GPU wheels: see README)"
)

Factory = Callable[[str | None, ModelSettings], ChatModel]


@dataclass(frozen=True)
class Backend:
    prefix: str  # the spec prefix, without the colon
    target: str  # "package.module:factory"; the factory takes (rest of spec or None, settings)
    usage: str  # how a spec for it is written, for error messages
    argument: str = "required"  # "required", "optional" or "none": the part after the colon
    requires: tuple[str, ...] = ()  # importable modules the backend needs
    install_hint: str = ""


class ModelRegistry:
    def __init__(self, backends: tuple[Backend, ...] = ()) -> None:
        self._backends: dict[str, Backend] = {}
        for backend in backends:
            self.register(backend)

    def register(self, backend: Backend) -> None:
        if backend.prefix in self._backends:
            raise ValueError(
                f"model backend prefix {backend.prefix!r} is already registered "
                f"(by {self._backends[backend.prefix].target})"
            )
        if not backend.prefix or ":" in backend.prefix:
            raise ValueError(f"bad model backend prefix {backend.prefix!r}")
        self._backends[backend.prefix] = backend

    def prefixes(self) -> list[str]:
        return sorted(self._backends)

    def usages(self) -> list[str]:
        return [self._backends[p].usage for p in self.prefixes()]

    def open(self, spec: str, settings: ModelSettings) -> ChatModel:
        prefix, colon, rest = spec.strip().partition(":")
        backend = self._backends.get(prefix)
        if backend is None:
            raise ModelConfigError(
                f"unknown model {spec!r}; a model spec is one of: {', '.join(self.usages())}"
            )
        arg = rest if colon else None
        if backend.argument == "required" and not arg:
            raise ModelConfigError(f"model spec {spec!r} is incomplete; write {backend.usage}")
        if backend.argument == "none" and colon:
            raise ModelConfigError(f"model spec {spec!r} takes no argument; write {backend.usage}")
        for module in backend.requires:
            if importlib.util.find_spec(module) is None:
                raise ModelConfigError(f"{spec}: {backend.install_hint or f'needs {module}'}")
        module_name, _, attr = backend.target.partition(":")
        factory: Factory = getattr(importlib.import_module(module_name), attr)
        return factory(arg, settings)


def _open_scripted(rest: str | None, settings: ModelSettings) -> ChatModel:
    from harness.models.scripted import ScriptedModel

    return ScriptedModel.from_file(rest or "")


BUILTIN_BACKENDS: tuple[Backend, ...] = (
    Backend(
        "anthropic", "harness.models.anthropic_backend:open_anthropic",
        usage="anthropic:<model>", requires=("anthropic",),
        install_hint="needs the anthropic SDK: pip install anthropic",
    ),
    Backend(
        "openai", "harness.models.openai_backend:open_openai",
        usage="openai:<model>@<base-url>", requires=("openai",),
        install_hint="needs the openai SDK: pip install openai",
    ),
    Backend(
        "local", "harness.models.local_backend:open_local",
        usage="local[:<path.gguf>]", argument="optional", requires=("xllamacpp",),
        install_hint=LOCAL_INSTALL_HINT,
    ),
    Backend("scripted", "harness.models.registry:_open_scripted", usage="scripted:<file>"),
)

DEFAULT_REGISTRY = ModelRegistry(BUILTIN_BACKENDS)


def register_backend(backend: Backend) -> None:
    """Add a backend to the default registry (e.g. from a plugin); duplicates are refused."""
    DEFAULT_REGISTRY.register(backend)


def open_model(
    spec: str,
    settings: ModelSettings | None = None,
    *,
    registry: ModelRegistry | None = None,
) -> ChatModel:
    """Open the model named by `spec`; wrapped in the response cache when settings.cache_dir is set."""
    settings = settings or ModelSettings()
    model = (registry or DEFAULT_REGISTRY).open(spec, settings)
    if settings.cache_dir is not None:
        from harness.models.cache import CachedModel

        model = CachedModel(model, settings.cache_dir, cache_all=settings.cache_all)
    return model
