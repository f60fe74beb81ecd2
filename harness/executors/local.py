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
    may_start: Callable[[], bool] | None = None,
) -> None:
    """Runs `units`, each continuing after its records in `written`; returns when all
    ended. On an exception (Ctrl-C included) sets `stop` and re-raises. A unit starts
    only while `may_start()` says so (the run's budget): the others are left pending."""

    def work(unit: Unit) -> UnitFailure | None:
        if may_start is not None and not may_start():
            raise Stopped()
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
