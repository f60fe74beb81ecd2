"""sandbox.run_script: one script run whole on a stdin, on both backends; how it ended
comes back (stdout, the end of stderr, exit status, time), nothing is compared."""
from __future__ import annotations

from sandbox import run_script
from tests.sandbox.test_sandbox_conformance import assert_healthy


def test_a_script_reads_stdin_and_prints(sandbox):
    run = run_script(sandbox, "import sys\nprint(sys.stdin.read()[::-1])", "abc", timeout_s=5.0, domain="agent")
    assert (run.status, run.exit_code, run.stdout, run.stderr) == ("ok", 0, "cba\n", "")
    assert 0 < run.seconds <= run.job_s


def test_stderr_and_exit_status_come_back(sandbox):
    run = run_script(sandbox, "import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)", "",
                     timeout_s=5.0, domain="agent")
    assert (run.status, run.exit_code, run.stdout, run.stderr) == ("error", 3, "out\n", "err\n")
    assert run.detail == "the program exited with status 3"


def test_a_traceback_is_in_stderr_even_on_a_crash(sandbox):
    run = run_script(sandbox, "print('before')\n1/0", "", timeout_s=5.0, domain="agent")
    assert run.status == "error" and run.exit_code == 1 and run.stdout == "before\n"
    assert run.stderr.rstrip().endswith("ZeroDivisionError: division by zero")


def test_timeout_flood_and_signals(sandbox):
    slow = run_script(sandbox, "while True:\n    pass", "", timeout_s=0.5, domain="agent")
    assert slow.status == "timeout" and slow.exit_code is None and slow.seconds >= 0.5
    flood = run_script(sandbox, "while True:\n    print('x' * 1000)", "", timeout_s=5.0, domain="agent")
    assert flood.status == "flooded" and len(flood.stdout) <= 64 * 1024 + 100 and "output cap" in flood.detail
    killed = run_script(sandbox, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "", timeout_s=5.0,
                        domain="agent")
    assert killed.status == "error" and killed.exit_code == -9
    assert_healthy(sandbox)


def test_a_script_that_prints_the_word_passed_is_still_just_a_script(sandbox):
    # Nothing is compared: printing what a verdict looks like changes nothing.
    run = run_script(sandbox, "print('passed')\nraise SystemExit(1)", "", timeout_s=5.0, domain="agent")
    assert run.status == "error" and run.exit_code == 1 and run.stdout == "passed\n"
