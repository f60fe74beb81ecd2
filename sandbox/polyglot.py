"""One Sandbox over several: Python's backend and one backend per other language (each on
its own image, with its own workers and compile workers), a request going to the one of
its language. What open_sandbox returns when SandboxConfig.languages names any."""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from sandbox.base import PYTHON, CompileOutcome, RunRequest, Sandbox, SandboxConfig, TestOutcome


class Polyglot:
    def __init__(self, backends: dict[str, Sandbox]) -> None:
        self._backends = backends
        self.name = backends[PYTHON].name

    @classmethod
    def open(cls, factory: Callable[[SandboxConfig], Sandbox], config: SandboxConfig,
             languages: tuple[str, ...]) -> "Polyglot":
        opened: dict[str, Sandbox] = {}
        try:
            opened[PYTHON] = factory(config)
            for language in languages:
                opened[language] = factory(replace(config, language=language))
        except BaseException:
            for backend in opened.values():
                backend.close()
            raise
        return cls(opened)

    def _backend(self, language: str) -> Sandbox:
        try:
            return self._backends[language]
        except KeyError:
            raise ValueError(f"a {language} program, but the sandbox was opened for "
                             f"{', '.join(self._backends)} (SandboxConfig.languages)") from None

    def run(self, request: RunRequest) -> list[TestOutcome]:
        return self._backend(request.language).run(request)

    def compile(self, request: RunRequest) -> CompileOutcome:
        return self._backend(request.language).compile(request)

    def describe(self) -> dict:
        described = dict(self._backends[PYTHON].describe())
        described["languages"] = {language: backend.describe() for language, backend in self._backends.items()
                                  if language != PYTHON}
        return described

    @property
    def replacements(self) -> int:
        return sum(getattr(backend, "replacements", 0) for backend in self._backends.values())

    def close(self) -> None:
        for backend in self._backends.values():
            backend.close()
