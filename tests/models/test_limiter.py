"""The shared limiter keeps requests and tokens per window under the setting.

Assertions read the limiter's own admission times (`Ticket.at`), never how long a
test took: on a fake clock where the point is exactly when a call may start, on the
real clock where threads must really wait for each other.
"""
from __future__ import annotations

import threading

import pytest

from harness.models.limiter import RateLimiter, Ticket
from tests.helpers import wait_until


# A window far longer than any test: on a fake clock a waiting call then wakes only
# when something notifies it (a settle), never by its own real-time timeout.
LONG = 1_000_000.0


class FakeClock:
    """Time that moves only when the test moves it; counts how often it was read."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now


class Acquirer:
    """One acquire() in its own thread, so the test can watch it wait."""

    def __init__(self, limiter: RateLimiter, tokens: int = 0) -> None:
        self.ticket: Ticket | None = None
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(limiter, tokens), daemon=True)
        self._thread.start()

    def _run(self, limiter: RateLimiter, tokens: int) -> None:
        self.ticket = limiter.acquire(tokens)
        self.done.set()

    def result(self) -> Ticket:
        assert self.done.wait(60), "acquire() never returned"  # a hang guard only
        assert self.ticket is not None
        return self.ticket


def _acquire_now(limiter: RateLimiter, tokens: int = 0) -> Ticket:
    """acquire() that must not wait on a fake clock (it would hang: time never moves)."""
    return Acquirer(limiter, tokens).result()


def _run(limiter: RateLimiter, calls: int, threads: int, tokens: int = 0) -> list[float]:
    """Admission times of `calls` acquires from `threads` threads, sorted."""
    tickets: list[Ticket] = []
    lock = threading.Lock()

    def work() -> None:
        for _ in range(calls // threads):
            ticket = limiter.acquire(tokens)
            with lock:
                tickets.append(ticket)

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return sorted(t.at for t in tickets)


def _max_in_window(starts: list[float], window: float) -> int:
    return max(sum(1 for s in starts if t <= s < t + window) for t in starts)


def test_requests_per_window_never_exceed_the_limit():
    limiter = RateLimiter(requests_per_minute=4, window_s=0.5)
    starts = _run(limiter, calls=12, threads=4)
    assert len(starts) == 12
    assert _max_in_window(starts, 0.5) <= 4
    assert all(later - earlier >= 0.5 for earlier, later in zip(starts, starts[4:]))
    assert starts[-1] - starts[0] >= 1.0  # 12 calls at 4 per 0.5 s span two full windows


def test_tokens_per_window_never_exceed_the_limit():
    limiter = RateLimiter(tokens_per_minute=100, window_s=0.5)
    starts = _run(limiter, calls=8, threads=4, tokens=40)  # 2 calls fit per window
    assert _max_in_window(starts, 0.5) <= 2
    assert starts[-1] - starts[0] >= 1.5


def test_a_waiting_call_starts_exactly_when_the_oldest_leaves_the_window():
    """Neither early (over the limit) nor late (over-throttling): on a fake clock."""
    clock = FakeClock()
    limiter = RateLimiter(requests_per_minute=2, window_s=LONG, clock=clock)
    first = _acquire_now(limiter)
    clock.now = 1.0
    second = _acquire_now(limiter)
    clock.now = 3.0
    reads = clock.reads
    waiting = Acquirer(limiter)
    wait_until(lambda: clock.reads >= reads + 2, "the third call to look at the clock")
    clock.now = LONG - 0.001
    second.settle(0)  # any settle wakes the waiters to look again
    assert not waiting.done.wait(0.2)
    clock.now = LONG
    second.settle(0)
    third = waiting.result()
    assert (first.at, second.at, third.at) == (0.0, 1.0, LONG)
    assert limiter.waited_s == pytest.approx(LONG - 3.0)


def test_a_waiting_call_wakes_by_itself_when_its_wait_runs_out():
    """No settle, no other call: the wait's own timeout lets the call in (real clock)."""
    limiter = RateLimiter(requests_per_minute=1, window_s=0.3)
    first = limiter.acquire()
    second = Acquirer(limiter).result()
    assert second.at - first.at >= 0.3
    assert limiter.waited_s > 0


def test_settling_below_the_estimate_lets_a_waiting_call_in_at_once():
    clock = FakeClock(100.0)
    limiter = RateLimiter(tokens_per_minute=100, window_s=LONG, clock=clock)
    estimate = _acquire_now(limiter, 90)
    assert estimate.tokens == 90
    reads = clock.reads
    waiting = Acquirer(limiter, 50)  # 90 + 50 > 100: waits
    wait_until(lambda: clock.reads >= reads + 2, "the waiting call to look at the clock")
    assert not waiting.done.wait(0.2)
    estimate.settle(10)  # the real count was small: 10 + 50 fits, no time has passed
    assert waiting.result().at == 100.0 and estimate.tokens == 10
    assert limiter.waited_s == 0.0


def test_settled_tokens_free_the_budget():
    limiter = RateLimiter(tokens_per_minute=100, window_s=LONG, clock=FakeClock())
    _acquire_now(limiter, 90).settle(10)
    assert _acquire_now(limiter, 80).at == 0.0 and limiter.waited_s == 0.0


def test_a_call_larger_than_the_budget_still_runs_alone():
    clock = FakeClock()
    limiter = RateLimiter(tokens_per_minute=50, window_s=LONG, clock=clock)
    big = _acquire_now(limiter, 500)
    assert big.at == 0.0
    clock.now = 1.0
    reads = clock.reads
    after = Acquirer(limiter, 1)  # the big one filled the window: the next call waits
    wait_until(lambda: clock.reads >= reads + 2, "the next call to look at the clock")
    clock.now = LONG
    big.settle(500)  # wakes the waiter to look at the clock again
    assert after.result().at == LONG


def test_no_limits_never_wait():
    limiter = RateLimiter(clock=FakeClock())
    assert not limiter.active
    starts = _run(limiter, calls=200, threads=4, tokens=10_000)
    assert len(starts) == 200 and set(starts) == {0.0}
    assert limiter.waited_s == 0.0


def test_bad_limits_are_refused():
    with pytest.raises(ValueError, match="requests_per_minute"):
        RateLimiter(requests_per_minute=0)
    with pytest.raises(ValueError, match="tokens_per_minute"):
        RateLimiter(tokens_per_minute=-1)
