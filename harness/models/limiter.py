"""Requests-per-minute and tokens-per-minute limits shared by every thread using a model.

A sliding one-minute window: a call may start when the requests and tokens started in
the last `window_s` seconds, plus its own, stay within the limits. A call's token
count is not known before it returns, so it reserves an estimate (prompt characters
/ 4 + max_tokens) and settles to the real count afterwards.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable


@dataclass
class _Entry:
    at: float
    tokens: int


class Ticket:
    """A reservation; `settle` replaces its estimated tokens by the real count."""

    def __init__(self, limiter: "RateLimiter", entry: _Entry) -> None:
        self._limiter = limiter
        self._entry = entry

    @property
    def at(self) -> float:
        """When the limiter admitted the call, on its own clock."""
        return self._entry.at

    @property
    def tokens(self) -> int:
        """Tokens the call counts for: the estimate until settled, then the real count."""
        return self._entry.tokens

    def settle(self, tokens: int) -> None:
        with self._limiter._cond:
            self._entry.tokens = tokens
            self._limiter._cond.notify_all()


class RateLimiter:
    """Thread-safe; one instance per opened model, shared by all workers using it."""

    def __init__(
        self,
        requests_per_minute: int | None = None,
        tokens_per_minute: int | None = None,
        *,
        window_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        for name, value in (("requests_per_minute", requests_per_minute),
                            ("tokens_per_minute", tokens_per_minute)):
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self.window_s = window_s
        self._clock = clock
        self._entries: deque[_Entry] = deque()
        self._cond = threading.Condition()
        self.waited_s = 0.0  # total time callers spent blocked, for reports

    @property
    def active(self) -> bool:
        return self.requests_per_minute is not None or self.tokens_per_minute is not None

    def acquire(self, tokens: int = 0) -> Ticket:
        """Block until one more request of `tokens` tokens fits, then reserve it."""
        if self.tokens_per_minute is not None:
            # One call larger than the whole budget could never start: let it through
            # alone rather than deadlock.
            tokens_needed = min(tokens, self.tokens_per_minute)
        else:
            tokens_needed = tokens
        started = self._clock()
        with self._cond:
            while True:
                now = self._clock()
                self._expire(now)
                wait = self._wait_needed(now, tokens_needed)
                if wait <= 0:
                    entry = _Entry(now, tokens)
                    self._entries.append(entry)
                    self.waited_s += now - started
                    return Ticket(self, entry)
                self._cond.wait(timeout=wait)

    def _expire(self, now: float) -> None:
        while self._entries and self._entries[0].at <= now - self.window_s:
            self._entries.popleft()

    def _wait_needed(self, now: float, tokens: int) -> float:
        """Seconds until the oldest entry that blocks this call leaves the window; 0 if none."""
        waits = [0.0]
        if self.requests_per_minute is not None and len(self._entries) >= self.requests_per_minute:
            oldest = self._entries[len(self._entries) - self.requests_per_minute]
            waits.append(oldest.at + self.window_s - now)
        if self.tokens_per_minute is not None:
            used = sum(e.tokens for e in self._entries)
            if used + tokens > self.tokens_per_minute:
                # Drop entries from the oldest until the call fits; it may start when
                # the last of those leaves the window.
                excess = used + tokens - self.tokens_per_minute
                for entry in self._entries:
                    excess -= entry.tokens
                    if excess <= 0:
                        waits.append(entry.at + self.window_s - now)
                        break
        return max(waits)


def estimate_tokens(text_chars: int, max_tokens: int) -> int:
    """A pre-call estimate: ~4 characters per prompt token, plus the whole output budget."""
    return text_chars // 4 + max_tokens
