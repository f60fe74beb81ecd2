"""The check of a model before a run: one cheap call, so that a server that is not
running, a wrong model name, a missing key or a refused request stops the command
with one line, before the run folder exists.

Only models that talk to a server are checked (their `describe()` names a `base_url`):
a local model proved itself by loading, a scripted one by reading its file. The call
goes past the response cache (an answer it kept would say nothing about the server
now: the caller opens a client of its own, without the cache) and asks for a few tokens
of `harness/data/model_check.txt`. A new run records it in run.json under
"model_check", apart from the trials it decides nothing of; a resumed session checks
too, and leaves run.json as the runner writes it.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from harness.models.base import ChatModel, Message, ModelError, WrappedModel

# The one message of the check: data beside the harness's other data, not a prompt of the
# run's prompt set (it decides no answer; the set's digest does not cover it).
CHECK_FILE = Path(__file__).resolve().parents[1] / "data" / "model_check.txt"
CHECK_MAX_TOKENS = 8
CHECK_RETRIES = 2  # the check's own client: a closed port is told in about 1.5 s, a brief 429 or 503 still passes
SKIP_FLAG = "--no-model-check"


class ModelCheckFailed(Exception):
    """The model did not answer the check call; the message says why and what to do."""


def needs_check(model: ChatModel) -> bool:
    """A model behind a server (a remote API, as its backend declares) is checked."""
    return bool(model.capabilities.remote_api)


def check_model(model: ChatModel, *, temperature: float, resuming: bool = False) -> dict[str, Any]:
    """One call to the model (past any response cache); what run.json records of it.
    ModelCheckFailed when it does not answer."""
    target = model
    # past every wrapper: the text protocol, the run's prices and the response cache
    while isinstance(target, WrappedModel):
        target = target.inner
    started = time.perf_counter()
    try:
        completion = target.complete([Message("user", CHECK_FILE.read_text(encoding="utf-8").strip())],
                                     max_tokens=CHECK_MAX_TOKENS, temperature=temperature)
    except ModelError as exc:
        reason = " ".join(str(exc).split())
        raise ModelCheckFailed(_failed(model, reason, resuming)) from None
    except Exception as exc:  # noqa: BLE001 - a backend's own exception is the same answer
        raise ModelCheckFailed(_failed(model, f"{type(exc).__name__}: {' '.join(str(exc).split())}", resuming)) from None
    usage = completion.usage
    return {"seconds": round(time.perf_counter() - started, 3), "model": completion.model,
            "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens, "cost_usd": completion.cost_usd}


def _failed(model: ChatModel, reason: str, resuming: bool) -> str:
    left = "The run folder is left as it was" if resuming else "No run folder was made"
    return (f"the model {model.spec} did not answer a check call before the run: {reason[:500]}. {left}. "
            f"Check the server and the model name (and its key), or skip this check with {SKIP_FLAG}")
