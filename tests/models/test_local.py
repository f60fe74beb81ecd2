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
    if "5" in full.text:
        stopped = model.complete(ask, max_tokens=40, stop=["5"])
        assert "5" not in stopped.text


def test_says_it_serialises_and_closing_another_copy_leaves_it_open(model, gguf: Path):
    assert model.serialised is True
    assert "one at a time" in model.concurrency_note
    second = open_model(f"local:{gguf}", ModelSettings(n_ctx=1024))
    try:
        assert second._loaded is not model._loaded  # each opened model owns its context
    finally:
        second.close()
    assert model.complete([Message("user", "hi")], max_tokens=2).text is not None  # still open


def test_concurrent_calls_are_serialised_and_all_answered(model):
    held = model._loaded.lock
    overlaps: list[bool] = []
    answers: list[str] = []

    def call(i: int) -> None:
        answers.append(model.complete([Message("user", f"Say the number {i}.")], max_tokens=6).text)

    def watch(stop: threading.Event) -> None:
        while not stop.is_set():
            overlaps.append(held.locked())
            time.sleep(0.005)

    stop = threading.Event()
    watcher = threading.Thread(target=watch, args=(stop,))
    watcher.start()
    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    watcher.join()
    assert len(answers) == 4 and any(overlaps)


def test_prompt_longer_than_the_context_is_a_model_error(model):
    with pytest.raises(ModelError, match="n_ctx=1024"):
        model.complete([Message("user", "word " * 3000)], max_tokens=8)
