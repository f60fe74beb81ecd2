"""`python -m harness run` as a user meets it: bad input, kill -9 + resume, Ctrl-C."""
from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from tests.helpers import harness_env, run_harness, start_harness, wait_until

# Six small tasks: f0..f5 return n * i. The model gets f0, f2, f4 right at once and the
# others right only after feedback.
N_TASKS = 6


def write_task_file(folder: Path) -> Path:
    path = folder / "tasks.jsonl"
    rows = []
    for i in range(N_TASKS):
        rows.append(
            {
                "task_id": f"mul/{i}",
                "prompt": f'def f{i}(n: int) -> int:\n    """Return n times {i}."""\n',
                "entry_point": f"f{i}",
                "tests": [f"assert f{i}(3) == {3 * i}", f"assert f{i}(-2) == {-2 * i}"],
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def write_script(folder: Path, latency_s: float = 0.0) -> Path:
    rules = []
    if latency_s:
        rules.append({"latency_s": latency_s})
    rules.append({"match": "what should the next implementation do differently", "reply": "Multiply, do not add."})
    for i in range(N_TASKS):
        right = f"```python\ndef f{i}(n):\n    return n * {i}\n```"
        wrong = f"```python\ndef f{i}(n):\n    return n + {i}\n```"
        rules.append({"match": f"unit tests for the function `f{i}`", "reply": f"```python\nassert f{i}(1) == {i}\nassert f{i}(5) == {5 * i}\n```"})
        rules.append({"match": f"improved implementation of `f{i}`", "reply": right})
        rules.append({"match": f"Implement the function `f{i}`", "reply": right if i % 2 == 0 else wrong})
    path = folder / "script.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rules))
    return path


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_harness(*args, cwd=cwd)


def start(*args: str, cwd: Path) -> subprocess.Popen:
    return start_harness(*args, cwd=cwd)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--tasks", "nosuch:thing"], "nosuch"),
        (["--model", "nosuch:model"], "nosuch"),
        (["--samples", "2", "--k", "1,5"], "k=5 exceeds samples=2"),
        (["--limit", "0"], "limit"),
        (["--config", "missing.toml"], "missing.toml"),
        (["--resume", "no/such/run"], "no/such/run"),
        (["--model", "anthropic:claude-sonnet-4-5", "--limit", "1"], "ANTHROPIC_API_KEY"),
        (["--trials", "0"], "trials"),
        (["--strategy", "nosuch"], "nosuch"),
        (["--memory-dir", "a-file"], "memory_dir 'a-file' exists and is not a folder"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, argv, words):
    (tmp_path / "a-file").write_text("")
    env = harness_env()
    env.pop("ANTHROPIC_API_KEY", None)
    proc = run_harness("run", *argv, "--out", str(tmp_path / "r"), cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.splitlines()  # one line, no traceback
    assert line.startswith("error: ") and words in line
    assert proc.stdout == "" and not (tmp_path / "r").exists()


def test_malformed_config_file(tmp_path):
    (tmp_path / "bad.toml").write_text("trials = [\n")
    proc = harness("run", "--config", "bad.toml", cwd=tmp_path)
    assert proc.returncode == 2 and "bad.toml" in proc.stderr and "Traceback" not in proc.stderr
    (tmp_path / "unknown.toml").write_text("trails = 3\n")
    proc = harness("run", "--config", "unknown.toml", cwd=tmp_path)
    assert proc.returncode == 2 and "trails" in proc.stderr


def _run_args(tmp_path: Path, script: Path, tasks: Path, out: Path) -> list[str]:
    return [
        "--tasks", f"jsonl:{tasks}", "--model", f"scripted:{script}", "--strategy", "all",
        "--trials", "3", "--workers", "2", "--out", str(out), "--memory-dir", str(tmp_path / "mem"),
        "--no-report", "--no-cache",
    ]


def _summary_without_times(run_dir: Path) -> dict:
    summary = json.loads((run_dir / "summary.json").read_text())
    summary.pop("run_id")
    summary.pop("timings", None)
    summary.pop("time")  # elapsed and summed times differ run to run
    summary.pop("session", None)
    compute = summary.get("compute") or {}
    for key in ("elapsed_s", "model_s", "tokens_per_s", "text"):  # the compute it took: times, run to run
        compute.pop(key, None)
    summary["status"] = summary["status"]["state"]  # a resumed run says so, and how many sessions
    summary["caveats"] = [c for c in summary["caveats"] if c["key"] != "resumed"]
    for row in summary["resources"]:
        row.pop("summed_s")
    for stats in summary["strategies"].values():
        stats.pop("wall_s")
        stats.pop("summed_s")
    return summary


def _trials_written(out: Path) -> int:
    files = list(out.glob("*/trials.jsonl"))
    return files[0].read_text().count("\n") if files else 0


def _only_run(out: Path) -> Path:
    (run_dir,) = list(out.iterdir())
    return run_dir


@pytest.mark.docker
@pytest.mark.slow
def test_kill_9_then_resume_equals_an_uninterrupted_run(tmp_path):
    tasks, script = write_task_file(tmp_path), write_script(tmp_path, latency_s=0.05)
    full = harness("run", *_run_args(tmp_path, script, tasks, tmp_path / "full"), cwd=tmp_path)
    assert full.returncode == 0, full.stderr
    reference = _summary_without_times(_only_run(tmp_path / "full"))

    for kill_after in (1, 7):  # early, and in the middle of the run
        out = tmp_path / f"killed{kill_after}"
        proc = start("run", *_run_args(tmp_path, script, tasks, out), cwd=tmp_path)
        wait_until(lambda: proc.poll() is not None or _trials_written(out) >= kill_after,
                   f"{kill_after} trial(s) written", interval_s=0.005)
        proc.send_signal(signal.SIGKILL)
        _, stderr = proc.communicate(timeout=10)
        assert out.exists(), f"the run wrote nothing before it was killed; it said:\n{stderr}"
        run_dir = _only_run(out)
        lines_before = (run_dir / "trials.jsonl").read_text().count("\n")
        assert lines_before >= kill_after
        assert not (run_dir / "summary.json").exists()

        resumed = harness("run", "--resume", str(run_dir), cwd=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        rows = [json.loads(x) for x in (run_dir / "trials.jsonl").read_text().splitlines()]
        keys = [(r["task_id"], r["strategy"], r["attempt"], r["trial"]) for r in rows]
        assert len(keys) == len(set(keys)), "a trial was done twice"
        assert _summary_without_times(run_dir) == reference


@pytest.mark.docker
@pytest.mark.slow
def test_ctrl_c_stops_quickly_keeps_trials_and_prints_resume(tmp_path):
    tasks, script = write_task_file(tmp_path), write_script(tmp_path, latency_s=0.5)
    out = tmp_path / "out"
    proc = start("run", *_run_args(tmp_path, script, tasks, out), cwd=tmp_path)
    wait_until(lambda: _trials_written(out) >= 2, "two trials written")
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)  # a hang guard, not a timing claim
    assert proc.returncode == 130
    run_dir = _only_run(out)
    assert f"--resume {run_dir}" in stderr
    kept = (run_dir / "trials.jsonl").read_text().count("\n")
    # Stopped early: the run did not go on to finish its work after the signal.
    full = harness("run", *_run_args(tmp_path, script, tasks, tmp_path / "full"), cwd=tmp_path)
    assert full.returncode == 0, full.stderr
    assert 2 <= kept < (_only_run(tmp_path / "full") / "trials.jsonl").read_text().count("\n")
    resumed = harness("run", "--resume", str(run_dir), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert (run_dir / "summary.json").exists()


@pytest.mark.docker
def test_toml_config_sets_everything_flags_win_and_memory_show_prints_lessons(tmp_path):
    tasks, script = write_task_file(tmp_path), write_script(tmp_path)
    (tmp_path / "run.toml").write_text(
        "[run]\n"
        f'tasks = "jsonl:{tasks}"\n'
        f'model = "scripted:{script}"\n'
        'strategy = "reflexion"\n'
        "trials = 2\n"
        'task-ids = ["mul/1", "mul/2"]\n'
        f'out = "{tmp_path / "out"}"\n'
        f'memory_dir = "{tmp_path / "mem"}"\n'
        "cache = false\n"
        "report = false\n"
    )
    proc = harness("run", "--config", "run.toml", "--trials", "3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run_dir = _only_run(tmp_path / "out")
    header = json.loads((run_dir / "run.json").read_text())
    assert header["config"]["trials"] == 3  # the flag wins over the file
    assert header["config"]["strategy"] == "reflexion" and header["tasks"]["task_ids"] == ["mul/1", "mul/2"]
    rows = [json.loads(x) for x in (run_dir / "trials.jsonl").read_text().splitlines()]
    # mul/1 is wrong at trial 1 (n + 1), right after feedback; mul/2 is right at once.
    assert sorted((r["task_id"], r["trial"]) for r in rows) == [("mul/1", 1), ("mul/1", 2), ("mul/2", 1)]
    assert "pass@1" in proc.stdout and str(run_dir) in proc.stdout

    shown = harness("memory", "show", "mul/1", "--memory-dir", str(tmp_path / "mem"), cwd=tmp_path)
    assert shown.returncode == 0 and "Multiply, do not add." in shown.stdout
    assert header["run_id"] in shown.stdout
    assert f"model scripted:{script}" in shown.stdout and "about trial 1" in shown.stdout and "ORACLE" not in shown.stdout
    none = harness("memory", "show", "mul/2", "--memory-dir", str(tmp_path / "mem"), cwd=tmp_path)
    assert none.returncode == 0 and "no lessons for mul/2" in none.stdout


@pytest.mark.docker
def test_unfinished_attempts_make_the_run_exit_non_zero_with_the_resume_command(tmp_path):
    tasks = write_task_file(tmp_path)
    script = tmp_path / "script.jsonl"
    rules = [{"match": "Implement the function `f1`", "reply": "!error: HTTP 503 after 5 retries"}]
    rules += [{"match": f"Implement the function `f{i}`", "reply": f"```python\ndef f{i}(n):\n    return n * {i}\n```"} for i in range(N_TASKS)]
    script.write_text("".join(json.dumps(r) + "\n" for r in rules))
    out = tmp_path / "out"
    proc = harness("run", "--tasks", f"jsonl:{tasks}", "--model", f"scripted:{script}", "--strategy", "baseline",
                   "--out", str(out), "--memory-dir", str(tmp_path / "mem"), "--no-report", "--no-cache", cwd=tmp_path)
    run_dir = _only_run(out)
    assert proc.returncode == 1, proc.stderr
    assert "1 attempt(s) did not finish" in proc.stderr and f"--resume {run_dir}" in proc.stderr
    assert "Traceback" not in proc.stderr
    [line] = [json.loads(x) for x in (run_dir / "errors.jsonl").read_text().splitlines()]
    assert (line["task_id"], line["kind"], line["role"]) == ("mul/1", "model_error", "actor")
    rows = (run_dir / "trials.jsonl").read_text().splitlines()
    assert len(rows) == N_TASKS - 1  # every other task finished; the run went on


@pytest.mark.docker
def test_prompts_flag_is_recorded_and_a_bad_prompt_set_is_bad_input(tmp_path):
    tasks, script = write_task_file(tmp_path), write_script(tmp_path)
    folder = tmp_path / "my-prompts"
    folder.mkdir()
    (folder / "reflection_system.j2").write_text("Explain the bug in one sentence.")
    args = ["--tasks", f"jsonl:{tasks}", "--model", f"scripted:{script}", "--strategy", "reflexion", "--limit", "2",
            "--memory-dir", str(tmp_path / "mem"), "--no-report", "--no-cache"]
    proc = harness("run", *args, "--prompts", str(folder), "--out", str(tmp_path / "a"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    header = json.loads((_only_run(tmp_path / "a") / "run.json").read_text())
    assert header["prompts"]["overridden"] == ["reflection_system"] and header["prompts"]["folder"] == str(folder)
    plain = harness("run", *args, "--out", str(tmp_path / "b"), cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    default = json.loads((_only_run(tmp_path / "b") / "run.json").read_text())
    assert default["prompts"]["digest"] != header["prompts"]["digest"] and default["prompts"]["folder"] is None
    (folder / "actor_task.j2").write_text("{% if %}")
    bad = harness("run", *args, "--prompts", str(folder), "--out", str(tmp_path / "c"), cwd=tmp_path)
    assert bad.returncode == 2 and "actor_task.j2" in bad.stderr and "Traceback" not in bad.stderr
