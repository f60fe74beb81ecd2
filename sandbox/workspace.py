"""The workspace contract: a folder in a container, laid out by the harness, in which it
runs commands under limits, reads, writes and lists files, applies a patch and takes the
diff from the start (sandbox/README.md, "Workspaces").

Backends (sandbox/workspace_docker.py, sandbox/workspace_process.py) run the same shell
scripts below for every file operation, so the conformance suite checks one behaviour.
This module imports nothing from `harness`.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Literal, Protocol, Sequence, runtime_checkable


class WorkspaceError(RuntimeError):
    """A request the workspace refuses (a path leaving the folder, a missing file, a file
    over a cap), or a workspace that cannot go on; the message says which."""


@dataclass(frozen=True)
class WorkspaceLimits:
    """Per command, unless said otherwise."""

    timeout_s: float = 60.0  # wall clock; Workspace.run(timeout_s=) overrides it
    memory_mb: int = 1024  # the container's processes together (the folder and /tmp come on top)
    pids: int = 256  # processes and threads in the container at once
    cpus: float = 1.0
    max_output_bytes: int = 32 * 1024  # kept of a command's output: its head and its tail
    max_file_mb: int = 64  # largest file a command may write (RLIMIT_FSIZE)
    disk_mb: int = 1024  # the folder's size (a tmpfs, counted in the container's memory)
    tmp_mb: int = 256  # /tmp's size
    max_diff_bytes: int = 2 * 1024 * 1024  # Workspace.diff's text; a file bigger than this is omitted


@dataclass(frozen=True)
class WorkspaceSpec:
    """What a workspace starts from."""

    image: str  # a language image or a repository task's image (untagged: the sandbox's recipe tag)
    root: str = "/workspace"  # the folder: commands run here, files are laid out here
    files: tuple[tuple[str, bytes], ...] = ()  # (path relative to root, content), laid out first
    # The laid-out folder (with what the image holds at root) as the one commit of a
    # fresh `.git` in the folder. The start the diff is taken from is kept apart from
    # the folder either way (commands cannot write it).
    git_base: bool = True
    limits: WorkspaceLimits = field(default_factory=WorkspaceLimits)


@dataclass(frozen=True)
class CommandResult:
    exit_code: int | None  # None when the time limit ended it
    output: str  # stdout and stderr interleaved; over the cap, its head and tail with the cut said
    timed_out: bool
    duration_s: float


@dataclass(frozen=True)
class PatchFile:
    """One file of a patch, as its text says."""

    path: str
    status: Literal["added", "modified", "deleted"]
    mode: str  # the new mode: 100644, 100755, 120000 (symlink), 160000 (nested repository); "" when deleted
    binary: bool  # git said "Binary files ... differ": the patch does not carry the content
    size: int  # bytes of the file's part of the patch
    symlink_target: str | None = None  # a symlink's new target
    names: tuple[str, ...] = ()  # every name the file's headers give (`path` is the last)


@dataclass(frozen=True)
class PatchSummary:
    """What a patch holds, read from its text alone (`summarize_patch`)."""

    files: tuple[PatchFile, ...]
    size: int  # bytes of the whole text
    omitted: tuple[str, ...] = ()  # what Workspace.diff left out (files over the cap, a cut)

    def problems(self, max_bytes: int = WorkspaceLimits.max_diff_bytes) -> list[str]:
        """Why a grader should refuse the patch, one line each (empty: nothing found)."""
        found = [f"omitted from the diff: {line}" for line in self.omitted]
        if self.size > max_bytes:
            found.append(f"the patch is {self.size:,} bytes, over the cap of {max_bytes:,}")
        for entry in self.files:
            if entry.binary:
                found.append(f"{entry.path}: a binary file")
            if entry.mode == "160000":
                found.append(f"{entry.path}: a nested repository")
            if entry.symlink_target is not None and any(
                    leaves_root(name, entry.symlink_target) for name in entry.names or (entry.path,)):
                found.append(f"{entry.path}: a symlink leaving the folder (to {entry.symlink_target})")
        return found


@dataclass(frozen=True)
class PatchResult:
    ok: bool
    message: str  # git apply's message, or why the patch was refused before it ran
    summary: PatchSummary


@runtime_checkable
class Workspace(Protocol):
    """A folder in a container (module docstring). Paths are relative to `spec.root`;
    one that leaves it (`..`, absolute, through a symlink pointing out) raises
    WorkspaceError. Not thread safe beyond one call at a time (calls are serialised)."""

    spec: WorkspaceSpec

    def run(self, command: str, *, timeout_s: float | None = None) -> CommandResult:
        """`bash -c command` in the folder; a non-zero exit is a result, never an exception.
        When it ends (or its time is up), none of its processes survive."""
        ...

    def read_file(self, path: str, *, max_bytes: int = 1024 * 1024) -> bytes: ...

    def write_file(self, path: str, data: bytes) -> None: ...

    def list_files(self, path: str = ".") -> list[str]:
        """Files and symlinks under `path`, relative to the folder, sorted (no `.git`)."""
        ...

    def apply_patch(self, patch: str) -> PatchResult:
        """`git apply`; refuses (ok False, never raises) a patch that does not apply or whose
        summary has problems (binary files, symlinks leaving the folder, over the cap)."""
        ...

    def diff(self, *, exclude: Sequence[str] = ()) -> str:
        """The folder's unified diff from the start (new files included), leaving out the
        paths matching `exclude` (git glob pathspecs: `*` stays within a folder, `**`
        crosses them) and, named in `# omitted:` lines before the first file, files over
        `limits.max_diff_bytes`; the whole text is capped at that size too."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> "Workspace": ...

    def __exit__(self, *exc_info) -> None: ...


# --- paths --------------------------------------------------------------------------


def relative_path(path: str) -> str:
    """`path` normalised, or WorkspaceError when it is absolute or climbs out."""
    if not path or "\0" in path:
        raise WorkspaceError(f"not a path: {path!r}")
    if path.startswith("/"):
        raise WorkspaceError(f"{path!r} is absolute; paths are relative to the workspace's folder")
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../"):
        raise WorkspaceError(f"{path!r} leaves the workspace's folder")
    return normal


def leaves_root(link_path: str, target: str) -> bool:
    """Whether a symlink at `link_path` (relative to the folder) to `target` points out of it."""
    if target.startswith("/"):
        return True
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(link_path), target))
    return resolved == ".." or resolved.startswith("../")


# --- output -------------------------------------------------------------------------


class OutputCap:
    """Keeps the head and the tail of a stream, `limit` bytes in all, whatever its length."""

    def __init__(self, limit: int) -> None:
        self._head_room = limit - limit // 2
        self._tail_room = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_room - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data and self._tail_room:
            self.tail += data[-self._tail_room:]
            del self.tail[:-self._tail_room]

    @property
    def cut(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        if not self.cut:
            return (bytes(self.head) + bytes(self.tail)).decode(errors="replace")
        return (self.head.decode(errors="replace") + f"\n[... {self.cut:,} bytes cut ...]\n"
                + self.tail.decode(errors="replace"))


# --- patches ------------------------------------------------------------------------

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def summarize_patch(text: str) -> PatchSummary:
    """What a patch holds, git's format or a plain unified diff: each file's status and
    new mode, whether it is binary or a symlink (and its target), and its size; and the
    `# omitted:` lines Workspace.diff writes. Hunks are read by their line counts, so a
    hunk line cannot pass for a header. A file's path is every name its headers give
    (`diff --git`, `---`, `+++`): a symlink is said to leave the folder when it does so
    from any of them."""
    lines = text.split("\n")
    omitted = tuple(line[len("# omitted: "):] for line in lines if line.startswith("# omitted: "))
    files: list[_Entry] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("diff --git "):
            files.append(_Entry(names=_header_names(line[len("diff --git "):])))
        elif line.startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ "):
            if not files or files[-1].closed or files[-1].plain_headers:
                files.append(_Entry())
            files[-1].read_headers(line, lines[index + 1])
            index += 1
        elif files and (match := _HUNK.match(line)):
            index = files[-1].read_hunk(lines, index, match)
            continue
        elif files:
            files[-1].read_extended(line)
        if files:
            files[-1].size += len(line) + 1
        index += 1
    return PatchSummary(files=tuple(entry.summary() for entry in files), size=len(text.encode()), omitted=omitted)


def _strip_prefix(name: str) -> str:
    name = name.strip().split("\t")[0].strip('"')
    return name[2:] if name[:2] in ("a/", "b/") else name


def _header_names(rest: str) -> list[str]:
    match = re.match(r"^(.*?) (\"?b/.*)$", rest)
    return [_strip_prefix(part) for part in (match.groups() if match else (rest,))]


class _Entry:
    """One file of a patch while it is read (summarize_patch)."""

    def __init__(self, names: list[str] | None = None) -> None:
        self.names = list(names or [])
        self.status = "modified"
        self.mode = ""
        self.binary = False
        self.added: list[str] = []
        self.size = 0
        self.closed = False  # a hunk was read: the next headers start another file
        self.plain_headers = False

    def read_headers(self, old: str, new: str) -> None:
        self.plain_headers = True
        self.size += len(old) + 1
        for header, status in ((old, "added"), (new, "deleted")):
            name = header[4:]
            if name.split("\t")[0].strip() == "/dev/null":
                self.status = status
            else:
                self.names.append(_strip_prefix(name))

    def read_extended(self, line: str) -> None:
        words = line.split()
        if line.startswith("new file mode "):
            self.status, self.mode = "added", words[-1]
        elif line.startswith("deleted file mode "):
            self.status = "deleted"
        elif line.startswith("new mode "):
            self.mode = words[-1]
        elif line.startswith("index ") and len(words) == 3 and not self.mode:
            self.mode = words[-1]
        elif line.startswith("Binary files ") or line == "GIT binary patch":
            self.binary = True

    def read_hunk(self, lines: list[str], index: int, match: re.Match) -> int:
        """Read the hunk at `index` by its counts; the index after it."""
        old_left = int(match.group(1) or 1) if match.group(1) != "0" else 0
        new_left = int(match.group(2) or 1) if match.group(2) != "0" else 0
        self.closed = True
        self.size += len(lines[index]) + 1
        index += 1
        while index < len(lines) and (old_left > 0 or new_left > 0 or lines[index].startswith("\\")):
            line = lines[index]
            if line.startswith("+"):
                new_left -= 1
                self.added.append(line[1:])
            elif line.startswith("-"):
                old_left -= 1
            elif line.startswith("\\"):
                pass
            else:
                old_left -= 1
                new_left -= 1
            self.size += len(line) + 1
            index += 1
        return index

    def summary(self) -> PatchFile:
        path = self.names[-1] if self.names else "?"
        target = "\n".join(self.added) if self.mode == "120000" and self.status != "deleted" else None
        return PatchFile(path=path, status=self.status, mode=self.mode if self.status != "deleted" else "",
                         binary=self.binary, size=self.size, symlink_target=target, names=tuple(dict.fromkeys(self.names)))


# --- the scripts every backend runs (bash, coreutils, tar, git) -----------------------
# Positional arguments: $1 the folder (canonical), then each script's own. Exit codes
# 10..13 say why a path was refused (`refusal`).

READ_SCRIPT = r"""
p=$(realpath -m -- "$1/$2" 2>/dev/null) || exit 10
case $p in "$1"/*) ;; *) exit 11;; esac
[ -e "$p" ] || exit 10
[ -f "$p" ] || exit 12
size=$(stat -c %s -- "$p") || exit 10
[ "$size" -le "$3" ] || { printf %s "$size"; exit 13; }
exec cat -- "$p"
"""

WRITE_SCRIPT = r"""
p=$(realpath -m -- "$1/$2" 2>/dev/null) || exit 10
case $p in "$1"/*) ;; *) exit 11;; esac
[ -d "$p" ] && exit 12
mkdir -p -- "$(dirname -- "$p")" || exit 14
p2=$(realpath -m -- "$p") && [ "$p2" = "$p" ] || exit 11
exec cat > "$p"
"""

LIST_SCRIPT = r"""
p=$(realpath -m -- "$1/$2" 2>/dev/null) || exit 10
case $p in "$1"|"$1"/*) ;; *) exit 11;; esac
[ -e "$p" ] || exit 10
[ -d "$p" ] || exit 12
exec find "$p" -name .git -prune -o \( -type f -o -type l \) -printf '%P\0'
"""

# stdin: a tar of what to lay out; the image's own `.git` (its history) never stays.
LAYOUT_SCRIPT = r"""
set -e
tar -x --no-same-owner --no-same-permissions -C "$1" -f -
rm -rf -- "$1/.git"
command -v git >/dev/null || echo "no git"
"""

# $2: the git directory to make, bare, of the folder $1 as one commit (fixed author and
# date, no reflog). `copy` $4: $2 becomes a copy of the git directory $4 (made so
# before) as the folder's own `.git`, made as the commands' user (git_base).
BASE_SCRIPT = r"""
set -e
root=$1 dir=$2 mode=$3
if [ "$mode" = copy ]; then
  cp -R -- "$4" "$dir"
  git --git-dir="$dir" config core.bare false
  exit 0
fi
export GIT_AUTHOR_NAME=workspace GIT_AUTHOR_EMAIL=workspace@localhost GIT_COMMITTER_NAME=workspace \
  GIT_COMMITTER_EMAIL=workspace@localhost GIT_AUTHOR_DATE='2000-01-01T00:00:00Z' GIT_COMMITTER_DATE='2000-01-01T00:00:00Z'
git -c init.defaultBranch=main init -q --bare "$dir"
g() { git --git-dir="$dir" --work-tree="$root" -c core.logAllRefUpdates=false -c commit.gpgsign=false "$@"; }
g config core.logAllRefUpdates false
g config core.looseCompression 1
g add -A
g commit -q --allow-empty --no-verify -m start
"""

# The diff from the start: the base's objects plus a private index and object folder in
# $4, a folder only the harness's steps use (emptied first: a command may have filled
# it). Files a command made unreadable to their owner are made readable first (only
# those: a changed ctime would make git read every file again).
DIFF_SCRIPT = r"""
root=$1 base=$2 cap=$3 t=$4; shift 4
find "$t" -mindepth 1 -delete 2>/dev/null
mkdir -p "$t/objects" && cp -- "$base/index" "$t/index" || exit 3
find "$root" -name .git -prune -o \( ! -perm -u+r -o -type d ! -perm -u+x \) -exec chmod u+rX {} \; 2>/dev/null
export GIT_INDEX_FILE="$t/index" GIT_OBJECT_DIRECTORY="$t/objects" GIT_ALTERNATE_OBJECT_DIRECTORIES="$base/objects"
g() { git --git-dir="$base" --work-tree="$root" "$@"; }
spec=(. "$@")
while IFS= read -r -d '' entry; do
  printf '# omitted: %s (%s bytes, over the cap)\n' "${entry#* }" "${entry%% *}"
  spec+=(":(exclude,literal)${entry#* }")
done < <(find "$root" -name .git -prune -o -type f -size +"$cap"c -printf '%s %P\0')
g add -A -- "${spec[@]}" >/dev/null 2>"$t/err" || { cat "$t/err" >&2; exit 4; }
g diff --cached --no-color --no-ext-diff --no-textconv --no-renames --full-index HEAD -- "${spec[@]}"
code=$?
find "$t" -mindepth 1 -delete 2>/dev/null
exit $code
"""

APPLY_SCRIPT = r"""
cd "$1" || exit 3
git --git-dir="$2" --work-tree="$1" apply --whitespace=nowarn - 2>&1
"""

# The environment of the harness's own git: no configuration but its own.
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": "/nonexistent",
           "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "*",
           "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
# A command's: an identity for the git it runs, a home in /tmp, and Python's bytecode
# there too (not in the folder, where it would be binary files in the diff).
COMMAND_ENV = {"HOME": "/tmp", "PYTHONPYCACHEPREFIX": "/tmp/.pycache",
               "GIT_AUTHOR_NAME": "agent", "GIT_AUTHOR_EMAIL": "agent@localhost",
               "GIT_COMMITTER_NAME": "agent", "GIT_COMMITTER_EMAIL": "agent@localhost"}


def refusal(code: int | None, path: str, output: bytes = b"") -> WorkspaceError | None:
    """The WorkspaceError a file script's exit code means (None: it succeeded)."""
    if code == 0:
        return None
    reasons = {10: "does not exist", 11: "leaves the workspace's folder (through a symlink)",
               12: "is the wrong kind (a folder where a file is meant, or the reverse)",
               13: f"is {output.decode(errors='replace')} bytes, over the limit",
               14: "cannot be made (a file stands where a folder must be)"}
    reason = reasons.get(code if code is not None else -1) or f"failed (exit {code}): {output.decode(errors='replace')[-300:]}"
    return WorkspaceError(f"{path!r} {reason}")
