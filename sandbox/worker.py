"""The sandbox worker: runs one test of one program per job, in a fresh forked child.

Standard library only: it runs inside the sandbox image as PID 1 of a container, and,
for the process backend, as a plain subprocess on the host.

Protocol, one JSON object per line. At start the worker writes
``{"ready": true, "protocol": N, "pid": ..., "python": "..."}``. Each job line
``{"id", "program", "test", "timeout_s", "memory_mb", "max_output_bytes",
"max_file_mb", "pids"}`` gets one answer line
``{"id", "status", "detail", "duration_s", "output"}``.

Per job: fork a child from this clean parent; the child starts a new session, gets a
clean environment, stdin from /dev/null, stdout+stderr into a pipe, its own scratch
directory, CPU / address-space / file-size / core limits; it runs the program and then
the test in one namespace and reports through a second pipe only after the test body
ran (so exiting early never counts as passing). The parent enforces the wall-clock
timeout and the output cap, kills every leftover process, reaps, and wipes the scratch
space.
"""
from __future__ import annotations

import ast
import ctypes
import gc
import io
import json
import linecache
import math
import os
import reprlib
import resource
import select
import shutil
import signal
import stat
import sys
import tempfile
import time
import traceback
import types

PROTOCOL = 1
DETAIL_MAX = 400  # characters of a failure detail
_PROGRAM_FILE = "<program>"
_TEST_FILE = "<test>"
_REPORT_FD = 3  # the child's report pipe
_REPORT_MAX = 64 * 1024
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36

# Imported once in the parent so that forked children find them ready. Heavy
# libraries with threads (numpy's BLAS) stay out: threads do not survive fork.
_PRELOAD = (
    "abc argparse array base64 bisect calendar cmath collections collections.abc "
    "contextlib copy csv dataclasses datetime decimal difflib enum fractions functools "
    "hashlib heapq itertools json math numbers operator random re statistics string "
    "struct tempfile textwrap typing unicodedata unittest"
).split()


def _preload() -> None:
    for name in _PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass


# ---------------------------------------------------------------- in the child


def _one_line(text: str, limit: int = DETAIL_MAX) -> str:
    text = " ".join(part.strip() for part in text.strip().splitlines())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _short_repr(value: object) -> str:
    shortener = reprlib.Repr()
    shortener.maxstring = shortener.maxother = 160
    shortener.maxlist = shortener.maxtuple = shortener.maxset = shortener.maxdict = 20
    shortener.maxlong = 100
    try:
        return shortener.repr(value)
    except BaseException as exc:  # a hostile or broken __repr__
        return f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"


def _exception_line(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"{type(exc).__name__}: {exc}"
    try:
        return traceback.format_exception_only(type(exc), exc)[-1].strip()
    except BaseException:
        return type(exc).__name__


def _assertion_detail(exc: AssertionError, test_source: str) -> str:
    """The failing assert's source, with the observed left side when it is a comparison.

    Only failures pay for this: the left side is evaluated again, in the frame of the
    failing assert, after the fact (the test code runs as written).
    """
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None or last.tb_frame.f_code.co_filename != _TEST_FILE:
        return _one_line(_exception_line(exc))  # raised inside the program, not by a test
    frame = last.tb_frame
    line, col = last.tb_lineno, 0
    try:  # the raising instruction's position tells apart two asserts on one line
        position = list(frame.f_code.co_positions())[last.tb_lasti // 2]
        if position[0] is not None and position[2] is not None:
            line, col = position[0], position[2]
    except (AttributeError, IndexError):
        pass
    try:
        tree = ast.parse(test_source, _TEST_FILE)
    except SyntaxError:
        return _one_line(_exception_line(exc))
    asserts = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Assert)
        and (node.lineno, node.col_offset) <= (line, col)
        and (line, col) <= (node.end_lineno or node.lineno, node.end_col_offset or 0)
    ]
    if not asserts:
        return _one_line(_exception_line(exc))
    node = max(asserts, key=lambda n: (n.lineno, n.col_offset))
    source = _one_line(ast.get_source_segment(test_source, node) or "assert ...", DETAIL_MAX // 2)
    if isinstance(node.test, ast.Compare) and len(node.test.ops) == 1:
        try:
            left = ast.Expression(node.test.left)
            value = eval(compile(left, _TEST_FILE, "eval"), frame.f_globals, frame.f_locals)
        except BaseException as error:  # evaluating it again failed: say so, briefly
            return _one_line(f"{source}  # left side raised {type(error).__name__} when evaluated again")
        return _one_line(f"{source}  # got {_short_repr(value)}")
    message = str(exc)
    return _one_line(f"{source}  # {message}" if message else source)


def _execute(program: str, test: str) -> tuple[str, str]:
    """Run program then test in one fresh module namespace -> (status, detail)."""
    module = types.ModuleType("solution")
    sys.modules["solution"] = module
    namespace = module.__dict__
    for name, text in ((_PROGRAM_FILE, program), (_TEST_FILE, test)):
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    try:
        exec(compile(program, _PROGRAM_FILE, "exec"), namespace)
    except SystemExit as exc:
        return "error", f"the program called sys.exit({exc.code!r}) before the test ran"
    except BaseException as exc:
        return "error", _one_line(_exception_line(exc))
    try:
        code = compile(test, _TEST_FILE, "exec")
    except SyntaxError as exc:
        return "error", _one_line(f"invalid test: {_exception_line(exc)}")
    try:
        exec(code, namespace)
    except AssertionError as exc:
        return "failed", _assertion_detail(exc, test)
    except SystemExit as exc:
        return "error", f"the code called sys.exit({exc.code!r}) before the test finished"
    except BaseException as exc:
        return "error", _one_line(_exception_line(exc))
    return "passed", ""


def _apply_limits(job: dict) -> None:
    mb = 1024 * 1024
    cpu = math.ceil(float(job["timeout_s"])) + 1
    limits = [
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_AS, int(job["memory_mb"]) * mb, int(job["memory_mb"]) * mb),
        (resource.RLIMIT_FSIZE, int(job["max_file_mb"]) * mb, int(job["max_file_mb"]) * mb),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if job.get("nproc"):
        limits.append((resource.RLIMIT_NPROC, int(job["nproc"]), int(job["nproc"])))
    for which, soft, hard in limits:
        _, old_hard = resource.getrlimit(which)
        if old_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, old_hard), min(hard, old_hard)
        resource.setrlimit(which, (soft, hard))


def _prepare_children(scratch: str) -> tuple:
    """Once, in the parent: everything the children share, so each fork starts ready.

    The parent's own environment becomes the children's clean one (the parent needs
    none), and the stdio objects a child will use are made here, unused by the parent.
    """
    os.environ.clear()
    os.environ.update(
        PATH="/usr/local/bin:/usr/bin:/bin",
        HOME=scratch,
        TMPDIR=scratch,
        LANG="C.UTF-8",
        PYTHONDONTWRITEBYTECODE="1",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
    )
    tempfile.tempdir = None  # recomputed from TMPDIR
    sys.argv = [""]
    sys.path.insert(0, scratch)
    # Line-buffered like a terminal, so stdout and stderr keep their order.
    return (
        open(0, "r", closefd=False),
        io.TextIOWrapper(open(1, "wb", closefd=False), encoding="utf-8",
                         errors="backslashreplace", line_buffering=True),
        io.TextIOWrapper(open(2, "wb", closefd=False), encoding="utf-8",
                         errors="backslashreplace", line_buffering=True),
    )


def _child(job: dict, token: str, out_w: int, report_w: int, scratch: str, stdio: tuple) -> None:
    """In the forked child: isolate, limit, run, report; never returns."""
    try:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(out_w, 2)
        os.dup2(report_w, _REPORT_FD)
        os.closerange(_REPORT_FD + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        os.chdir(scratch)
        _apply_limits(job)
        sys.stdin, sys.stdout, sys.stderr = stdio
        signal.signal(signal.SIGINT, signal.default_int_handler)
    except BaseException:
        os._exit(70)
    status, detail = _execute(job["program"], job["test"])
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    report = {"token": token, "pid": os.getpid(), "status": status, "detail": detail}
    try:
        os.write(_REPORT_FD, (json.dumps(report) + "\n").encode())
    except BaseException:
        os._exit(71)
    os._exit(0)


# ---------------------------------------------------------------- in the parent


def _set_nonblocking(fd: int) -> None:
    os.set_blocking(fd, False)


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def _kill_leftovers(child: int, is_init: bool) -> None:
    """Kill and reap every process the test left behind (daemons, forks, setsid)."""
    try:
        os.killpg(child, signal.SIGKILL)
    except OSError:
        pass
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # no child left: every descendant was reparented to us and reaped
        if pid:
            continue
        # As PID 1 of a container everything else is the test's; on the host we are a
        # child subreaper, so orphans of the test become our children.
        if is_init:
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
        else:
            for pid in _children_of(os.getpid()):
                for kill in (os.killpg, os.kill):
                    try:
                        kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
        time.sleep(0.001)


def _wipe(directory: str, keep: str = "") -> None:
    """Remove everything inside directory but `keep`, even what the test made unreadable."""

    def force_remove(path: str, depth: int = 0) -> None:
        """Slow path: make each directory writable before emptying it."""
        try:
            if os.path.isdir(path) and not os.path.islink(path) and depth < 100:
                os.chmod(path, stat.S_IRWXU)
                for name in os.listdir(path):
                    force_remove(os.path.join(path, name), depth + 1)
                os.rmdir(path)
            else:
                os.unlink(path)
        except OSError:
            pass

    def retry(function, path, _exc_info) -> None:
        try:
            os.chmod(os.path.dirname(path), stat.S_IRWXU)
        except OSError:
            pass
        force_remove(path)

    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for name in entries:
        path = os.path.join(directory, name)
        if name == keep and os.path.isdir(path) and not os.path.islink(path):
            _wipe(path)  # keep the directory, empty it
        elif os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, onerror=retry)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


class _Worker:
    def __init__(self, scratch_root: str) -> None:
        self.scratch_root = scratch_root
        self.is_init = os.getpid() == 1
        self.uid_process_base = 0
        if not self.is_init and os.geteuid() != 0:
            self.uid_process_base = self._count_own_processes()
        self._stdio = _prepare_children(os.path.join(scratch_root, "test"))

    def _scratch(self) -> str:
        """The test's empty working directory, kept between tests (emptied after each)."""
        scratch = os.path.join(self.scratch_root, "test")
        try:
            # lstat: a test may have replaced it by a symlink to somewhere else
            if stat.S_ISDIR(os.lstat(scratch).st_mode):
                os.chmod(scratch, 0o700)  # a test may have made it unusable
                if not os.listdir(scratch):
                    return scratch
        except OSError:
            pass
        os.makedirs(self.scratch_root, exist_ok=True)  # a test may have deleted it
        _wipe(self.scratch_root)
        os.mkdir(scratch, 0o700)
        return scratch

    @staticmethod
    def _count_own_processes() -> int:
        uid, count = os.getuid(), 0
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    count += os.stat(f"/proc/{entry}").st_uid == uid
                except OSError:
                    pass
        return count

    def run(self, job: dict) -> dict:
        limits_job = dict(job)
        # RLIMIT_NPROC counts every process of the uid on the machine: in a container
        # the pids cgroup caps processes instead; as root it is ignored anyway.
        if self.uid_process_base:
            limits_job["nproc"] = self.uid_process_base + int(job.get("pids", 64))
        timeout = float(job["timeout_s"])
        cap = int(job["max_output_bytes"])
        scratch = self._scratch()
        token = os.urandom(8).hex()
        out_r, out_w = os.pipe()
        report_r, report_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _child(limits_job, token, out_w, report_w, scratch, self._stdio)
        os.close(out_w)
        os.close(report_w)
        try:
            result = self._watch(pid, out_r, report_r, token, timeout, cap, started)
        except BaseException:
            _kill_leftovers(pid, self.is_init)
            raise
        finally:
            os.close(out_r)
            os.close(report_r)
            _wipe(self.scratch_root, keep="test")
            if self.is_init:
                _wipe("/dev/shm")
        result["id"] = job.get("id")
        return result

    def _watch(self, pid, out_r, report_r, token, timeout, cap, started) -> dict:
        output = bytearray()
        dropped = 0
        report = bytearray()
        status_code = None
        timed_out = False
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = None
        _set_nonblocking(out_r)
        _set_nonblocking(report_r)
        open_fds = [out_r, report_r]
        deadline = started + timeout

        def drain(fd: int) -> bool:
            """Read what is there; False at end of file."""
            nonlocal dropped
            while True:
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    return True
                except OSError:
                    return False
                if not data:
                    return False
                if fd == out_r:
                    room = cap - len(output)
                    if room > 0:
                        output.extend(data[:room])
                    dropped += max(0, len(data) - max(room, 0))
                elif len(report) < _REPORT_MAX:
                    report.extend(data)

        try:
            while status_code is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                watched = open_fds + ([pidfd] if pidfd is not None else [])
                wait = remaining if pidfd is not None else min(remaining, 0.005)
                readable, _, _ = select.select(watched, [], [], wait)
                for fd in readable:
                    if fd in open_fds and not drain(fd):
                        open_fds.remove(fd)
                if pidfd is None or pidfd in readable:
                    done, code = os.waitpid(pid, os.WNOHANG)
                    if done:
                        status_code = code
        finally:
            if pidfd is not None:
                os.close(pidfd)
        duration = time.monotonic() - started
        if timed_out:
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            _, status_code = os.waitpid(pid, 0)
        # Leftover writers may still hold the pipes: kill them, then read the rest.
        _kill_leftovers(pid, self.is_init)
        for fd in open_fds:
            drain(fd)
        status, detail = self._verdict(status_code, timed_out, timeout, report, token, pid)
        text = output.decode("utf-8", errors="replace")
        if dropped:
            text += f"\n[... {dropped} more bytes of output dropped]"
        return {"status": status, "detail": detail, "duration_s": round(duration, 6), "output": text}

    @staticmethod
    def _verdict(code, timed_out, timeout, report, token, pid) -> tuple[str, str]:
        if timed_out:
            return "timeout", f"timed out after {timeout:g} s (wall clock)"
        for line in bytes(report).splitlines():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if (
                isinstance(message, dict)
                and message.get("token") == token
                and message.get("pid") == pid
                and message.get("status") in ("passed", "failed", "error")
            ):
                return message["status"], str(message.get("detail", ""))[:DETAIL_MAX]
        if os.WIFSIGNALED(code):
            number = os.WTERMSIG(code)
            if number == signal.SIGXCPU:
                return "timeout", "CPU time limit exceeded"
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = f"signal {number}"
            hint = " (out of memory?)" if number == signal.SIGKILL else ""
            return "error", f"the process was killed by {name}{hint} before the test finished"
        exit_code = os.WEXITSTATUS(code)
        return "error", f"the process exited with status {exit_code} before the test finished"


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    scratch_root = "/tmp"
    if "--scratch-root" in args:
        scratch_root = args[args.index("--scratch-root") + 1]
    # Non-dumpable: a test cannot open /proc/<worker>/fd/* to forge protocol lines.
    _prctl(_PR_SET_DUMPABLE, 0)
    if os.getpid() != 1:
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # orphans of a test come back to us
    os.chdir(scratch_root)
    _preload()
    worker = _Worker(scratch_root)
    _wipe(scratch_root)
    gc.collect()
    gc.freeze()  # keep the parent's objects out of the children's copy-on-write
    out = sys.stdout.buffer

    def send(message: dict) -> None:
        out.write(json.dumps(message).encode() + b"\n")
        out.flush()

    send({"ready": True, "protocol": PROTOCOL, "pid": os.getpid(), "python": sys.version.split()[0]})
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        job_id = None
        try:
            job = json.loads(line)
            job_id = job.get("id")
            send(worker.run(job))
        except Exception as exc:  # a bad job must not take the worker down
            send({"id": job_id, "status": "error", "detail": f"sandbox worker: {_exception_line(exc)}",
                  "duration_s": 0.0, "output": ""})
    return 0


if __name__ == "__main__":
    sys.exit(main())
