"""How often a turn gives a usable tool call, natively and with the text protocol.

    python bench/tool_protocol.py [--models qwen2.5-coder-0.5b,qwen2.5-coder-1.5b] [--tasks 3]
    python bench/tool_protocol.py --smoke      # SmolLM2-135M, one task: plumbing only

For each local model, the same fixed agent turns are sent twice: once with the tools
offered natively (the engine renders them with the GGUF's chat template and parses the
calls back: llama.cpp's Hermes-2-Pro handler for Qwen2.5-Coder) and once through the
harness's text protocol (harness/models/text_tools.py). The turns, for the first N
builtin tasks of each kind (function, then io, alternating): the task alone; the task
after a `python` call whose script ran and printed its output; the task after a
`python` call that failed with a NameError. The agent has the two tools of the
`react` strategy, `python` (code, stdin) and `submit` (code); its system prompt, the
task's wording and the tool results are in bench/tool_protocol_prompts/.

A turn gives a *usable* call when at least one of its calls names an offered tool with
arguments that fit the tool's schema (harness.models.argument_problem). Temperature 0,
seed fixed, tool_choice "auto", all turns of a model in flight at once on `--slots`
slots (answers can then depend on the batch, see README; the rates are what count).

Prints one row per model and protocol (usable calls, turns with any call, calls by
tool, why the others were unusable, seconds per turn), then per model the line
`<model>: native <a>/<n> vs text <b>/<n> usable -> <pick>` (native on a tie). The
catalogue's `tool_protocol` (harness/data/local_models.toml) records the pick.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tomllib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import jinja2  # noqa: E402

from harness.models import (  # noqa: E402
    ChatModel,
    Completion,
    Message,
    ModelError,
    ModelSettings,
    ToolCall,
    ToolSpec,
    argument_problem,
    open_model,
)
from harness.models.text_tools import TextToolModel  # noqa: E402
from harness.tasks import load_tasks  # noqa: E402

PROMPTS = Path(__file__).resolve().parent / "tool_protocol_prompts"
TURN_KINDS = ("first", "after_output", "after_error")


@dataclass(frozen=True)
class Turn:
    task_id: str
    kind: str  # one of TURN_KINDS
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class Outcome:
    turn: Turn
    completion: Completion | None
    error: str | None
    seconds: float

    @property
    def usable(self) -> bool:
        return self.completion is not None and any(
            argument_problem(c, TOOLS) is None for c in self.completion.tool_calls)

    def why_not(self) -> str:
        if self.completion is None:
            return "model error"
        if not self.completion.tool_calls:
            error = self.completion.tool_parse_error or ""
            if not error:
                return "no call"
            return "unclosed block" if "not closed" in error else "not JSON" if "JSON" in error else "malformed call"
        return "bad arguments" if any(c.name in NAMES for c in self.completion.tool_calls) else "unknown tool"


def load_tools() -> tuple[ToolSpec, ...]:
    table = tomllib.loads((PROMPTS / "tools.toml").read_text(encoding="utf-8"))
    return tuple(
        ToolSpec(name, row["description"], {"type": "object", "properties": row["properties"],
                                            "required": row["required"]})
        for name, row in table.items()
    )


TOOLS = load_tools()
NAMES = {t.name for t in TOOLS}
_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(str(PROMPTS)), undefined=jinja2.StrictUndefined,
                          keep_trailing_newline=False)


def render(name: str, **values) -> str:
    return _ENV.get_template(f"{name}.j2").render(**values).strip()


def turns_for(n_tasks: int) -> list[Turn]:
    """The fixed turns: per task, the task alone, after a run that printed, after a run that failed."""
    tasks = load_tasks("builtin").tasks
    functions = [t for t in tasks if t.kind == "function"]
    programs = [t for t in tasks if t.kind == "io"]
    chosen = []
    for i in range(n_tasks):
        pool, index = (functions, i // 2) if i % 2 == 0 else (programs, i // 2)
        chosen.append(pool[index])
    out: list[Turn] = []
    for task in chosen:
        values = dict(kind=task.kind, prompt=task.prompt.strip("\n") if task.kind == "io" else task.prompt.rstrip("\n"),
                      entry_point=task.entry_point)
        first = Message("user", render("task", **values))
        out.append(Turn(task.task_id, "first", (first,)))
        for kind, broken in (("after_output", False), ("after_error", True)):
            code = render("draft", broken=broken, **values) + "\n"
            call = ToolCall("call_1", "python", json.dumps({"code": code}))
            result = render("result", broken=broken, line=code.count("\n"), **values)
            out.append(Turn(task.task_id, kind, (
                first, Message("assistant", "", tool_calls=(call,)),
                Message("tool", result, tool_call_id="call_1", name="python"))))
    return out


def ask(model: ChatModel, turn: Turn, max_tokens: int) -> Outcome:
    started = time.monotonic()
    try:
        completion = model.complete(list(turn.messages), system=render("system"), max_tokens=max_tokens,
                                    temperature=0.0, seed=1234, tools=TOOLS, tool_choice="auto")
        return Outcome(turn, completion, None, time.monotonic() - started)
    except ModelError as exc:
        return Outcome(turn, None, str(exc), time.monotonic() - started)


def measure(name: str, turns: list[Turn], *, slots: int, max_tokens: int, n_ctx: int) -> dict[str, list[Outcome]]:
    # One engine for both protocols: "native" opens the backend as it is, and the text
    # protocol wraps the same engine (a model whose template renders no tools has no
    # native row).
    settings = ModelSettings(local_slots=slots, n_ctx=n_ctx, tool_protocol="text")
    wrapped = open_model(f"local:{name}", settings)
    assert isinstance(wrapped, TextToolModel)
    backend = wrapped.inner
    protocols: dict[str, ChatModel] = {"text": wrapped}
    if backend.capabilities.tools:
        protocols = {"native": backend, **protocols}
    results: dict[str, list[Outcome]] = {}
    try:
        with ThreadPoolExecutor(slots) as pool:
            for protocol, model in protocols.items():
                results[protocol] = list(pool.map(lambda t: ask(model, t, max_tokens), turns))
    finally:
        wrapped.close()
    return results


def row(name: str, protocol: str, outcomes: list[Outcome]) -> str:
    n = len(outcomes)
    usable = sum(o.usable for o in outcomes)
    any_call = sum(bool(o.completion and o.completion.tool_calls) for o in outcomes)
    by_tool = Counter(c.name for o in outcomes if o.completion for c in o.completion.tool_calls)
    reasons = Counter(o.why_not() for o in outcomes if not o.usable)
    seconds = sum(o.seconds for o in outcomes) / max(n, 1)
    tools = ", ".join(f"{k} {v}" for k, v in sorted(by_tool.items())) or "-"
    why = ", ".join(f"{k} {v}" for k, v in reasons.most_common()) or "-"
    return (f"{name:<20} {protocol:<7} {usable:>2}/{n} {100 * usable / max(n, 1):>4.0f}%  "
            f"{any_call:>2}/{n}   {tools:<22} {why:<38} {seconds:>6.1f}")


def by_kind(outcomes: list[Outcome]) -> str:
    parts = []
    for kind in TURN_KINDS:
        of_kind = [o for o in outcomes if o.turn.kind == kind]
        parts.append(f"{kind} {sum(o.usable for o in of_kind)}/{len(of_kind)}")
    return ", ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="qwen2.5-coder-0.5b,qwen2.5-coder-1.5b",
                        help="local models of the catalogue, comma-separated")
    parser.add_argument("--tasks", type=int, default=3, help="builtin tasks (function and io, alternating)")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--smoke", action="store_true", help="smollm2-135m, one task: checks the plumbing only")
    parser.add_argument("--show", action="store_true", help="print each reply")
    args = parser.parse_args(argv)
    models = ["smollm2-135m"] if args.smoke else [m.strip() for m in args.models.split(",") if m.strip()]
    turns = turns_for(1 if args.smoke else args.tasks)
    print(f"{len(turns)} turns per protocol ({len(turns) // len(TURN_KINDS)} builtin tasks x {', '.join(TURN_KINDS)}), "
          f"temperature 0, tool_choice auto, max_tokens {args.max_tokens}, {args.slots} slots, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'model':<20} {'proto':<7} {'usable':>9}  {'any call':<8} {'calls by tool':<22} "
          f"{'why the others were not usable':<38} {'s/turn':>6}")
    picks = []
    started = time.monotonic()
    for name in models:
        results = measure(name, turns, slots=args.slots, max_tokens=args.max_tokens, n_ctx=args.n_ctx)
        for protocol, outcomes in results.items():
            print(row(name, protocol, outcomes), flush=True)
            if args.show:
                for o in outcomes:
                    text = o.completion.text if o.completion else o.error
                    error = o.completion.tool_parse_error if o.completion else None
                    print(f"  [{o.turn.task_id} {o.turn.kind}] usable={o.usable} error={error!r} {text!r}"[:600])
        native = sum(o.usable for o in results.get("native", []))
        text = sum(o.usable for o in results["text"])
        pick = "native" if "native" in results and native >= text else "text"
        kinds = "; ".join(f"{p}: {by_kind(o)}" for p, o in results.items())
        picks.append(f"{name}: native {native if 'native' in results else '-'}/{len(turns)} vs text "
                     f"{text}/{len(turns)} usable -> {pick}   ({kinds})")
    print()
    for line in picks:
        print(line)
    print(f"total {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
