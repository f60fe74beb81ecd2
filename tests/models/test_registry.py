"""Opening models by spec: lazy imports, install hints, config errors at open time."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.models import (
    CachedModel,
    Capabilities,
    ChatModel,
    ModelConfigError,
    ModelRegistry,
    ModelSettings,
    ScriptedModel,
    open_model,
)
from harness.models.registry import builtin_backends
from tests.helpers import skip_or_fail


def test_unknown_prefix_lists_the_known_ones():
    with pytest.raises(ModelConfigError) as err:
        open_model("gemini:pro")
    for usage in ("anthropic:<model>", "openai:<model>@<base-url>", "local[:<name or path.gguf>]", "scripted:<file>"):
        assert usage in str(err.value)


def test_missing_anthropic_key_is_a_config_error(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ModelConfigError, match="ANTHROPIC_API_KEY"):
        open_model("anthropic:claude-sonnet-4-6")


@pytest.mark.parametrize("spec,message", [
    ("anthropic", "incomplete"),
    ("anthropic:", "incomplete"),
    ("openai:model@ftp://host", "must start with http"),
    ("openai:@http://127.0.0.1:1/v1", "no model name"),
    ("local:/no/such/model.gguf", "no such file"),
    ("scripted:/no/such/script.jsonl", "not found"),
])
def test_bad_specs_are_config_errors(spec, message):
    with pytest.raises(ModelConfigError, match=message):
        open_model(spec)


def _need_engine() -> None:
    if importlib.util.find_spec("xllamacpp") is None:
        skip_or_fail("MODEL", "the xllamacpp engine is not installed (pip install -e .)")


def test_local_path_must_be_a_gguf(tmp_path: Path):
    _need_engine()
    other = tmp_path / "weights.bin"
    other.write_bytes(b"x")
    with pytest.raises(ModelConfigError, match="expected a .gguf"):
        open_model(f"local:{other}")


def test_local_default_not_fetched_says_to_fetch(tmp_path: Path, monkeypatch):
    _need_engine()
    monkeypatch.setenv("HARNESS_MODELS_DIR", str(tmp_path))
    with pytest.raises(ModelConfigError, match=r"python -m harness model fetch"):
        open_model("local")


class _Fancy(ChatModel):
    usage = "fancy:<x>"
    requires = ("no_such_module_for_tests",)
    install_hint = "pip install fancy-extra"

    def complete(self, messages, **kwargs):
        raise AssertionError("never opened")


def test_missing_optional_dependency_gives_the_install_hint():
    registry = ModelRegistry({"fancy": _Fancy})
    with pytest.raises(ModelConfigError, match="fancy:x: pip install fancy-extra"):
        registry.open("fancy:x", ModelSettings())


def test_a_backend_whose_module_cannot_be_imported_says_so():
    registry = ModelRegistry({"gone": "no_such_package_for_tests.backend:Model"})
    with pytest.raises(ModelConfigError, match=r"'gone'.*cannot be imported.*pip install no_such_package_for_tests"):
        registry.open("gone:x", ModelSettings())
    assert registry.remote_api("gone:x") is None


def test_duplicate_registration_is_refused():
    registry = ModelRegistry(builtin_backends())
    with pytest.raises(ValueError, match="already registered by harness.models.openai_backend:OpenAIModel"):
        registry.register("openai", "somewhere:Else")
    with pytest.raises(ValueError, match="not a ChatModel subclass"):
        registry.register("odd", dict)


def test_a_registered_backend_is_opened_with_the_rest_of_the_spec():
    registry = ModelRegistry()
    registry.register("echo", _Echo)
    settings = ModelSettings(n_ctx=777)
    model = registry.open("echo:some/thing:with:colons", settings)
    assert isinstance(model, _Echo)
    assert model.opened_with == ("some/thing:with:colons", settings)  # what `open` was given
    registry.register("maybe", _MaybeEcho)
    assert registry.open("maybe", settings).opened_with == (None, settings)  # no colon: no argument
    with pytest.raises(ModelConfigError, match="incomplete; write echo:<x>"):
        registry.open("echo", settings)


class _Echo(ScriptedModel):
    usage = "echo:<x>"

    @classmethod
    def open(cls, argument, settings):
        model = cls(["hi"], spec=f"echo:{argument}")
        model.opened_with = (argument, settings)
        return model


class _MaybeEcho(_Echo):
    usage = "maybe[:<x>]"
    argument = "optional"


def test_remote_api_is_read_from_the_class_without_opening(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")  # opening would fail: the registry does not open
    registry = ModelRegistry(builtin_backends())
    assert registry.remote_api("anthropic:claude-x") is True
    assert registry.remote_api("openai:m@http://127.0.0.1:1/v1") is True
    assert registry.remote_api("local") is False and registry.remote_api("scripted:x") is False
    assert registry.remote_api("nope:x") is None

    class Remote(_Echo):
        capabilities = Capabilities(remote_api=True)

    registry.register("remote", Remote)
    assert registry.remote_api("remote:x") is True


def test_every_builtin_backend_declares_what_its_instances_say():
    from harness.models import anthropic_backend, local_backend, openai_backend, scripted

    for cls in (anthropic_backend.AnthropicModel, openai_backend.OpenAIModel, local_backend.LocalModel,
                scripted.ScriptedModel):
        assert issubclass(cls, ChatModel) and cls.usage and cls.capabilities.tools
    assert ScriptedModel(["x"]).capabilities == ScriptedModel.capabilities


def test_scripted_spec_and_cache_wrapping(tmp_path: Path):
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"reply": "hello"}) + "\n")
    plain = open_model(f"scripted:{script}")
    assert isinstance(plain, ScriptedModel)
    cached = open_model(f"scripted:{script}", ModelSettings(cache_dir=tmp_path / "c"))
    assert isinstance(cached, CachedModel) and cached.spec == f"scripted:{script}"
    assert cached.inner.calls == [] and cached.describe() == plain.describe()
    assert cached.identity == plain.identity and cached.capabilities == plain.capabilities


def test_backends_are_imported_lazily():
    code = ("import sys, harness.models; "
            "print(sorted(m for m in ('anthropic', 'openai', 'xllamacpp') if m in sys.modules))")
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
