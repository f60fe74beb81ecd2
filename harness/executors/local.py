"""Runs a run's units on a thread pool in this process (the default executor).

The units share one Workbench (model, sandbox pool, prompts) and the run's memory;
the work is mostly waiting on model calls, and the sandbox pool queues what exceeds
its containers.
"""
from __future__ import annotations

import threading
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from typing import Callable, Sequence

from harness.core import AttemptContext, Stopped
from harness.rundata import TrialRecord
from harness.run.units import Store, Unit, UnitFailure, UnitKey, run_unit

ExecutorFactory = Callable[[int], Executor]


def thread_pool(workers: int) -> Executor:
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="unit")


def run_local(
    ctx: AttemptContext,
    units: Sequence[Unit],
    written: dict[UnitKey, list[TrialRecord]],
    store: Store,
    unit_ended: Callable[[Unit, UnitFailure | None], None],
    *,
    workers: int,
    stop: threading.Event,
    executor_factory: ExecutorFactory = thread_pool,
) -> None:
    """Runs `units`, each continuing after its records in `written`; returns when all
    ended. On an exception (Ctrl-C included) sets `stop` and re-raises."""

    def work(unit: Unit) -> UnitFailure | None:
        return run_unit(ctx, unit, list(written.get(unit.key, [])), store)

    executor = executor_factory(workers)
    futures: dict[Future, Unit] = {executor.submit(work, unit): unit for unit in units}
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
        stop.set()
        executor.shutdown(wait=False, cancel_futures=True)
        raise
    executor.shutdown(wait=True)
