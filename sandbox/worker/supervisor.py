"""W, the worker (PID 1 of its container): talks to the host, hands each job to two blank
children, watches them, answers, then restores the clean state. Runs no job's code.
"""
from __future__ import annotations

import ctypes
import gc
import json
import os
import select
import signal
import socket
import sys
import tempfile
import time

from .child import IGNORED_SIGNALS
from .io_job import run_io
from .native import artifacts_held, run_call, run_compile
from .judge import RELEASED
from .landlock import readable_paths
from .procs import IPC_RMID, Capped, PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE, alive, children_of, open_fds, pidfd, prctl, settings, sysv_ids
from .protocol import DETAIL_MAX, PROTOCOL, REPORT_MAX
from .scratch import reset_metadata, wipe
from .stock import KITS_DEFAULT, Kit, Stock
from .protocol import SPARE_FD_BASE
from .traces import Allowance, Traces
from .text import exception_line, one_line
from .zygote import ZYGOTE_TIMEOUT_S, Zygote, ZygoteGone, give_job

_CLEANUP_TIMEOUT_S = 10.0
_WIPE_TIMEOUT_S = 5.0
# Imported once in the worker so that every forked process finds them ready. Heavy
# libraries with threads (numpy's BLAS) stay out: threads do not survive fork.
_PRELOAD = (
    "abc argparse array base64 bisect calendar cmath collections collections.abc "
    "contextlib copy csv dataclasses datetime decimal difflib enum fractions functools "
    "hashlib heapq itertools json math numbers operator random re statistics string "
    "struct tempfile textwrap typing unicodedata unittest"
).split()


def preload() -> None:
    for name in _PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass


class NotRun(Exception):
    """The worker cannot run this job as it should; the host reruns it elsewhere.

    `during`: the job's processes had started (the zygote died under them), so its
    program may be the cause; else the worker declined the job before it ran, which no
    program of this job can have caused."""

    def __init__(self, reason: str, during: bool = False) -> None:
        super().__init__(reason)
        self.during = during


class _Worker:
    def __init__(self, scratch_root: str, kits: int = KITS_DEFAULT, for_compiling: bool = False,
                 spare_pipes: int = 0) -> None:
        self.scratch_root = scratch_root
        # A compile worker (`--compile`): runs only compile jobs (trusted compilers on a
        # program's sources, no test ever), under confine.py's variant that lets them make
        # pipes; what they move of the container's counters carries nothing but sources.
        self.for_compiling = for_compiling
        self.scratch = os.path.join(scratch_root, "test")
        self.is_init = os.getpid() == 1
        self.uid_process_base = 0
        if not self.is_init and os.geteuid() != 0:
            self.uid_process_base = self._count_own_processes()
        _clean_environment(self.scratch)
        os.makedirs(self.scratch, mode=0o700, exist_ok=True)
        self.settings = settings(0)  # the zygote and the blank children inherit them
        # In a container every blank child installs confine.py's filter (on a host the
        # process backend isolates nothing anyway, and the counters it guards are
        # moved by everything else that runs there).
        # What a job may read (Landlock), computed here once after the same imports as
        # the page-cache warm-up's and given to the zygote; the greeting says it, so the
        # host can check it is the list the warm-up read (else some allowed file could be
        # cold: a page-cache bit).
        self.readable = readable_paths() if self.is_init else None
        self.zygote = Zygote(self.scratch, readable=self.readable, for_compiling=for_compiling)
        self.zygote.ask(2)  # the first job's two processes
        # Every job's descriptors, made now in a container (stock.py: their inode numbers
        # then say nothing of what earlier jobs did), after the zygote is forked and
        # before the counters' baseline.
        self.stock = Stock(kits if self.is_init else None, spare_pipes)
        self.traces = None  # the container's counters (on a host they are the machine's)
        if self.is_init:
            self.zygote.known_blanks()
            self.traces = Traces(self.scratch, self.zygote.forks)
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._ended_job: list[int] = []  # pidfds (or pids) of the last job's P and T
        self._job_pids: tuple[int, ...] = ()  # the job's own processes (its blank children)
        self._open_ends: set[int] = set()  # W's ends of a native job's pipes (native.py)
        # What the last job's own runtime may move of the container's counters (traces.py).
        self._allowance = Allowance(None, None) if for_compiling else Allowance()
        self.dirty = ""  # why the state could not be restored after the last job
        self._sysv_left = False  # SysV objects were found after the last job (and removed)

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

    # --- one job

    def run(self, job: dict) -> dict:
        limits = {key: job[key] for key in ("timeout_s", "memory_mb", "max_file_mb")}
        # RLIMIT_NPROC counts every process of the uid on the machine: in a container
        # the pids cgroup caps processes instead; as root it is ignored anyway.
        if self.uid_process_base:
            limits["nproc"] = self.uid_process_base + int(job.get("pids", 64))
        timeout = float(job["timeout_s"])
        cap = int(job["max_output_bytes"])
        token = os.urandom(8).hex()
        # Verdict-blind (hidden grading; the host says so for every job, blind unless it
        # says otherwise): nothing a job's process can observe while it lives depends on
        # whether the program's answers are right (README, "Verdict-blind grading").
        blind = job.get("blind", True) is not False
        if self.dirty:
            raise NotRun(self.dirty)
        if not self.zygote.alive():  # killed from outside since the last job
            raise NotRun("the zygote is gone")
        try:  # a test's leftovers may have stopped it before they were killed
            os.kill(self.zygote.pid, signal.SIGCONT)
        except OSError:
            pass
        kind = job.get("kind")
        if self.for_compiling != (kind == "compile"):
            raise NotRun("a compile worker runs compile jobs only, and only a compile worker runs them")
        if kind == "compile":  # another language's compiler: native.py
            return dict(run_compile(self, job, limits, NotRun), id=job.get("id"))
        if "exec" in job and not artifacts_held(job):  # a fresh worker gets the artifact whole
            raise NotRun("the job names a compiled program this worker does not hold")
        if "exec" in job:  # a program of another language: its file and its own threads
            self._allowance = Allowance(pids=int(job["exec"].get("threads", 0)), files=len(job["exec"]["files"]))
        else:
            self._allowance = Allowance()
        if kind == "call":  # a function test on another language's driver: native.py
            return dict(run_call(self, job, limits, NotRun, blind), id=job.get("id"))
        if kind == "io":  # a whole program on stdin/stdout: io_job.py
            return dict(run_io(self, job, limits, NotRun, blind), id=job.get("id"))
        try:
            self.zygote.pump()
            self.zygote.ended.clear()  # earlier jobs' processes
            program_child, test_child = self.zygote.take_blank(), self.zygote.take_blank()
        except RuntimeError as exc:
            raise NotRun(str(exc)) from None
        try:
            self.zygote.ask(2)  # the next job's, forked while this one runs
        except ZygoteGone:
            pass  # noticed again below, or by the next job, which declines
        kit = self.take_kit()
        kit.close_spares()
        channel_t, channel_p = kit.sockets
        (out_r, out_w), (report_r, report_w), (release_r, release_w) = kit.pipes
        if not blind:  # T waits on the release pipe between its phases: a blind job's only
            os.close(release_r)
            os.close(release_w)
            release_r = release_w = -1
        test_fds = [channel_t.fileno(), out_w, report_w] + ([release_r] if blind else [])
        started = time.monotonic()
        try:
            p_pid = give_job(program_child, dict(limits, role="program", program=job["program"]),
                              [channel_p.fileno(), out_w])
            t_pid = give_job(test_child, dict(limits, role="test", test=job["test"],
                                               prepared=job.get("prepared"), prelude=job.get("prelude") or "",
                                               entry_point=job.get("entry_point"), token=token, blind=blind),
                              test_fds)
        except OSError as exc:  # a blank child died before its job: with its zygote
            for fd in (out_r, report_r, release_w):
                if fd >= 0:
                    os.close(fd)
            raise NotRun(f"a blank child died before its job ({exc.strerror})") from None
        finally:
            channel_t.close()
            channel_p.close()
            for fd in (out_w, report_w, release_r):
                if fd >= 0:
                    os.close(fd)
        self._ended_job = [pidfd(p_pid), pidfd(t_pid)]
        self._job_pids = (p_pid, t_pid)
        try:
            result = self._watch(p_pid, t_pid, out_r, report_r, release_w, token, timeout, cap, started)
        except ZygoteGone as exc:
            # The zygote died during the job (killed by its program, or by an earlier
            # job's before it could be seen): its children die with it, so the verdict
            # is unknown. A fresh worker runs the job again.
            raise NotRun(str(exc), during=True) from None
        finally:
            for fd in (out_r, report_r, release_w):
                if fd >= 0:
                    os.close(fd)
        result["id"] = job.get("id")
        return result

    def take_kit(self) -> Kit:
        kit = self.stock.take()
        if kit is None:
            raise NotRun("the worker ran as many jobs as it made descriptors for")
        return kit

    def spares_for(self, kit: Kit, job: dict) -> tuple[list[int], dict]:
        """The kit's spare pipes for a job whose runtime asks for them (`exec.spare_pipes`):
        their ends as descriptors to give, and what the child is told (SPARE_FD_BASE on);
        else none (and the kit's spares are closed)."""
        if not (job.get("exec") or {}).get("spare_pipes") or not kit.spares:
            kit.close_spares()
            return [], {}
        fds = [end for pair in kit.spares for end in pair]
        return fds, {"spare_fds": list(range(SPARE_FD_BASE, SPARE_FD_BASE + len(fds)))}

    def after(self) -> None:
        """Between jobs, once the answer is sent: restore the clean state. A failure
        retires the worker: it declines the next job, which the host runs elsewhere."""
        self.dirty = self._clean_up()

    def _watch(self, p_pid, t_pid, out_r, report_r, release_w, token, timeout, cap, started) -> dict:
        output, report = Capped(cap), Capped(REPORT_MAX)
        pipes = {out_r: output, report_r: report}
        deadline = started + timeout
        timed_out = False
        os.set_blocking(out_r, False)
        os.set_blocking(report_r, False)
        open_fds = [out_r, report_r]
        waiting = release_w >= 0  # blind: T will say that its calls are done, then wait
        released = False

        # The test is over when its report pipe closes (the judge exited) or the zygote
        # says the judge ended (its leftovers may hold the pipe open).
        zygote = self.zygote
        while report_r in open_fds and t_pid not in zygote.ended:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            readable, _, _ = select.select(open_fds + [zygote.sock], [], [], remaining)
            for fd in readable:
                if fd is zygote.sock:
                    zygote.pump()
                elif not pipes[fd].drain(fd):
                    open_fds.remove(fd)
            if released and report.data.count(b"\n") >= 2:
                break  # T's verdict, its last word: no need to wait for T to be torn down
            if waiting and _calls_done(report.data, token, t_pid):
                # The second phase: no process of the job but T may be alive while T
                # compares and judges, so none can time or count that work.
                waiting = False
                if not self.kill_job(self._ended_job[0], p_pid, t_pid, deadline):
                    timed_out = True
                    break
                try:
                    os.write(release_w, RELEASED)
                except OSError:  # T died meanwhile (EPIPE): seen as its end below
                    pass
                released = True
        duration = time.monotonic() - started
        for pid in (t_pid, p_pid):  # stop both sides now; their leftovers go after the answer
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        for fd in open_fds:
            pipes[fd].drain(fd)
        status, detail = self._verdict(p_pid, t_pid, timed_out, timeout, report.data, token)
        text = output.data.decode("utf-8", errors="replace")
        if output.dropped:
            text += f"\n[... {output.dropped} more bytes of output dropped]"
        return {"status": status, "detail": detail, "duration_s": round(duration, 6), "output": text}

    @staticmethod
    def _describe_end(code: int) -> tuple[str, str]:
        """(status, how) for a process's wait status."""
        if os.WIFSIGNALED(code):
            number = os.WTERMSIG(code)
            if number == signal.SIGXCPU:
                return "timeout", "CPU time limit exceeded"
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = f"signal {number}"
            hint = " (out of memory?)" if number == signal.SIGKILL else ""
            return "error", f"was killed by {name}{hint}"
        return "error", f"exited with status {os.WEXITSTATUS(code)}"

    def _end_of(self, pid: int, who: str) -> tuple[str, str]:
        """(status, how) for the end of one of the job's processes, as its zygote saw it."""
        code = self.zygote.status_of(pid, ZYGOTE_TIMEOUT_S)
        if code is None:
            raise RuntimeError(f"the zygote did not report how {who} ended")
        return self._describe_end(code)

    def _verdict(self, p_pid, t_pid, timed_out, timeout, report, token) -> tuple[str, str]:
        if timed_out:
            return "timeout", f"timed out after {timeout:g} s (wall clock)"
        message = None
        for line in bytes(report).splitlines():
            try:
                candidate = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if (
                type(candidate) is dict
                and candidate.get("token") == token
                and candidate.get("pid") == t_pid
                and candidate.get("status") in ("passed", "failed", "error")
                and isinstance(candidate.get("detail", ""), str)
            ):
                message = candidate
                break
        if message is None:
            status, how = self._end_of(t_pid, "the test process")
            if status == "timeout":
                return status, how
            return "error", f"the process {how} before the test finished"
        if message.get("program_ended") is True:
            status, how = self._end_of(p_pid, "the program's process")
            if status == "timeout":
                return status, how
            if "before the test ran" in message["detail"]:
                return "error", f"the process {how} before the test finished"
            return "error", one_line(f"{message['detail']}: it {how}")
        return message["status"], message["detail"][:DETAIL_MAX]

    # --- between jobs

    def kill_job(self, handle: int, pid: int, spare: int | None, deadline: float) -> bool:
        """Kill the job's process `pid` (its pidfd `handle`, or -1) with its group, and every
        other process of the job but `spare` (the test's process, or None), and wait until
        none of them runs any more: each thread dead, or in a container exiting (it took
        the SIGKILL and never runs its own code again; the kernel freeing its memory, about
        a millisecond for a 20 MB Python process, goes on beside what follows instead of
        before it). False if `deadline` (time.monotonic()) came first. Within a job: the
        clean-up after it still kills, waits for and reaps whatever is left."""
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except OSError:
                pass
        # In a container W sees every process in /proc, so one that has begun to exit is
        # done with. On a host W finds the job's processes by parentage, and a process's
        # children are orphaned to W only at the very end of its exit: there it waits for
        # that end (the previous process first, then the search again).
        exiting_is_gone = self.is_init
        # The pidfd first: once it is readable (P ended) the pid may be reaped and reused,
        # so /proc is read only while it is not.
        while not (handle >= 0 and select.select([handle], [], [], 0)[0]) and alive(pid, exiting_is_gone):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.0001)
        while True:
            leftovers = self._processes(spare=spare, exiting_is_gone=exiting_is_gone)
            if not leftovers:
                return True
            if time.monotonic() > deadline:
                return False
            for other in leftovers:
                for kill in (os.killpg, os.kill):
                    try:
                        kill(other, signal.SIGKILL)
                    except OSError:
                        pass
            time.sleep(0.0001)

    def _processes(self, spare: int | None = None, exiting_is_gone: bool = False) -> list[int]:
        """Every live process but the worker, the zygote and `spare`: the test's leftovers
        (`exiting_is_gone`: not those whose every thread has begun to exit).

        Zombies are dead already (the zygote or the worker reaps them). On a host,
        the zygote's children count too: a test's processes are its grandchildren
        until they are orphaned.
        """
        me, zygote = os.getpid(), self.zygote.pid
        blanks = self.zygote.known_blanks()  # exactly the children it keeps ready
        if self.is_init and self._job_pids and self.traces is not None and self.traces.only_forks(self.zygote.forks):
            # No PID was handed out since the last clean-up but to the zygote's forks, all
            # of them announced: no process or thread was made since, so the processes are
            # those of then (W, Z, the blank children, which the job's are among) and the
            # listing of /proc is not needed.
            found = list(self._job_pids)
        elif self.is_init:
            found = [int(e) for e in os.listdir("/proc") if e.isdigit()]
        else:
            found = children_of(me) + children_of(zygote)
        leftovers = []
        for pid in found:
            if pid in (me, zygote, spare) or pid in blanks:
                continue
            # Any other process is the test's, whatever its parent (clone(CLONE_PARENT)
            # makes a child of the zygote) and whatever its state: a thread-group leader
            # that exited while its other threads run shows as a zombie.
            if alive(pid, exiting_is_gone):
                leftovers.append(pid)
        return sorted(set(leftovers))

    def _kill_leftovers(self) -> None:
        """Kill and reap every process the test left behind (daemons, forks, setsid)."""
        deadline = time.monotonic() + _CLEANUP_TIMEOUT_S
        for handle in self._ended_job:  # the job's two processes: wait for their end
            if isinstance(handle, int) and handle >= 0:
                select.select([handle], [], [], _CLEANUP_TIMEOUT_S)
                os.close(handle)
        self._ended_job = []
        while time.monotonic() < deadline:
            self._reap()
            leftovers = self._processes()
            if not leftovers:
                return
            for pid in leftovers:
                for kill in (os.killpg, os.kill):
                    try:
                        kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            time.sleep(0.0005)
        raise RuntimeError("processes of the test outlived the clean-up")

    def _reap(self) -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.zygote.pid:
                raise RuntimeError("the zygote died")

    def _clean_up(self) -> str:
        """Restore the state every job starts from; what could not be restored, if anything."""
        try:
            self._kill_leftovers()
            # Bounded: a job must not delay the next one past its time (the host would
            # take the late answer for a hung worker); a worker that cannot empty its
            # folders in time retires instead, and the next job runs on a fresh one.
            deadline = time.monotonic() + _WIPE_TIMEOUT_S
            # The scratch folder goes too and is made anew: a program may have set its
            # mode, times or extended attributes, which a later one could read.
            wipe(self.scratch_root, deadline=deadline)
            reset_metadata(self.scratch_root)
            os.mkdir(self.scratch, mode=0o700)
            if self.is_init:  # these belong to the container: on a host they are the user's
                wipe("/dev/shm", deadline=deadline)
                wipe("/dev/mqueue", deadline=deadline)
                self._sysv_left = self._remove_sysv_ipc()
            problem = self._state_problem()
            if not problem and self.traces is not None:
                problem = self.traces.moved(self.scratch, self.zygote.forks, self._allowance)
        except Exception as exc:
            problem = exception_line(exc)
        self._job_pids = ()
        return problem

    def _remove_sysv_ipc(self) -> bool:
        """Remove every SysV object; whether there were any (to look again for them)."""
        found = False
        removers = {
            "shm": lambda ident: self._libc.shmctl(ident, IPC_RMID, None),
            "msg": lambda ident: self._libc.msgctl(ident, IPC_RMID, None),
            "sem": lambda ident: self._libc.semctl(ident, 0, IPC_RMID),
        }
        for kind, remove in removers.items():
            for ident in sysv_ids(kind):
                remove(ident)
                found = True
        return found

    def _state_problem(self) -> str:
        if self._processes():
            return "processes of the test outlived the clean-up"
        if not self.zygote.alive():
            return "the zygote is gone"
        for who, pid in (("worker", 0), ("zygote", self.zygote.pid),
                         *(("blank child", pid) for pid in sorted(self.zygote.known_blanks()))):
            try:
                changed = settings(pid) != self.settings
            except OSError:  # a blank child the job killed: it is replaced before use
                continue
            if changed:
                return f"the {who}'s resource limits or scheduling were changed by a test"
        if sorted(os.listdir(self.scratch_root)) != ["test"] or os.listdir(self.scratch):
            return f"{self.scratch_root} could not be emptied"
        if self.is_init:
            for path in ("/dev/shm", "/dev/mqueue"):
                if os.path.isdir(path) and os.listdir(path):
                    return f"{path} could not be emptied"
            for kind in ("shm", "msg", "sem") if self._sysv_left else ():
                if sysv_ids(kind):
                    return f"SysV {kind} objects could not be removed"
        return ""


def _calls_done(report: bytearray, token: str, t_pid: int) -> bool:
    """Whether T's first line on the report pipe says that its calls are done."""
    end = report.find(b"\n")
    if end < 0:
        return False
    try:
        first = json.loads(bytes(report[:end]))
    except (ValueError, RecursionError):
        return False
    return (type(first) is dict and first.get("calls_done") is True and first.get("token") == token
            and first.get("pid") == t_pid)


def _clean_environment(scratch: str) -> None:
    """The environment every forked process inherits (the worker needs none)."""
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


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    scratch_root = "/tmp"
    if "--scratch-root" in args:
        scratch_root = args[args.index("--scratch-root") + 1]
    # Non-dumpable, inherited by every fork: no process of the test can open
    # /proc/<pid>/{mem,fd,environ} of the worker, a zygote or the judge, nor ptrace them.
    prctl(PR_SET_DUMPABLE, 0)
    if os.getpid() != 1:
        prctl(PR_SET_CHILD_SUBREAPER, 1)  # orphans of a test come back to us
    for number in IGNORED_SIGNALS:
        try:
            signal.signal(number, signal.SIG_IGN)
        except (OSError, ValueError):
            pass
    os.chdir(scratch_root)
    preload()
    wipe(scratch_root)
    kits = int(args[args.index("--jobs") + 1]) if "--jobs" in args else KITS_DEFAULT
    spare_pipes = int(args[args.index("--spare-pipes") + 1]) if "--spare-pipes" in args else 0
    worker = _Worker(scratch_root, kits, for_compiling="--compile" in args, spare_pipes=spare_pipes)
    jobs, out = sys.stdin.buffer, sys.stdout.buffer
    if "--channel" in args:  # the host's socket (docker_backend.py), once the zygote is forked
        channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        channel.connect(args[args.index("--channel") + 1])
        jobs, out = channel.makefile("rb"), channel.makefile("wb")
        if worker.traces is not None:
            worker.traces.channel_connected()
    gc.collect()
    gc.freeze()

    def send(message: dict) -> None:
        out.write(json.dumps(message).encode() + b"\n")
        out.flush()

    send({"ready": True, "protocol": PROTOCOL, "pid": os.getpid(), "python": sys.version.split()[0],
          "readable": worker.readable, "compiles": worker.for_compiling})
    for line in jobs:
        if not line.strip():
            continue
        job_id = None
        try:
            job = json.loads(line)
            job_id = job.get("id")
            send(worker.run(job))
            worker.after()
        except NotRun as exc:
            send({"id": job_id, "not_run": True, "during": exc.during, "retire": str(exc)})
            return 1
        except Exception as exc:  # the worker's own failure: answer, then let the host replace it
            send({"id": job_id, "status": "error", "detail": f"sandbox worker: {exception_line(exc)}",
                  "duration_s": 0.0, "output": "", "internal": True,
                  "retire": f"internal error: {exception_line(exc)}"})
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
