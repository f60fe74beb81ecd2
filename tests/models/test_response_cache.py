"""The response cache: hits make no model call; safe across threads and processes."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from harness.models import CachedModel, Message, ModelError, ModelSettings, ScriptedModel, open_model
from harness.models.cache import cache_key

MSGS = [Message("user", "implement add(a, b)")]


def test_hit_makes_no_second_request(stub, tmp_path: Path):
    settings = ModelSettings(timeout_s=2, max_retries=0, cache_dir=tmp_path)
    model = open_model(f"anthropic:claude-sonnet-4-6@{stub.url}", settings)
    assert isinstance(model, CachedModel)
    first = model.complete(MSGS, system="s")
    again = open_model(f"anthropic:claude-sonnet-4-6@{stub.url}", settings).complete(MSGS, system="s")
    assert len(stub.requests) == 1
    assert not first.cached and again.cached
    assert again.text == first.text and again.usage == first.usage and again.cost_usd == first.cost_usd


def test_only_temperature_zero_is_cached_unless_cache_all(tmp_path: Path):
    inner = ScriptedModel(responder=lambda system, messages: f"answer {len(inner.calls)}")
    model = CachedModel(inner, tmp_path)
    assert model.complete(MSGS, temperature=0.8).text == "answer 1"
    assert model.complete(MSGS, temperature=0.8).text == "answer 2"
    assert model.complete(MSGS).text == "answer 3"
    assert model.complete(MSGS).text == "answer 3"
    everything = CachedModel(inner, tmp_path / "all", cache_all=True)
    assert everything.complete(MSGS, temperature=0.8, seed=1).text == "answer 4"
    assert everything.complete(MSGS, temperature=0.8, seed=1).text == "answer 4"
    assert everything.complete(MSGS, temperature=0.8, seed=2).text == "answer 5"
    assert len(inner.calls) == 5


@pytest.mark.parametrize("change", [
    {"system": "other"}, {"max_tokens": 100}, {"temperature": 0.5}, {"stop": ["x"]}, {"seed": 7},
])
def test_every_parameter_is_in_the_key(change):
    base = dict(system="s", max_tokens=512, temperature=0.0, stop=None, seed=None)
    assert cache_key("m", MSGS, **base) != cache_key("m", MSGS, **{**base, **change})
    assert cache_key("m", MSGS, **base) != cache_key("other-model", MSGS, **base)
    assert cache_key("m", MSGS, **base) != cache_key("m", [Message("user", "other")], **base)
    assert cache_key("m", MSGS, **base) == cache_key("m", list(MSGS), **dict(base))


def test_concurrent_identical_calls_make_one_model_call(tmp_path: Path):
    inner = ScriptedModel(responder=lambda s, m: "same", latency_s=0.2)
    model = CachedModel(inner, tmp_path)
    results: list = []
    threads = [threading.Thread(target=lambda: results.append(model.complete(MSGS))) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(inner.calls) == 1
    assert sum(not r.cached for r in results) == 1 and len(results) == 16


def test_errors_are_not_cached(tmp_path: Path):
    inner = ScriptedModel(["!error: overloaded", "fine"])
    model = CachedModel(inner, tmp_path)
    with pytest.raises(ModelError, match="overloaded"):
        model.complete(MSGS)
    assert model.complete(MSGS).text == "fine"
    assert model.complete(MSGS).cached


def test_unreadable_entry_is_a_miss(tmp_path: Path):
    inner = ScriptedModel(["one", "two"])
    model = CachedModel(inner, tmp_path)
    model.complete(MSGS)
    [entry] = [p for p in tmp_path.rglob("*.json")]
    entry.write_text("{not json")
    assert model.complete(MSGS).text == "two"


_WORKER = textwrap.dedent("""
    import sys, threading
    from harness.models import CachedModel, Message, ScriptedModel
    tag, cache_dir = sys.argv[1], sys.argv[2]
    inner = ScriptedModel(responder=lambda s, m: "reply to " + m[0].content)
    model = CachedModel(inner, cache_dir)
    def work(offset):
        for i in range(60):
            c = model.complete([Message("user", f"prompt {(i + offset) % 60}")])
            assert c.text == f"reply to prompt {(i + offset) % 60}", c
    threads = [threading.Thread(target=work, args=(k * 7,)) for k in range(4)]
    [t.start() for t in threads]; [t.join() for t in threads]
    print(len(inner.calls))
""")


def test_two_processes_share_a_cache_folder(tmp_path: Path):
    repo = Path(__file__).resolve().parents[2]
    procs = [
        subprocess.Popen([sys.executable, "-c", _WORKER, tag, str(tmp_path)], cwd=repo,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for tag in ("a", "b")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for proc, (out, err) in zip(procs, outs):
        assert proc.returncode == 0, err
    calls = [int(out.strip()) for out, _ in outs]
    # Each process makes at most one call per prompt; together they made them all.
    assert all(c <= 60 for c in calls) and sum(calls) >= 60
    entries = list(tmp_path.rglob("*.json"))
    assert len(entries) == 60
    for entry in entries:
        json.loads(entry.read_text())  # every entry whole: no torn writes
    assert not list(tmp_path.rglob(".tmp-*"))
