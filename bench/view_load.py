"""Speed of `harness view` on a large run, through the real server.

Builds a synthetic run of 100,000 trial records (schema 2 shape: code, raw answers,
internal and hidden test results, feedback, lessons) in a temporary folder, starts
`python -m harness view` on it as a subprocess on 127.0.0.1, and times over HTTP:

* how long the server takes, once, to index trials.jsonl and compute the run's
  numbers and plots (it does so in the background as it starts, newest run first);
* the run page's first request after that, and again;
* the task table's first page and the first task's page.

    python bench/view_load.py [--trials 100000] [--keep DIR]

The last line is `view: run page of a <n>-trial run in <x> s`: the first request of
the run page once the run is indexed. Goal: <= 1.0 s on a 2-core machine.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STRATEGIES = ("reflexion", "feedback", "resample", "baseline")
BUDGET = 3
SAMPLES = 5


def _code(task: int, trial: int, ok: bool) -> str:
    body = "    return sorted(set(xs))[:k]" if ok else f"    return xs[:k]  # try {trial}"
    return (f"def solve_{task}(xs: list[int], k: int) -> list[int]:\n"
            f"    \"\"\"Task {task}: the k smallest distinct values.\"\"\"\n"
            f"    if k <= 0:\n        return []\n{body}\n")


def _tests(task: int, ok: bool) -> list[dict]:
    return [{"test": f"assert solve_{task}([3, 1, 2, 1], {k}) == {sorted({3, 1, 2})[:k]}",
             "status": "passed" if ok or k == 1 else "failed",
             "detail": "" if ok or k == 1 else f"got {[3, 1, 2, 1][:k]}"} for k in (1, 2, 3)]


def synthetic_records(n_trials: int, seed: int = 0):
    """Yields schema-2 trial dicts until n_trials, task by task, strategies interleaved."""
    rng = random.Random(seed)
    made = 0
    task = 0
    while True:
        skill = rng.random()
        for attempt in range(1, SAMPLES + 1):
            for strategy in STRATEGIES:
                budget = 1 if strategy == "baseline" else BUDGET
                for trial in range(1, budget + 1):
                    ok = rng.random() < skill * (1.0 + 0.15 * (trial - 1))
                    internal_ok = ok if rng.random() > 0.1 else not ok
                    last = trial == budget or (strategy != "baseline" and internal_ok)
                    code = _code(task, trial, ok)
                    rec = {
                        "schema": 2, "run_id": "bench-view", "task_id": f"Synth/{task}", "strategy": strategy,
                        "attempt": attempt, "trial": trial, "final": last,
                        "stop_reason": None if not last else (
                            "single_sample" if strategy == "baseline" else ("internal_pass" if internal_ok else "budget")),
                        "code": code, "raw_output": f"Here is the implementation:\n\n```python\n{code}```\n",
                        "internal_tests": [] if strategy == "baseline" else [t["test"] for t in _tests(task, True)],
                        "internal_results": [] if strategy == "baseline" else _tests(task, internal_ok),
                        "internal_passed": None if strategy == "baseline" else internal_ok,
                        "hidden_results": _tests(task, ok), "hidden_passed": ok,
                        "feedback": "" if internal_ok else "assert ... == [1, 2]  # got [3, 1]",
                        "lesson": ("The slice keeps duplicates; deduplicate and sort before slicing."
                                   if strategy == "reflexion" and trial > 1 else None),
                        "memory_shown": [], "testgen": None, "error": None,
                        "model_calls": 2 if trial > 1 or strategy != "baseline" else 1, "cached_calls": 0,
                        "input_tokens": 400 * trial, "output_tokens": 120, "cache_read_tokens": 0,
                        "cache_write_tokens": 0, "cost_usd": None, "model_s": 2.5, "sandbox_s": 0.05,
                        "wall_s": 2.6, "finished_at": f"2026-12-01T00:{(made // 6000) % 60:02d}:00+00:00",
                        "oracle_feedback": False, "temperature_used": 0.0,
                    }
                    yield rec
                    made += 1
                    if made >= n_trials:
                        return
                    if last:
                        break
        task += 1


def write_run(folder: Path, n_trials: int) -> tuple[Path, int]:
    run_dir = folder / "bench-view"
    run_dir.mkdir(parents=True, exist_ok=True)
    tasks: list[str] = []
    with (run_dir / "trials.jsonl").open("w", encoding="utf-8") as fh:
        for rec in synthetic_records(n_trials):
            if not tasks or tasks[-1] != rec["task_id"]:
                tasks.append(rec["task_id"])
            fh.write(json.dumps(rec, sort_keys=True) + "\n")
    header = {"schema": 2, "run_id": "bench-view", "created_at": "2026-12-01T00:00:00+00:00",
              "model": "openai:synthetic@http://127.0.0.1:1",
              "config": {"strategy": "all", "strategies": list(STRATEGIES), "samples": SAMPLES, "k": [1],
                         "trials": BUDGET, "model": "openai:synthetic@http://127.0.0.1:1", "tasks": "synthetic",
                         "oracle_feedback": False, "temperature": 0.0},
              "tasks": {"spec": "synthetic", "name": "synthetic", "digest": "sha256:bench", "count": len(tasks),
                        "task_ids": tasks}}
    (run_dir / "run.json").write_text(json.dumps(header), encoding="utf-8")
    return run_dir, len(tasks)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[float, int]:
    t = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as resp:
        body = resp.read()
        assert resp.status == 200, (url, resp.status)
    return time.perf_counter() - t, len(body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="build the run here and keep it")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="view-bench-"))
    t = time.perf_counter()
    run_dir, n_tasks = write_run(folder, args.trials)
    size = (run_dir / "trials.jsonl").stat().st_size
    print(f"built {args.trials} trials over {n_tasks} tasks ({size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s")

    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "harness", "view", str(folder), "--port", str(port)],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        base = None
        for line in server.stdout:  # type: ignore[union-attr]
            found = re.search(r"http://127\.0\.0\.1:\d+", line)
            if found:
                base = found.group(0)
                break
        if base is None:
            raise SystemExit("the view server did not start")
        for _ in range(200):  # the URL is printed just before uvicorn listens
            try:
                _get(base + "/static/view.css")
                break
            except OSError:
                time.sleep(0.05)
        run_url = f"{base}/runs/{run_dir.name}"
        state_url = f"{base}/api/runs/{run_dir.name}/state"
        t = time.perf_counter()
        while not json.loads(urllib.request.urlopen(state_url, timeout=60).read())["indexed"]:
            time.sleep(0.05)
        print(f"index, numbers and plots built at start-up, once per run: {time.perf_counter() - t:.1f} s "
              "after the server listened")
        first, n_bytes = _get(run_url)
        print(f"run page, first request: {first:.3f} s, {n_bytes / 1e3:.0f} kB")
        again = min(_get(run_url)[0] for _ in range(3))
        print(f"run page, again: {again:.3f} s")
        table, _ = _get(run_url + "/tasks")
        print(f"task table, first page: {table:.3f} s")
        task_url = f"{run_url}/tasks/{urllib.parse.quote('Synth/0', safe='/')}"
        task, n_bytes = _get(task_url)
        print(f"first task page: {task:.3f} s, {n_bytes / 1e3:.0f} kB")
    finally:
        server.terminate()
        server.wait(timeout=10)
        if args.keep is None:  # the 100,000-trial run it built (175 MB) goes with it
            shutil.rmtree(folder, ignore_errors=True)
    print(f"view: run page of a {args.trials}-trial run in {first:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
