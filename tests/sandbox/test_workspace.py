"""The workspace's conformance suite, run against both backends (fixture `backend`:
process, docker). The process backend runs commands on this machine without isolation;
the cases it cannot contain (memory, processes, network, the root) are docker-only.

HARNESS_WORKSPACE_TEST_IMAGE names another image for the docker cases (default: the
sandbox's own, as `python -m harness sandbox build` makes it)."""
from __future__ import annotations

import os
import subprocess

import pytest

from sandbox import (
    SandboxConfig,
    SandboxUnavailable,
    Workspace,
    WorkspaceError,
    WorkspaceLimits,
    WorkspaceSpec,
    open_workspace,
    summarize_patch,
)
from sandbox.workspace import OutputCap, leaves_root, relative_path
from tests.helpers import skip_or_fail

FILES = (("pkg/calc.py", b"def add(a, b):\n    return a + b\n"), ("README", b"calc\n"))
SMALL = WorkspaceLimits(timeout_s=30.0, max_output_bytes=4096, max_diff_bytes=64 * 1024, pids=128)


@pytest.fixture
def open_ws(backend):
    """`open_ws(**WorkspaceSpec fields)`: a workspace of the backend, closed after the test."""
    opened = []

    def make(**fields):
        config = SandboxConfig(backend=backend)
        image = os.environ.get("HARNESS_WORKSPACE_TEST_IMAGE") if backend == "docker" else None
        spec = WorkspaceSpec(**{"image": image or config.image, "files": FILES, "limits": SMALL, **fields})
        try:
            opened.append(open_workspace(config, spec))
        except SandboxUnavailable as exc:
            if backend != "docker":
                raise
            skip_or_fail("DOCKER", f"the docker workspace is unavailable: {exc}")
        return opened[-1]

    yield make
    for workspace in opened:
        workspace.close()


@pytest.fixture
def ws(open_ws):
    return open_ws()


def alive(ws, marker: str) -> list[str]:
    """Processes whose command line holds `marker`: in the container (docker, asked by a
    command whose own command line holds only the marker's halves) or on this machine."""
    if getattr(ws, "name", "") == "docker":
        half = len(marker) // 2
        result = ws.run(f"m={marker[:half]}; m=${{m}}{marker[half:]}; for f in /proc/[0-9]*/cmdline; do "
                        "{ c=$(tr '\\0' ' ' < \"$f\"); } 2>/dev/null; case $c in *\"$m\"*) echo \"$f $c\";; esac; done")
        assert result.exit_code == 0, result.output
        return result.output.splitlines()
    found = subprocess.run(["pgrep", "-f", "--", marker], capture_output=True, text=True).stdout.split()
    return [pid for pid in found if pid != str(os.getpid())]


# --- the pure parts ----------------------------------------------------------------


def test_paths_that_leave_the_folder_are_refused_before_any_backend():
    assert relative_path("a/./b/../c") == "a/c"
    for bad in ("../x", "a/../../x", "/etc/passwd", "", "a\0b"):
        with pytest.raises(WorkspaceError):
            relative_path(bad)
    assert leaves_root("link", "/etc") and leaves_root("a/link", "../../x") and not leaves_root("a/link", "../b")


def test_output_cap_keeps_head_and_tail_and_says_the_cut():
    cap = OutputCap(10)
    for _ in range(1000):
        cap.add(b"0123456789")
    assert len(cap.head) + len(cap.tail) == 10 and cap.total == 10_000
    assert cap.text() == "01234\n[... 9,990 bytes cut ...]\n56789"


def test_summary_lists_binary_files_symlinks_and_sizes():
    patch = (
        "diff --git a/out b/out\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/out\n"
        "@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n"
        "diff --git a/x.bin b/x.bin\nnew file mode 100644\nindex 0000000..2222222\nBinary files /dev/null and b/x.bin differ\n"
        "diff --git a/a.py b/a.py\nindex 3333333..4444444 100755\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"
    )
    summary = summarize_patch(patch)
    assert [(f.path, f.status, f.mode, f.binary) for f in summary.files] == [
        ("out", "added", "120000", False), ("x.bin", "added", "100644", True), ("a.py", "modified", "100755", False)]
    assert summary.files[0].symlink_target == "/etc/passwd"
    problems = summary.problems(max_bytes=100)
    assert any("symlink leaving" in line for line in problems) and any("binary" in line for line in problems)
    assert any("over the cap" in line for line in problems)


def test_summary_reads_plain_diffs_by_their_hunk_counts():
    patch = ("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n--- not a header\n+++ nor this\n keep\n"
             "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n")
    summary = summarize_patch(patch)
    assert [(f.path, f.status) for f in summary.files] == [("x.py", "modified"), ("new.txt", "added")]


def test_a_symlink_is_judged_from_every_name_its_headers_give():
    # The header claims a deep path; the +++ line (what git writes) names a shallow one.
    patch = ("diff --git a/d1/d2/l b/d1/d2/l\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n"
             "+++ b/l\n@@ -0,0 +1 @@\n+../x\n\\ No newline at end of file\n")
    [entry] = summarize_patch(patch).files
    assert set(entry.names) == {"d1/d2/l", "l"}
    assert any("symlink leaving" in line for line in summarize_patch(patch).problems())


# --- conformance: both backends ------------------------------------------------------


def test_files_are_laid_out_and_the_start_is_one_commit(ws):
    assert isinstance(ws, Workspace)
    assert ws.list_files() == ["README", "pkg/calc.py"]
    assert ws.read_file("pkg/calc.py") == FILES[0][1]
    result = ws.run("git log --format=%s --all; git tag; git branch -a; git stash list; git reflog | wc -l;"
                    " git rev-list --all --count; git status --porcelain")
    assert result.exit_code == 0, result.output
    assert result.output.split() == ["start", "*", "main", "0", "1"], result.output


def test_a_command_runs_in_the_folder_and_a_failure_is_a_result(ws):
    result = ws.run("pwd; echo out; echo err >&2; exit 3")
    assert result.exit_code == 3 and not result.timed_out
    lines = result.output.split()
    assert lines[1:] == ["out", "err"] and lines[0] == getattr(ws, "_root")
    assert ws.run("cat README").output == "calc\n"


def test_python_leaves_no_bytecode_in_the_folder(ws):
    assert ws.run("python3 -c 'import pkg.calc' && python3 -m pkg.calc").exit_code == 0
    assert ws.list_files() == ["README", "pkg/calc.py"]
    assert ws.diff() == ""


def test_written_files_are_seen_by_commands_and_listed(ws):
    ws.write_file("new/deep/file.txt", b"hello\n")
    assert ws.run("cat new/deep/file.txt").output == "hello\n"
    assert "new/deep/file.txt" in ws.list_files()
    assert ws.list_files("new") == ["new/deep/file.txt"]
    with pytest.raises(WorkspaceError, match="does not exist"):
        ws.read_file("absent.txt")


def test_endless_output_is_cut_and_ends_at_the_time_limit(ws):
    result = ws.run("yes 'no end'", timeout_s=2)
    assert result.timed_out and result.exit_code is None
    assert "bytes cut ...]" in result.output
    assert len(result.output.encode()) <= SMALL.max_output_bytes + 100
    assert ws.run("echo next").output == "next\n"


def test_a_slow_command_is_stopped_at_its_limit(ws):
    result = ws.run("echo started; sleep 600", timeout_s=1)
    assert result.timed_out and result.exit_code is None and result.output.startswith("started")
    assert result.duration_s < 60
    assert ws.run("echo next").exit_code == 0


def test_no_process_of_a_command_survives_it(ws):
    # a sleep whose command line nothing else has: not even this test on the other backend,
    # whose container's processes the host sees too when the suite runs side by side
    marker = f"4242.{os.getpid()}{len(ws.__class__.__name__)}"
    ws.run(f"sleep {marker} & (sleep {marker} &); setsid sleep {marker} & nohup sleep {marker} >/dev/null 2>&1 &"
           f" disown; echo left")
    assert alive(ws, marker) == []
    ws.run(f"sleep {marker} & sleep 600", timeout_s=1)
    assert alive(ws, marker) == []


@pytest.mark.parametrize("backend", [pytest.param("docker", marks=pytest.mark.docker)])
def test_a_command_that_kills_its_wrapper_leaves_nothing_running(ws):
    # Not the process backend's: its commands run as the harness's user and can kill
    # its launcher (the subreaper) and anything else of that user.
    marker = f"4343.{os.getpid()}"
    result = ws.run(f"setsid sleep {marker} >/dev/null 2>&1 & kill -KILL $PPID; sleep 1")
    assert not result.timed_out
    assert alive(ws, marker) == []


def test_reads_and_writes_outside_the_folder_are_refused(ws):
    assert ws.run("ln -s /etc/passwd out; ln -s .. up; ln -s pkg inside").exit_code == 0
    for path in ("../x", "/etc/passwd", "out", "up/etc/passwd", "pkg/../../x"):
        with pytest.raises(WorkspaceError):
            ws.read_file(path)
        with pytest.raises(WorkspaceError):
            ws.write_file(path, b"x")
    with pytest.raises(WorkspaceError):
        ws.list_files("up")
    assert ws.read_file("inside/calc.py") == FILES[0][1]  # a symlink inside the folder is fine


def test_the_diff_holds_every_change_from_the_start(ws):
    ws.run("printf 'def add(a, b):\\n    return a - b\\n' > pkg/calc.py; rm README; echo t > test_mine.py;"
           " mkdir -p notes && echo n > notes/a.txt; git add -A; git commit -qm mine")
    diff = ws.diff(exclude=["test_*.py"])
    summary = summarize_patch(diff)
    assert {(f.path, f.status) for f in summary.files} == {
        ("pkg/calc.py", "modified"), ("README", "deleted"), ("notes/a.txt", "added")}
    assert "-    return a + b\n+    return a - b" in diff
    assert summary.problems() == []
    assert "test_mine.py" in ws.diff()  # without `exclude`


def test_the_diff_says_a_symlink_points_out_and_omits_big_files(open_ws):
    ws = open_ws(limits=WorkspaceLimits(max_diff_bytes=2048))
    ws.run("ln -s /etc/passwd out; head -c 5000 /dev/zero | tr '\\0' 'a' > big.txt")
    diff = ws.diff()
    problems = summarize_patch(diff).problems(2048)
    assert any("out: a symlink leaving the folder" in line for line in problems), diff
    assert any("big.txt" in line and "omitted" in line for line in problems), diff
    assert "aaaa" not in diff


def test_a_diff_over_the_cap_keeps_whole_files_and_says_the_cut(open_ws):
    ws = open_ws(limits=WorkspaceLimits(max_diff_bytes=2048))
    ws.run("for i in $(seq 10 59); do printf '%0100d\\n' $i > f$i.txt; done")
    diff = ws.diff()
    summary = summarize_patch(diff)
    assert diff.startswith("# omitted: the diff's end") and len(diff.encode()) <= 2048 + 100
    assert 0 < len(summary.files) < 50 and all(f.status == "added" for f in summary.files)
    assert diff.endswith("\n") and summary.problems(2048)
    assert not ws.apply_patch(diff).ok


def test_a_patch_applies_and_a_bad_one_is_a_result(ws):
    ws.run("printf 'def add(a, b):\\n    return a - b\\n' > pkg/calc.py")
    patch = ws.diff()
    ws.run("git checkout -q -- pkg/calc.py")
    result = ws.apply_patch(patch)
    assert result.ok, result.message
    assert "a - b" in ws.read_file("pkg/calc.py").decode()
    again = ws.apply_patch(patch)  # no longer applies
    assert not again.ok and "patch does not apply" in again.message
    assert not ws.apply_patch("not a patch").ok


def test_apply_refuses_symlinks_out_binary_files_and_oversized_patches(open_ws):
    ws = open_ws(limits=WorkspaceLimits(max_diff_bytes=4096))
    link = ("diff --git a/out b/out\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/out\n"
            "@@ -0,0 +1 @@\n+../../etc\n\\ No newline at end of file\n")
    binary = ("diff --git a/x.bin b/x.bin\nnew file mode 100644\nindex 0000000..2222222\n"
              "GIT binary patch\nliteral 1\nIcmZo*00031\n\nliteral 0\nHcmV?d00001\n\n")
    big = ("diff --git a/big b/big\nnew file mode 100644\nindex 0000000..3333333\n--- /dev/null\n+++ b/big\n"
           "@@ -0,0 +1,500 @@\n" + "+xxxxxxxxxx\n" * 500)
    for patch, reason in ((link, "symlink leaving"), (binary, "binary"), (big, "over the cap")):
        result = ws.apply_patch(patch)
        assert not result.ok and reason in result.message, result.message
    assert ws.list_files() == ["README", "pkg/calc.py"]


def test_a_commands_rewrite_of_the_folders_git_does_not_move_the_start(ws):
    ws.run("echo changed >> README; git add -A; git commit -qm x; git update-ref -d refs/heads/main;"
           " rm -rf .git; git init -q .; git add -A; git commit -qm fake")
    summary = summarize_patch(ws.diff())
    assert [(f.path, f.status) for f in summary.files] == [("README", "modified")]


def test_without_git_base_the_folder_has_no_repository_but_a_diff(open_ws):
    ws = open_ws(git_base=False)
    assert ws.run("test -e .git").exit_code == 1
    ws.write_file("README", b"other\n")
    assert [f.path for f in summarize_patch(ws.diff()).files] == ["README"]


def test_what_a_command_leaves_cannot_make_the_diff_fail(ws):
    ws.run("echo x >> README; mkdir -p locked/in && echo y > locked/in/f && chmod 000 locked/in/f locked/in locked;"
           " echo z > unreadable && chmod 000 unreadable")
    paths = {f.path for f in summarize_patch(ws.diff()).files}
    assert paths == {"README", "locked/in/f", "unreadable"}


def test_a_diff_applies_in_a_fresh_workspace_as_grading_would(open_ws):
    agent = open_ws()
    agent.run("printf 'def add(a, b):\\n    return b + a\\n' > pkg/calc.py; mkdir -p docs; echo new > docs/n.md;"
              " rm README; chmod +x pkg/calc.py")
    patch = agent.diff()
    grader = open_ws()
    result = grader.apply_patch(patch)
    assert result.ok, result.message
    assert grader.read_file("pkg/calc.py") == agent.read_file("pkg/calc.py")
    assert grader.list_files() == ["docs/n.md", "pkg/calc.py"]
    assert grader.run("test -x pkg/calc.py").exit_code == 0
    assert summarize_patch(grader.diff()).files == summarize_patch(patch).files


def test_binary_files_in_the_diff_are_said(ws):
    ws.run("printf 'a\\000b\\001' > blob.bin")
    summary = summarize_patch(ws.diff())
    assert [(f.path, f.binary) for f in summary.files] == [("blob.bin", True)]
    assert not ws.apply_patch(ws.diff()).ok


def test_file_sizes_are_capped_both_ways(open_ws):
    ws = open_ws(limits=WorkspaceLimits(max_file_mb=1))
    with pytest.raises(WorkspaceError, match="over the file size limit"):
        ws.write_file("big", b"x" * (1024 * 1024 + 1))
    assert ws.run("head -c 2000000 /dev/zero > big").exit_code != 0
    assert ws.run("stat -c %s big").output.strip() == str(1024 * 1024)
    with pytest.raises(WorkspaceError, match="over the limit"):
        ws.read_file("big", max_bytes=1000)


def test_an_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="unknown workspace backend"):
        open_workspace(SandboxConfig(backend="nope"), WorkspaceSpec(image="x"))


# --- docker only: what the process backend cannot contain ------------------------------

docker_only = pytest.mark.parametrize("backend", [pytest.param("docker", marks=pytest.mark.docker)])


@docker_only
def test_the_container_is_locked_down(ws):
    result = ws.run("id -u; grep CapEff /proc/self/status; touch /etc/x 2>&1 | grep -c 'Read-only';"
                    " echo x > /tmp/t && cat /tmp/t; python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 2)'"
                    " 2>&1 | tail -1; touch /run/workspace-base/start.git/x 2>&1 | grep -c denied;"
                    " grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status | tr -s '\\t' ' '")
    lines = result.output.splitlines()
    assert lines[0] == "65534" and lines[1].split() == ["CapEff:", "0000000000000000"]
    assert lines[2] == "1" and lines[3] == "x"
    assert "Network is unreachable" in lines[4] or "unreachable" in lines[4].lower()
    assert lines[5] == "1"
    assert lines[6:8] == ["NoNewPrivs: 1", "Seccomp: 2"], result.output


@docker_only
def test_closing_removes_the_container(open_ws):
    import docker

    ws = open_ws()
    container = getattr(ws, "container_id")
    ws.close()
    client = docker.from_env()
    try:
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(container)
    finally:
        client.close()


@docker_only
def test_a_root_the_container_needs_for_itself_is_refused(open_ws):
    for root in ("/tmp", "/", "relative", "/proc/x"):
        with pytest.raises(WorkspaceError, match="root must be"):
            open_ws(root=root)


@docker_only
def test_a_fork_bomb_stops_at_the_pids_cap_and_the_next_command_answers(ws):
    ws.run("bomb() { bomb | bomb & }; bomb; sleep 3", timeout_s=10)
    result = ws.run("echo alive; ls /proc | grep -c '^[0-9]'")
    assert result.exit_code == 0 and result.output.startswith("alive"), result.output
    assert int(result.output.split()[1]) < 10  # PID 1, its sleep, this command's own


@docker_only
def test_memory_is_capped_and_the_next_command_answers(open_ws):
    ws = open_ws(limits=WorkspaceLimits(memory_mb=256, disk_mb=64, tmp_mb=32))
    result = ws.run("python3 -c 'x = bytearray(1024 ** 3); print(len(x))'")
    assert result.exit_code != 0 and "1073741824" not in result.output
    assert ws.run("echo alive").output == "alive\n"


@docker_only
def test_nothing_outside_the_folder_reaches_a_later_workspace(open_ws):
    first = open_ws()
    first.run("echo secret > /tmp/left; echo secret > left-in-folder")
    second = open_ws()
    assert second.run("cat /tmp/left").exit_code != 0
    assert "left-in-folder" not in second.list_files()
    assert getattr(first, "container_id") != getattr(second, "container_id")


@docker_only
def test_what_the_image_holds_at_the_folder_is_laid_out_without_its_history(open_ws, tmp_path):
    import docker

    client = docker.from_env()
    base = open_ws()._image
    tag = "reflexion-harness-workspace-test:held"
    (tmp_path / "Dockerfile").write_text(
        f"FROM {base}\nUSER 0\nRUN mkdir -p /srv/repo/sub && cd /srv/repo && echo held > held.txt && ln held.txt sub/hard.txt && "
        "ln -s ../held.txt sub/soft.txt && "
        "git init -q && git -c user.name=a -c user.email=a@b add -A && git -c user.name=a -c user.email=a@b commit -qm old "
        "&& git tag v1 && echo more >> held.txt && git -c user.name=a -c user.email=a@b commit -qam future\nUSER 65534\n")
    try:
        client.images.build(path=str(tmp_path), tag=tag, rm=True, network_mode="none")
        ws = open_ws(image=tag, root="/srv/repo")
        assert ws.read_file("held.txt") == b"held\nmore\n"
        assert ws.list_files() == ["README", "held.txt", "pkg/calc.py", "sub/hard.txt", "sub/soft.txt"]
        assert ws.read_file("sub/hard.txt") == b"held\nmore\n" and ws.read_file("sub/soft.txt") == b"held\nmore\n"
        result = ws.run("git log --all --format=%s; git tag")
        assert result.output.split() == ["start"], result.output
    finally:
        try:
            client.images.remove(tag, force=True)
        except docker.errors.DockerException:
            pass
        client.close()
