"""Model backends from another package, through the entry point group
`reflexion_harness.models`: a distribution made on the fly (a `.dist-info` with
`entry_points.txt`, on sys.path) adds a backend without touching the harness."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.models import Message, ModelConfigError, ModelRegistry, ModelSettings
from harness.models.registry import builtin_backends

REPO = Path(__file__).resolve().parents[2]

BACKEND = '''
from harness.models import Capabilities, ChatModel, Completion


class EchoModel(ChatModel):
    usage = "echo:<word>"
    capabilities = Capabilities(tools=False)

    @classmethod
    def open(cls, argument, settings):
        model = cls()
        model.spec = f"echo:{argument}"
        return model

    def complete(self, messages, **kwargs):
        return Completion(f"echo {messages[-1].content}", model=self.spec)


class RemoteModel(EchoModel):
    usage = "faraway:<model>"
    capabilities = Capabilities(tools=True, remote_api=True)
'''


def make_plugin(root: Path, entries: dict[str, str], module: str = BACKEND) -> Path:
    """An installed distribution `echo-plugin` in `root` (put `root` on sys.path)."""
    (root / "echo_plugin").mkdir(parents=True)
    (root / "echo_plugin" / "__init__.py").write_text("")
    (root / "echo_plugin" / "backend.py").write_text(module)
    info = root / "echo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-plugin\nVersion: 0.1\n")
    lines = "\n".join(f"{name} = {target}" for name, target in entries.items())
    (info / "entry_points.txt").write_text(f"[reflexion_harness.models]\n{lines}\n")
    return root


def _forget_plugin() -> None:
    for name in [n for n in sys.modules if n == "echo_plugin" or n.startswith("echo_plugin.")]:
        del sys.modules[name]


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch):
    def install(entries: dict[str, str], module: str = BACKEND) -> Path:
        root = make_plugin(tmp_path / "site", entries, module)
        monkeypatch.syspath_prepend(str(root))
        return root
    _forget_plugin()  # each test's package is its own
    yield install
    _forget_plugin()


def test_a_plugin_backend_is_found_and_opened(on_path):
    on_path({"echo": "echo_plugin.backend:EchoModel"})
    registry = ModelRegistry(builtin_backends(), entry_points=True)
    assert "echo" in registry.prefixes() and "echo:<word>" in registry.usages()
    model = registry.open("echo:hello", ModelSettings())
    assert model.complete([Message("user", "hi")]).text == "echo hi"
    assert registry.remote_api("echo:x") is False


def test_a_plugin_taking_a_builtin_prefix_is_refused_naming_both(on_path):
    on_path({"openai": "echo_plugin.backend:EchoModel"})
    registry = ModelRegistry(builtin_backends(), entry_points=True)
    with pytest.raises(ModelConfigError, match=r"'openai' is already registered by harness.models.openai_backend"
                                               r".*echo_plugin.backend:EchoModel .*echo-plugin 0.1"):
        registry.open("openai:m@http://127.0.0.1:1/v1", ModelSettings())


def test_a_plugin_whose_dependency_is_missing_says_what_to_install(on_path):
    on_path({"needy": "echo_plugin.backend:EchoModel"}, module="import no_such_sdk_for_tests\n")
    registry = ModelRegistry(builtin_backends(), entry_points=True)
    with pytest.raises(ModelConfigError, match=r"'needy' .*echo-plugin.*cannot be imported.*pip install no_such_sdk_for_tests"):
        registry.open("needy:x", ModelSettings())


def test_the_process_sandbox_guard_reads_a_plugin_s_declaration(tmp_path: Path):
    """A new remote-API backend cannot slip past the guard that keeps keys from the
    unsafe process sandbox: the guard asks the backend's class, not a list of names."""
    root = make_plugin(tmp_path / "site", {"faraway": "echo_plugin.backend:RemoteModel",
                                            "echo": "echo_plugin.backend:EchoModel"})
    code = textwrap.dedent("""
        from harness.config import ConfigError, RunConfig
        for model in ("faraway:big-model", "echo:x", "anthropic:claude-x", "local"):
            try:
                RunConfig(model=model, sandbox="process").validate()
                print(model, "accepted")
            except ConfigError as exc:
                print(model, "refused", "API keys" in str(exc))
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": f"{root}:{REPO}", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert out.stdout.split("\n")[:4] == [
        "faraway:big-model refused True", "echo:x accepted", "anthropic:claude-x refused True", "local accepted"]
