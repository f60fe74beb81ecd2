"""One NodeWorker actor per Ray node: the node's model, its sandbox pool, its units.

The actor is pinned to its node and opens the model and the Docker sandbox pool once;
every unit the driver places on the node runs in it as an actor task (one thread
each; the driver keeps at most `workers` in flight and the actor has CONTROL_SLOTS
threads more, so stop and close are never queued behind units), so the units share the pool and the model as they
would in a local run. A unit hands each finished trial to the Collector and waits
until the driver has written it before going on (so a lesson is never stored for a
trial that is not on disk).
"""
from __future__ import annotations

import os
import socket
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import ray

from harness.config import RunConfig
from harness.executors.ray_services import ClusterGate, ClusterLimiter, RemoteMemory
from harness.models.hostinfo import available_cores
from harness.core import AttemptContext, Stopped
from harness.rundata import TrialRecord
from harness.tasks.base import Task
from harness.run.units import Unit, UnitFailure, Workbench, budget_gate, open_prompts, open_workbench, run_unit


CONTROL_SLOTS = 4


class Superseded(Stopped):
    """The driver refused a record: this unit was given to another node meanwhile."""


@dataclass(frozen=True)
class Services:
    """Handles of the run's cluster-wide actors, given to every NodeWorker."""

    collector: Any
    memory: Any
    limiter: Any | None  # None when the run sets no rate limit
    gate: Any | None = None  # the run's GateHost; None when it sets no budget


def _node_cpus() -> int:
    """The CPUs this node offers Ray (`ray start --num-cpus`, by default its cores), at most
    the cores this process may use: the embedded model's threads. Several Ray nodes on one
    machine (as in the tests) then share its cores instead of each spinning on all of them."""
    here = ray.get_runtime_context().get_node_id()
    offered = next((n.get("Resources", {}).get("CPU", 0) for n in ray.nodes() if n["NodeID"] == here), 0)
    return max(1, min(int(offered), available_cores()))


@ray.remote(num_cpus=0)
class NodeWorker:
    def __init__(self, config: RunConfig, run_id: str, services: Services, prompt_files: dict[str, str],
                 recall_pool: str | None = None, languages: tuple[str, ...] = ()) -> None:
        self._stop = threading.Event()
        self._collector = services.collector
        self._workbench: Workbench | None = None
        self._ctx: AttemptContext | None = None
        self._error: str | None = None
        self._units = 0
        self._prompt_dir: tempfile.TemporaryDirectory | None = None
        try:
            self._open(config, run_id, services, prompt_files, recall_pool, languages)
        except Exception as exc:  # reported by ready(): the driver says which node failed
            self._error = f"{type(exc).__name__}: {exc}"
            self.close()

    def _open(self, config: RunConfig, run_id: str, services: Services, prompt_files: dict[str, str],
              recall_pool: str | None, languages: tuple[str, ...]) -> None:
        limiter = ClusterLimiter(services.limiter) if services.limiter is not None else None
        shared: dict[str, Any] = {}
        if services.gate is not None:  # the run's budget: every call here asks the driver's gate
            mine = budget_gate(config)
            shared["budget"] = ClusterGate(services.gate, mine.price, mine.prices)
        prompts = open_prompts(self._prompt_folder(prompt_files))
        self._workbench = open_workbench(config, prompts, languages, limiter=limiter, n_threads=_node_cpus(), **shared)
        recall = None
        if recall_pool is not None:  # the driver's frozen pool, written here: nodes need not share its disk
            from harness.core.recall import POOL_FILE, Recall

            folder = Path(tempfile.mkdtemp(prefix="harness-recall-"))
            (folder / POOL_FILE).write_text(recall_pool, encoding="utf-8")
            recall = Recall.open(folder, config.recall_k)
        self._ctx = self._workbench.context(config, run_id, RemoteMemory(services.memory), self._stop, recall)

    def _prompt_folder(self, files: dict[str, str]) -> Path | None:
        """The driver's --prompts templates, written here: nodes need not share its disk."""
        if not files:
            return None
        self._prompt_dir = tempfile.TemporaryDirectory(prefix="harness-prompts-")
        folder = Path(self._prompt_dir.name)
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8", errors="backslashreplace")
        return folder

    def ready(self) -> dict[str, Any]:
        return {
            "node_id": ray.get_runtime_context().get_node_id(),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "error": self._error,
            "identities": self._workbench.identities() if self._workbench is not None else None,
        }

    def run_unit(
        self, task: Task, strategy: str, attempt: int, done: Sequence[TrialRecord], generation: int
    ) -> "str | UnitFailure":
        """Runs one attempt from after `done`: "done", "stopped", "superseded" or why it failed."""
        assert self._ctx is not None, self._error
        self._units += 1

        def store(record: TrialRecord) -> None:
            if not ray.get(self._collector.put.remote(generation, record)):
                raise Superseded()

        try:
            failure = run_unit(self._ctx, Unit(task, strategy, attempt), done, store)
        except Superseded:
            return "superseded"  # the driver gave this unit to another node
        except Stopped:
            return "stopped"
        return failure if failure is not None else "done"

    def stats(self) -> dict[str, Any]:
        return {"units": self._units, "pid": os.getpid()}

    def stop(self) -> None:
        """No unit starts another trial; the trial in progress is not recorded."""
        self._stop.set()

    def close(self) -> dict[str, Any] | None:
        """Closes the model and the sandbox pool; returns what they were (an API's served
        model is known only after its replies)."""
        self._stop.set()
        identities = None
        if self._workbench is not None:
            identities = self._workbench.identities()
            self._workbench.close()
            self._workbench = None
        if self._prompt_dir is not None:
            self._prompt_dir.cleanup()
            self._prompt_dir = None
        return identities
