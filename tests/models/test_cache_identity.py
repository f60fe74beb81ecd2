"""The response cache keys on what answers, not on the spec that named it.

A changed model (an edited script, a replaced GGUF, another server behind the same
spec) is never served an older model's answer; the same model under another name is.
The run's accounting keeps money spent apart from what cache-served answers cost.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.core.calls import CallSettings, Meter, call
from harness.models import CachedModel, Message, ModelConfigError, ModelSettings, open_model
from harness.models import local_backend
from harness.models.text_tools import TextToolModel
from harness.models.fetch import catalogue, default_model_name, file_sha256, model_path
from tests.doubles.stub_server import Reply, StubServer

ASK = [Message("user", "implement add(a, b)")]


def _script(path: Path, reply: str) -> Path:
    path.write_text(json.dumps({"match": "add", "reply": reply}) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- scripted


def test_an_edited_script_is_not_answered_from_the_old_one(tmp_path: Path):
    settings = ModelSettings(cache_dir=tmp_path / "cache")
    script = _script(tmp_path / "model.jsonl", "old answer")
    first = open_model(f"scripted:{script}", settings).complete(ASK)
    assert (first.text, first.cached) == ("old answer", False)
    assert open_model(f"scripted:{script}", settings).complete(ASK).cached  # unchanged: a hit

    _script(script, "new answer")
    edited = open_model(f"scripted:{script}", settings).complete(ASK)
    assert (edited.text, edited.cached) == ("new answer", False)


def test_the_same_script_under_another_path_shares_the_cache(tmp_path: Path):
    settings = ModelSettings(cache_dir=tmp_path / "cache")
    a = _script(tmp_path / "a.jsonl", "same")
    b = _script(tmp_path / "b.jsonl", "same")
    open_model(f"scripted:{a}", settings).complete(ASK)
    again = open_model(f"scripted:{b}", settings)
    assert again.identity == open_model(f"scripted:{a}", settings).identity
    assert again.complete(ASK).cached and again.inner.calls == []


# --------------------------------------------------------------------------- local


class FakeServer:
    """Stands in for xllamacpp.Server: answers with the first bytes of the file it loaded."""

    def __init__(self, params) -> None:
        with open(params.model.path, "rb") as f:
            self.weights = f.read(32).rstrip(b"\0").decode()

    def handle_chat_completions(self, request: dict) -> dict:
        return {"choices": [{"message": {"content": f"answer of {self.weights}"},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 3}}


@pytest.fixture
def fake_llama(monkeypatch: pytest.MonkeyPatch) -> None:
    import xllamacpp  # a required part of the local backend: imported plainly

    monkeypatch.setattr(xllamacpp, "Server", FakeServer)
    # The fake files are no GGUF: their metadata is a chat model's.
    monkeypatch.setattr(local_backend, "read_metadata",
                        lambda path: {"tokenizer.chat_template": "{{ messages }}", "general.name": "fake"})


def test_a_replaced_gguf_is_not_answered_from_the_old_one(tmp_path: Path, fake_llama):
    settings = ModelSettings(cache_dir=tmp_path / "cache")
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"weights-A")
    first = open_model(f"local:{gguf}", settings).complete(ASK)
    assert (first.text, first.cached) == ("answer of weights-A", False)

    gguf.write_bytes(b"weights-B")  # same path, same spec, another model
    replaced = open_model(f"local:{gguf}", settings).complete(ASK)
    assert (replaced.text, replaced.cached) == ("answer of weights-B", False)

    gguf.write_bytes(b"weights-A")  # the first model again: its answer is still cached
    back = open_model(f"local:{gguf}", settings).complete(ASK)
    assert (back.text, back.cached) == ("answer of weights-A", True)


def test_local_identity_is_the_file_digest_and_the_engine_version(tmp_path: Path, fake_llama):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"weights-A")
    model = open_model(f"local:{gguf}", ModelSettings(cache_dir=tmp_path / "c"))
    # The fake's chat template renders no tools: the text protocol wraps the cache.
    assert isinstance(model, TextToolModel) and isinstance(model.inner, CachedModel)
    version = local_backend.engine_version()
    # the default drafter (harness/models/speculative.py) is part of what decides answers
    assert model.identity == f"local:sha256:{file_sha256(gguf)}:xllamacpp-{version}:speculative-ngram-mod"
    assert "m.gguf" not in model.identity  # the path is not what answers
    assert model.describe()["identity"] == model.identity  # what run.json records
    plain = open_model(f"local:{gguf}", ModelSettings(cache_dir=tmp_path / "c", speculative="off"))
    assert plain.identity == f"local:sha256:{file_sha256(gguf)}:xllamacpp-{version}"


def test_plain_and_speculative_answers_are_cached_apart(tmp_path: Path, fake_llama):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"weights-A")
    cache = tmp_path / "c"
    assert not open_model(f"local:{gguf}", ModelSettings(cache_dir=cache, speculative="off")).complete(ASK).cached
    # a drafter can change an answer (at a near-tie): never served plain decoding's
    assert not open_model(f"local:{gguf}", ModelSettings(cache_dir=cache)).complete(ASK).cached
    assert not open_model(f"local:{gguf}", ModelSettings(cache_dir=cache, speculative="ngram-simple")).complete(ASK).cached
    assert open_model(f"local:{gguf}", ModelSettings(cache_dir=cache, speculative="ngram-mod")).complete(ASK).cached
    assert open_model(f"local:{gguf}", ModelSettings(cache_dir=cache, speculative="off")).complete(ASK).cached


def test_batch_dependent_answers_are_cached_apart_from_one_slot_answers(tmp_path: Path, fake_llama):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"weights-A")
    cache = tmp_path / "c"
    batched = open_model(f"local:{gguf}", ModelSettings(cache_dir=cache, local_slots=4))
    assert ":batched" in batched.identity and batched.describe()["batch_dependent"]
    assert not batched.complete(ASK).cached
    assert open_model(f"local:{gguf}", ModelSettings(cache_dir=cache, local_slots=2)).complete(ASK).cached
    # a one-slot (reproducible) run is never served an answer generated beside others
    assert not open_model(f"local:{gguf}", ModelSettings(cache_dir=cache, local_slots=1)).complete(ASK).cached


def _fake_default_model(models_dir: Path, first_bytes: bytes) -> Path:
    """A file with the default model's size (sparse) and a stamp as `model fetch` writes it."""
    info = catalogue()[default_model_name()]
    path = model_path(info, models_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.write(first_bytes)
        f.truncate(info.size)
    stat = path.stat()
    stamp = {"sha256": info.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    path.with_name(path.name + ".verified").write_text(json.dumps(stamp))
    return path


def test_default_local_model_uses_its_verified_digest_and_refuses_a_replaced_file(
    tmp_path: Path, fake_llama, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("HARNESS_MODELS_DIR", str(tmp_path / "models"))
    path = _fake_default_model(tmp_path / "models", b"weights-A")

    def no_hashing(p: Path) -> str:
        raise AssertionError(f"hashed {p}: the verified stamp already gives the digest")

    monkeypatch.setattr(local_backend, "file_sha256", no_hashing)
    model = open_model("local", ModelSettings(cache_dir=tmp_path / "c"))
    assert catalogue()[default_model_name()].sha256 in model.identity
    assert model.complete(ASK).text == "answer of weights-A"

    with path.open("r+b") as f:  # replaced in place: the stamp no longer matches
        f.write(b"weights-B")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    with pytest.raises(ModelConfigError, match="model fetch"):
        open_model("local", ModelSettings(cache_dir=tmp_path / "c"))


def test_file_digest_trusts_a_stamp_only_while_the_file_is_unchanged(tmp_path: Path):
    import hashlib

    path = tmp_path / "m.gguf"
    path.write_bytes(b"real content")
    stat = path.stat()
    stamp = path.with_name("m.gguf.verified")
    stamp.write_text(json.dumps({"sha256": "f" * 64, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}))
    assert file_sha256(path) == "f" * 64
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert file_sha256(path) == hashlib.sha256(b"real content").hexdigest()


# --------------------------------------------------------------------------- API backends


@pytest.mark.parametrize("backend,env,spec,url", [
    ("anthropic", "ANTHROPIC_BASE_URL", "anthropic:claude-haiku-4-5", lambda s: s.url),
    ("openai", "OPENAI_BASE_URL", "openai:qwen2.5-coder", lambda s: s.openai_url),
])
def test_another_server_behind_the_same_spec_is_asked_again(
    backend, env, spec, url, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    settings = ModelSettings(timeout_s=5, max_retries=0, cache_dir=tmp_path / "cache")
    with StubServer(default=Reply("from server one")) as one, \
            StubServer(default=Reply("from server two")) as two:
        monkeypatch.setenv(env, url(one))
        assert open_model(spec, settings).complete(ASK).text == "from server one"
        assert open_model(spec, settings).complete(ASK).cached
        monkeypatch.setenv(env, url(two))
        other = open_model(spec, settings)
        assert other.identity.endswith(url(two).rstrip("/"))
        answer = other.complete(ASK)
        assert (answer.text, answer.cached) == ("from server two", False)
        assert len(one.requests) == 1 and len(two.requests) == 1


# --------------------------------------------------------------------------- accounting


def test_cache_hits_count_as_cached_cost_not_as_money_spent(tmp_path: Path):
    settings = ModelSettings(timeout_s=5, max_retries=0, cache_dir=tmp_path / "cache")
    calls = CallSettings(temperature=0.0, seed=1)
    with StubServer() as stub:
        model = open_model(f"anthropic:claude-haiku-4-5@{stub.url}", settings)
        fresh, replay = Meter(), Meter()
        spent = call(model, fresh, ASK, system="s", max_tokens=16, settings=calls).cost_usd
        call(model, replay, ASK, system="s", max_tokens=16, settings=calls)
        call(model, replay, [Message("user", "a new question")], system="s", max_tokens=16,
             settings=calls)
    assert spent and spent > 0
    assert (fresh.cost_usd, fresh.cached_cost_usd, fresh.cached) == (spent, None, 0)
    assert replay.cached == 1 and replay.cached_cost_usd == pytest.approx(spent)
    new_call_cost = replay.cost_usd
    assert new_call_cost is not None and new_call_cost > 0  # only the new question was paid for
    assert len(stub.requests) == 2
