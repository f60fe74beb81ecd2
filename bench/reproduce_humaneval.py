"""Reproduction check: the baseline's HumanEval pass@1 beside the published figure.

    python bench/reproduce_humaneval.py [--model SPEC] [--limit N] [--sandbox docker|process]
    python bench/reproduce_humaneval.py --resume results/<run-id>   (finish an interrupted one)

Runs `python -m harness run --tasks humaneval --strategy baseline` (one sample per
task, temperature 0, the harness's own prompts and sandbox) on all 164 problems, then
prints pass@1 with its 95% bootstrap CI over tasks beside the figure the model's
authors published, where one is known. A gap far outside the CI points at the harness
(prompt, extraction, grading), not the model. The last line is
`humaneval baseline pass@1: <x> (published <y>)`, both in percent.

With the embedded model, one answer at a time (the earlier engine), this took about 22
minutes on 2 cores: a bench, not a CI test. The local engine now answers up to
--local-slots calls together (default: min(workers, 4)); --reproducible runs one slot,
whose answers depend on the request alone; --speculative MODE sets the engine's drafter
(default: the run's, auto; off for plain decoding). The bench prints how long the run took
and with which engine, slots and drafter.
--limit N runs the first N problems only (for a quick check; not comparable).
Incomplete attempts (harness or model errors) are counted and left out, never scored
as failures.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.rundata import metrics  # noqa: E402
from harness.rundata import frames  # noqa: E402
from harness.rundata.folder import load as load_run  # noqa: E402

HUMANEVAL_TASKS = 164
STRATEGY = "baseline"  # plain sampling: the published figure is one answer per problem
# pass@1 (%) on HumanEval from the Qwen2.5-Coder technical report (arXiv 2409.12186),
# instruct models; keys are matched against the model spec and run.json, lower case.
PUBLISHED: dict[str, tuple[float, str]] = {
    "qwen2.5-coder-0.5b-instruct": (61.6, "Qwen2.5-Coder technical report (arXiv 2409.12186)"),
    "qwen2.5-coder-1.5b-instruct": (70.7, "Qwen2.5-Coder technical report (arXiv 2409.12186)"),
}


def local_model_file(spec: str) -> str:
    """The GGUF file name behind `local` / `local:<name>` (from the models catalogue)."""
    catalogue = tomllib.loads((ROOT / "harness" / "data" / "local_models.toml").read_text(encoding="utf-8"))
    name = spec.partition(":")[2] or catalogue.get("default", "")
    entry = (catalogue.get("models") or {}).get(name)
    return str(entry.get("file", name)) if entry else name


def published_for(spec: str, header: dict) -> tuple[float, str] | None:
    """The published figure for the model a run used, if known."""
    text = spec
    if spec == "local" or spec.startswith("local:"):
        text += " " + local_model_file(spec)
    text = (text + " " + json.dumps(header.get("model_info") or header.get("model") or "")).lower()
    text = text.replace("_", "-")
    for key, value in PUBLISHED.items():
        if key in text:
            return value
    return None


def run_baseline(args: argparse.Namespace, out: Path) -> tuple[int, Path | None]:
    """Runs the harness; returns (exit code, the new run folder or None)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    if args.resume is not None:  # an interrupted bench run: finish it, then score it
        cmd = [sys.executable, "-m", "harness", "run", "--resume", str(args.resume)]
        print("$ " + " ".join(cmd[1:]), flush=True)
        return subprocess.run(cmd, cwd=ROOT, env=env).returncode, args.resume
    out.mkdir(parents=True, exist_ok=True)
    before = {p.name for p in out.iterdir()}
    cmd = [sys.executable, "-m", "harness", "run", "--tasks", "humaneval", "--strategy", STRATEGY,
           "--samples", "1", "--trials", "1", "--k", "1", "--temperature", "0", "--model", args.model,
           "--out", str(out), "--no-report"]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    if args.reproducible:
        cmd.append("--reproducible")
    for flag, value in (("--sandbox", args.sandbox), ("--workers", args.workers), ("--max-tokens", args.max_tokens),
                        ("--local-slots", args.local_slots), ("--speculative", args.speculative)):
        if value is not None:
            cmd += [flag, str(value)]
    print("$ " + " ".join(cmd[1:]), flush=True)
    code = subprocess.run(cmd, cwd=ROOT, env=env).returncode
    new = sorted(p for p in out.iterdir() if p.name not in before and (p / "run.json").is_file())
    return code, (new[-1] if new else None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local", metavar="SPEC", help="model spec (default local: the embedded model)")
    parser.add_argument("--limit", type=int, default=None, metavar="N", help="first N problems only (not comparable)")
    parser.add_argument("--sandbox", choices=["docker", "process"], default=None)
    parser.add_argument("--workers", type=int, default=None, metavar="N")
    parser.add_argument("--max-tokens", type=int, default=None, metavar="N")
    parser.add_argument("--local-slots", type=int, default=None, metavar="N",
                        help="local model: calls the engine answers together (default: min(workers, 4))")
    parser.add_argument("--speculative", default=None, metavar="MODE",
                        help="local model: speculative decoding (default: the run's, auto); off for plain decoding")
    parser.add_argument("--reproducible", action="store_true",
                        help="local model: one slot, answers bitwise the same run to run")
    parser.add_argument("--resume", type=Path, default=None, metavar="RUN_DIR",
                        help="finish an interrupted bench run (its own settings), then score it")
    parser.add_argument("--out", type=Path, default=ROOT / "results", metavar="DIR",
                        help="folder for the run folder (default results/)")
    args = parser.parse_args(argv)

    started = time.monotonic()
    code, run_dir = run_baseline(args, args.out)
    took = time.monotonic() - started
    if run_dir is None:
        print(f"error: the run wrote no run folder under {args.out} (exit code {code}); see its output above",
              file=sys.stderr)
        return code or 1
    run = load_run(run_dir)
    trials = frames.trials_frame(run.records)
    attempts = frames.attempts_frame(trials)
    per_task = metrics.per_task_pass_at_k(attempts, STRATEGY, 1)
    est = metrics.estimate(per_task)
    incomplete = frames.incomplete_attempts(trials, run.error_keys).get(STRATEGY, 0)
    n_tasks = len(frames.task_ids_of(run.header, trials))
    print(f"bench: run folder {run_dir}")
    print(f"tasks: {est.tasks} scored of {n_tasks} run ({HUMANEVAL_TASKS} in HumanEval); "
          f"{incomplete} incomplete attempt(s), not scored")
    if est.tasks == 0:
        print("error: no task was scored", file=sys.stderr)
        return code or 1
    print(f"pass@1 {100 * est.value:.1f}% [95% CI {100 * est.ci_low:.1f}, {100 * est.ci_high:.1f}] "
          "(Wilson score interval over tasks)")
    published = published_for(args.model, run.header)
    if published:
        print(f"published: {published[0]:.1f} ({published[1]}); "
              + ("inside" if est.ci_low * 100 <= published[0] <= est.ci_high * 100 else "OUTSIDE")
              + " the 95% CI")
    if est.tasks < HUMANEVAL_TASKS:
        print(f"note: {est.tasks} of {HUMANEVAL_TASKS} tasks scored: not comparable with the published figure")
    shown = f"{published[0]:.1f}" if published else "unknown"
    config = run.header.get("config") or {}
    identity = run.header.get("model_identity") or {}
    engine = f"{identity['engine']} {identity.get('engine_version', '')}".strip() if identity.get("engine") else None
    print(f"took {took:.0f} s for {n_tasks} task(s) with --workers {config.get('workers')}"
          + (f", engine {engine}" if engine else "")
          + (f", {config.get('local_slots')} slot(s)" if args.model.split(':')[0] == 'local' else "")
          + (" (reproducible)" if config.get("reproducible") else "")
          + (f", speculative {identity['speculative'].get('mode')}" if isinstance(identity.get("speculative"), dict) else ""))
    print(f"humaneval baseline pass@1: {100 * est.value:.1f} (published {shown})")
    return code


if __name__ == "__main__":
    sys.exit(main())
