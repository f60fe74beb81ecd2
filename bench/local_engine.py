"""The embedded model's engine: speculative decoding against plain decoding, in one run.

    python bench/local_engine.py [--rounds 1] [--per-role 2] [--big-per-role 1] [--skip-big]
    python bench/local_engine.py --slots 1,2,4     (the older comparison: slots, plain decoding)

1. The main job (`python -m harness run --no-cache`, the README's first command's run with
   the default model) with `--speculative off` and with `--speculative ngram-mod` (or the
   drafter `--speculative MODE` names; `auto` drafts at one slot only), one after
   the other (`--rounds N`: N of each, the order alternating), each in a fresh results
   folder; wall time per run, and from the runs' own records, per mode: tokens/s and
   draft acceptance for the main job's first answers, tests, lessons and retries apart.
2. The main job's own prompts (the plain run's recorded calls, `--per-role` of each role)
   sent at one slot to one engine per mode, interleaved call by call (the mode order
   rotating): the default model off / ngram-mod / ngram-simple / ngram-map-k, then
   (unless --skip-big) the 1.5B off / draft (the 0.5B) / ngram-mod / ngram-mod+draft
   (`--big-per-role` of each role); per mode: tokens/s, drafted and accepted tokens,
   answers identical to plain decoding's.

Other jobs on the machine slow every mode; the host's load average is printed beside each
figure. The last line is `engine: main job speculative/plain time <ratio> (<mode>)`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._runs import harness_run  # noqa: E402
from harness.models import Message, ModelSettings  # noqa: E402
from harness.models.local_backend import LocalModel  # noqa: E402
from harness.rundata.folder import read_trials  # noqa: E402

ROLES = ("first answers", "tests", "lessons", "retries")
SMALL_MODES = ("off", "ngram-mod", "ngram-simple", "ngram-map-k")
BIG_MODES = ("off", "draft", "ngram-mod", "ngram-mod+draft")
BIG_MODEL = "qwen2.5-coder-1.5b"


def role_of(event: Any, trial: int) -> str | None:
    if event.role == "test_writer":
        return "tests"
    if event.role == "reflection":
        return "lessons"
    if event.role == "actor":
        return "first answers" if trial == 1 else "retries"
    return None


def calls_of(run_dir: Path) -> list[tuple[str, Any]]:
    """(role, ModelCall event) for every answered call of a run, in record order."""
    out = []
    for record in read_trials(run_dir / "trials.jsonl"):
        for event in record.events:
            if getattr(event, "type", None) == "model_call" or type(event).__name__ == "ModelCall":
                role = role_of(event, record.trial)
                if role and event.error is None:
                    out.append((role, event))
    return out


def role_table(calls: list[tuple[str, Any]]) -> dict[str, dict[str, float]]:
    """Per role: calls, output tokens, engine seconds, tokens/s, drafted, accepted."""
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for role, e in calls:
        s = sums[role]
        s["calls"] += 1
        s["tokens"] += e.output_tokens
        s["seconds"] += e.latency_s
        s["drafted"] += e.draft_tokens or 0
        s["accepted"] += e.draft_accepted or 0
    for s in sums.values():
        s["tokens_per_s"] = s["tokens"] / s["seconds"] if s["seconds"] else 0.0
    return sums


def print_roles(label: str, table: dict[str, dict[str, float]]) -> None:
    for role in ROLES:
        s = table.get(role)
        if not s:
            continue
        rate = f"{s['accepted'] / s['drafted']:.2f}" if s["drafted"] else "-"
        print(f"  {label:>16} {role:<13} {int(s['calls']):3d} calls {int(s['tokens']):6d} tokens "
              f"{s['tokens_per_s']:6.1f} tokens/s; drafted {int(s['drafted'])}, accepted {int(s['accepted'])} "
              f"(acceptance {rate})", flush=True)


def main_jobs(rounds: int, out: Path, extra: list[str], spec: str) -> tuple[dict[str, float], dict[str, list[Path]], str]:
    """Runs the main job plain and with `spec`, alternating; (seconds, run folders, mode) by setting."""
    seconds: dict[str, float] = defaultdict(float)
    runs: dict[str, list[Path]] = defaultdict(list)
    mode = spec
    for r in range(rounds):
        order = ("off", spec) if r % 2 == 0 else (spec, "off")
        for setting in order:
            started = time.perf_counter()
            run_dir = harness_run(["--no-cache", "--speculative", setting, "--out", str(out / setting), *extra],
                                  out / f"{setting}-{r}.log")
            took = time.perf_counter() - started
            seconds[setting] += took
            runs[setting].append(run_dir)
            header = json.loads((run_dir / "run.json").read_text())
            recorded = header.get("model_identity", {}).get("speculative", {})
            if setting != "off":
                mode = recorded.get("mode", "?")
            print(f"main job, speculative {setting} ({recorded.get('mode', '?')}): {took:.0f} s "
                  f"(host load average {os.getloadavg()[0]:.1f})", flush=True)
    return seconds, runs, mode


def sample(calls: list[tuple[str, Any]], per_role: int) -> list[tuple[str, Any]]:
    picked: list[tuple[str, Any]] = []
    for role in ROLES:
        picked += [c for c in calls if c[0] == role][:per_role]
    return picked


def replay(model_name: str, modes: tuple[str, ...], calls: list[tuple[str, Any]]) -> None:
    """The calls, at one slot, to one engine per mode, interleaved call by call."""
    engines = {m: LocalModel.open(model_name, ModelSettings(n_ctx=4096, speculative=m)) for m in modes}
    try:
        results: dict[str, list[tuple[str, Any]]] = defaultdict(list)
        answers: dict[str, list[str]] = defaultdict(list)
        for i, (role, e) in enumerate(calls):
            order = modes[i % len(modes):] + modes[:i % len(modes)]
            for m in order:
                c = engines[m].complete([Message(**msg) for msg in e.messages], system=e.system,
                                        max_tokens=e.max_tokens or 512, temperature=e.temperature or 0.0,
                                        seed=e.seed)
                results[m].append((role, _as_event(c)))
                answers[m].append(c.text)
        for m in modes:
            same = sum(a == b for a, b in zip(answers[m], answers[modes[0]]))
            total = role_table(results[m])
            toks = sum(s["tokens"] for s in total.values())
            secs = sum(s["seconds"] for s in total.values())
            print(f"{model_name} at 1 slot, speculative {engines[m].speculation.mode}: {toks / secs:.1f} tokens/s "
                  f"over {len(calls)} calls; answers identical to {modes[0]}'s: {same}/{len(calls)} "
                  f"(host load average {os.getloadavg()[0]:.1f})", flush=True)
            print_roles(m, total)
    finally:
        for engine in engines.values():
            engine.close()


def _as_event(c: Any) -> Any:
    return argparse.Namespace(output_tokens=c.usage.output_tokens, latency_s=c.latency_s,
                              draft_tokens=c.draft_tokens, draft_accepted=c.draft_accepted)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=1, help="main jobs per mode (alternating order)")
    p.add_argument("--per-role", type=int, default=2, help="recorded calls per role replayed to the default model")
    p.add_argument("--big-per-role", type=int, default=1, help=f"recorded calls per role replayed to {BIG_MODEL}")
    p.add_argument("--skip-big", action="store_true", help=f"no {BIG_MODEL} comparison")
    p.add_argument("--speculative", default="ngram-mod", metavar="MODE",
                   help="the main job's drafter against off (default ngram-mod: `auto` drafts at one slot only)")
    p.add_argument("--limit", type=int, help="a quick check of this script: the main job on its first N tasks only")
    p.add_argument("--model", default="local", help="the main job's model (default: local, the default model)")
    p.add_argument("--slots", help="the older comparison instead: plain decoding at these slot counts, e.g. 1,2,4")
    args = p.parse_args(argv)
    if args.slots:
        from bench._local_slots import main as slots_main

        return slots_main(["--slots", args.slots])
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        extra = ["--model", args.model] + (["--limit", str(args.limit)] if args.limit else [])
        seconds, runs, mode = main_jobs(args.rounds, Path(tmp), extra, args.speculative)
        for setting in ("off", args.speculative):
            table = role_table([c for run in runs[setting] for c in calls_of(run)])
            print(f"main job's calls, speculative {setting}:")
            print_roles(setting, table)
        recorded = calls_of(runs["off"][0])
        if args.per_role:
            small = args.model.partition(":")[2] or "qwen2.5-coder-0.5b"
            replay(small, SMALL_MODES, sample(recorded, args.per_role))
        if not args.skip_big and args.big_per_role:
            replay(BIG_MODEL, BIG_MODES, sample(recorded, args.big_per_role))
    print(f"engine: main job speculative/plain time {seconds[args.speculative] / seconds['off']:.2f} ({mode})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
