"""`harness run --view`, resume records, and the CLI's rough edges (issue 12, point 11)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from harness.cli import build_parser
from harness.config import RunConfig

ROOT = Path(__file__).resolve().parents[2]


def _task_file(folder: Path) -> Path:
    rows = [{"task_id": f"mul/{i}", "prompt": f'def f{i}(n: int) -> int:\n    """Return n times {i}."""\n',
             "entry_point": f"f{i}", "tests": [f"assert f{i}(3) == {3 * i}"]} for i in range(4)]
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _script(folder: Path, latency_s: float) -> Path:
    rules: list[dict] = [{"latency_s": latency_s}]
    for i in range(4):
        rules.append({"match": f"unit tests for the function `f{i}`", "reply": f"```python\nassert f{i}(1) == {i}\n```"})
        rules.append({"match": f"f{i}", "reply": f"```python\ndef f{i}(n):\n    return n + {i}\n```"})
    path = folder / "script.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rules))
    return path


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HARNESS_CACHE_DIR": str(tmp_path / "user-cache")}


def test_run_with_view_serves_the_running_run(tmp_path: Path):
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    out = tmp_path / "out"
    args = [sys.executable, "-m", "harness", "run", "--tasks", str(_task_file(tmp_path)),
            # 1.5 s a model call: the run lasts long enough for the view, slow on a loaded
            # machine, to answer at least twice while trials land
            "--model", f"scripted:{_script(tmp_path, 1.5)}", "--sandbox", "process", "--out", str(out),
            "--workers", "1", "--trials", "2", "--no-report", "--view"]
    proc = subprocess.Popen(args, cwd=cwd, env=_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()  # drained all along, so the run never blocks on a full pipe
    try:
        url = None
        deadline = time.monotonic() + 120
        while url is None and time.monotonic() < deadline and proc.poll() is None:
            found = re.search(r"view: (http://127\.0\.0\.1:\d+/runs/\S+)", "".join(lines))
            url = found.group(1) if found else None
            time.sleep(0.05)
        assert url, "".join(lines)
        run_id = url.rsplit("/", 1)[1]
        states = []
        while proc.poll() is None:
            try:
                with urllib.request.urlopen(url.replace(f"/runs/{run_id}", f"/api/runs/{run_id}/state"), timeout=30) as r:
                    states.append(json.loads(r.read()))
                with urllib.request.urlopen(url, timeout=30) as r:
                    assert r.status == 200
            except OSError:
                continue  # the run ended and took the view with it (the loop then stops)
            time.sleep(0.2)
        proc.wait(timeout=120)
        reader.join(timeout=30)
        rest = "".join(lines)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, rest
    assert "view: closed with the run" in rest
    counts = [s["trials"] for s in states]
    assert any(s["state"] == "running" for s in states) and len(set(counts)) > 1, states  # trials landed live
    # memory and the response cache did not land in the folder the command started from
    assert list(cwd.iterdir()) == []
    assert (out.parent / "reflections").is_dir() and (tmp_path / "user-cache").is_dir()

    # resuming (here: a finished run) records the session in run.json
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--resume", str(out / run_id), "--no-report",
                           "--sandbox", "process"], cwd=cwd, env=_env(tmp_path), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    header = json.loads((out / run_id / "run.json").read_text())
    assert len(header["resumes"]) == 1
    assert header["resumes"][0]["trials_before"] == sum(1 for _ in (out / run_id / "trials.jsonl").open())


def test_k_zero_reads_as_a_user_wrote_it(tmp_path: Path):
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--k", "0"], cwd=tmp_path, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: k must be a list of integers >= 1, e.g. --k 1,5; got 0"


def test_every_setting_has_a_flag_or_is_documented_as_toml_only():
    parser = build_parser()
    run = parser._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
    dests = {a.dest for a in run._actions}
    settings = {f for f in RunConfig.__dataclass_fields__}
    missing = sorted(settings - dests - {"strategy", "prices"})
    assert missing == [], f"settings without a run flag: {missing}"
    assert "`prices`" in (run.epilog or "")
    # that every flag is documented, with its default: tests/test_docs.py (docs/running.md)


def test_compare_takes_labels(tmp_path: Path, capsys):
    from harness.cli import main as harness_main
    from viewruns import header, two_strategy_records, write_run

    a = write_run(tmp_path / "run-a", header(), two_strategy_records())
    b = write_run(tmp_path / "run-b", header("run-b"), two_strategy_records("run-b"))
    out = tmp_path / "cmp"
    assert harness_main(["compare", str(a), str(b), "--label", "run-b=second look", "--out", str(out)]) == 0
    html = (out / "report.html").read_text()
    assert "Comparison of run-a, second look" in html
    assert harness_main(["compare", str(a), str(b), "--label", "run-z=x"]) == 2
    assert "no such run among the folders given" in capsys.readouterr().err
