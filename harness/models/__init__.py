"""Chat model backends behind one interface, chosen by a spec string.

    model = open_model("anthropic:claude-sonnet-4-5", ModelSettings(cache_dir=Path(".cache")))
    completion = model.complete([Message("user", "...")], system="...", max_tokens=512)

Specs: anthropic:<model>, openai:<model>@<base-url>, local[:<path.gguf>], scripted:<file>.
"""
from harness.models.base import (
    ChatModel,
    Completion,
    Message,
    ModelConfigError,
    ModelError,
    ModelSettings,
    Price,
    Usage,
)
from harness.models.cache import CachedModel
from harness.models.limiter import RateLimiter
from harness.models.registry import Backend, ModelRegistry, open_model, register_backend
from harness.models.scripted import ScriptedModel

__all__ = [
    "Backend",
    "CachedModel",
    "ChatModel",
    "Completion",
    "Message",
    "ModelConfigError",
    "ModelError",
    "ModelRegistry",
    "ModelSettings",
    "Price",
    "RateLimiter",
    "ScriptedModel",
    "Usage",
    "open_model",
    "register_backend",
]
