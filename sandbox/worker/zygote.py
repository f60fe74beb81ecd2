"""The zygote (Z): forked by W before the first job, holds no job, ever; forks blank
children that become P or T. Also W's handle on it (`Zygote`).
"""
from __future__ import annotations

import _signal
import gc
import io
import marshal
import os
import select
import signal
import socket
import struct
import sys
import time
import types

from .child import enter_child, flush_stdio
from .confine import confine
from .judge import RELEASE_FD, judge_main
from .launch import compile_main, exec_main
from .landlock import build_ruleset, restrict
from .namespace import cover_kernel_views
from .procs import PR_SET_PDEATHSIG, open_fds, prctl, proc_stat
from .program import program_main
from .stdio import stdio_main
from .protocol import CALLS_FD, CHANNEL_FD, REPORT_FD, RESULTS_FD, read_exact

ZYGOTE_TIMEOUT_S = 10.0


def _stdio_objects() -> tuple:
    """The stdio objects a forked child will use (made once, before any fork)."""
    return (
        open(0, "r", closefd=False),
        io.TextIOWrapper(open(1, "wb", closefd=False), encoding="utf-8",
                         errors="backslashreplace", line_buffering=True),
        io.TextIOWrapper(open(2, "wb", closefd=False), encoding="utf-8",
                         errors="backslashreplace", line_buffering=True),
    )


def _recv_job(sock: socket.socket) -> tuple[dict, list[int]] | None:
    """A job for a blank child: a 4-byte length with the fds, then that many bytes of
    the payload in marshal's format. W made those bytes (from the host's job, strings and
    numbers), so they are decoded as written; nothing a program or a test wrote is ever
    read this way. marshal, not JSON: in a freshly forked child, json.loads of a 2 KB
    payload touched ~90 pages shared with the zygote (each first write copies one:
    ~0.3 ms) where marshal.loads touches ~15."""
    head, fds, _, _ = socket.recv_fds(sock, 4, 32)  # a runtime's spare pipes too (native.py)
    if not head:
        return None
    while len(head) < 4:
        more = sock.recv(4 - len(head))
        if not more:
            return None
        head += more
    (size,) = struct.unpack(">I", head)
    body = read_exact(sock.fileno(), size)
    if body is None:
        return None
    try:
        payload = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return None
    return (payload, list(fds)) if type(payload) is dict else None


# The zygote's messages to and from W: a kind, a pid and a wait status, in the
# machine's own layout (both ends are this code; JSON cost W ~0.3 ms a job).
_MESSAGE = struct.Struct("=cii")
FORK, BLANK, ENDED = b"f", b"b", b"e"
_FORK = _MESSAGE.pack(FORK, 0, 0)


def _worker_module_names() -> tuple[str, ...]:
    """The names under which the worker's own modules are imported (in the zygote,
    once: every one of them is imported before it forks)."""
    package = __name__.rpartition(".")[0]
    return tuple(name for name in sys.modules if name == package or name.startswith(package + "."))


def _forget_worker_modules() -> list:
    """No import in P or T finds the worker's modules: the code already loaded keeps
    running, but the program cannot import (or be handed) them by name, and `__main__`
    is an empty module, as in a process that runs no script.

    Done once, in the zygote before it forks (it imports nothing by name afterwards):
    done in each child, the removals wrote to the reference count of every worker
    module and to the table of `sys.modules`, ~30 pages a process copied from the
    zygote (COW), and walking `sys.modules` for the names ~150 more. The modules come
    back to the caller, which keeps them to its end (freed, they would be written to
    again)."""
    kept = [sys.modules.pop(name, None) for name in _worker_module_names()]
    kept.append(sys.modules.get("__main__"))
    sys.modules["__main__"] = types.ModuleType("__main__")
    return kept


def _blank_child(sock: socket.socket, scratch: str, stdio: tuple, modules_at_fork: int,
                 ruleset: int | None) -> None:
    """A forked child that waits for its job, then becomes P or T; never returns.

    Its parent, the zygote, has never held a job: the child's memory holds no
    program and no test but its own. Job-independent set-up happens here, while the
    child waits, off the job's critical path.
    """
    if ruleset is None:  # on a host: no controlling terminal (the harness's) for the job
        os.setsid()
    else:  # in a container (no terminal): a group to kill; the filter refuses setsid
        os.setpgid(0, 0)
        # Before any job's code, while the child waits (raises: the child dies). Its own
        # Landlock domain, nested in the zygote's filter: a job cannot ptrace the zygote.
        restrict(ruleset)
        os.close(ruleset)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    try:
        received = _recv_job(sock)
    except (OSError, ValueError):
        received = None
    if received is None:
        os._exit(0)
    payload, fds = received
    # Should the zygote have imported a module since it forgot its own (it does not),
    # the names are looked for again here.
    kept = _forget_worker_modules() if len(sys.modules) != modules_at_fork else []  # noqa: F841
    role = payload.get("role")
    # "stdio": an io job's program, whose stdin, stdout and stderr are W's pipes. The
    # test of a blind job has a fourth descriptor: W's word that the program is gone.
    # "exec_io", "exec_call", "compile": a program of another language, or its compiler
    # (launch.py): an io program on 0/1/2; a function task's driver reading the calls on 3
    # and writing the results on 4, its output on 1 and 2; a compiler's messages on 1 and 2.
    targets = {"program": [CHANNEL_FD, 1], "stdio": [0, 1, 2], "exec_io": [0, 1, 2], "exec_call": [CALLS_FD, 1, RESULTS_FD],
               "compile": [1]}.get(role, [CHANNEL_FD, 1, REPORT_FD, RELEASE_FD])
    targets = targets + list(payload.get("spare_fds") or ())  # a runtime's spare pipes (native.py)
    runs_program = role in ("program", "stdio", "exec_io", "exec_call", "compile")
    try:
        sock.close()
        fd_map = dict(zip(targets, fds))
        fd_map.setdefault(2, fd_map[1])
        # The program may import modules it wrote; the test only the installed ones.
        if runs_program:
            sys.path.insert(0, scratch)
        enter_child(fd_map, payload, scratch, stdio, scratch if runs_program else "/nonexistent",
                    "program" if runs_program else role)
    except BaseException:
        os._exit(70)
    if role == "stdio":
        stdio_main(payload)  # never returns
    if role in ("exec_io", "exec_call"):
        exec_main(payload)  # never returns
    if role == "compile":
        compile_main(payload)  # never returns
    if role == "program":
        try:
            program_main(payload)
        except BaseException:
            pass
        flush_stdio()
        os._exit(0)
    judge_main(payload)


def _zygote_main(control: socket.socket, scratch: str, readable: list[str] | None, for_compiling: bool) -> None:
    """Fork blank children on request; report each child's end. Holds no job, ever.

    Messages on `control` (SOCK_SEQPACKET), each one `_MESSAGE`: in, FORK with the
    child's end of a socket W made (the zygote makes none: its filter refuses sockets
    and pipes, as every job's); out, BLANK with the child's pid, and ENDED with the pid
    and wait status of a child that ended.
    """
    stdio = _stdio_objects()
    wake_r, wake_w = os.pipe()  # SIGCHLD writes here: a child ended
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    # Built once here (an open per allowed path), never in a child. -1 when it cannot be
    # built: each child's restrict() then fails and no job runs (the host checks first).
    ruleset = None
    if readable is not None:
        # First, while /proc is still there to write the user namespace's maps. Raises:
        # no zygote, no job (the warm-up tried it first: docker_backend).
        cover_kernel_views()
        try:
            ruleset = build_ruleset(readable)
        except OSError:
            ruleset = -1
        # The filter once, here: every child inherits it with the fork (installing it in
        # each child cost ~0.15 ms of CPU a process). Raises: no zygote, no job.
        confine(for_compiling)
    kept = _forget_worker_modules()  # noqa: F841 (held while the zygote lives)
    modules_at_fork = len(sys.modules)
    gc.collect()
    gc.freeze()
    while True:
        try:
            ready, _, _ = select.select([control, wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in ready:
            try:
                os.read(wake_r, 4096)
            except BlockingIOError:
                pass
            while True:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                control.send(_MESSAGE.pack(ENDED, pid, status))
        if control not in ready:
            continue
        try:
            request, fds, _, _ = socket.recv_fds(control, 4096, 1)
        except OSError:
            os._exit(0)
        if not request:
            os._exit(0)  # the worker is gone
        if not fds:
            continue  # a FORK comes with the child's socket
        child_end = socket.socket(fileno=fds[0])
        pid = os.fork()
        if pid == 0:
            try:
                control.close()
                _signal.set_wakeup_fd(-1)  # plain ints, as in child.py
                os.close(wake_r)
                os.close(wake_w)
                _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                _blank_child(child_end, scratch, stdio, modules_at_fork, ruleset)
            finally:
                os._exit(70)
        child_end.close()
        control.send(_MESSAGE.pack(BLANK, pid, 0))


class ZygoteGone(RuntimeError):
    """The zygote died (a job's program can kill it): this worker cannot go on."""


class Zygote:
    """The worker's handle on the zygote and the blank children it keeps ready."""

    def __init__(self, scratch: str, readable: list[str] | None = None, for_compiling: bool = False) -> None:
        """`readable`: confine every job (confine.py's filter, and Landlock letting it
        read these paths and nothing else of the image); None on a host. `for_compiling`:
        a compile worker's zygote (confine.py's variant for trusted compilers)."""
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.pid = os.fork()
        if self.pid == 0:
            try:
                parent_end.close()
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):  # let go of the host's pipes
                    os.dup2(devnull, fd)
                keep = {child_end.fileno(), 0, 1, 2}
                for fd in open_fds():
                    if fd not in keep:
                        try:
                            os.close(fd)
                        except OSError:
                            pass
                _zygote_main(child_end, scratch, readable, for_compiling)
            finally:
                os._exit(0)
        child_end.close()
        self.sock = parent_end
        self.blanks: list[tuple[int, socket.socket]] = []
        self.unclaimed: list[socket.socket] = []  # W's ends, for the forks not yet announced
        self.ended: dict[int, int] = {}  # pid -> wait status
        self.asked = 0  # blank children asked for and not yet announced
        self.forks = 0  # blank children asked for, ever

    def ask(self, count: int) -> None:
        for _ in range(count):
            # The child's socket is W's to make: the zygote's filter refuses sockets.
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                socket.send_fds(self.sock, [_FORK], [theirs.fileno()])
            except OSError as exc:  # it died with requests unread: ECONNRESET or EPIPE
                mine.close()
                raise ZygoteGone(f"the zygote is gone ({exc.strerror})") from None
            finally:
                theirs.close()
            self.unclaimed.append(mine)
            self.asked += 1
            self.forks += 1

    def _receive(self, timeout: float) -> bool:
        """Take one message if one comes within `timeout`; False if none did."""
        if not select.select([self.sock], [], [], max(0.0, timeout))[0]:
            return False
        try:
            data, fds, _, _ = socket.recv_fds(self.sock, 4096, 1)
        except OSError as exc:  # it died with our requests unread: ECONNRESET
            raise ZygoteGone(f"the zygote is gone ({exc.strerror})") from None
        if not data:
            raise ZygoteGone("the zygote is gone")
        if len(data) != _MESSAGE.size:
            raise ZygoteGone(f"the zygote said something unknown ({len(data)} bytes)")
        for fd in fds:  # the zygote sends none
            os.close(fd)
        kind, pid, status = _MESSAGE.unpack(data)
        if kind == BLANK and self.unclaimed:  # announced in the order they were asked for
            self.blanks.append((pid, self.unclaimed.pop(0)))
            self.asked -= 1
        elif kind == ENDED:
            self.ended[pid] = status
        return True

    def pump(self) -> None:
        """Take every message already there."""
        while self._receive(0):
            pass

    def take_blank(self) -> tuple[int, socket.socket]:
        """A blank child that is alive and running (the last job's program may have
        stopped or killed the ones kept ready: it can do nothing else to them)."""
        deadline = time.monotonic() + ZYGOTE_TIMEOUT_S
        while True:
            if not self.blanks and not self.asked:
                self.ask(1)
            while not self.blanks:
                if not self._receive(deadline - time.monotonic()):
                    raise RuntimeError("the zygote did not fork in time")
            pid, sock = self.blanks.pop(0)
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass
            state = proc_stat(pid)
            if state is not None and state[0] not in ("Z", "X"):
                return pid, sock
            sock.close()

    def known_blanks(self) -> set[int]:
        """The blank children it keeps ready, once every fork asked for is announced
        (a child forked but not yet announced would look like nobody's)."""
        deadline = time.monotonic() + ZYGOTE_TIMEOUT_S
        while self.asked > 0:
            self._resume()
            if not self._receive(min(0.05, deadline - time.monotonic())) and time.monotonic() > deadline:
                raise RuntimeError("the zygote did not announce the children it forked")
        return {pid for pid, _ in self.blanks}

    def _resume(self) -> None:
        """A job's program may have stopped it; it must answer now."""
        try:
            os.kill(self.pid, signal.SIGCONT)
        except OSError:
            pass

    def status_of(self, pid: int, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        while pid not in self.ended:
            self._resume()
            if not self._receive(min(0.05, deadline - time.monotonic())) and time.monotonic() > deadline:
                return None
        return self.ended.pop(pid)

    def alive(self) -> bool:
        try:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return False
        return pid == 0


def give_job(child: tuple[int, socket.socket], payload: dict, fds: list[int]) -> int:
    pid, sock = child
    body = marshal.dumps(payload)
    try:
        socket.send_fds(sock, [struct.pack(">I", len(body))], fds)
        sock.sendall(body)
    finally:
        sock.close()
    return pid
