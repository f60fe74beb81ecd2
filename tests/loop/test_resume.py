"""`run --resume`: which settings it keeps, what it says, and when it refuses.

Runs the CLI with the process sandbox, so no Docker engine is needed.
"""
from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import run_harness
from tests.loop.test_cli_run import N_TASKS, write_script, write_task_file


def _first_run(tmp_path: Path) -> Path:
    tasks, script = write_task_file(tmp_path), write_script(tmp_path)
    done = run_harness(
        "run", "--tasks", f"jsonl:{tasks}", "--model", f"scripted:{script}", "--strategy", "reflexion",
        "--trials", "2", "--sandbox", "process", "--workers", "2", "--out", str(tmp_path / "out"),
        "--memory-dir", str(tmp_path / "mem"), "--no-report", "--no-cache", cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    (run_dir,) = (tmp_path / "out").iterdir()
    return run_dir


def _rows(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "trials.jsonl").read_text().splitlines()]


def test_resume_keeps_the_runs_settings_and_says_which_flags_it_ignores(tmp_path: Path):
    run_dir = _first_run(tmp_path)
    before = _rows(run_dir)
    # Cut the run short by hand: drop the last task's trials, as a kill would have.
    last_task = f"mul/{N_TASKS - 1}"
    kept = [r for r in before if r["task_id"] != last_task]
    (run_dir / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))

    resumed = run_harness("run", "--resume", str(run_dir), "--trials", "5", "--seed", "3", "--workers", "1",
                          "--no-report", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    notes = [line for line in resumed.stderr.splitlines() if line.startswith("note: resuming")]
    assert notes == ["note: resuming uses the run's own settings; ignoring --seed, --trials"]
    after = _rows(run_dir)
    key = lambda r: (r["task_id"], r["attempt"], r["trial"])  # noqa: E731
    assert sorted(map(key, after)) == sorted(map(key, before))  # the same trials, none twice
    assert max(r["trial"] for r in after) <= 2  # the run's own budget, not --trials 5
    assert json.loads((run_dir / "run.json").read_text())["config"]["trials"] == 2


def test_resume_refuses_a_task_set_that_changed(tmp_path: Path):
    run_dir = _first_run(tmp_path)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(tasks.read_text().replace("Return n times 1.", "Return n times one."))
    before = (run_dir / "trials.jsonl").read_bytes()
    refused = run_harness("run", "--resume", str(run_dir), cwd=tmp_path)
    assert refused.returncode == 2 and refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"error: --resume {run_dir}: the task set") and "changed since the run started" in line
    assert (run_dir / "trials.jsonl").read_bytes() == before  # nothing touched


def test_resume_of_a_folder_that_is_no_run_is_refused(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    refused = run_harness("run", "--resume", str(tmp_path / "empty"), cwd=tmp_path)
    assert refused.returncode == 2
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"error: --resume {tmp_path / 'empty'}") and "run.json" in line
