"""Tools for an agent that works in a workspace (sandbox/workspace.py): `bash`, `editor`
and a `submit` whose answer is the workspace's diff (harness.kinds.answers.Patch).

Declared and run as the default tools are (harness/agent/tools.py): a ToolSpec each, a
template for the description and one for the result, and whatever a call does becomes
a result the model reads, never an exception. Tool sets (`WORKSPACE_TOOL_SETS`): "edit"
(bash, editor, submit: SWE-agent's interface) and "bash" (bash and submit alone:
mini-swe-agent's).

The editor refuses an edit of a Python file that does not parse, with the parser's
message. The parse happens in the harness's process (parsing runs nothing of the file:
only the AST is built, no bytecode, no constant folding) and is guarded: a file over
`max_parse_bytes` is refused before the parser sees it; depth is bounded by the
parser's own limits (200 nested brackets, 100 indent levels, its stack, the recursion
limit while the AST is built), each a clean SyntaxError, MemoryError or RecursionError
that becomes the refusal's message (tests/loop/test_workspace_tools.py feeds it the
deep cases).

What `submit` leaves out as the agent's own tests (`own_tests`): files the agent
*added* (not in the snapshot) whose name is test_*.py or *_test.py, or that lie under a
folder named test or tests. A test file of the snapshot that the agent changed stays in
the diff (grading resets those files before it applies the hidden tests).
"""
from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

from harness.agent.tools import Tool, ToolEnv, ToolOutcome, cut_text
from harness.kinds.answers import Patch
from harness.models.tools import ToolSpec
from sandbox.workspace import Workspace, WorkspaceError, summarize_patch

EDITOR_COMMANDS = ("view", "create", "str_replace", "insert", "undo_edit")
WORKSPACE_TOOL_SETS: dict[str, tuple[str, ...]] = {"edit": ("bash", "editor", "submit"), "bash": ("bash", "submit")}
_TEST_FOLDERS = ("test", "tests")
_ERRORS = ("workspace", "editor", "does_not_parse")


@dataclass(frozen=True)
class WorkspaceToolSettings:
    command_timeout_s: float = 60.0  # per bash call
    output_chars: int = 10_000  # of a result the model reads: its head and tail past this
    max_command_chars: int = 20_000
    max_file_bytes: int = 1024 * 1024  # the editor opens files up to this size
    max_parse_bytes: int = 1024 * 1024  # a Python file the editor checks (larger: refused)
    max_undo: int = 10  # edits of a file that undo_edit can take back


@dataclass
class WorkspaceToolEnv(ToolEnv):
    """ToolEnv with the workspace the tools act on, their settings and the editor's undo
    history. `prompts` renders the templates when there is no trial scope (tests, bench)."""

    workspace: Workspace | None = None
    tool_settings: WorkspaceToolSettings = field(default_factory=WorkspaceToolSettings)
    prompts: Any = None  # harness.text.prompting.Prompts
    history: dict[str, list[bytes | None]] = field(default_factory=dict)

    def render(self, template: str, **values: Any) -> str:
        if self.prompts is not None:
            return self.prompts.render(template, **values)
        return super().render(template, **values)

    def error(self, problem: str, **values: Any) -> str:
        if problem in _ERRORS:
            return self.render("workspace_tool_error", problem=problem, **{"detail": "", **values})
        return super().error(problem, **values)

    @property
    def ws(self) -> Workspace:
        if self.workspace is None:
            raise WorkspaceError("no workspace is open for this episode")
        return self.workspace


@dataclass(frozen=True)
class WorkspaceOutcome(ToolOutcome):
    """A ToolOutcome that may carry the submitted patch and what the grader will refuse in it."""

    patch: Patch | None = None
    problems: tuple[str, ...] = ()


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


class WorkspaceTool(Tool):
    def spec(self, env: ToolEnv, values: Mapping[str, Any]) -> ToolSpec:
        assert isinstance(env, WorkspaceToolEnv)
        s = env.tool_settings
        text = env.render(f"workspace_tool_{self.name}", timeout_s=s.command_timeout_s, output_chars=s.output_chars,
                          **values)
        return ToolSpec(self.name, text, self.parameters)

    def run(self, args: dict[str, Any], env: ToolEnv) -> ToolOutcome:
        assert isinstance(env, WorkspaceToolEnv)
        try:
            return self.act(args, env)
        except WorkspaceError as exc:  # a refused path, a missing file: the model reads why
            return ToolOutcome("error", env.error("workspace", detail=str(exc)[:500]))

    def act(self, args: dict[str, Any], env: WorkspaceToolEnv) -> ToolOutcome:
        raise NotImplementedError


class Bash(WorkspaceTool):
    name = "bash"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"command": {"type": "string"}},
                                            "required": ["command"], "additionalProperties": False}
    runs_code = True

    def act(self, args: dict[str, Any], env: WorkspaceToolEnv) -> ToolOutcome:
        s = env.tool_settings
        command = args["command"]
        if len(command) > s.max_command_chars:
            return ToolOutcome("refused", env.error("code_too_long", size=len(command), limit=s.max_command_chars))
        if "\0" in command:
            return ToolOutcome("error", env.error("arguments", detail="the command holds a NUL character"))
        result = env.ws.run(command, timeout_s=s.command_timeout_s)
        status = "timeout" if result.timed_out else ("ok" if result.exit_code == 0 else "error")
        text = env.render("workspace_result_bash", timed_out=result.timed_out, exit_code=result.exit_code,
                          seconds=result.duration_s, timeout_s=s.command_timeout_s,
                          output=cut_text(result.output, s.output_chars))
        return ToolOutcome(status, text, result.exit_code, sandbox_s=result.duration_s)


def python_problem(path: str, text: str, settings: WorkspaceToolSettings) -> str | None:
    """Why `text` is not a Python file the editor accepts (the parser's message), or None."""
    if len(text.encode(errors="replace")) > settings.max_parse_bytes:
        return f"the file would be over {settings.max_parse_bytes:,} bytes, too big to check; write it with bash"
    try:
        compile(text, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
        shown = (exc.text or "").rstrip("\n")[:200]
        return f"{exc.msg} ({where})" + (f": {shown}" if shown.strip() else "")
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return _one_line(exc)
    return None


def _numbered(text: str, first: int, last: int | None) -> str:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    last = len(lines) if last is None or last < 0 else min(last, len(lines))
    return "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(max(1, first), last + 1))


class Editor(WorkspaceTool):
    name = "editor"
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "enum": list(EDITOR_COMMANDS)},
            "path": {"type": "string"},
            "file_text": {"type": "string"},
            "old_str": {"type": "string"},
            "new_str": {"type": "string"},
            "insert_line": {"type": "integer"},
            "view_range": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["command", "path"],
        "additionalProperties": False,
    }

    def act(self, args: dict[str, Any], env: WorkspaceToolEnv) -> ToolOutcome:
        command = args["command"]
        if command not in EDITOR_COMMANDS:
            return self._fail(env, f"unknown command {command!r}; the commands are: {', '.join(EDITOR_COMMANDS)}")
        needed = {"create": ("file_text",), "str_replace": ("old_str",), "insert": ("insert_line", "new_str")}
        missing = [name for name in needed.get(command, ()) if name not in args]
        if missing:
            return self._fail(env, f"{command} needs the argument(s) {', '.join(missing)}")
        return getattr(self, f"_{command}")(args, env)

    def _fail(self, env: WorkspaceToolEnv, detail: str) -> ToolOutcome:
        return ToolOutcome("error", env.error("editor", detail=detail))

    def _read(self, env: WorkspaceToolEnv, path: str, *, editing: bool = True) -> str:
        data = env.ws.read_file(path, max_bytes=env.tool_settings.max_file_bytes)
        if b"\0" in data:
            raise WorkspaceError(f"{path} is a binary file; the editor opens text files only")
        try:
            return data.decode()
        except UnicodeDecodeError:
            if editing:  # a rewrite would replace the bytes that do not decode
                raise WorkspaceError(f"{path} is not UTF-8 text; edit it with bash") from None
            return data.decode(errors="replace")

    def _exists(self, env: WorkspaceToolEnv, path: str) -> bytes | None:
        try:
            return env.ws.read_file(path, max_bytes=env.tool_settings.max_file_bytes)
        except WorkspaceError:
            return None

    def _view(self, args: dict[str, Any], env: WorkspaceToolEnv) -> ToolOutcome:
        path, s = args["path"], env.tool_settings
        if self._exists(env, path) is None and (listing := env.ws.list_files(path)):
            return ToolOutcome("ok", env.render("workspace_result_editor", command="view", path=path, directory=True,
                                                 shown=cut_text("\n".join(listing), s.output_chars)))
        window = args.get("view_range") or [1, -1]
        if len(window) != 2:
            return self._fail(env, "view_range is two line numbers: [first, last] (last -1: to the end)")
        shown = _numbered(self._read(env, path, editing=False), int(window[0]), int(window[1]))
        return ToolOutcome("ok", env.render("workspace_result_editor", command="view", path=path, directory=False,
                                             shown=cut_text(shown, s.output_chars)))

    def _write(self, env: WorkspaceToolEnv, path: str, before: bytes | None, text: str, command: str,
               snippet_line: int) -> ToolOutcome:
        if path.endswith(".py") and (problem := python_problem(path, text, env.tool_settings)) is not None:
            return ToolOutcome("refused", env.error("does_not_parse", path=path, detail=problem))
        env.ws.write_file(path, text.encode())
        stack = env.history.setdefault(path, [])
        stack.append(before)
        del stack[:-env.tool_settings.max_undo]  # the harness keeps a bounded history, whatever the agent does
        lines = text.split("\n")
        first, last = max(1, snippet_line - 4), min(len(lines), snippet_line + 4)
        shown = "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(first, last + 1))
        return ToolOutcome("ok", env.render("workspace_result_editor", command=command, path=path,
                                             shown=cut_text(shown, env.tool_settings.output_chars)))

    def _create(self, args: dict[str, Any], env: WorkspaceToolEnv) -> ToolOutcome:
        path = args["path"]
        return self._write(env, path, self._exists(env, path), args["file_text"], "create", 1)

    def _str_replace(self, args: dict[str, Any], env: WorkspaceToolEnv) -> ToolOutcome:
        path, old, new = args["path"], args["old_str"], args.get("new_str", "")
        text = self._read(env, path)
        count = text.count(old) if old else 0
        if count != 1:
            return self._fail(env, f"old_str must occur exactly once in {path}; it occurs {count} time(s)"
                              + ("" if count else " (it must match the file exactly, spaces included)"))
        at = text.index(old)
        return self._write(env, path, text.encode(), text.replace(old, new, 1), "str_replace",
                           text[:at].count("\n") + 1)

    def _insert(self, args: dict[str, Any], env: WorkspaceToolEnv) -> ToolOutcome:
        path, line, new = args["path"], args["insert_line"], args["new_str"]
        text = self._read(env, path)
        parts = text.split("\n")
        lines = [part + "\n" for part in parts[:-1]] + ([parts[-1] + "\n"] if parts[-1] else [])
        count = len(lines)
        if not 0 <= line <= count:
            return self._fail(env, f"insert_line must be from 0 (the top) to {count} (after the last line)")
        added = new if new.endswith("\n") else new + "\n"
        head, rest = "".join(lines[:line]), "".join(lines[line:])
        return self._write(env, path, text.encode(), head + added + rest, "insert", line + 1)

    def _undo_edit(self, args: dict[str, Any], env: WorkspaceToolEnv) -> ToolOutcome:
        path = args["path"]
        stack = env.history.get(path)
        if not stack:
            return self._fail(env, f"no edit of {path} to undo")
        before = stack.pop()
        if before is None:  # it was created: remove it
            env.ws.run(f"rm -f -- {_quote(path)}", timeout_s=30)
        else:
            env.ws.write_file(path, before)
        return ToolOutcome("ok", env.render("workspace_result_editor", command="undo_edit", path=path, shown=None))


def _quote(path: str) -> str:
    return "'" + path.replace("'", "'\\''") + "'"


def own_test(path: str) -> bool:
    """Whether a file the agent added counts as its own test (module docstring)."""
    name = posixpath.basename(path)
    folders = posixpath.dirname(path).split("/")
    return (name.startswith("test_") and name.endswith(".py")) or name.endswith("_test.py") \
        or any(folder in _TEST_FOLDERS for folder in folders)


def _pathspec(path: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", path)


def workspace_patch(workspace: Workspace) -> tuple[Patch, tuple[str, ...]]:
    """The workspace's diff from the snapshot without the agent's own tests, and what a
    grader will refuse in it (summarize_patch's problems)."""
    whole = summarize_patch(workspace.diff())
    excluded = tuple(f.path for f in whole.files if f.status == "added" and own_test(f.path))
    diff = workspace.diff(exclude=[_pathspec(path) for path in excluded]) if excluded else workspace.diff()
    return Patch(diff=diff, excluded=excluded), tuple(summarize_patch(diff).problems())


class WorkspaceSubmit(WorkspaceTool):
    name = "submit"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}, "additionalProperties": False}

    def act(self, args: dict[str, Any], env: WorkspaceToolEnv) -> ToolOutcome:
        patch, problems = workspace_patch(env.ws)
        text = env.render("workspace_result_submit", files=list(Patch.paths(patch)),
                          excluded=list(patch.excluded), problems=list(problems))
        return WorkspaceOutcome("ok", text, patch=patch, problems=problems)


WORKSPACE_TOOLS: dict[str, type[Tool]] = {t.name: t for t in (Bash, Editor, WorkspaceSubmit)}


def workspace_tools_of(tool_set: str) -> list[Tool]:
    """The tools of a set named in WORKSPACE_TOOL_SETS ("edit" or "bash")."""
    if tool_set not in WORKSPACE_TOOL_SETS:
        raise ValueError(f"unknown workspace tool set {tool_set!r}; the sets are: {', '.join(WORKSPACE_TOOL_SETS)}")
    return [WORKSPACE_TOOLS[name]() for name in WORKSPACE_TOOL_SETS[tool_set]]
