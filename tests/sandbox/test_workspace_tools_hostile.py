"""Hostile tool calls against the workspace tools (harness/agent/workspace_tools.py) on a
docker workspace from the Python sandbox image, with a small package laid out here:
reading outside the folder, commands that fork or print without end, and submitted diffs
that carry a symlink out, runner-steering files, a binary or a huge file."""
from __future__ import annotations

import json
import os
import uuid

import pytest

from harness.agent.workspace_tools import WorkspaceToolEnv, WorkspaceToolSettings, workspace_tools_of
from harness.models.tools import ToolCall, argument_problem
from harness.text.prompting import Prompts
from sandbox import SandboxConfig, SandboxUnavailable, WorkspaceLimits, WorkspaceSpec, open_workspace
from tests.helpers import skip_or_fail

pytestmark = pytest.mark.docker

PACKAGE = (
    ("pkg/__init__.py", b""),
    ("pkg/calc.py", b"def add(a, b):\n    return a - b\n"),
    ("tests/test_calc.py", b"from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"),
    ("setup.cfg", b"[metadata]\nname = pkg\n"),
)
LIMITS = WorkspaceLimits(timeout_s=30.0, pids=128, max_diff_bytes=256 * 1024)
SETTINGS = WorkspaceToolSettings(command_timeout_s=5.0, output_chars=2000)


@pytest.fixture(scope="module")
def workspace():
    config = SandboxConfig()
    image = os.environ.get("HARNESS_WORKSPACE_TEST_IMAGE") or config.image
    try:
        opened = open_workspace(config, WorkspaceSpec(image=image, files=PACKAGE, limits=LIMITS))
    except SandboxUnavailable as exc:
        skip_or_fail("DOCKER", f"the docker workspace is unavailable: {exc}")
    yield opened
    opened.close()


@pytest.fixture
def call(workspace):
    """`call(tool, **args)`: the tool's outcome, its arguments checked against its spec first;
    the workspace is put back to its start after the test."""
    env = WorkspaceToolEnv(scope=None, settings=None, workspace=workspace, prompts=Prompts(), tool_settings=SETTINGS)
    tools = {t.name: t for t in workspace_tools_of("edit")}
    specs = [t.spec(env, {}) for t in tools.values()]

    def go(tool: str, **args):
        assert argument_problem(ToolCall("c", tool, json.dumps(args)), specs) is None
        return tools[tool].run(args, env)

    yield go
    workspace.run("git reset -q --hard && git clean -qfdx", timeout_s=30)


def test_bash_runs_from_the_root_and_a_failure_is_a_result(call):
    out = call("bash", command="pwd; ls pkg; exit 3")
    assert out.status == "error" and out.exit_code == 3
    assert "/workspace" in out.result and "calc.py" in out.result and "Exit status 3" in out.result
    fixed = call("bash", command="sed -i 's/a - b/a + b/' pkg/calc.py && python3 -c 'from pkg.calc import add; print(add(1, 2))'")
    assert fixed.status == "ok" and fixed.result.rstrip().endswith("3")


def test_the_editor_refuses_paths_outside_the_folder(call):
    for path in ("/etc/passwd", "../../etc/passwd", "pkg/../../etc/hostname"):
        out = call("editor", command="view", path=path)
        assert out.status == "error" and "root:" not in out.result
    call("bash", command="ln -s /etc out")
    out = call("editor", command="view", path="out/passwd")
    assert out.status == "error" and "root:" not in out.result
    assert call("editor", command="create", path="out/evil", file_text="x").status == "error"


def test_bash_reads_the_containers_files_never_the_hosts(call, tmp_path):
    secret = tmp_path / f"hidden_{uuid.uuid4().hex}.py"
    secret.write_text("HIDDEN_TEST_MARKER\n")
    out = call("bash", command=f"cat {secret}; ls {tmp_path}; grep -rs HIDDEN_TEST_\"\"MARKER /workspace /tmp | head -1")
    assert "HIDDEN_TEST_MARKER" not in out.result and "No such file" in out.result


def test_a_fork_bomb_ends_with_its_call_and_leaves_nothing(call):
    # The image has no `ps`: processes are read from /proc. Every fork of the bomb keeps its
    # command line, which holds the marker; the count's own pattern does not match itself.
    count = "grep -l -a 'bomb_[m]arker' /proc/[0-9]*/cmdline 2>/dev/null | wc -l"
    seen = call("bash", command=f"bomb_marker=1; (sleep 30 &); sleep 1; {count}")
    assert seen.status == "ok" and int(seen.result.split()[-1]) >= 1  # the count sees a live fork
    out = call("bash", command="bomb_marker=1; :(){ :|:& };:")
    assert out.status in ("timeout", "error", "ok")
    after = call("bash", command=count)
    assert after.status == "ok" and after.result.split()[-1] == "0"


def test_a_command_that_prints_without_end_is_cut_and_stopped(call):
    out = call("bash", command="yes 'flood'")
    assert out.status == "timeout" and "ran past" in out.result
    assert len(out.result) < SETTINGS.output_chars + 500 and "not shown" in out.result


def test_a_symlink_out_of_the_folder_is_flagged_in_the_submitted_diff(call):
    call("bash", command="ln -s /etc/passwd leak && ln -s ../../outside pkg/up")
    out = call("submit")
    assert out.patch is not None and {"leak", "pkg/up"} <= set(out.patch.paths())
    assert any("leak" in p and "symlink" in p for p in out.problems)
    assert any("pkg/up" in p for p in out.problems) and "will refuse" in out.result


def test_runner_steering_files_stay_in_the_diff_for_the_grader_to_reset(call):
    call("editor", command="create", path="conftest.py", file_text="import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    items.clear()\n")
    call("editor", command="str_replace", path="setup.cfg", old_str="name = pkg", new_str="name = pkg\n[tool:pytest]\naddopts = -p no:python")
    call("editor", command="str_replace", path="tests/test_calc.py", old_str="== 3", new_str="== -1")
    out = call("submit")
    assert {"conftest.py", "setup.cfg", "tests/test_calc.py"} <= set(out.patch.paths())
    assert out.patch.excluded == ()  # changed files of the snapshot are graded (and reset), never hidden


def test_the_agents_own_new_tests_are_left_out_and_named(call):
    call("editor", command="str_replace", path="pkg/calc.py", old_str="a - b", new_str="a + b")
    call("editor", command="create", path="test_mine.py", file_text="def test_x():\n    assert True\n")
    call("editor", command="create", path="tests/test_more.py", file_text="def test_y():\n    assert True\n")
    out = call("submit")
    assert set(out.patch.excluded) == {"test_mine.py", "tests/test_more.py"}
    assert out.patch.paths() == ("pkg/calc.py",) and out.problems == ()
    assert "test_mine.py" in out.result and "Left out" in out.result


def test_a_binary_or_huge_file_in_the_diff_is_flagged(call):
    call("bash", command="head -c 4096 /dev/urandom > blob.bin; yes 0123456789 | head -c 100M > big.txt; ls -l big.txt")
    out = call("submit")
    assert any("blob.bin" in p and "binary" in p for p in out.problems)
    assert any("big.txt" in p for p in out.problems)
    assert len(out.patch.diff) <= LIMITS.max_diff_bytes


def test_the_editor_on_docker_views_folders_creates_folders_and_undoes_a_create(call, workspace):
    assert "pkg/calc.py" in call("editor", command="view", path="pkg").result
    assert call("editor", command="view", path="nowhere").status == "error"
    assert call("editor", command="create", path="new/deep/mod.py", file_text="X = 1\n").status == "ok"
    assert workspace.read_file("new/deep/mod.py") == b"X = 1\n"
    assert call("editor", command="undo_edit", path="new/deep/mod.py").status == "ok"
    assert "new/deep/mod.py" not in workspace.list_files()
    assert call("editor", command="str_replace", path="pkg/calc.py", old_str="a - b", new_str="a -").status == "refused"
    assert workspace.read_file("pkg/calc.py") == PACKAGE[1][1]
