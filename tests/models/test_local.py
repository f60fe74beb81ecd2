"""The local backend with the real SmolLM2-135M GGUF (`python -m harness model fetch smollm2-135m`).

Skipped, with the reason, when llama-cpp-python or the file is missing, unless
HARNESS_REQUIRE_MODEL=1 (CI), which turns that into a failure.
"""
from __future__ import annotations

import importlib.util
import os
import threading
import time
from pathlib import Path

import pytest

from harness.models import Message, ModelError, ModelSettings, open_model
from harness.models.fetch import catalogue, is_ready, model_path, resolve_models_dir
from tests.helpers import skip_or_fail

pytestmark = pytest.mark.model

TEST_MODEL = "smollm2-135m"


def _missing() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (pip install '.[local]')"
    info = catalogue()[TEST_MODEL]
    if not is_ready(info, resolve_models_dir()):
        return (f"{info.file} is not in {resolve_models_dir()}: "
                f"run `python -m harness model fetch {TEST_MODEL}`")
    return None


@pytest.fixture(scope="module")
def gguf() -> Path:
    reason = _missing()
    if reason:
        skip_or_fail("MODEL", reason)
    return model_path(catalogue()[TEST_MODEL], resolve_models_dir())


@pytest.fixture(scope="module")
def model(gguf: Path):
    opened = open_model(f"local:{gguf}", ModelSettings(n_ctx=1024))
    yield opened
    opened.close()


def test_answers_with_text_and_token_counts(model):
    completion = model.complete([Message("user", "What is the capital of France? One word.")],
                                system="You are a helpful assistant.", max_tokens=16)
    assert completion.text.strip()
    assert completion.usage.input_tokens > 10  # the chat template adds its own tokens
    assert 0 < completion.usage.output_tokens <= 16
    assert completion.stop_reason in ("end_turn", "max_tokens")
    assert completion.cost_usd == 0.0 and not completion.cached
    assert "smollm2" in completion.model.lower()


def test_uses_the_gguf_chat_template_on_all_cores(model):
    llama = model._loaded.llama
    assert llama.chat_format == "chat_template.default"
    assert "<|im_start|>" in llama.metadata["tokenizer.chat_template"]
    assert model.n_threads == len(os.sched_getaffinity(0))


def test_temperature_zero_is_deterministic(model):
    ask = [Message("user", "List three colours.")]
    first = model.complete(ask, max_tokens=24)
    model.complete([Message("user", "Something else entirely.")], max_tokens=8)
    assert model.complete(ask, max_tokens=24).text == first.text


def test_max_tokens_and_stop_sequences(model):
    ask = [Message("user", "Count from 1 to 50, separated by commas.")]
    cut = model.complete(ask, max_tokens=5)
    assert cut.usage.output_tokens == 5 and cut.stop_reason == "max_tokens"
    full = model.complete(ask, max_tokens=40)
    # A stop string taken from the answer itself, so it must occur: the answer stops
    # right before it, deterministically at temperature 0.
    words = full.text.split()
    assert len(words) >= 3, full.text
    stop = words[2]
    stopped = model.complete(ask, max_tokens=40, stop=[stop])
    assert stopped.text == full.text[: full.text.index(stop)]
    assert stopped.usage.output_tokens < full.usage.output_tokens


def test_says_it_serialises_and_closing_another_copy_leaves_it_open(model, gguf: Path):
    assert model.serialised is True
    assert "one at a time" in model.concurrency_note
    hello = [Message("user", "Say hello.")]
    before = model.complete(hello, max_tokens=4)
    second = open_model(f"local:{gguf}", ModelSettings(n_ctx=1024))
    try:
        assert second._loaded is not model._loaded  # each opened model owns its context
        assert second.complete(hello, max_tokens=4).text == before.text
    finally:
        second.close()
    with pytest.raises(ModelError, match="closed"):
        second.complete(hello, max_tokens=4)
    after = model.complete(hello, max_tokens=4)  # still open, and still the same model
    assert after.usage.output_tokens > 0 and after.text == before.text


class _TimedLlama:
    """Wraps the real llama.cpp object and records when each generation ran."""

    def __init__(self, llama) -> None:
        self._llama = llama
        self.intervals: list[tuple[float, float]] = []

    def __getattr__(self, name: str):
        return getattr(self._llama, name)

    def create_chat_completion(self, **kwargs):
        started = time.monotonic()
        try:
            return self._llama.create_chat_completion(**kwargs)
        finally:
            self.intervals.append((started, time.monotonic()))


def test_concurrent_calls_are_serialised_and_all_answered(model, monkeypatch):
    timed = _TimedLlama(model._loaded.llama)
    monkeypatch.setattr(model._loaded, "llama", timed)
    answers: dict[int, str] = {}
    ready = threading.Barrier(4)

    def call(i: int) -> None:
        ready.wait()  # all four ask at once
        answers[i] = model.complete([Message("user", f"Say the number {i}.")], max_tokens=6).text

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(answers) == [0, 1, 2, 3] and all(answers.values())
    # At most one generation at a time: each starts after the previous one ended.
    spans = sorted(timed.intervals)
    assert len(spans) == 4
    assert all(prev_end <= start for (_, prev_end), (start, _) in zip(spans, spans[1:])), spans


def test_prompt_longer_than_the_context_is_a_model_error(model):
    with pytest.raises(ModelError, match="n_ctx=1024"):
        model.complete([Message("user", "word " * 3000)], max_tokens=8)
