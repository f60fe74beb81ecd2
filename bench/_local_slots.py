"""The embedded model's engine at 1, 2 and 4 slots, side by side in one run (plain decoding).

    python bench/local_engine.py --slots 1,2,4

Sends the same real harness prompts to the model at each slot count: for the first N
tasks of the default task set, the calls that the harness's own test writer, Actor
(first trial) and Self-Reflection (on a stub implementation that fails the task's first
hidden test) make, rendered from the project's templates (harness/prompts/), at the
run's default max_tokens and temperature 0. At N slots, N calls are in flight at once (as N busy
workers would keep them), so the engine batches them.

For each slot count it prints the generated tokens per second (all calls together,
wall time, the model's load excluded; other processes on the machine slow it down,
so the host's load average is printed beside it, and the tokens per CPU-second of
this process, which other work does not change) and the fraction of answers identical to the
one-slot answers (greedy answers can depend on the batch: see README), and last the
line `local engine throughput at 4 slots vs 1: <x>`.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.core.actor import write_code  # noqa: E402
from harness.core.calls import CallSettings, Meter  # noqa: E402
from harness.config import RunConfig  # noqa: E402
from harness.models.hostinfo import available_cores  # noqa: E402
from harness.models import Completion, Message, ModelSettings, open_model  # noqa: E402
from harness.text.prompting import Prompts  # noqa: E402
from harness.core.reflection import reflect  # noqa: E402
from harness.tasks import load_tasks  # noqa: E402
from harness.core.testgen import write_tests  # noqa: E402

Call = tuple[str, str, list[Message], int]  # (label, system, messages, max_tokens)


class _Recorder:
    """A ChatModel that only records the calls the harness's own code makes."""

    spec = "recorder"

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[Message], int]] = []

    def complete(self, messages, *, system=None, max_tokens=512, temperature=0.0, stop=None, seed=None):
        self.calls.append((system or "", list(messages), max_tokens))
        return Completion(text="```python\npass\n```", model="recorder")

    def close(self) -> None:
        pass


def harness_prompts(n_tasks: int) -> list[Call]:
    """The calls the test writer, the Actor (first trial) and Self-Reflection make for the
    first builtin tasks, built by the harness's own functions from its templates."""
    config, prompts = RunConfig(), Prompts()
    settings = CallSettings(temperature=0.0, seed=config.seed)
    calls: list[Call] = []
    for task in load_tasks(config.tasks).tasks[:n_tasks]:
        recorder = _Recorder()
        write_tests(recorder, prompts, Meter(), task, max_tests=config.max_internal_tests,
                    max_tokens=config.max_tokens_tests, settings=settings)
        write_code(recorder, prompts, Meter(), task, previous=None, lessons=[],
                   max_tokens=config.max_tokens, settings=settings)
        # Reflection on a stub implementation that fails the task's first hidden test.
        reflect(recorder, prompts, Meter(), task, code=task.prompt.rstrip() + "\n    pass\n",
                feedback=f"Tests failed:\n{task.hidden_tests[0].strip()[:400]}  # failed",
                max_tokens=config.max_tokens_lesson, settings=settings)
        for role, (system, messages, max_tokens) in zip(("testgen", "actor", "reflection"), recorder.calls):
            calls.append((f"{task.task_id} {role}", system, messages, max_tokens))
    return calls


def run_at(spec: str, slots: int, calls: list[Call]) -> tuple[dict[str, str], int, float, float, float]:
    """(answers by label, generated tokens, seconds, CPU seconds, load seconds) at `slots` slots."""
    started = time.monotonic()
    model = open_model(spec, ModelSettings(local_slots=slots, speculative="off"))
    load_s = time.monotonic() - started
    cpu_started = time.process_time()  # this process, every thread (the engine's included)
    try:
        def one(call: Call):
            label, system, messages, max_tokens = call
            return label, model.complete(messages, system=system, max_tokens=max_tokens, temperature=0.0, seed=0)

        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=slots) as pool:  # `slots` calls in flight
            done = list(pool.map(one, calls))
        seconds = time.monotonic() - started
        cpu_s = time.process_time() - cpu_started
    finally:
        model.close()
    answers = {label: c.text for label, c in done}
    return answers, sum(c.usage.output_tokens for _, c in done), seconds, cpu_s, load_s


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="local", help="a local model spec (default: local, the default model)")
    p.add_argument("--tasks", type=int, default=6, help="builtin tasks whose prompts are sent (3 prompts each)")
    p.add_argument("--slots", default="1,2,4", help="slot counts to compare; the first is the reference")
    args = p.parse_args(argv)
    slot_counts = [int(s) for s in args.slots.split(",")]
    calls = harness_prompts(args.tasks)
    print(f"{len(calls)} harness prompts (testgen, actor, reflection for {args.tasks} builtin tasks) to "
          f"{args.model} on {available_cores()} core(s), temperature 0", flush=True)
    reference: dict[str, str] | None = None
    rates: dict[int, float] = {}
    per_cpu: dict[int, float] = {}
    for slots in slot_counts:
        answers, tokens, seconds, cpu_s, load_s = run_at(args.model, slots, calls)
        rates[slots] = tokens / seconds
        per_cpu[slots] = tokens / cpu_s
        if reference is None:
            reference = answers
        same = sum(answers[k] == reference[k] for k in reference)
        print(f"slots {slots}: {tokens} tokens in {seconds:.1f} s = {rates[slots]:.1f} generated tokens/s; "
              f"answers identical to {slot_counts[0]} slot(s): {same}/{len(reference)} = {same / len(reference):.2f} "
              f"(load {load_s:.1f} s; {per_cpu[slots]:.1f} tokens per CPU-second; host load average "
              f"{os.getloadavg()[0]:.1f})", flush=True)
    if 1 in rates and 4 in rates:
        # Tokens per CPU-second do not move with other work on the machine: what the
        # batch saves in compute. The wall-time figure below is what a run sees.
        print(f"tokens per CPU-second at 4 slots vs 1: {per_cpu[4] / per_cpu[1]:.2f}")
        print(f"local engine throughput at 4 slots vs 1: {rates[4] / rates[1]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
