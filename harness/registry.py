"""One registry for every extension point: strategies, model backends, task sources, task
kinds, languages and sandboxes.

A point's built-in members are found in its package, not listed anywhere: each module of
the package is imported and every member it defines is taken (a Strategy subclass that
declares its traits, a ChatModel subclass that declares its prefix, a task source class
with a prefix, a TaskKind subclass, a Language value; sandboxes come from the sandbox
package's own table, which imports nothing from harness). Other packages add members
through the entry point group `reflexion_harness.<point>`. A name registered twice is
refused with both origins named. Everything is read on first use; what the CLI offers
(choices, help text, validation) is generated from here.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import threading
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Callable, Iterable, Iterator

ENTRY_POINT_PREFIX = "reflexion_harness."


class RegistryError(ValueError):
    """An unknown name, a name defined twice, or a plug-in that cannot be loaded."""


@dataclass(frozen=True)
class Member:
    name: str
    target: Any  # the member itself, or "package.module:attribute" loaded when first asked for
    origin: str  # where it came from, for messages: a module, or an entry point and its distribution


@dataclass(frozen=True)
class Point:
    key: str  # "strategies"; its entry point group is reflexion_harness.<key>
    noun: str  # "strategy", for messages
    builtins: Callable[[], Iterable[Member]]
    accepts: Callable[[Any], bool]  # a loaded member is of this point's kind
    error: type[Exception] = RegistryError

    @property
    def group(self) -> str:
        return ENTRY_POINT_PREFIX + self.key


def scan(package: str, name_of: Callable[[Any, str], str | None], skip: Iterable[str] = ()) -> Iterator[Member]:
    """The members defined in the modules of `package`: each value a module defines itself
    (not one it imports) for which `name_of(value, module)` gives a name."""
    skipped = set(skip)
    root = importlib.import_module(package)
    for info in sorted(pkgutil.iter_modules(root.__path__), key=lambda i: i.name):
        if info.name.startswith("_") or info.name in skipped or info.ispkg:
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        for value in list(vars(module).values()):
            name = name_of(value, module.__name__)
            if name is not None:
                yield Member(name, value, module.__name__)


class Registry:
    """Name -> member, per point. Thread safe; built-ins and entry points are read on the
    first question about a point."""

    def __init__(self, points: Iterable[Point], *, entry_points: bool = True) -> None:
        self._points = {point.key: point for point in points}
        self._members: dict[str, dict[str, Member]] = {}
        self._loaded: dict[tuple[str, str], Any] = {}
        self._entry_points = entry_points
        self._lock = threading.RLock()

    def point(self, key: str) -> Point:
        return self._points[key]

    def register(self, key: str, name: str, target: Any, *, origin: str = "") -> None:
        """Adds a member; a name already taken by another member is refused."""
        with self._lock:
            members = self._read(key)
            self._add(self._points[key], members, Member(name, target, origin or _origin_of(target)))

    def unregister(self, key: str, name: str) -> None:
        """Forgets a member added by `register` (tests that register their own)."""
        with self._lock:
            self._read(key).pop(name, None)
            self._loaded.pop((key, name), None)

    def members(self, key: str) -> dict[str, Member]:
        with self._lock:
            return dict(self._read(key))

    def names(self, key: str) -> tuple[str, ...]:
        return tuple(sorted(self.members(key)))

    def get(self, key: str, name: str) -> Any:
        """The member `name` of point `key`, imported now if it was given by its path."""
        point = self._points[key]
        with self._lock:
            if (key, name) in self._loaded:
                return self._loaded[(key, name)]
            member = self._read(key).get(name)
        if member is None:
            raise point.error(f"unknown {point.noun} {name!r}; known: {', '.join(self.names(key))}")
        value = _load(point, member)
        with self._lock:
            self._loaded[(key, name)] = value
        return value

    def values(self, key: str) -> dict[str, Any]:
        return {name: self.get(key, name) for name in self.names(key)}

    # -- reading a point
    def _read(self, key: str) -> dict[str, Member]:
        members = self._members.get(key)
        if members is not None:
            return members
        point = self._points[key]
        members = {}
        for member in point.builtins():
            self._add(point, members, member)
        if self._entry_points:
            for member in _entry_point_members(point):
                self._add(point, members, member)
        self._members[key] = members
        return members

    @staticmethod
    def _add(point: Point, members: dict[str, Member], member: Member) -> None:
        known = members.get(member.name)
        if known is not None and known.target is not member.target and known.target != member.target:
            raise point.error(f"{point.noun} {member.name!r} is defined twice: by {known.origin} and by {member.origin}")
        members[member.name] = member


def _entry_point_members(point: Point) -> Iterator[Member]:
    seen: set[tuple[str, str]] = set()
    for ep in metadata.entry_points(group=point.group):
        if (ep.name, ep.value) in seen:
            continue  # the same distribution found twice on sys.path
        seen.add((ep.name, ep.value))
        dist = getattr(ep, "dist", None)
        where = f" of {dist.metadata['Name']} {dist.version}" if dist is not None else ""
        yield Member(ep.name, ep.value, f"entry point {ep.name} = {ep.value}{where}")


def _load(point: Point, member: Member) -> Any:
    value = member.target
    if isinstance(value, str):
        module_name, _, attr = value.partition(":")
        try:
            value = getattr(importlib.import_module(module_name), attr)
        except ImportError as exc:
            missing = f" (pip install {exc.name})" if getattr(exc, "name", None) else ""
            raise point.error(f"the {point.noun} plug-in {member.name!r} ({member.origin}) cannot be imported: "
                              f"{exc}{missing}") from None
        except AttributeError:
            raise point.error(f"the {point.noun} plug-in {member.name!r} ({member.origin}): {module_name} "
                              f"has no {attr!r}") from None
        except Exception as exc:  # noqa: BLE001 - a plug-in that fails as it loads is named, not a traceback
            raise point.error(f"the {point.noun} plug-in {member.name!r} ({member.origin}) cannot be loaded: "
                              f"{type(exc).__name__}: {exc}") from None
    if not point.accepts(value):
        raise point.error(f"the {point.noun} {member.name!r} ({member.origin}) is not a {point.noun} "
                          f"(got {type(value).__name__})")
    return value


def _origin_of(target: Any) -> str:
    if isinstance(target, str):
        return target
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', type(target).__name__)}"


# -- the points ----------------------------------------------------------------------
# A point names its package and its base by path and reads them only when first asked:
# this module imports no package whose members it holds (they all import it).

def _attr(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def classes(package: str, base: str, attribute: str, skip: Iterable[str] = (),
            naming: Callable[[Any], str | None] = lambda found: found if isinstance(found, str) else getattr(found, "name", None)
            ) -> Callable[[], Iterator[Member]]:
    """Built-ins of a point whose members are classes: each concrete subclass of `base`
    (a path, "module:Class") defined in a module of `package` that declares `attribute`
    in its own body, named by `naming(the attribute's value)`."""
    def found() -> Iterator[Member]:
        root = _attr(base)

        def name_of(value: Any, module: str) -> str | None:
            if not (isinstance(value, type) and issubclass(value, root) and value is not root) \
                    or value.__module__ != module or attribute not in vars(value) or inspect.isabstract(value):
                return None
            return naming(vars(value)[attribute])
        return scan(package, name_of, skip)
    return found


def instances(package: str, base: str, skip: Iterable[str] = ()) -> Callable[[], Iterator[Member]]:
    """Built-ins of a point whose members are values: each instance of `base` a module of
    `package` holds, named by its `name` (one imported into another module is the same member)."""
    def found() -> Iterator[Member]:
        root = _attr(base)
        return scan(package, lambda value, _: value.name if isinstance(value, root) else None, skip)
    return found


def table(path: str, origin: str) -> Callable[[], Iterator[Member]]:
    """Built-ins listed as name -> "module:attribute" by a package that cannot import this
    one (the sandbox imports nothing from harness)."""
    return lambda: (Member(name, target, origin) for name, target in _attr(path).items())


def subclass_of(base: str) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, type) and issubclass(value, _attr(base))


def spec_prefix(usage: str) -> str:
    """The prefix a spec form starts with: `local[:<name>]` -> `local`."""
    end = len(usage)
    for mark in ":[<( ":
        if mark in usage:
            end = min(end, usage.index(mark))
    return usage[:end]


def _task_sources() -> Iterator[Member]:
    def name_of(value: Any, module: str) -> str | None:
        if isinstance(value, type) and value.__module__ == module and "prefix" in vars(value) \
                and callable(getattr(value, "load", None)):
            return vars(value)["prefix"]
        return None
    return scan("harness.tasks", name_of)


POINTS = (
    Point("strategies", "strategy",
          classes("harness.strategies", "harness.strategies.base:Strategy", "traits", skip=("base", "registry")),
          subclass_of("harness.strategies.base:Strategy")),
    Point("models", "model backend", classes("harness.models", "harness.models.base:ChatModel", "usage", naming=spec_prefix),
          subclass_of("harness.models.base:ChatModel")),
    Point("tasks", "task source", _task_sources, lambda value: isinstance(value, type) and callable(getattr(value, "load", None))),
    Point("kinds", "task kind", classes("harness.kinds", "harness.kinds.base:TaskKind", "name", skip=("base",)),
          subclass_of("harness.kinds.base:TaskKind")),
    Point("languages", "language",
          instances("harness.kinds.languages", "harness.kinds.languages.base:Language", skip=("base", "kind", "literals", "runner")),
          lambda value: isinstance(value, _attr("harness.kinds.languages.base:Language"))),
    Point("sandboxes", "sandbox", table("sandbox.registry:BUILTIN_BACKENDS", "sandbox"), callable),
)

# The process's registry: what every caller reads (a test registering a member of its
# own unregisters it after).
REGISTRY = Registry(POINTS)
