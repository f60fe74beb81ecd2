"""The workspace tools (harness/agent/workspace_tools.py) on an in-memory workspace: the
editor's commands, its parse check and its guards, argument checks, and the tool sets."""
from __future__ import annotations

import json

import pytest

from harness.agent.workspace_tools import (
    WorkspaceToolEnv,
    WorkspaceToolSettings,
    own_test,
    python_problem,
    workspace_tools_of,
)
from harness.models.tools import ToolCall, argument_problem
from harness.text.prompting import Prompts
from sandbox.workspace import CommandResult, WorkspaceError, relative_path


class MemoryWorkspace:
    """The file half of the Workspace interface in a dict; `run` answers `rm -f`, else echoes."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = dict(files)
        self.commands: list[str] = []

    def read_file(self, path: str, *, max_bytes: int = 1024 * 1024) -> bytes:
        path = relative_path(path)
        if path not in self.files:
            raise WorkspaceError(f"{path}: no such file")
        if len(self.files[path]) > max_bytes:
            raise WorkspaceError(f"{path} is over {max_bytes} bytes")
        return self.files[path]

    def write_file(self, path: str, data: bytes) -> None:
        self.files[relative_path(path)] = data

    def list_files(self, path: str = ".") -> list[str]:
        prefix = "" if path == "." else relative_path(path) + "/"
        return sorted(p for p in self.files if p.startswith(prefix))

    def run(self, command: str, *, timeout_s: float | None = None) -> CommandResult:
        self.commands.append(command)
        if command.startswith("rm -f -- '"):
            self.files.pop(command[len("rm -f -- '"):-1], None)
        return CommandResult(0, command, False, 0.001)


CALC = b"def add(a, b):\n    return a + b\n"


@pytest.fixture
def env():
    ws = MemoryWorkspace({"pkg/calc.py": CALC, "README": b"one\ntwo\n"})
    return WorkspaceToolEnv(scope=None, settings=None, workspace=ws, prompts=Prompts())


def edit(env, **args):
    [tool] = [t for t in workspace_tools_of("edit") if t.name == "editor"]
    return tool.run(args, env)


def test_view_numbers_lines_and_lists_folders(env):
    out = edit(env, command="view", path="pkg/calc.py")
    assert out.status == "ok" and "     1\tdef add(a, b):" in out.result and "     2\t    return a + b" in out.result
    assert "pkg/calc.py" in edit(env, command="view", path="pkg").result
    assert "     2\ttwo" in edit(env, command="view", path="README", view_range=[2, -1]).result


def test_str_replace_must_match_once_and_undo_takes_it_back(env):
    assert edit(env, command="str_replace", path="pkg/calc.py", old_str="a + b", new_str="b + a").status == "ok"
    assert env.workspace.files["pkg/calc.py"] == b"def add(a, b):\n    return b + a\n"
    missing = edit(env, command="str_replace", path="pkg/calc.py", old_str="a - b", new_str="x")
    assert missing.status == "error" and "0 time(s)" in missing.result
    twice = edit(env, command="str_replace", path="pkg/calc.py", old_str="a", new_str="x")
    assert twice.status == "error" and "exactly once" in twice.result
    assert edit(env, command="undo_edit", path="pkg/calc.py").status == "ok"
    assert env.workspace.files["pkg/calc.py"] == CALC
    assert edit(env, command="undo_edit", path="pkg/calc.py").status == "error"


def test_insert_create_and_undo_of_a_create(env):
    assert edit(env, command="insert", path="README", insert_line=1, new_str="one and a half").status == "ok"
    assert env.workspace.files["README"] == b"one\none and a half\ntwo\n"
    assert edit(env, command="insert", path="README", insert_line=0, new_str="zero\n").status == "ok"
    assert env.workspace.files["README"].startswith(b"zero\none\n")
    assert edit(env, command="insert", path="README", insert_line=99, new_str="x").status == "error"
    assert edit(env, command="create", path="new.txt", file_text="hi\n").status == "ok"
    assert edit(env, command="undo_edit", path="new.txt").status == "ok"
    assert "new.txt" not in env.workspace.files


def test_a_python_edit_that_does_not_parse_is_refused_with_the_parsers_message(env):
    out = edit(env, command="str_replace", path="pkg/calc.py", old_str="return a + b", new_str="return a +")
    assert out.status == "refused" and "would not parse" in out.result and "line 2" in out.result
    assert env.workspace.files["pkg/calc.py"] == CALC
    assert edit(env, command="create", path="x.py", file_text="def f(:\n").status == "refused"
    assert edit(env, command="create", path="x.txt", file_text="def f(:\n").status == "ok"  # not Python


@pytest.mark.parametrize("text", [
    "x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n",  # deeper than any parser stack
    "x = [" * 3000 + "\n",
    "x = 1\n" * 300_000,  # over the size cap
    "\0\n",
    "if 1:\n" + "".join(" " * i + "if 1:\n" for i in range(1, 2000)),
    "x = " + "-" * 500_000 + "1\n",  # the parser's stack
    "x = " + "not " * 200_000 + "1\n",
    "x = a" + ".b" * 400_000 + "\n",  # the recursion limit while the AST is built
    "x = " + "1+" * 400_000 + "1\n",
])
def test_a_hostile_python_file_is_refused_quickly_and_never_crashes_the_harness(text):
    problem = python_problem("x.py", text, WorkspaceToolSettings())
    assert isinstance(problem, str) and problem


def test_a_parse_parses_and_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    assert python_problem("x.py", f"open({str(marker)!r}, 'w').write('1')\n", WorkspaceToolSettings()) is None
    assert not marker.exists()


def test_paths_outside_the_workspace_are_refused_as_results(env):
    for path in ("../etc/passwd", "/etc/passwd", "pkg/../../x"):
        out = edit(env, command="view", path=path)
        assert out.status == "error" and "Nothing was changed" in out.result


def test_arguments_are_type_checked_against_the_specs(env):
    tools = workspace_tools_of("edit")
    specs = [t.spec(env, {}) for t in tools]
    assert [s.name for s in specs] == ["bash", "editor", "submit"]
    bad = [ToolCall("1", "bash", json.dumps({"command": 3})), ToolCall("2", "editor", json.dumps({"path": "x"})),
           ToolCall("3", "editor", json.dumps({"command": "view", "path": "x", "bogus": 1})),
           ToolCall("4", "editor", json.dumps({"command": "view", "path": "x", "insert_line": "1"}))]
    assert all(argument_problem(call, specs) for call in bad)
    assert argument_problem(ToolCall("5", "submit", "{}"), specs) is None
    assert edit(env, command="delete", path="README").status == "error"


def test_the_bash_only_set_is_minis(env):
    assert [t.name for t in workspace_tools_of("bash")] == ["bash", "submit"]
    with pytest.raises(ValueError, match="the sets are"):
        workspace_tools_of("vim")


def test_own_tests_rule():
    assert own_test("test_x.py") and own_test("pkg/x_test.py") and own_test("tests/helper.py")
    assert own_test("a/test/data.json")
    assert not own_test("pkg/testing.py") and not own_test("pkg/contest.py") and not own_test("attest.py")


def test_a_file_that_is_not_utf8_is_viewed_but_never_rewritten(env):
    env.workspace.files["latin.txt"] = b"caf\xe9\n"
    assert edit(env, command="view", path="latin.txt").status == "ok"
    out = edit(env, command="str_replace", path="latin.txt", old_str="caf", new_str="bar")
    assert out.status == "error" and "not UTF-8" in out.result and env.workspace.files["latin.txt"] == b"caf\xe9\n"


class RecordingScope:
    """What run_calls needs of a trial's scope: its sandbox time and its events."""

    def __init__(self) -> None:
        self.sandbox_s = 0.0
        self.events: list = []

    def event(self, event) -> None:
        self.events.append(event)


def test_bash_and_editor_calls_run_through_the_agents_turn_runner():
    from harness.agent.tools import ToolPolicy, run_calls

    scope = RecordingScope()
    ws = MemoryWorkspace({"README": b"one\n"})
    env = WorkspaceToolEnv(scope=scope, settings=None, workspace=ws, prompts=Prompts())
    tools = [t for t in workspace_tools_of("edit") if t.name != "submit"]
    specs = [t.spec(env, {}) for t in tools]
    calls = [ToolCall("a", "bash", json.dumps({"command": "echo hi"})),
             ToolCall("b", "editor", json.dumps({"command": "view", "path": "README", "view_range": "1"})),
             ToolCall("c", "editor", json.dumps({"command": "insert", "path": "README", "insert_line": 1,
                                                 "new_str": "two"})),
             ToolCall("d", "grep", "{}")]
    out = run_calls(env, calls, tools, specs, ToolPolicy(), turn=1, parallel=1)
    assert [e.status for e in scope.events] == ["ok", "error", "ok", "error"]
    assert [m.tool_call_id for m in out.messages] == ["a", "b", "c", "d"]
    assert "must be of type array" in scope.events[1].result and ws.files["README"] == b"one\ntwo\n"
    assert ws.commands == ["echo hi"] and scope.sandbox_s > 0 and out.submitted is None


def test_an_edit_shows_the_lines_around_it_with_their_numbers(env):
    env.workspace.files["long.txt"] = "".join(f"line {n}\n" for n in range(1, 21)).encode()
    out = edit(env, command="str_replace", path="long.txt", old_str="line 10\n", new_str="line ten\n")
    assert "    10\tline ten" in out.result and "     6\tline 6" in out.result and "line 15" not in out.result
    bash = [t for t in workspace_tools_of("bash") if t.name == "bash"][0]
    assert bash.run({"command": "echo \0"}, env).status == "error" and env.workspace.commands == []


def test_the_undo_history_is_bounded(env):
    for n in range(30):
        edit(env, command="create", path="f.txt", file_text=f"{n}\n")
    assert len(env.history["f.txt"]) == WorkspaceToolSettings().max_undo
    while edit(env, command="undo_edit", path="f.txt").status == "ok":
        pass
    assert env.workspace.files["f.txt"] == b"19\n"
