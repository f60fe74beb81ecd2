"""What an answer is: the thing a trial submits and grading judges.

A task kind says which answer type its answers are (`TaskKind.answer_type`); the loop,
the records and the reports handle every type alike through this small contract:

- `Program`: one source text in a language: a function's module, a whole program, an
  exercise's solution file (function, io and runner tasks);
- `Files`: several files at paths relative to the task's folder;
- `Patch`: a unified diff against a repository snapshot (repository tasks), with the
  paths the agent wrote for itself and left out of what is graded.

`text()` is what a record keeps as its `code` (the one string older records, reports and
exports read); `as_record()` / `answer_from_record()` keep the whole value. A new answer
type is a subclass here or in a kind's own module: it registers itself by its `type`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

_TYPES: dict[str, type["Answer"]] = {}


class AnswerError(ValueError):
    """A record's answer that does not read back as its type says; the message says which field."""


@dataclass(frozen=True)
class Answer:
    type: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = vars(cls).get("type", "")
        if name:
            known = _TYPES.get(name)
            if known is not None and known.__qualname__ != cls.__qualname__:
                raise TypeError(f"answer type {name!r} is defined twice: {known.__module__}.{known.__qualname__} "
                                f"and {cls.__module__}.{cls.__qualname__}")
            _TYPES[name] = cls

    def text(self) -> str:
        """The answer as one text: what a record's `code` holds."""
        raise NotImplementedError

    def paths(self) -> tuple[str, ...]:
        """The files the answer writes or changes (empty: one program with no path)."""
        return ()

    def empty(self) -> bool:
        return not self.text().strip()

    def as_record(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True)
class Program(Answer):
    type: ClassVar[str] = "program"
    code: str
    language: str = "python"

    def text(self) -> str:
        return self.code

    def as_record(self) -> dict[str, Any]:
        return {"type": self.type, "code": self.code, "language": self.language}


@dataclass(frozen=True)
class Files(Answer):
    type: ClassVar[str] = "files"
    files: tuple[tuple[str, str], ...]  # (path relative to the task's folder, text)

    def text(self) -> str:
        return "\n".join(f"--- {path}\n{body}" for path, body in self.files)

    def paths(self) -> tuple[str, ...]:
        return tuple(path for path, _ in self.files)

    def as_record(self) -> dict[str, Any]:
        return {"type": self.type, "files": [[path, body] for path, body in self.files]}


@dataclass(frozen=True)
class Patch(Answer):
    type: ClassVar[str] = "patch"
    diff: str  # a unified diff (git's form) against the task's snapshot
    # Paths the agent wrote for itself (its own tests) and left out of `diff`: not graded.
    excluded: tuple[str, ...] = field(default=())

    def text(self) -> str:
        return self.diff

    def paths(self) -> tuple[str, ...]:
        found: list[str] = []
        for line in self.diff.splitlines():
            if line.startswith("diff --git a/"):
                path = line[len("diff --git a/"):].split(" b/", 1)[0]
                if path not in found:
                    found.append(path)
        return tuple(found)

    def as_record(self) -> dict[str, Any]:
        return {"type": self.type, "diff": self.diff, "excluded": list(self.excluded)}


def answer_types() -> tuple[str, ...]:
    return tuple(sorted(_TYPES))


def answer_from_record(data: Any, where: str = "answer") -> Answer:
    """The answer a record keeps (as `Answer.as_record` wrote it); AnswerError naming the field."""
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise AnswerError(f"{where}: expected an object with a 'type' string")
    cls = _TYPES.get(data["type"])
    if cls is None:
        raise AnswerError(f"{where}: unknown answer type {data['type']!r}; known: {', '.join(answer_types())}")
    try:
        if cls is Program:
            return Program(code=_text(data, "code", where), language=_text(data, "language", where))
        if cls is Files:
            rows = data.get("files")
            if not isinstance(rows, list) or not all(isinstance(r, list) and len(r) == 2 and all(isinstance(x, str) for x in r)
                                                     for r in rows):
                raise AnswerError(f"{where}.files: expected a list of [path, text] pairs")
            return Files(files=tuple((path, body) for path, body in rows))
        if cls is Patch:
            excluded = data.get("excluded", [])
            if not isinstance(excluded, list) or not all(isinstance(x, str) for x in excluded):
                raise AnswerError(f"{where}.excluded: expected a list of paths")
            return Patch(diff=_text(data, "diff", where), excluded=tuple(excluded))
        fields = {key: value for key, value in data.items() if key != "type"}
        return cls(**fields)  # another module's type: its own fields
    except TypeError as exc:
        raise AnswerError(f"{where}: {exc}") from None


def _text(data: dict, key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise AnswerError(f"{where}.{key}: expected a string")
    return value
