"""Chat model backends behind one interface, chosen by a spec string.

    model = open_model("anthropic:claude-sonnet-4-5", ModelSettings(cache_dir=Path(".cache")))
    completion = model.complete([Message("user", "...")], system="...", max_tokens=512)
    completion = model.complete(messages, tools=[ToolSpec("python", "Run a script", schema)])
    completion.tool_calls  # (ToolCall(id, name, arguments), ...)

Specs: anthropic:<model>, openai:<model>@<base-url>, local[:<name or path.gguf>],
scripted:<file>, and any backend another package registers (entry point group
`reflexion_harness.models`, see harness/models/registry.py).
"""
from harness.models.base import (
    Capabilities,
    ChatModel,
    Completion,
    Message,
    ModelConfigError,
    ModelError,
    ModelSettings,
    Price,
    Retry,
    Usage,
)
from harness.models.cache import CachedModel
from harness.models.limiter import RateLimiter
from harness.models.registry import ModelRegistry, is_remote_api, open_model, register_backend
from harness.models.scripted import ScriptedModel, ScriptedReply
from harness.models.tools import ToolCall, ToolSpec, argument_problem, arguments_of

__all__ = [
    "CachedModel",
    "Capabilities",
    "ChatModel",
    "Completion",
    "Message",
    "ModelConfigError",
    "ModelError",
    "ModelRegistry",
    "ModelSettings",
    "Price",
    "RateLimiter",
    "Retry",
    "ScriptedModel",
    "ScriptedReply",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "argument_problem",
    "arguments_of",
    "is_remote_api",
    "open_model",
    "register_backend",
]
