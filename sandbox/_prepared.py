"""Host side: each test's text prepared once for the worker (`rewrite.prepare`), kept for
the next time the same test is graded (the trial loop grades the hidden tests on every
trial, the internal tests several times an attempt).

What the worker's test process then does is the same whether the test was prepared
just now or long ago: the cache is the host's, and no job can tell a hit from a miss.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

from sandbox.parsing import PARSE_LOCK
from sandbox.worker.rewrite import prepare


# Larger tests are left to the worker, as before: preparing one parses it twice and
# prints its tree twice in the host's process, in time and memory that grow with it
# (measured: 110 KB of asserts 0.4 s, 1.2 MB 6.5 s and ~500 MB at peak), against a saving
# of half a millisecond a grading. HumanEval's tests are 1-5 KB.
PREPARE_MAX_CHARS = 200_000


class PreparedTests:
    """A bounded, thread-safe cache of `rewrite.prepare(test, blind)`, least recently
    used out first."""

    def __init__(self, max_entries: int = 4096, max_chars: int = 64_000_000) -> None:
        self._entries: OrderedDict[tuple[str, bool], dict | None] = OrderedDict()
        self._chars = 0
        self._max_entries = max_entries
        self._max_chars = max_chars
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, test: str, blind: bool) -> dict | None:
        if len(test) > PREPARE_MAX_CHARS:
            return None
        key = (test, blind)
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                self.hits += 1
                return self._entries[key]
            self.misses += 1
        with PARSE_LOCK:  # not the cache's lock: hits go on meanwhile (see sandbox/parsing.py)
            prepared = prepare(test, blind)
        with self._lock:
            if key not in self._entries:
                self._entries[key] = prepared
                self._chars += _size(test)
                while len(self._entries) > self._max_entries or self._chars > self._max_chars:
                    (old, _), _ = self._entries.popitem(last=False)
                    self._chars -= _size(old)
        return prepared


def _size(test: str) -> int:
    """What an entry holds, in characters: the test's prepared text (about the test's
    size; the key holds the test itself)."""
    return 2 * len(test) + 64
