"""What a new user meets through `python -m harness run`: every failure they can cause is
one clear line (exit 2, or the run's resume message), never a traceback or a page that
answers 500, and a model that cannot answer leaves no run folder behind."""
from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

from tests.doubles.stub_server import Reply, Status, StubServer
from tests.helpers import harness_env, run_harness
from tests.loop.test_cli_run import N_TASKS, write_task_file


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once it is closed


def _env(tmp_path: Path) -> dict[str, str]:
    env = harness_env(HARNESS_CACHE_DIR=str(tmp_path / "cache"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        env.pop(name, None)
    return env


def _run(tmp_path: Path, *args: str):
    return run_harness("run", "--out", str(tmp_path / "out"), "--memory-dir", str(tmp_path / "mem"), *args,
                       cwd=tmp_path, env=_env(tmp_path))


def _one_error_line(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr
    return errors[0]


def _view_pages_answer(run_dir: Path, task_id: str) -> None:
    from starlette.testclient import TestClient

    from harness.view.app import ViewApp

    client = TestClient(ViewApp(run_dir.parent, warm=False).asgi, raise_server_exceptions=False,
                        base_url="http://127.0.0.1")
    for url in ("/", f"/runs/{run_dir.name}", f"/runs/{run_dir.name}/tasks", f"/runs/{run_dir.name}/tasks/{task_id}",
                f"/api/runs/{run_dir.name}/state"):
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code, response.text[-1500:])


IO_SCRIPT = [
    {"match": "who writes test cases", "reply": "```input\n1\n1 2\n```\n```output\n3\n```"},
    {"match": "Explain in a few sentences", "reply": "Read every pair and print each sum on its own line."},
    {"match": "You write a complete", "reply": "```python\nimport sys\nprint(0)\n```"},
]


@pytest.mark.docker
def test_a_with_example_task_set_writes_its_report_and_its_pages_answer(tmp_path):
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in IO_SCRIPT))
    done = _run(tmp_path, "--tasks", "builtin:io:with-example", "--limit", "2", "--model", f"scripted:{script}",
                "--strategy", "reflexion", "--trials", "2", "--no-cache")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    (run_dir,) = (tmp_path / "out").iterdir()
    html = (run_dir / "report.html").read_text()
    assert "internal tests: the task&#39;s public examples" in html
    assert json.loads((run_dir / "summary.json").read_text())["session"]["exit"] == 0
    first = json.loads((run_dir / "trials.jsonl").read_text().splitlines()[0])
    _view_pages_answer(run_dir, first["task_id"])


@pytest.mark.docker
def test_a_run_in_which_no_attempt_finishes_says_why_and_its_pages_answer(tmp_path):
    tasks = write_task_file(tmp_path)
    model = f"openai:gpt-x@http://127.0.0.1:{_closed_port()}/v1"
    done = _run(tmp_path, "--tasks", f"jsonl:{tasks}", "--model", model, "--strategy", "reflexion", "--limit", "2",
                "--max-retries", "0", "--no-model-check")
    assert done.returncode == 1
    line = _one_error_line(done.stderr)
    (run_dir,) = (tmp_path / "out").iterdir()
    assert line.startswith("error: no attempt finished: 2 stopped, 2 by a model error that outlived its retries: ")
    assert "cannot connect to" in line and "Connection refused" in line
    assert line.endswith(f"resume with: python -m harness run --resume {run_dir}")
    assert "FolderError" not in done.stderr and done.stdout == ""
    assert json.loads((run_dir / "summary.json").read_text())["session"]["exit"] == 1
    _view_pages_answer(run_dir, "mul/0")


@pytest.mark.docker
def test_a_model_that_cannot_answer_is_refused_before_any_run_folder_exists(tmp_path):
    tasks = write_task_file(tmp_path)
    closed = _run(tmp_path, "--tasks", f"jsonl:{tasks}", "--model", f"openai:gpt-x@http://127.0.0.1:{_closed_port()}/v1")
    assert closed.returncode == 2
    line = _one_error_line(closed.stderr)
    assert "did not answer a check call before the run" in line and "Connection refused" in line
    assert "No run folder was made" in line and "--no-model-check" in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    with StubServer() as stub:
        stub.script(Status(404, message="The model `gpt-x` does not exist"))
        wrong = _run(tmp_path, "--tasks", f"jsonl:{tasks}", "--model", f"openai:gpt-x@{stub.openai_url}")
    assert wrong.returncode == 2
    line = _one_error_line(wrong.stderr)
    assert "HTTP 404" in line and "The model `gpt-x` does not exist" in line and "No run folder was made" in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    assert len(stub.requests) == 1  # one call, not retried: a 404 is an answer


@pytest.mark.docker
def test_the_model_check_is_one_short_call_past_the_cache_recorded_in_run_json(tmp_path):
    tasks = write_task_file(tmp_path)
    with StubServer(default=Reply("OK")) as stub:
        for attempt in range(2):  # the second run finds the first one's answers in the cache
            done = _run(tmp_path, "--tasks", f"jsonl:{tasks}", "--model", f"openai:gpt-x@{stub.openai_url}",
                        "--strategy", "baseline", "--limit", "1", "--no-report")
            assert done.returncode == 0, done.stderr
            assert re.search(r"model: openai:gpt-x@\S+ answered a check call in [\d.]+ s", done.stderr)
        checks = [r for r in stub.requests if "Reply with the word OK" in r.prompt_text]
        assert len(checks) == 2 and all(r.body["max_tokens"] == 8 for r in checks)
        assert len(stub.requests) == 3  # two checks, one actor call: the second run's came from the cache
    runs = sorted((tmp_path / "out").iterdir())
    header = json.loads((runs[0] / "run.json").read_text())
    assert header["model_check"]["model"] and header["model_check"]["output_tokens"] >= 0
    skipped = _run(tmp_path, "--tasks", f"jsonl:{tasks}", "--model", f"openai:gpt-x@http://127.0.0.1:{_closed_port()}/v1",
                   "--strategy", "baseline", "--limit", "1", "--no-report", "--no-model-check", "--max-retries", "0")
    assert skipped.returncode == 1 and "check call" not in skipped.stderr  # skipped: the run itself meets the error


@pytest.mark.docker
def test_model_errors_are_shown_apart_from_unusable_answers_with_their_cause(tmp_path):
    tasks = write_task_file(tmp_path)
    script = tmp_path / "script.jsonl"
    rules = [{"match": "Implement the function `f1`", "reply": "!error: HTTP 503 from the server after 6 attempts"},
             {"match": "Implement the function `f2`", "reply": "I cannot write this."}]
    rules += [{"match": f"Implement the function `f{i}`", "reply": f"```python\ndef f{i}(n):\n    return n * {i}\n```"}
              for i in range(N_TASKS)]
    script.write_text("".join(json.dumps(r) + "\n" for r in rules))
    done = _run(tmp_path, "--tasks", f"jsonl:{tasks}", "--model", f"scripted:{script}", "--strategy", "baseline",
                "--no-report", "--no-cache")
    assert done.returncode == 1
    line = _one_error_line(done.stderr)
    assert line.startswith("error: 1 attempt(s) did not finish: 1 by a model error that outlived its retries: ")
    assert "HTTP 503 from the server after 6 attempts" in line
    head = next(x for x in done.stdout.splitlines() if x.startswith("strategy "))
    cells = dict(zip(re.split(r"\s{2,}", head.strip()),
                     re.split(r"\s{2,}", next(x for x in done.stdout.splitlines() if x.startswith("baseline ")).strip())))
    assert (cells["unusable answers"], cells["model errors"], cells["incomplete"]) == ("1", "1", "1")


@pytest.mark.parametrize("toml, words", [
    ('model = ["openai:a@http://x/v1", "openai:b@http://x/v1"]',
     "setting 'model' must be a string, got a list (one model spec per run; to run several models, use `python -m harness study`)"),
    ('strategy = ["reflexion", "baseline"]', "setting 'strategy' must be a string, got a list (a strategy, a group, "
                                             'or several joined by commas in one string, e.g. "reflexion,baseline")'),
    ('temperature = "hot"', "setting 'temperature' must be a number, got the string 'hot'"),
    ("trials = 2.5", "setting 'trials' must be an integer, got the number 2.5"),
    ('cache = "no"', "setting 'cache' must be true or false, got the string 'no'"),
    ("k = [1, 1.5]", "setting 'k' must be a list of integers, got a list holding the number 1.5"),
    ("task-ids = 5", "setting 'task-ids' must be a list of strings, got the integer 5"),
    ("out = 5", "setting 'out' must be a folder path (a string), got the integer 5"),
    ('prices = {m = {input = "cheap"}}', "setting 'prices' must be a table of model id"),
    ("temperature = nan", "setting 'temperature' must be a finite number"),
])
def test_a_setting_of_the_wrong_type_is_one_line_naming_the_file_and_the_setting(tmp_path, toml, words):
    (tmp_path / "run.toml").write_text(toml + "\n")
    done = run_harness("run", "--config", "run.toml", "--out", str(tmp_path / "out"), cwd=tmp_path, env=_env(tmp_path))
    assert done.returncode == 2
    assert _one_error_line(done.stderr) == f"error: run.toml: {words}" or \
        _one_error_line(done.stderr).startswith(f"error: run.toml: {words}"), done.stderr
    assert not (tmp_path / "out").exists()


def _no_traceback_one_error(done) -> str:
    """The one `error:` line of a failed command; no traceback anywhere."""
    assert done.returncode != 0 and "Traceback" not in done.stderr + done.stdout, done.stderr
    return _one_error_line(done.stderr)


@pytest.mark.parametrize("content, words", [
    (b'model = "caf\xe9"\n', "run.toml: not UTF-8 text (byte 0xe9 at byte 13); save it as UTF-8"),
    (b"run = 5\n", "run.toml: run must be a [run] table of settings, got the integer 5"),
])
def test_an_unreadable_config_file_is_one_line(tmp_path, content, words):
    (tmp_path / "run.toml").write_bytes(content)
    done = run_harness("run", "--config", "run.toml", "--out", str(tmp_path / "out"), cwd=tmp_path, env=_env(tmp_path))
    assert done.returncode == 2 and _no_traceback_one_error(done) == f"error: {words}"


@pytest.mark.parametrize("line, words", [
    ("out = 5", "out must be a folder path (a string), got 5"),
    ('out = ""', "out must be a folder path (a string), got ''"),
])
def test_a_study_file_s_wrong_out_is_one_line(tmp_path, line, words):
    (tmp_path / "study.toml").write_text('[study]\nname = "s"\nmodels = ["scripted:x.jsonl"]\ntasks = ["builtin:quick"]\n'
                                         f'strategies = ["baseline"]\n{line}\n')
    done = run_harness("study", "study.toml", cwd=tmp_path, env=_env(tmp_path))
    assert _no_traceback_one_error(done) == f"error: study.toml [study]: {words}"


def test_tasks_show_shows_an_exercism_task(tmp_path):
    data = Path(__file__).resolve().parents[1] / "data" / "exercism"
    for language, task in (("rust", "safe-divide"), ("go", "clamp"), ("cpp", "raindrops"), ("javascript", "stack")):
        done = run_harness("tasks", "show", f"exercism:{data}:{language}", f"exercism/{language}/{task}",
                           cwd=tmp_path, env=_env(tmp_path))
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        assert "--- hidden test 1 of" in done.stdout and "(in " in done.stdout


def test_a_full_results_disk_is_one_line_with_the_resume_command(tmp_path):
    """A full disk, simulated with RLIMIT_FSIZE in the child (SIGXFSZ ignored, so a write
    past the limit fails with EFBIG from the same write() call ENOSPC fails from): the run
    stops with one line naming its folder and the --resume command, and the resume, with
    the limit gone, finishes the run."""
    import resource
    import signal
    import subprocess
    import sys

    many = 60  # a log past the sandbox's own files (copied at its start, under the same limit)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"task_id": f"mul/{i}", "prompt": f'def f{i}(n: int) -> int:\n    """n * {i}."""\n',
                                         "entry_point": f"f{i}", "tests": [f"assert f{i}(3) == {3 * i}"]}) + "\n"
                             for i in range(many)))
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps({"match": f"Implement the function `f{i}`",
                                          "reply": f"```python\ndef f{i}(n):\n    return n * {i}\n```"}) + "\n"
                              for i in range(many)))
    probe = _run(tmp_path, "--tasks", f"jsonl:{tasks}", "--model", f"scripted:{script}", "--strategy", "baseline",
                 "--sandbox", "process", "--no-cache", "--no-report", "--sandbox-workers", "1")
    assert probe.returncode == 0, probe.stderr
    (first,) = (tmp_path / "out").iterdir()
    limit = (first / "trials.jsonl").stat().st_size * 2 // 3  # the log passes it mid-run
    biggest = max(p.stat().st_size for p in (Path(__file__).resolve().parents[2] / "sandbox").rglob("*.py"))
    assert limit > max(biggest, (first / "run.json").stat().st_size), (limit, biggest)

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    out = tmp_path / "full"
    argv = [sys.executable, "-m", "harness", "run", "--out", str(out), "--memory-dir", str(tmp_path / "mem"),
            "--tasks", f"jsonl:{tasks}", "--model", f"scripted:{script}", "--strategy", "baseline",
            "--sandbox", "process", "--no-cache", "--no-report", "--sandbox-workers", "1"]
    done = subprocess.run(argv, cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=300,
                          preexec_fn=small_files)
    line = _no_traceback_one_error(done)
    (run_dir,) = out.iterdir()
    assert done.returncode == 1 and "File too large" in line, line
    assert line.startswith("error: the run stopped: a results file reached the size limit on files")
    assert f" in {run_dir}. Finished trials are saved" in line and line.endswith(f"--resume {run_dir}")
    resumed = run_harness("run", "--resume", str(run_dir), "--sandbox", "process", cwd=tmp_path, env=_env(tmp_path))
    assert resumed.returncode == 0 and "Traceback" not in resumed.stderr, resumed.stderr
    assert json.loads((run_dir / "summary.json").read_text())["session"]["exit"] == 0


def test_escape_sequences_from_a_server_or_a_study_never_reach_the_terminal(tmp_path):
    """The model name a server reports, and a study's model spec (here a script file whose
    name holds escape sequences), are printed made safe: no ESC, BEL or CSI byte is written."""
    tasks = write_task_file(tmp_path)
    hostile = "gpt\x1b]0;owned\x07\x1b[2J\x9b31m\u202e"
    with StubServer(default=Reply("```python\ndef f0(n):\n    return 0\n```"), model=hostile) as stub:
        done = _run(tmp_path, "--tasks", f"jsonl:{tasks}", "--model", f"openai:gpt-x@{stub.openai_url}",
                    "--strategy", "baseline", "--limit", "1", "--no-report", "--sandbox", "process",
                    "--allow-process-sandbox-with-api")
    assert done.returncode in (0, 1), done.stderr
    assert "as gpt\\x1b]0;owned\\x07\\x1b[2J" in done.stderr
    script = tmp_path / "s\x1b]0;owned\x07.jsonl"
    script.write_text(json.dumps({"match": "Implement", "reply": "```python\ndef f0(n):\n    return 0\n```"}) + "\n")
    (tmp_path / "study.toml").write_text(
        f'[study]\nname = "esc"\nmodels = ["scripted:{script}"]\ntasks = ["jsonl:{tasks}"]\nstrategies = ["baseline"]\n'
        f'sandbox = "process"\nlimit = 1\nreport = false\ncache = false\nout = "{tmp_path / "study"}"\n'
        .replace("\x1b", "\\u001b").replace("\x07", "\\u0007"))
    studied = run_harness("study", "study.toml", cwd=tmp_path, env=_env(tmp_path))
    assert "Traceback" not in studied.stderr, studied.stderr
    assert "s\\x1b]0;owned\\x07.jsonl" in studied.stderr + studied.stdout
    for text in (done.stdout, done.stderr, studied.stdout, studied.stderr):
        assert not any(ch in text for ch in "\x1b\x07\x9b\u202e"), repr(text[-500:])


@pytest.mark.parametrize("text, shown", [
    ("plain text\n\twith tabs", "plain text\n\twith tabs"),
    ("a\x1b[2Jb", "a\\x1b[2Jb"), ("over\rwrite", "over\\rwrite"), ("\x9b31m", "\\x9b31m"),
    ("left\u202eright", "left\\u202eright"), ("bell\x07", "bell\\x07"), ("é ü 字", "é ü 字"),
])
def test_terminal_safe_shows_every_control_character(text, shown):
    from harness.text.terminal import terminal_safe

    assert terminal_safe(text) == shown


def test_a_disk_that_fills_up_at_the_summary_is_one_line_with_the_resume_command(tmp_path, monkeypatch, capsys):
    """The summary's write meets ENOSPC (raised from a fake file layer: the one function
    that writes summary.json), through the CLI's main(): one line, the folder, --resume."""
    import errno

    from harness.cli import main
    from harness.rundata import numbers

    def full_disk(run_dir, **_):
        raise OSError(errno.ENOSPC, "No space left on device", str(run_dir / "summary.json"))

    monkeypatch.setattr(numbers, "end_session", full_disk)
    monkeypatch.chdir(tmp_path)
    for name, value in _env(tmp_path).items():
        monkeypatch.setenv(name, value)
    tasks = write_task_file(tmp_path)
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"match": "Implement", "reply": "```python\ndef f0(n):\n    return 0\n```"}) + "\n")
    code = main(["run", "--out", str(tmp_path / "out"), "--memory-dir", str(tmp_path / "mem"), "--tasks", f"jsonl:{tasks}",
                 "--model", f"scripted:{script}", "--strategy", "baseline", "--limit", "1", "--sandbox", "process",
                 "--no-cache", "--no-report"])
    err = capsys.readouterr().err
    (run_dir,) = (tmp_path / "out").iterdir()
    assert code == 1 and "Traceback" not in err
    assert _one_error_line(err) == (
        "error: the run's summary could not be written: the results disk is full (No space left on device: "
        f"{run_dir / 'summary.json'}) in {run_dir}. Finished trials are saved; free space, then resume with: "
        f"python -m harness run --resume {run_dir}")


def test_a_full_disk_before_the_run_folder_exists_is_one_line(tmp_path, monkeypatch, capsys):
    """run.json's write meets ENOSPC (a fake file layer: the function that makes the run
    folder): one line saying where, and what to do; exit 2."""
    import errno

    import harness.run.runner
    from harness.cli import main

    def full_disk(config, *_, **__):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "out" / "run.json"))

    monkeypatch.setattr(harness.run.runner, "prepare_run_dir", full_disk)
    for name, value in _env(tmp_path).items():
        monkeypatch.setenv(name, value)
    tasks = write_task_file(tmp_path)
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"match": "Implement", "reply": "```python\ndef f0(n):\n    return 0\n```"}) + "\n")
    code = main(["run", "--out", str(tmp_path / "out"), "--memory-dir", str(tmp_path / "mem"), "--tasks", f"jsonl:{tasks}",
                 "--model", f"scripted:{script}", "--strategy", "baseline", "--limit", "1", "--sandbox", "process",
                 "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert _one_error_line(err) == (
        f"error: the run folder cannot be written under {tmp_path / 'out'} (No space left on device: "
        f"{tmp_path / 'out' / 'run.json'}); free space there, or give another folder with --out")
