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


# --- what produced the run: recorded, and a resume that changed it refused --------------


def _cut_last_task(run_dir: Path) -> bytes:
    """Drops the last task's trials, as a kill would have; returns what is left."""
    kept = [r for r in _rows(run_dir) if r["task_id"] != f"mul/{N_TASKS - 1}"]
    (run_dir / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
    return (run_dir / "trials.jsonl").read_bytes()


def _refused(run_dir: Path, tmp_path: Path, what: str, *extra: str) -> str:
    before = _cut_last_task(run_dir)
    header_before = (run_dir / "run.json").read_bytes()
    refused = run_harness("run", "--resume", str(run_dir), *extra, cwd=tmp_path)
    assert refused.returncode == 2 and refused.stdout == "", refused.stderr
    [line] = [x for x in refused.stderr.splitlines() if x.startswith("error:")]
    assert line.startswith(f"error: --resume {run_dir}: {what} changed since the run started"), line
    assert "--resume-changed" in line
    assert (run_dir / "trials.jsonl").read_bytes() == before  # nothing touched
    assert (run_dir / "run.json").read_bytes() == header_before
    return line


def test_run_json_records_what_produced_the_run(tmp_path: Path):
    import hashlib
    import os

    run_dir = _first_run(tmp_path)
    header = json.loads((run_dir / "run.json").read_text())
    script = tmp_path / "script.jsonl"
    model = header["model_identity"]
    assert model["spec"] == f"scripted:{script}"
    assert model["file_sha256"] == hashlib.sha256(script.read_bytes()).hexdigest()
    assert header["engine"] == {"name": "scripted", "version": None}
    sandbox = header["sandbox_identity"]
    assert sandbox["backend"] == "process" and len(sandbox["recipe"]) == 16
    assert header["tasks"]["digest"].startswith("sha256:") and header["prompts"]["digest"].startswith("sha256:")
    assert header["host"]["cores"] == os.cpu_count()  # the machine's, not the sandbox worker count
    assert header["host"]["usable_cores"] == len(os.sched_getaffinity(0))


def test_resume_refuses_a_model_that_changed(tmp_path: Path):
    run_dir = _first_run(tmp_path)
    script = tmp_path / "script.jsonl"
    script.write_text(script.read_text().replace("Multiply, do not add.", "Multiply; never add."))
    line = _refused(run_dir, tmp_path, "the model")
    assert "file_sha256" in line


def test_resume_refuses_prompts_that_changed(tmp_path: Path):
    from harness.text.prompting import PROMPTS_DIR

    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "reflection.j2").write_text((PROMPTS_DIR / "reflection.j2").read_text())
    tasks, script = write_task_file(tmp_path), write_script(tmp_path)
    done = run_harness(
        "run", "--tasks", f"jsonl:{tasks}", "--model", f"scripted:{script}", "--strategy", "reflexion",
        "--trials", "2", "--sandbox", "process", "--out", str(tmp_path / "out"), "--prompts", str(prompts),
        "--memory-dir", str(tmp_path / "mem"), "--no-report", "--no-cache", cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    (run_dir,) = (tmp_path / "out").iterdir()
    (prompts / "reflection.j2").write_text((prompts / "reflection.j2").read_text() + "\nBe brief.\n")
    _refused(run_dir, tmp_path, "the prompt templates")


def test_resume_refuses_a_sandbox_that_changed(tmp_path: Path):
    """The worker's code the run was graded with is not this harness's any more (its
    recipe digest differs), as after an upgrade between the run and its resume."""
    run_dir = _first_run(tmp_path)
    header = json.loads((run_dir / "run.json").read_text())
    header["sandbox_identity"]["recipe"] = "0123456789abcdef"
    (run_dir / "run.json").write_text(json.dumps(header))
    line = _refused(run_dir, tmp_path, "the sandbox")
    assert "recipe '0123456789abcdef' != " in line


def test_resume_changed_goes_on_and_records_the_override(tmp_path: Path):
    run_dir = _first_run(tmp_path)
    before = _rows(run_dir)
    _cut_last_task(run_dir)
    script = tmp_path / "script.jsonl"
    script.write_text(script.read_text() + json.dumps({"match": "never matched", "reply": "x"}) + "\n")
    resumed = run_harness("run", "--resume", str(run_dir), "--resume-changed", "--no-report", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert len(_rows(run_dir)) == len(before)
    header = json.loads((run_dir / "run.json").read_text())
    [entry] = header["resumes"]
    assert entry["resume_changed"] is True
    changed = entry["changed"]["model_identity"]
    assert changed["was"]["file_sha256"] != changed["now"]["file_sha256"]
    assert header["model_identity"]["file_sha256"] == changed["now"]["file_sha256"]  # what produced what follows
    assert list(entry["changed"]) == ["model_identity"]


def test_resume_changed_without_resume_is_bad_input(tmp_path: Path):
    done = run_harness("run", "--resume-changed", cwd=tmp_path)
    assert done.returncode == 2 and "--resume-changed goes with --resume" in done.stderr


def test_resume_refuses_an_api_whose_served_model_changed(tmp_path: Path):
    """The served model is known from the server's first reply: the resumed session's
    first reply names another model, so its trial is not written and the run stops."""
    from tests.doubles.stub_server import Reply, StubServer

    tasks = write_task_file(tmp_path)
    answers = {json.loads(x)["match"]: json.loads(x)["reply"]
               for x in write_script(tmp_path).read_text().splitlines() if "match" in json.loads(x)}

    def reply(request) -> str:
        return next((r for m, r in answers.items() if m in request.prompt_text), "no idea")

    with StubServer(default=Reply(reply), model="stub-model-2026-01") as stub:
        args = ("--tasks", f"jsonl:{tasks}", "--model", f"openai:stub-model@{stub.openai_url}", "--strategy",
                "reflexion", "--trials", "2", "--sandbox", "process", "--out", str(tmp_path / "out"),
                "--memory-dir", str(tmp_path / "mem"), "--no-report", "--no-cache",
                "--allow-process-sandbox-with-api")
        done = run_harness("run", *args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        (run_dir,) = (tmp_path / "out").iterdir()
        header = json.loads((run_dir / "run.json").read_text())
        assert header["model_identity"]["served_model"] == "stub-model-2026-01"
        assert header["model_identity"]["base_url"] == stub.openai_url.rstrip("/")
        stub.model = "stub-model-2026-02"
        before = _cut_last_task(run_dir)
        calls = len(stub.requests)
        refused = run_harness("run", "--resume", str(run_dir), cwd=tmp_path)
        assert refused.returncode == 2, refused.stderr
        assert "the model changed since the run started (served_model 'stub-model-2026-01' != " \
               "'stub-model-2026-02')" in refused.stderr
        assert (run_dir / "trials.jsonl").read_bytes() == before
        assert json.loads((run_dir / "run.json").read_text()) == header  # as it was: no resume recorded
        assert len(stub.requests) > calls  # it did ask: that is how it knew

