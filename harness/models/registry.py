"""Model backends by spec prefix, imported lazily, extensible through entry points.

`open_model("anthropic:claude-sonnet-4-5", settings)` finds the backend class registered
for the prefix before the first colon, checks the modules it declares it `requires`
(with its install hint when one is missing), and calls its `open` with the rest of the
spec. Every configuration problem (unknown prefix, missing key, bad path, model not
fetched) is a ModelConfigError raised here, at open time.

Another package adds a backend without forking, through the entry point group
`reflexion_harness.models`: the name is the spec prefix, the value `package.module:Class`
(a ChatModel subclass), e.g. in its pyproject.toml:

    [project.entry-points."reflexion_harness.models"]
    mybackend = "my_package.backend:MyModel"

A prefix is registered once: a second registration (in code or by another package) is
refused with both origins named.
"""
from __future__ import annotations

import importlib
import importlib.util
import threading
from dataclasses import dataclass
from importlib import metadata
from typing import Callable, Mapping, Union

from harness.models.base import ChatModel, ModelConfigError, ModelSettings

ENTRY_POINT_GROUP = "reflexion_harness.models"

Target = Union[str, type]  # "package.module:Class", or the class itself

def builtin_backends() -> dict[str, Target]:
    """prefix -> backend class: the backends of this package's modules (each ChatModel
    subclass that declares its `usage`), as the one registry (harness/registry.py) finds them."""
    from harness.registry import REGISTRY

    return {name: member.target for name, member in REGISTRY.members("models").items()
            if not member.origin.startswith("entry point")}


@dataclass(frozen=True)
class _Entry:
    target: Target
    origin: str  # where the registration came from, for messages


class ModelRegistry:
    """Prefix -> backend class. `entry_points=True` adds the installed packages'
    backends (group `reflexion_harness.models`) the first time the registry is read."""

    def __init__(self, backends: Mapping[str, Target] | Callable[[], Mapping[str, Target]] | None = None, *,
                 entry_points: bool = False) -> None:
        self._entries: dict[str, _Entry] = {}
        self._classes: dict[str, type[ChatModel]] = {}
        self._lock = threading.RLock()
        self._entry_points_pending = entry_points
        # A callable is asked when the registry is first read (the default registry's
        # built-ins: found by importing this package's modules, which import this one).
        self._builtins_pending = backends if callable(backends) else None
        for prefix, target in ({} if callable(backends) else backends or {}).items():
            self.register(prefix, target, origin="harness")

    def register(self, prefix: str, target: Target, *, origin: str = "") -> None:
        """Adds a backend; a prefix already taken is refused (ValueError)."""
        if not prefix or ":" in prefix or prefix != prefix.strip():
            raise ValueError(f"bad model backend prefix {prefix!r}")
        if isinstance(target, str) and ":" not in target:
            raise ValueError(f"model backend {prefix!r}: target {target!r} is not 'package.module:Class'")
        if not isinstance(target, str) and not (isinstance(target, type) and issubclass(target, ChatModel)):
            raise ValueError(f"model backend {prefix!r}: {target!r} is not a ChatModel subclass")
        self._take_builtins()  # a prefix a built-in has is refused now, not when the registry is first read
        with self._lock:
            known = self._entries.get(prefix)
            if known is not None:
                raise ValueError(
                    f"model backend prefix {prefix!r} is already registered by {_name(known.target)}"
                    f"{f' ({known.origin})' if known.origin else ''}; refused: {_name(target)}"
                    f"{f' ({origin})' if origin else ''}"
                )
            self._entries[prefix] = _Entry(target, origin)

    # -- reading
    def prefixes(self) -> list[str]:
        self._load_entry_points()
        return sorted(self._entries)

    def usages(self) -> list[str]:
        out = []
        for prefix in self.prefixes():
            try:
                out.append(self.backend(prefix).usage)
            except ModelConfigError:
                out.append(f"{prefix}:...")
        return out

    def backend(self, prefix: str) -> type[ChatModel]:
        """The class registered for `prefix`, imported now if not yet."""
        self._load_entry_points()
        with self._lock:
            if prefix in self._classes:
                return self._classes[prefix]
            entry = self._entries.get(prefix)
        if entry is None:
            raise ModelConfigError(
                f"unknown model backend {prefix!r}; a model spec is one of: {', '.join(self.usages())}"
            )
        cls = _load(prefix, entry)
        with self._lock:
            self._classes[prefix] = cls
        return cls

    def remote_api(self, spec: str) -> bool | None:
        """Whether the spec's backend declares itself a remote API (one that needs a key
        kept from the process sandbox), read from its class without opening a model;
        None when no backend answers for the spec."""
        prefix = spec.strip().partition(":")[0]
        try:
            return bool(self.backend(prefix).capabilities.remote_api)
        except ModelConfigError:
            return None

    def open(self, spec: str, settings: ModelSettings) -> ChatModel:
        prefix, colon, rest = spec.strip().partition(":")
        self._load_entry_points()
        if prefix not in self._entries:
            raise ModelConfigError(
                f"unknown model {spec!r}; a model spec is one of: {', '.join(self.usages())}"
            )
        cls = self.backend(prefix)
        arg = rest if colon else None
        if cls.argument == "required" and not arg:
            raise ModelConfigError(f"model spec {spec!r} is incomplete; write {cls.usage}")
        if cls.argument == "none" and colon:
            raise ModelConfigError(f"model spec {spec!r} takes no argument; write {cls.usage}")
        for module in cls.requires:
            if importlib.util.find_spec(module) is None:
                raise ModelConfigError(f"{spec}: {cls.install_hint or f'needs the module {module}: pip install {module}'}")
        return cls.open(arg, settings)

    # -- plug-ins
    def _take_builtins(self) -> None:
        with self._lock:
            builtins, self._builtins_pending = self._builtins_pending, None
            for prefix, target in (builtins() if builtins is not None else {}).items():
                self.register(prefix, target, origin="harness")

    def _load_entry_points(self) -> None:
        with self._lock:
            self._take_builtins()
            if not self._entry_points_pending:
                return
            self._entry_points_pending = False
            seen: dict[tuple[str, str], None] = {}
            for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
                if (ep.name, ep.value) in seen:
                    continue  # the same distribution found twice on sys.path
                seen[(ep.name, ep.value)] = None
                dist = getattr(ep, "dist", None)
                origin = f"entry point {ep.name} = {ep.value}" + (
                    f" of {dist.metadata['Name']} {dist.version}" if dist is not None else "")
                try:
                    self.register(ep.name, ep.value, origin=origin)
                except ValueError as exc:
                    raise ModelConfigError(str(exc)) from None


def _load(prefix: str, entry: _Entry) -> type[ChatModel]:
    target = entry.target
    if not isinstance(target, str):
        return target
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = f" (pip install {exc.name})" if getattr(exc, "name", None) else ""
        raise ModelConfigError(
            f"model backend {prefix!r} ({entry.origin or target}) cannot be imported: {exc}{missing}"
        ) from None
    cls = getattr(module, attr, None)
    if not (isinstance(cls, type) and issubclass(cls, ChatModel)):
        raise ModelConfigError(
            f"model backend {prefix!r} ({entry.origin or target}): {target} is not a ChatModel subclass"
        )
    return cls


def _name(target: Target) -> str:
    return target if isinstance(target, str) else f"{target.__module__}:{target.__qualname__}"


DEFAULT_REGISTRY = ModelRegistry(builtin_backends, entry_points=True)


def register_backend(prefix: str, target: Target) -> None:
    """Adds a backend to the default registry (a ChatModel subclass, or its
    "package.module:Class"); a prefix already taken is refused."""
    DEFAULT_REGISTRY.register(prefix, target, origin="register_backend")


def is_remote_api(spec: str) -> bool | None:
    """The default registry's answer: does `spec` name a remote API backend?"""
    return DEFAULT_REGISTRY.remote_api(spec)


def open_model(
    spec: str,
    settings: ModelSettings | None = None,
    *,
    registry: ModelRegistry | None = None,
) -> ChatModel:
    """Opens the model named by `spec`: behind the run's budget gate when settings.budget
    is set (harness/models/gate.py; under the cache, so a hit passes no gate), wrapped in
    the response cache when
    settings.cache_dir is set, priced at settings.prices when any is given
    (harness/models/priced.py, outside the cache: an answer it serves is priced at today's
    prices), and in the text tool protocol when settings.tool_protocol picks it
    (harness/models/text_tools.py)."""
    from harness.models.text_tools import with_tool_protocol

    settings = settings or ModelSettings()
    model = (registry or DEFAULT_REGISTRY).open(spec, settings)
    try:
        if settings.budget is not None:
            from harness.models.gate import GatedModel

            model = GatedModel(model, settings.budget)
        if settings.cache_dir is not None:
            from harness.models.cache import CachedModel

            model = CachedModel(model, settings.cache_dir, cache_all=settings.cache_all)
        if settings.prices:
            from harness.models.priced import PricedModel

            model = PricedModel(model, settings.prices)
        return with_tool_protocol(model, settings.tool_protocol)
    except BaseException:
        model.close()
        raise
