"""What a test of another language costs in the sandbox, against the bare toolchain.

    python bench/languages.py [--languages rust,go,cpp,javascript] [--repeat R]

For each language, its builtin references (tasks/builtin-<language>.jsonl) are graded in
the docker sandbox: each program compiled once (a compile job on a compile worker), then
each hidden test run `R` times (default 5) by the driver (the function tasks) or on its
stdin (the io task). The same programs, the same files and the same compile commands
(sandbox/toolchains/) are then compiled and run with the bare toolchain in one plain
container of the same image (`docker exec`: no worker, no confinement, no pool), timed
inside it. Printed per language: ms per test in the sandbox and bare, their ratio; the
compile seconds of each and their ratio; and the compile share of the sandbox's time
for one trial's grading (one compile, then every test once). Compare ratios from one run.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.core.evaluator import HIDDEN, Evaluator  # noqa: E402
from harness.text.prompting import Prompts  # noqa: E402
from harness.tasks.registry import load_tasks  # noqa: E402
from sandbox import SandboxConfig, SandboxUnavailable, open_sandbox  # noqa: E402
from sandbox._engine import resolve_image  # noqa: E402
from sandbox.toolchains import toolchain  # noqa: E402

# Inside the plain container: compile each program with its steps, then run each test,
# timing both with the monotonic clock; one JSON line per program.
BARE = r'''
import json, os, subprocess, sys, tempfile, time
jobs = json.loads(sys.stdin.read())
for job in jobs:
    folder = tempfile.mkdtemp(dir="/tmp")
    for name, text in job["sources"].items():
        open(os.path.join(folder, name), "w").write(text)
    env = dict(os.environ, HOME=folder, TMPDIR=folder, **job["env"])
    started = time.monotonic()
    for step in job["steps"]:
        subprocess.run(step, cwd=folder, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    compile_s = time.monotonic() - started
    for name, text in job["run_files"].items():
        open(os.path.join(folder, name), "w").write(text)
    runs = []
    for _ in range(job["repeat"]):
        for test in job["tests"]:
            started = time.monotonic()
            if test["kind"] == "io":
                subprocess.run(job["argv"], cwd=folder, env=env, input=test["stdin"].encode(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
            else:
                read, write = os.pipe()
                results_r, results_w = os.pipe()
                os.write(write, ("token\n" + "".join(c + "\n" for c in test["calls"])).encode())
                os.close(write)
                subprocess.run(job["argv"], cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, pass_fds=(read, results_w),
                               preexec_fn=lambda r=read, w=results_w: (os.dup2(r, 3), os.dup2(w, 4)))
                os.close(read); os.close(results_w)
                os.read(results_r, 1 << 20); os.close(results_r)
            runs.append(time.monotonic() - started)
    print(json.dumps({"compile_s": compile_s, "run_s": runs}), flush=True)
'''


def bare(language: str, tasks, repeat: int) -> tuple[float, float]:
    """(seconds per compile, seconds per test) with the bare toolchain, medians."""
    chain = toolchain(language)
    jobs = []
    for task in tasks:
        build = chain.build(task.canonical_solution, task.entry_point if task.kind == "function" else None)
        if task.kind == "io":
            tests = [{"kind": "io", "stdin": t.input} for t in task.hidden_tests]
        else:
            tests = [{"kind": "call", "calls": [json.dumps(list(c.args)) for c in t.calls]} for t in task.hidden_tests]
        jobs.append({"sources": dict(build.sources), "steps": [list(s) for s in build.steps], "argv": list(build.run_argv),
                     "run_files": dict(build.run_files), "env": {k: v for k, v in chain.env.items() if k != "LD_PRELOAD"},
                     "tests": tests, "repeat": repeat})
    image = resolve_image(SandboxConfig().image, language)
    container = subprocess.run(["docker", "run", "-d", "--rm", "--network", "none", "--tmpfs", "/tmp:exec,size=512m",
                                "--entrypoint", "sleep", image, "3600"], check=True, capture_output=True, text=True).stdout.strip()
    try:
        done = subprocess.run(["docker", "exec", "-i", container, "python3", "-c", BARE], input=json.dumps(jobs),
                              capture_output=True, text=True, check=True)
    finally:
        subprocess.run(["docker", "rm", "-f", container], capture_output=True)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    compiles = [line["compile_s"] for line in lines]
    runs = [seconds for line in lines for seconds in line["run_s"]]
    return (statistics.median(compiles) if jobs[0]["steps"] else 0.0), statistics.median(runs)


def sandboxed(evaluator: Evaluator, sandbox, tasks, repeat: int) -> tuple[float, float, float]:
    """(seconds per compile, seconds per test, compile share of one grading) in the sandbox."""
    compiles, per_test, shares = [], [], []
    for task in tasks:
        started = time.perf_counter()
        first = evaluator.run(task.canonical_solution, task.hidden_tests, task=task, domain=HIDDEN)
        first_s = time.perf_counter() - started
        assert first.passed, (task.task_id, [r.detail for r in first.records])
        compile_s = first.compiled.seconds if first.compiled is not None and not first.compiled.cached else 0.0
        compiles.append(compile_s)
        tests = len(task.hidden_tests)
        for _ in range(repeat):  # the artifact is cached now: test jobs only
            started = time.perf_counter()
            evaluator.run(task.canonical_solution, task.hidden_tests, task=task, domain=HIDDEN)
            per_test.append((time.perf_counter() - started) / tests)
        shares.append(compile_s / first_s if first_s else 0.0)
    return statistics.median(compiles), statistics.median(per_test), statistics.median(shares)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--languages", default="rust,go,cpp,javascript")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    languages = [name.strip() for name in args.languages.split(",") if name.strip()]
    try:
        sandbox = open_sandbox(SandboxConfig(languages=tuple(languages), workers=1))
    except SandboxUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    evaluator = Evaluator(sandbox, Prompts(), timeout_s=20.0)
    print(f"{'language':11} {'tests':>5} {'sandbox ms/test':>15} {'bare ms/test':>12} {'ratio':>6} "
          f"{'sandbox compile s':>17} {'bare compile s':>14} {'ratio':>6} {'compile share':>13}")
    try:
        for language in languages:
            tasks = load_tasks(f"builtin:{language}").tasks
            s_compile, s_test, share = sandboxed(evaluator, sandbox, tasks, args.repeat)
            b_compile, b_test = bare(language, tasks, args.repeat)
            tests = sum(len(t.hidden_tests) for t in tasks)
            compile_ratio = f"{s_compile / b_compile:6.2f}" if b_compile else "     -"
            print(f"{language:11} {tests:5d} {s_test * 1000:15.1f} {b_test * 1000:12.1f} {s_test / b_test:6.2f} "
                  f"{s_compile:17.2f} {b_compile:14.2f} {compile_ratio} {share:13.2f}", flush=True)
    finally:
        sandbox.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
