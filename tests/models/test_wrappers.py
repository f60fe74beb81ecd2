"""The wrappers (response cache, run prices, text tool protocol) answer for the model
they wrap: what it declares and knows passes through them unchanged."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.models import Capabilities, CachedModel, Message, Price, ScriptedModel, ToolSpec
from harness.models.priced import PricedModel
from harness.models.text_tools import TextToolModel

TOOLS = (ToolSpec("python", "Run a script", {"type": "object", "properties": {"code": {"type": "string"}}}),)


class _Inner(ScriptedModel):
    """A backend with facts of its own, and its own way of sending a call."""

    capabilities = Capabilities(tools=False, seeds=True, context_tokens=1234)
    concurrency_note = "two calls at a time"

    def __init__(self) -> None:
        super().__init__(["ok"], spec="scripted:inner", identity="inner-identity", accepts_temperature=False)
        self.closed = 0

    def as_sent(self, messages, *, system=None, tools=(), tool_choice="auto"):
        return f"[{system}]", tuple(messages)[-1:], ()

    def close(self) -> None:
        self.closed += 1


WRAPPERS = {
    "cache": lambda inner, tmp: CachedModel(inner, tmp / "cache"),
    "priced": lambda inner, tmp: PricedModel(inner, {"x": Price(1.0, 2.0)}),
    "text": lambda inner, tmp: TextToolModel(inner),
}


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_a_wrapper_declares_what_its_model_declares(wrapper: str, tmp_path: Path):
    inner = _Inner()
    model = WRAPPERS[wrapper](inner, tmp_path)
    assert model.inner is inner
    assert model.spec == "scripted:inner"
    assert model.identity == "inner-identity"
    assert model.capabilities == inner.capabilities
    assert model.accepts_temperature is False
    assert model.concurrency_note == "two calls at a time"
    assert model.preferred_tool_protocol == "text"
    described = model.describe()
    assert {k: described[k] for k in ("spec", "identity", "capabilities")} == {
        "spec": "scripted:inner", "identity": "inner-identity", "capabilities": inner.capabilities.to_dict()}
    model.close()
    assert inner.closed == 1


@pytest.mark.parametrize("wrapper", ["cache", "priced"])
def test_a_wrapper_sends_a_call_as_its_model_does(wrapper: str, tmp_path: Path):
    # What a record keeps as "what the model saw" is the wrapped backend's own answer.
    model = WRAPPERS[wrapper](_Inner(), tmp_path)
    history = [Message("user", "first"), Message("user", "second")]
    assert model.as_sent(history, system="sys", tools=TOOLS) == ("[sys]", (history[-1],), ())
