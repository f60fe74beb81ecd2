"""A run's status says "running" exactly while a process writes it, on every reader.

The writer holds <run>/session.lock (flock); the kernel drops it when the process ends,
however it ends, so a run killed a second ago reads "interrupted" at once on the view and
in `harness report`, instead of "running" until a time window passes.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.rundata import folder, numbers
from harness.view.catalog import RunEntry
from tests.view.viewruns import header, two_strategy_records, write_run

HOLDER = """
import sys, time
from harness.rundata.folder import SessionLock
lock = SessionLock(sys.argv[1]).acquire()  # kept: a dropped lock object closes its file
print("held", flush=True)
time.sleep(60)
"""


def _states(run_dir: Path) -> tuple[str, str]:
    entry = RunEntry(run_id=run_dir.name, path=run_dir, label=run_dir.name)
    view_state = entry.numbers()["status"]["state"]
    report_state = numbers.of_folder(folder.load(run_dir))["status"]["state"]
    return view_state, report_state


def _hold(run_dir: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir)], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2])
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_run_reads_running_while_its_writer_lives_and_interrupted_once_it_is_killed(tmp_path: Path) -> None:
    records = two_strategy_records()[:-2]  # an unfinished run: some attempts have no final trial
    run_dir = write_run(tmp_path / "run-a", header(), records, summary=False)
    assert folder.session_live(run_dir) is None  # no lock file: a run from before the lock
    proc = _hold(run_dir)
    try:
        assert folder.session_live(run_dir) is True
        assert _states(run_dir) == ("running", "running")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert folder.session_live(run_dir) is False  # at once: no window to wait out
    assert _states(run_dir) == ("interrupted", "interrupted")
    # the files are as fresh as a live run's, yet the lock tells the truth
    assert time.time() - (folder.mtime(run_dir / folder.TRIALS) or 0) < 600


def test_a_second_session_on_the_same_run_is_refused(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run-a", header(), two_strategy_records(), summary=False)
    proc = _hold(run_dir)
    try:
        with pytest.raises(folder.FolderError, match="another session is writing this run"):
            folder.SessionLock(run_dir).acquire()
    finally:
        proc.kill()
        proc.wait(timeout=10)
    lock = folder.SessionLock(run_dir).acquire()  # free again once the holder is gone
    lock.release()


def test_a_session_that_ends_leaves_no_lock_file_and_reads_ended(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run-a", header(), two_strategy_records(), summary=False)
    lock = folder.SessionLock(run_dir).acquire()
    assert (run_dir / folder.SESSION_LOCK).is_file() and folder.session_live(run_dir) is True
    numbers.end_session(run_dir, exit_code=0)  # what the run does before it lets go
    lock.release()
    assert not (run_dir / folder.SESSION_LOCK).exists() and folder.session_live(run_dir) is None
    # freshly written files and no lock: summary.json, written as the session ended, says it ended
    assert _states(run_dir) == ("complete", "complete")
    again = folder.SessionLock(run_dir).acquire()  # a later resume takes a new lock
    assert folder.session_live(run_dir) is True
    again.release()


def test_a_lock_taken_on_a_file_an_ending_session_removed_is_taken_again(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run-a", header(), two_strategy_records(), summary=False)
    first = folder.SessionLock(run_dir).acquire()
    stale = (run_dir / folder.SESSION_LOCK).open("a+")  # opened before the first session ends
    first.release()
    second = folder.SessionLock(run_dir).acquire()
    try:  # the new lock is on the file at the path, not on the removed one `stale` still names
        with pytest.raises(folder.FolderError, match="another session"):
            folder.SessionLock(run_dir).acquire()
    finally:
        second.release()
        stale.close()
