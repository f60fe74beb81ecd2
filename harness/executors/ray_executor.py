"""Runs a run's units on a Ray cluster; the driver (this process) writes every record.

Placement: one NodeWorker per alive node that offers Ray a CPU (ray_node.py), each
taking up to `workers` units at once; the driver hands the next unit to whichever
node has a free slot, so faster nodes take more. Nodes that join mid-run get a NodeWorker at the next check.

Exactly once: each unit carries a generation number. A record reaches the driver
through the Collector; the driver writes it if its generation is the unit's current
one and refuses it otherwise. When a node is lost, each of its units goes back to
the queue with a new generation and the records the driver has already written, so
it continues after the last written trial on another node; a late record from the
lost node is refused. After `kill -9` of the driver, `--resume` reads trials.jsonl
as for a local run.
"""
from __future__ import annotations

import logging
import socket
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import ray
from ray.exceptions import (
    ActorDiedError,
    ActorUnavailableError,
    NodeDiedError,
    RayActorError,
    RayTaskError,
    WorkerCrashedError,
)
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from harness.config import RunConfig
from harness.executors.ray_node import CONTROL_SLOTS, NodeWorker, Services
from harness.executors.ray_services import Collector, GateHost, LimiterHost, MemoryHost, RemoteMemory
from harness.rundata import TrialRecord
from harness.run.units import Unit, UnitFailure, UnitKey, restore_lessons

LOST = (RayActorError, ActorDiedError, ActorUnavailableError, NodeDiedError, WorkerCrashedError)
NODE_CHECK_S = 5.0  # how often the driver looks for nodes that joined
START_TIMEOUT_S = 600.0  # a node opening the local model and its sandbox pool
NO_NODE_TIMEOUT_S = 120.0  # give up when no node can take work for this long
MAX_LOSSES = 3  # a unit whose node is lost more often than this stops the run
CLOSE_TIMEOUT_S = 20.0


class ClusterError(RuntimeError):
    """The cluster cannot run the units; the message says what and where."""


def _gcs_address() -> str:
    return str(ray.get_runtime_context().gcs_address)


def _cluster_line() -> str:
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    cpus = sum(n.get("Resources", {}).get("CPU", 0) for n in nodes)
    return f"{len(nodes)} node(s), {cpus:g} CPUs"


def _check_reachable(address: str | None) -> None:
    """Fails in seconds on a host:port nobody listens on (Ray itself retries for minutes)."""
    host, sep, port = (address or "").rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return  # "auto", "local", ray://..., None: Ray's own lookup
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise ConnectionError(f"nothing answers at {address} ({exc})") from None


@dataclass
class _Node:
    node_id: str
    worker: Any
    ready: Any  # ObjectRef of worker.ready() until it resolves, then None
    in_flight: int = 0
    usable: bool = False


@dataclass
class _Slot:
    unit: Unit
    generation: int
    node_id: str


@dataclass
class RayExecution:
    """One run's units on the cluster. `run` returns timings; it raises KeyboardInterrupt on Ctrl-C."""

    config: RunConfig
    run_id: str
    memory_root: Path
    memory_namespace: str
    written: dict[UnitKey, list[TrialRecord]]  # records on disk, per unit (the runner's)
    store: Callable[[TrialRecord], None]  # writes one record (the runner's; the only writer)
    unit_ended: Callable[[Unit, UnitFailure | None], None]  # finished, or failed (errors.jsonl)
    # What the nodes opened (model, sandbox): the runner records it, and may refuse it
    # (a resume whose model changed) by raising.
    identified: Callable[[dict[str, dict[str, Any]]], None] = lambda identities: None
    say: Callable[[str], None] = print  # one line for the user: which cluster the run is on
    recall_pool: str | None = None  # the run's frozen recall pool (its file's text), sent to every node
    # The run's BudgetGate (harness/models/gate.py), seeded with what earlier sessions
    # spent: a GateHost takes its place for the cluster, and hands its state back at the end.
    gate: Any = None
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("harness.ray"))

    def __post_init__(self) -> None:
        self._nodes: dict[str, _Node] = {}
        self._lost_nodes: set[str] = set()
        self._in_flight: dict[Any, _Slot] = {}
        self._generation: dict[UnitKey, int] = {}
        self._losses: dict[UnitKey, int] = {}
        self._connected_here = False
        self._services: Services | None = None
        self._identities: dict[str, dict[str, Any]] | None = None  # the first ready node's
        self._languages: tuple[str, ...] = ()  # the run's tasks' languages: each node opens their images
        self.units_by_node: dict[str, int] = {}  # units handed to each node, lost ones included

    # --- the run ------------------------------------------------------------------
    def run(self, units: Sequence[Unit]) -> dict[str, float]:
        started = time.perf_counter()
        self._languages = tuple(sorted({unit.task.language for unit in units}))
        self._connect()
        try:
            self._start_services()
            self._check_nodes(wait=True)
            cluster_start_s = time.perf_counter() - started
            self._loop(deque(units))
            self._close_nodes()
        except BaseException:
            self._abort()
            raise
        finally:
            if self._connected_here:
                ray.shutdown()
        return {"cluster_start_s": round(cluster_start_s, 3)}

    def _connect(self) -> None:
        """Joins the cluster the config names (an address, or `auto`: RAY_ADDRESS, else
        the cluster `ray start` left on this machine); without one, starts a private
        instance for this run alone (never another's cluster found on the machine),
        which ends with the run. Says which."""
        if ray.is_initialized():  # e.g. a test or a notebook that connected already
            self.say(f"ray: using this process's Ray connection to {_gcs_address()} ({_cluster_line()})")
            return
        address = self.config.ray_address
        try:
            if address is None:
                # "local": a new instance, even where RAY_ADDRESS or a running cluster is found.
                ray.init(address="local", include_dashboard=False, logging_level=logging.WARNING)
            else:
                _check_reachable(address)
                ray.init(address=address, logging_level=logging.WARNING)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ClusterError(
                f"cannot join the Ray cluster at {address or 'a new local instance'}: {exc}. Start one with "
                "`ray start --head` (README: 'Running on a Ray cluster') or give its address with --ray-address"
            ) from None
        self._connected_here = True
        if address is None:
            self.say(f"ray: started a private Ray instance for this run at {_gcs_address()} ({_cluster_line()}); it ends with "
                     "the run. To use a cluster, give --ray-address ADDRESS (or auto)")
        else:
            self.say(f"ray: joined the Ray cluster at {_gcs_address()} ({_cluster_line()}), as --ray-address {address} asked")

    def _start_services(self) -> None:
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        self._collector = Collector.options(scheduling_strategy=here).remote()
        self._memory_host = MemoryHost.options(scheduling_strategy=here).remote(
            str(self.memory_root.resolve()), self.memory_namespace
        )
        limiter = None
        c = self.config
        if c.requests_per_minute is not None or c.tokens_per_minute is not None:
            limiter = LimiterHost.remote(c.requests_per_minute, c.tokens_per_minute)
        gate = None
        if self.gate is not None:
            _, calls, usd = self.gate.state()
            gate = GateHost.options(scheduling_strategy=here).remote(self.gate.max_calls, self.gate.max_cost,
                                                                     self.gate.price, calls, usd)
        self._services = Services(self._collector, self._memory_host, limiter, gate)
        self._memory = RemoteMemory(self._memory_host)
        # Paths the nodes use are the driver's, made absolute (a node's cwd is not ours).
        self._node_config = c.replace(cache_dir=c.cache_dir.resolve(), memory_dir=self.memory_root.resolve(), prompts=None)
        # The --prompts templates travel as text: nodes need not share the driver's disk.
        self._prompt_files = {p.name: p.read_text(encoding="utf-8") for p in sorted(c.prompts.glob("*.j2"))} if c.prompts else {}

    # --- nodes --------------------------------------------------------------------
    def _check_nodes(self, *, wait: bool = False) -> None:
        for info in ray.nodes():
            node_id = info["NodeID"]
            if not info.get("Alive") or node_id in self._nodes or node_id in self._lost_nodes:
                continue
            if not info.get("Resources", {}).get("CPU"):
                continue  # a node that offers Ray no CPU (e.g. a KubeRay head) takes no units
            worker = NodeWorker.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
                max_concurrency=self.config.workers + CONTROL_SLOTS,
                name=f"harness-{self.run_id}-{node_id[:12]}",
            ).remote(self._node_config, self.run_id, self._services, self._prompt_files, self.recall_pool,
                      self._languages)
            self._nodes[node_id] = _Node(node_id, worker, worker.ready.remote())
        waiting = {n.ready: n for n in self._nodes.values() if n.ready is not None}
        if not waiting:
            return
        done, _ = ray.wait(list(waiting), num_returns=len(waiting), timeout=START_TIMEOUT_S if wait else 0)
        errors = []
        for ref in done:
            node = waiting[ref]
            node.ready = None
            try:
                info = ray.get(ref)
            except LOST as exc:
                info = {"error": f"{type(exc).__name__}: {exc}", "host": "?"}
            if not info["error"] and self._identities is not None and info["identities"] != self._identities:
                info["error"] = (f"it opened {info['identities']}, another node {self._identities}: "
                                 "every node needs the same model file and sandbox image")
            if info["error"]:
                errors.append(f"node {node.node_id[:12]} ({info['host']}): {info['error']}")
                self._lose_node(node.node_id)
            else:
                if self._identities is None:
                    self.identified(info["identities"])  # may refuse the run (a changed resume)
                    self._identities = info["identities"]
                node.usable = True
        if errors and wait:
            raise ClusterError(
                "a Ray node could not open the model or the sandbox: " + "; ".join(errors)
                + ". Every node needs the Docker engine, the sandbox image (`harness sandbox build`) "
                "and, for the local model, the model file (see README, 'Running on a Ray cluster')"
            )
        for line in errors:
            self.log.warning("%s; no units go there", line)
        if wait and not any(n.usable for n in self._nodes.values()):
            raise ClusterError(f"no node of the Ray cluster at {self.config.ray_address or 'default'} became ready")

    def _lose_node(self, node_id: str) -> None:
        node = self._nodes.pop(node_id, None)
        self._lost_nodes.add(node_id)
        if node is not None:
            ray.kill(node.worker, no_restart=True)

    # --- scheduling -----------------------------------------------------------------
    def _loop(self, queue: deque[Unit]) -> None:
        drain = self._collector.drain.remote(5.0)
        last_check = time.monotonic()
        idle_since: float | None = None
        while queue or self._in_flight:
            if time.monotonic() - last_check > NODE_CHECK_S:
                self._check_nodes()
                last_check = time.monotonic()
            self._dispatch(queue)
            if not self._in_flight:  # nothing runs: every node is lost or still starting
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since > NO_NODE_TIMEOUT_S:
                    raise ClusterError(
                        f"no Ray node could take work for {NO_NODE_TIMEOUT_S:.0f} s "
                        f"({len(self._lost_nodes)} lost); {len(queue)} units are left"
                    )
                time.sleep(1.0)
                self._check_nodes()
                continue
            idle_since = None
            ready, _ = ray.wait([drain, *self._in_flight], num_returns=1, timeout=1.0)
            if drain in ready:
                self._write(ray.get(drain))
                drain = self._collector.drain.remote(5.0)
            finished, _ = ray.wait(list(self._in_flight), num_returns=len(self._in_flight), timeout=0)
            for ref in finished:
                self._finish(ref, queue)
        ray.cancel(drain)

    def _may_start(self) -> bool:
        """False once the run's budget has refused a call or its calls are used up."""
        if self._services is None or self._services.gate is None:
            return True
        return bool(ray.get(self._services.gate.may_start_work.remote()))

    def _dispatch(self, queue: deque[Unit]) -> None:
        if queue and any(n.usable and n.in_flight < self.config.workers for n in self._nodes.values()) \
                and not self._may_start():
            queue.clear()  # left pending: the budget stopped the run
            return
        for node in sorted(self._nodes.values(), key=lambda n: n.in_flight):
            while queue and node.usable and node.in_flight < self.config.workers:
                unit = queue.popleft()
                key = unit.key
                generation = self._generation.setdefault(key, 0)
                task, strategy, attempt = unit
                ref = node.worker.run_unit.remote(task, strategy, attempt, list(self.written.get(key, [])), generation)
                self._in_flight[ref] = _Slot(unit, generation, node.node_id)
                node.in_flight += 1
                self.units_by_node[node.node_id] = self.units_by_node.get(node.node_id, 0) + 1

    def _write(self, batch: list[tuple[int, int, TrialRecord]]) -> None:
        verdicts: dict[int, bool] = {}
        for seq, generation, record in batch:
            key = (record.task_id, record.strategy, record.attempt)
            current = generation == self._generation.get(key)
            if current:
                self.store(record)  # appends to trials.jsonl (flushed) and to `written`
            verdicts[seq] = current
        self._collector.ack.remote(verdicts)

    def _finish(self, ref: Any, queue: deque[Unit]) -> None:
        slot = self._in_flight.pop(ref)
        node = self._nodes.get(slot.node_id)
        if node is not None:
            node.in_flight -= 1
        try:
            outcome = ray.get(ref)
        except LOST as exc:
            self._requeue(slot, queue, exc)
            return
        except RayTaskError as exc:  # the unit itself raised: the run stops, as locally
            raise exc.as_instanceof_cause() from None
        if outcome == "done":
            self.unit_ended(slot.unit, None)
        elif isinstance(outcome, UnitFailure):
            self.unit_ended(slot.unit, outcome)

    def _requeue(self, slot: _Slot, queue: deque[Unit], exc: BaseException) -> None:
        key = slot.unit.key
        if slot.node_id in self._nodes:
            self.log.warning("lost Ray node %s (%s); its units run again elsewhere", slot.node_id[:12], type(exc).__name__)
            self._lose_node(slot.node_id)
        self._losses[key] = self._losses.get(key, 0) + 1
        if self._losses[key] > MAX_LOSSES:
            raise ClusterError(f"unit {key} lost its node {self._losses[key]} times; last: {exc}")
        # Records of the old generation still on their way are refused from now on.
        self._generation[key] = slot.generation + 1
        # A lesson whose trial is written but which the lost node had not stored yet.
        restore_lessons(self._memory, self.written.get(key, []), self.config.model, self.config.tasks)
        queue.appendleft(slot.unit)

    # --- the end ------------------------------------------------------------------
    def _close_nodes(self) -> None:
        for node_id, count in sorted(self.units_by_node.items()):
            self.log.info("node %s ran %d units", node_id[:12], count)
        closing = [n.worker.close.remote() for n in self._nodes.values()]
        done, _ = ray.wait(closing, num_returns=len(closing), timeout=CLOSE_TIMEOUT_S)
        self._served_model(done)
        for node in self._nodes.values():
            ray.kill(node.worker, no_restart=True)
        if self._services is not None and self._services.gate is not None and self.gate is not None:
            self.gate.absorb(*ray.get(self._services.gate.state.remote()))  # what the run spent, for the driver
        if self._services is not None:
            for service in (self._services.collector, self._services.memory, self._services.limiter,
                            self._services.gate):
                if service is not None:
                    ray.kill(service, no_restart=True)

    def _served_model(self, closed: list[Any]) -> None:
        """An API's served model name is known after its replies: the nodes say it as they close."""
        for ref in closed:
            try:
                identities = ray.get(ref)
            except Exception:  # noqa: BLE001 - a node lost at the end says nothing
                continue
            if identities and "served_model" in identities.get("model_identity", {}):
                try:
                    self.identified({"model_identity": identities["model_identity"]})
                except Exception as exc:  # noqa: BLE001 - every record is written already
                    self.log.warning("%s", exc)
                return

    def _abort(self) -> None:
        """Ctrl-C or an error: no unit starts another trial; pools close; actors go."""
        try:
            for node in self._nodes.values():
                node.worker.stop.remote()
            self._close_nodes()
        except Exception as exc:  # the cluster may be what failed
            self.log.warning("closing the run's Ray actors: %s: %s", type(exc).__name__, exc)
