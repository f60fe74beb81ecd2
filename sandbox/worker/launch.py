"""A blank child that runs a program of another language (role "exec") or a compiler
(role "compile") instead of Python code: it writes the job's files into its scratch
folder, gives every signal its default action, and replaces itself with the program
(`execve`), or starts each compile step in turn (`posix_spawn`, which makes no pipe) and
waits for it.

What the exec'd program inherits from the blank child: the job's descriptors only, its
limits, the seccomp filter (confine.py) and the Landlock domain (landlock.py), both of
which no exec can shed, and the zygote's namespaces (namespace.py). Nothing of Python's
memory survives the exec.
"""
from __future__ import annotations

import os
import signal

import _signal

from .child import IGNORED_SIGNALS

FILE_MODE = 0o600
EXEC_MODE = 0o700
EXIT_CANNOT_RUN = 127  # as a shell says it: the program could not be started


def _write_files(files: dict) -> None:
    """Each file of the job into the current folder: {name: (bytes, executable)}."""
    for name, (data, executable) in files.items():
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     EXEC_MODE if executable else FILE_MODE)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)


def _default_signals() -> None:
    """Every signal at its default action and none blocked: an ignored signal would stay
    ignored across exec (and SIGPIPE ignored is not how a program starts)."""
    for number in IGNORED_SIGNALS:
        try:
            _signal.signal(number, _signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    _signal.pthread_sigmask(_signal.SIG_SETMASK, [])


def _say(text: str) -> None:
    try:
        os.write(2, text.encode("utf-8", "replace") + b"\n")
    except OSError:
        pass


def _resolved(program: str, env: dict) -> str:
    if "/" in program:
        return program
    for folder in env.get("PATH", "/usr/bin:/bin").split(":"):
        path = os.path.join(folder, program)
        if os.access(path, os.X_OK):
            return path
    return program


def exec_main(payload: dict) -> None:
    """Write the files, then become the program; never returns."""
    try:
        _write_files(payload["files"])
        env = dict(payload["env"])
        argv = list(payload["argv"])
        spares = list(payload.get("spare_fds") or ())
        if spares:  # image/setup/harness_pipes.c hands these out for pipe() and pipe2()
            for fd in spares:
                os.set_inheritable(fd, True)
            env["HARNESS_PIPES"] = ";".join(f"{r},{w}" for r, w in zip(spares[0::2], spares[1::2]))
        _default_signals()
        os.execve(_resolved(argv[0], env), argv, env)
    except OSError as exc:
        _say(f"the program could not be started: {exc.strerror or exc}")
    except BaseException as exc:  # a malformed payload: the host's, never the program's
        _say(f"the program could not be started: {type(exc).__name__}")
    os._exit(EXIT_CANNOT_RUN)


def compile_main(payload: dict) -> None:
    """Write the files, run each step until one fails; exit as that step ended (with its
    status, or killed by its signal); never returns."""
    try:
        _write_files(payload["files"])
        env = dict(payload["env"])
        every = set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP}
        for argv in payload["steps"]:
            pid = os.posix_spawn(_resolved(argv[0], env), list(argv), env, setsigdef=every, setsigmask=())
            _, status = os.waitpid(pid, 0)
            if os.WIFSIGNALED(status):
                number = os.WTERMSIG(status)
                _signal.signal(number, _signal.SIG_DFL)
                _signal.pthread_sigmask(_signal.SIG_UNBLOCK, [number])
                os.kill(os.getpid(), number)
                os._exit(128 + number)
            if os.waitstatus_to_exitcode(status) != 0:
                os._exit(os.waitstatus_to_exitcode(status) or 1)
    except OSError as exc:
        _say(f"the compiler could not be started: {exc.strerror or exc}")
        os._exit(EXIT_CANNOT_RUN)
    except BaseException as exc:
        _say(f"the compiler could not be started: {type(exc).__name__}")
        os._exit(EXIT_CANNOT_RUN)
    os._exit(0)
