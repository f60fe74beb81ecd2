"""Host side of another language's programs: compiled once, run per test.

A request's program is turned into files and steps by its toolchain
(sandbox/toolchains/), compiled by a compile job on a compile worker (a container that
runs only compilers, `--compile`: worker/native.py), and the artifact is kept here, in
the host's memory, keyed by the digest of what was compiled: the internal and hidden
gradings of one trial, and every later grading of the same program, reuse it. Each test
job then carries the artifact (a file the worker writes into the job's scratch folder)
and the command that runs it.

Compile workers are their own domain (COMPILE_DOMAIN): they see programs' sources and
nothing else, never a test, so an artifact they made may serve every domain (README,
"Compiled languages").
"""
from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import replace

from sandbox.base import CompileOutcome, Limits, RunRequest, SandboxConfig, TestOutcome
from sandbox.toolchains import PROGRAM_ARTIFACT, Build, Toolchain, cut_message

COMPILE_DOMAIN = "compile"  # the compile workers' own (no RunRequest names it)
ARTIFACT_MAX_MB = 64
CACHE_ENTRIES = 256
CACHE_BYTES = 512 * 1024 * 1024
_STATUS = {"ok": "ok", "error": "compile_error", "timeout": "compile_timeout", "memory": "compile_memory"}


class Compiler:
    def __init__(self, chain: Toolchain, config: SandboxConfig, pool) -> None:
        self.chain = chain
        self.config = config
        self.pool = pool  # the compile workers' WorkerPool (None: the language compiles nothing)
        self._cache: OrderedDict[str, tuple[CompileOutcome, str]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._pending: dict[str, threading.Event] = {}
        self.compiles = 0  # compile jobs run (cache misses)

    @staticmethod
    def container_config(config: SandboxConfig, chain: Toolchain) -> SandboxConfig:
        """The compile workers' containers: the compile memory and process caps."""
        limits = config.limits
        memory = limits.compile_memory_mb or chain.compile_memory_mb
        return replace(config, limits=replace(limits, memory_mb=memory, pids=chain.compile_pids))

    def _build(self, request: RunRequest) -> Build:
        if request.suite is not None:  # the exercise's own tests, with its test runner
            return self.chain.build_runner(request.program, request.suite)
        return self.chain.build(request.program, request.entry_point if _calls(request) else None)

    def compile(self, request: RunRequest) -> CompileOutcome:
        build = self._build(request)
        if not build.steps:  # run from its source (JavaScript): its syntax errors are its tests' errors
            return CompileOutcome("ok", cached=True)
        return self._compiled(request, build)[0]

    def _compiled(self, request: RunRequest, build: Build) -> tuple[CompileOutcome, str]:
        """(outcome, the artifact in base64 or "") for the build, compiled once."""
        key = hashlib.sha256(json.dumps([self.chain.language, build.sources, build.steps, build.env],
                                        sort_keys=True).encode()).hexdigest()
        while True:
            with self._lock:
                if key in self._cache:
                    self._cache.move_to_end(key)
                    outcome, artifact = self._cache[key]
                    return replace(outcome, cached=True), artifact
                waiting = self._pending.get(key)
                if waiting is None:
                    self._pending[key] = threading.Event()
                    break
            waiting.wait()  # the same program compiling on another thread
        try:
            outcome, artifact = self._compile_job(build)
        except BaseException:
            with self._lock:
                self._pending.pop(key).set()
            raise
        with self._lock:
            self.compiles += 1
            self._cache[key] = (outcome, artifact)
            self._bytes += len(artifact)
            while len(self._cache) > CACHE_ENTRIES or self._bytes > CACHE_BYTES:
                _, (_, old) = self._cache.popitem(last=False)
                self._bytes -= len(old)
            self._pending.pop(key).set()
        return outcome, artifact

    def _compile_job(self, build: Build) -> tuple[CompileOutcome, str]:
        limits = self.config.limits
        timeout = limits.compile_timeout_s or self.chain.compile_timeout_s
        job = {"kind": "compile", "exec": {"files": {name: {"text": text} for name, text in build.sources.items()},
                                          "argv": []},
               "steps": [list(step) for step in build.steps], "env": {**self._env(), **build.env},
               "artifacts": [PROGRAM_ARTIFACT], "timeout_s": timeout,
               "memory_mb": limits.compile_memory_mb or self.chain.compile_memory_mb,
               "max_output_bytes": 64 * 1024, "max_file_mb": ARTIFACT_MAX_MB, "max_artifact_mb": ARTIFACT_MAX_MB,
               "pids": self.chain.compile_pids, "blind": False}
        answer = self.pool.run_job(COMPILE_DOMAIN, job, guard_s=timeout * 1.5 + 15)
        status = _STATUS.get(str(answer.get("status")))
        seconds = float(answer.get("duration_s", 0.0))
        message = cut_message(str(answer.get("detail", "")), build)
        if status is None:  # the sandbox's own failure: reported as a compile error saying so
            return CompileOutcome("compile_error", f"the sandbox could not compile the program: {message}", seconds), ""
        if status == "compile_timeout":
            message = f"compiling took longer than {timeout:g} s" + (f":\n{message}" if message else "")
        elif status == "compile_memory":
            memory = limits.compile_memory_mb or self.chain.compile_memory_mb
            message = f"the compiler ran out of memory ({memory} MB)" + (f":\n{message}" if message else "")
        artifact = str((answer.get("artifacts") or {}).get(PROGRAM_ARTIFACT, "")) if status == "ok" else ""
        return CompileOutcome(status, message if status != "ok" else "", seconds), artifact

    def _env(self) -> dict:
        return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp/test", "TMPDIR": "/tmp/test", "LANG": "C.UTF-8",
                **self.chain.env}

    def native_job(self, build: Build, artifact: str) -> dict:
        """What each test job runs: the artifact (or the source, for a language run from
        it) written into the scratch folder, and the command."""
        files: dict = {name: {"text": text} for name, text in build.run_files.items()}
        if build.steps:
            digest = hashlib.sha256(artifact.encode()).hexdigest()[:32]
            files[PROGRAM_ARTIFACT] = {"b64": artifact, "sha": digest, "executable": True}
        return {"files": files, "argv": list(build.run_argv), "env": self._env(),
                "threads": self.chain.threads, "spare_pipes": bool(self.chain.spare_pipes),
                "memory_mb": self.chain.run_memory_mb or 0}

    def run(self, request: RunRequest, pool) -> list[TestOutcome]:
        build = self._build(request)
        artifact = ""
        if build.steps:
            outcome, artifact = self._compiled(request, build)
            if not outcome.ok:
                return [TestOutcome(test=_name(test), status=outcome.status, detail=outcome.message)
                        for test in request.tests]
        return pool.run(request, native=self.native_job(build, artifact))


def _calls(request: RunRequest) -> bool:
    """Whether the request's tests are function calls (the driver is linked in)."""
    from sandbox.base import CallCase

    return any(isinstance(test, CallCase) for test in request.tests) or (
        not request.tests and bool(request.entry_point))


def _name(test) -> str:
    return test if isinstance(test, str) else test.name()


__all__ = ["COMPILE_DOMAIN", "Compiler", "Limits"]
