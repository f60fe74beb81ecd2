"""What both workspace backends share: every file operation is one of the scripts of
sandbox/workspace.py, run by the backend's `_script`; the backend owns the lifecycle,
how a script and a command run, and how their processes end."""
from __future__ import annotations

import io
import tarfile
import tempfile
import threading
from typing import BinaryIO, Sequence

from sandbox.workspace import (
    APPLY_SCRIPT,
    DIFF_SCRIPT,
    LIST_SCRIPT,
    READ_SCRIPT,
    WRITE_SCRIPT,
    OutputCap,
    PatchResult,
    WorkspaceError,
    WorkspaceSpec,
    refusal,
    relative_path,
    summarize_patch,
)

OWN_TIMEOUT_S = 300.0  # the harness's own steps (lay-out, base, diff, apply): never the model's budget
LIST_CAP_BYTES = 8 * 1024 * 1024


def files_tar(files: Sequence[tuple[str, bytes]], prefix: tarfile.TarFile | None = None) -> BinaryIO:
    """A tar of `files` (paths checked: relative, inside the folder), after the members
    of `prefix` (the image's own content at the folder, already relative), rewound;
    spooled to disk when large."""
    spool = tempfile.SpooledTemporaryFile(max_size=64 * 1024 * 1024)
    with tarfile.open(fileobj=spool, mode="w") as tar:
        if prefix is not None:
            for member in prefix:
                tar.addfile(member, prefix.extractfile(member) if member.isfile() else None)
        for path, data in files:
            info = tarfile.TarInfo(relative_path(path))
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    spool.seek(0)
    return spool


class ScriptedWorkspace:
    """The file operations of a Workspace over `_script` (a backend's)."""

    spec: WorkspaceSpec
    _root: str  # the folder's canonical path where the scripts run
    _base: str | None  # the harness's git directory of the start; None: no git in the image
    _scratch: str  # a folder for the diff's index and objects (the commands' user may write it)

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def _script(self, script: str, args: Sequence[str], *, stdin: bytes | BinaryIO | None = None,
                cap: int, timeout_s: float = OWN_TIMEOUT_S) -> tuple[int | None, OutputCap]:
        raise NotImplementedError

    def read_file(self, path: str, *, max_bytes: int = 1024 * 1024) -> bytes:
        path = relative_path(path)
        with self._lock:
            code, out = self._script(READ_SCRIPT, [self._root, path, str(max_bytes)], cap=max_bytes + 64)
        self._raise(code, path, out)
        return bytes(out.head + out.tail)

    def write_file(self, path: str, data: bytes) -> None:
        path = relative_path(path)
        if len(data) > self.spec.limits.max_file_mb * 1024 * 1024:
            raise WorkspaceError(f"{path!r}: {len(data):,} bytes, over the file size limit "
                                 f"({self.spec.limits.max_file_mb} MB)")
        with self._lock:
            code, out = self._script(WRITE_SCRIPT, [self._root, path], stdin=data, cap=4096)
        self._raise(code, path, out)

    def list_files(self, path: str = ".") -> list[str]:
        path = relative_path(path)
        with self._lock:
            code, out = self._script(LIST_SCRIPT, [self._root, path], cap=LIST_CAP_BYTES)
        self._raise(code, path, out)
        if out.cut:
            raise WorkspaceError(f"{path!r} holds too many files to list (over {LIST_CAP_BYTES:,} bytes of names)")
        names = bytes(out.head + out.tail).decode(errors="surrogateescape").split("\0")
        prefix = "" if path == "." else path + "/"
        return sorted(prefix + name for name in names if name)

    def apply_patch(self, patch: str) -> PatchResult:
        summary = summarize_patch(patch)
        problems = summary.problems(self.spec.limits.max_diff_bytes)
        if problems:
            return PatchResult(False, "refused: " + "; ".join(problems), summary)
        if not summary.files:
            return PatchResult(False, "refused: the patch names no file", summary)
        base = self._require_base()
        with self._lock:
            code, out = self._script(APPLY_SCRIPT, [self._root, base], stdin=patch.encode(), cap=16 * 1024)
        message = out.text().strip()
        return PatchResult(code == 0, message or ("applied" if code == 0 else f"git apply exited {code}"), summary)

    def diff(self, *, exclude: Sequence[str] = ()) -> str:
        base = self._require_base()
        cap = self.spec.limits.max_diff_bytes
        specs = [f":(exclude,glob){pattern}" for pattern in exclude]
        with self._lock:
            code, out = self._script(DIFF_SCRIPT, [self._root, base, str(cap), self._scratch, *specs], cap=2 * cap + 2)
        if code != 0:
            raise WorkspaceError(f"the workspace's diff failed (exit {code}): {out.text()[-500:]}")
        text = bytes(out.head).decode(errors="replace") if out.cut else out.text()
        if not out.cut and len(text.encode()) <= cap:
            return text
        first = text.find("diff --git ") if text.startswith("#") else 0
        notes, sections = (text[:first], text[first:]) if first >= 0 else (text, "")
        kept = sections[:max(0, cap - len(notes))]
        kept = kept[:kept.rfind("\ndiff --git ") + 1]  # whole files only
        dropped = out.total - len(notes.encode()) - len(kept.encode())
        return f"# omitted: the diff's end ({dropped:,} bytes over the cap of {cap:,})\n" + notes + kept

    def _require_base(self) -> str:
        if self._base is None:
            raise WorkspaceError(f"the image {self.spec.image} has no git: a workspace needs it for its "
                                 "diff and patches (add the `git` package to the image)")
        return self._base

    @staticmethod
    def _raise(code: int | None, path: str, out: OutputCap) -> None:
        error = refusal(code, path, bytes(out.head))
        if error is not None:
            raise error

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()  # type: ignore[attr-defined]
