"""The shared limiter keeps requests and tokens per window under the setting (small numbers)."""
from __future__ import annotations

import threading
import time

import pytest

from harness.models.limiter import RateLimiter


def _run(limiter: RateLimiter, calls: int, threads: int, tokens: int = 0) -> list[float]:
    starts: list[float] = []
    lock = threading.Lock()
    per_thread = calls // threads

    def work() -> None:
        for _ in range(per_thread):
            limiter.acquire(tokens)
            with lock:
                starts.append(time.monotonic())

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return sorted(starts)


def _max_in_window(starts: list[float], window: float) -> int:
    # Starts within a window, allowing 50 ms for a thread to record its start.
    return max(sum(1 for s in starts if t <= s < t + window - 0.05) for t in starts)


def test_requests_per_window_never_exceed_the_limit():
    limiter = RateLimiter(requests_per_minute=4, window_s=0.5)
    started = time.monotonic()
    starts = _run(limiter, calls=12, threads=4)
    elapsed = time.monotonic() - started
    assert len(starts) == 12
    assert _max_in_window(starts, 0.5) <= 4
    assert elapsed >= 1.0  # 12 calls at 4 per 0.5 s need two full windows of waiting
    assert elapsed < 2.5  # and not much more: the limiter does not over-throttle


def test_tokens_per_window_never_exceed_the_limit():
    limiter = RateLimiter(tokens_per_minute=100, window_s=0.5)
    starts = _run(limiter, calls=8, threads=4, tokens=40)  # 2 calls fit per window
    assert _max_in_window(starts, 0.5) <= 2
    assert starts[-1] - starts[0] >= 1.5


def test_settled_tokens_free_the_budget():
    limiter = RateLimiter(tokens_per_minute=100, window_s=10.0)
    ticket = limiter.acquire(90)  # an estimate
    ticket.settle(10)  # the real count was small
    started = time.monotonic()
    limiter.acquire(80)
    assert time.monotonic() - started < 0.5


def test_a_call_larger_than_the_budget_still_runs_alone():
    limiter = RateLimiter(tokens_per_minute=50, window_s=10.0)
    started = time.monotonic()
    limiter.acquire(500)
    assert time.monotonic() - started < 0.5


def test_no_limits_never_wait():
    limiter = RateLimiter()
    assert not limiter.active
    started = time.monotonic()
    _run(limiter, calls=200, threads=4, tokens=10_000)
    assert time.monotonic() - started < 1.0


def test_bad_limits_are_refused():
    with pytest.raises(ValueError, match="requests_per_minute"):
        RateLimiter(requests_per_minute=0)
