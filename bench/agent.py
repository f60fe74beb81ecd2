"""Reflexion against a tool-using agent at equal cost: reflexion, react, react+reflexion
and resample side by side, with calls, tokens and time per attempt beside pass@1.

    python bench/agent.py                  # embedded model: builtin:quick[:4] and HumanEval[:4], 4 agent turns (~20 min on 2 cores)
    python bench/agent.py --smoke          # the same code on the scripted model, process sandbox
    python bench/agent.py --tasks humaneval --runs results/<run>   # measure a finished run beside a new one

One `python -m harness run --strategy reflexion,react,react+reflexion,resample` per task
set, as a researcher would type it; then, from each run's summary.json (the project's
own numbers: equal footing, bootstrap CIs): per strategy pass@1 with its 95% CI, model
calls, tokens and trial time per complete attempt, the agents' turns per episode and
how attempts stopped. And the speed of the `python` tool (issue 34, point 10): every
script the agents ran is run again, one at a time, as the sandbox's own jobs (an io job
with no expected output, `sandbox.run_script`, and a plain io job with an expected
output), and the median tool round trip is printed beside the median job time. The
last line:

    agent: reflexion <p> react <p> react+reflexion <p> resample <p> (pass@1, <N> tasks); python tool <a> s vs sandbox job <b> s (medians)

--smoke: a scripted model (every third task's first answer wrong; right after feedback
or a lesson; the agents run one script, then submit) on 4 + 4 tasks; its pass rates
say the plumbing works, nothing about any model.
"""
from __future__ import annotations

import argparse
import doctest
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _runs import harness_run  # noqa: E402
from harness.rundata import folder, numbers, read_trials  # noqa: E402
from harness.rundata.events import ToolCallRun  # noqa: E402
from harness.tasks import load_tasks  # noqa: E402

STRATEGIES = ("reflexion", "react", "react+reflexion", "resample")
AGENTS = ("react", "react+reflexion")


def smoke_script(specs: list[tuple[str, int]], path: Path) -> Path:
    """Rules for the scripted model, per task (the first rule that matches answers):
    lessons; tests from the docstring's first example; the agent's second turn (its
    script's output seen) submits, its first runs a script; the Actor's answers. Every
    third task is answered wrong until feedback or a lesson."""
    rules: list[dict] = []
    for spec, limit in specs:
        for i, task in enumerate(load_tasks(spec).select(limit=limit).tasks):
            ep = task.entry_point
            right = (task.canonical_solution or "").strip("\n")
            right = right if right.lstrip().startswith(("def ", "import ", "from ", "class ")) else \
                task.prompt + right  # HumanEval's solutions are the body: the prompt makes them whole
            wrong = f"def {ep}(*args, **kwargs):\n    return None\n"
            first = wrong if i % 3 == 0 else right

            def script(mark: str, code: str) -> dict:
                return {"name": "python", "arguments": {"code": f"{code}\nprint('SMOKE-RAN-{ep}-{mark}')"}}

            def submit(code: str) -> dict:
                return {"name": "submit", "arguments": {"code": code}}
            rules += [
                {"match": f"The submitted answer:\n\n```python\ndef {ep}(*args", "reply": f"LESSON-{ep}: return what the docstring asks."},
                {"match": f"The implementation:\n\n```python\ndef {ep}(*args", "reply": f"LESSON-{ep}: return what the docstring asks."},
                {"match": f"unit tests for the function `{ep}`", "reply": "```python\n" + _tests(task) + "\n```"},
                {"match": f"SMOKE-RAN-{ep}-right", "reply": "It works.", "tool_calls": [submit(right)]},
                {"match": f"SMOKE-RAN-{ep}-first", "reply": "Submitting.", "tool_calls": [submit(first)]},
                {"match": f"LESSON-{ep}", "reply": "Again, with the lesson.", "tool_calls": [script("right", right)]},
                {"match": f"The task is a function, `{ep}`", "reply": "Let me try it.",
                 "tool_calls": [script("first", first)]},
                {"match": f"Write an improved implementation of `{ep}`", "reply": f"```python\n{right}\n```"},
                {"match": f"Implement the function `{ep}`", "reply": f"```python\n{first}\n```"},
            ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rules))
    return path


def _tests(task) -> str:
    """The docstring's examples as asserts (the prompt shows them; never a hidden test)."""
    examples = [e for e in doctest.DocTestParser().get_examples(task.prompt) if e.want.strip()]
    tests = [f"assert {e.source.strip()} == {e.want.strip()}" for e in examples
             if "\n" not in e.source.strip() and "\n" not in e.want.strip()][:3]
    return "\n".join(tests) or f"assert {task.entry_point}() is not None"


def measure(run_dir: Path) -> dict:
    run = folder.load(run_dir)
    doc = numbers.of_folder(run)
    rows = {}
    agents = {a["strategy"]: a for a in doc.get("agents", [])}
    stops: dict[str, dict[str, int]] = {}
    for r in doc.get("stop_reasons", []):
        stops.setdefault(r["strategy"], {})[r["stop_reason"]] = r["attempts"]
    for s, e in doc["strategies"].items():
        n = max(1, e["attempts"])
        rows[s] = {
            "pass@1": e["pass@1"], "ci": e["pass@1_ci95"], "attempts": e["attempts"],
            "incomplete": e["incomplete_attempts"], "calls": e["model_calls"] / n, "tokens": e["tokens"] / n,
            "seconds": e["summed_s"] / n, "turns": agents.get(s, {}).get("turns_per_episode"),
            "tools": agents.get(s, {}).get("tool_calls_by_tool"), "stops": stops.get(s, {}),
        }
    return {"run": str(run_dir), "tasks": doc["tasks"], "compared": doc["tasks_compared"],
            "model": run.header["config"]["model"], "strategies": rows,
            "tool_protocol": (run.header.get("model_identity") or {}).get("tool_protocol")}


def tool_speed(run_dirs: list[Path], backend: str, limit: int) -> dict:
    """The python tool's round trip against the sandbox's own job, for the same scripts:
    every script the runs' agents ran (up to `limit`) is run again on a fresh pool of
    the same backend, one at a time, interleaved: through the tool layer (harness/agent:
    policy, sandbox call, result text, event), as `sandbox.run_script` (the job it makes),
    and as a plain io job with an expected output. In the runs themselves a call also
    waited for a free sandbox worker behind the other units' jobs: `in_run_s`."""
    import threading

    from harness.agent.episode import OPTIONS, EpisodeSettings, prompt_values
    from harness.agent.tools import Python, Submit, ToolEnv, ToolPolicy, run_calls
    from harness.core.calls import CallSettings
    from harness.config import RunConfig
    from harness.core import AttemptContext, LoopSettings
    from harness.core.evaluator import Evaluator
    from harness.models.scripted import ScriptedModel
    from harness.models.tools import ToolCall
    from harness.text.prompting import Prompts
    from sandbox import IoCase, RunRequest, SandboxConfig, open_sandbox, run_script

    calls = []
    for run_dir in run_dirs:
        for rec in read_trials(run_dir / "trials.jsonl"):
            for e in rec.events:
                if isinstance(e, ToolCallRun) and e.name == "python" and e.status in ("ok", "error") \
                        and e.exit_code is not None:
                    calls.append((e.seconds, e.arguments))
    if not calls:
        return {"calls": 0}
    calls = calls[:limit]
    sandbox = open_sandbox(SandboxConfig(backend=backend, workers=1, domains=("agent",)))
    prompts = Prompts()
    model = ScriptedModel()
    ctx = AttemptContext("speed", model, prompts, Evaluator(sandbox, prompts, timeout_s=10.0), None,
                         LoopSettings.from_config(RunConfig(sandbox=backend)), threading.Event())
    task = load_tasks("builtin:quick").tasks[0]
    scope = ctx.trial(task, "react", 1, 1)
    settings = EpisodeSettings.of(lambda k: {**OPTIONS, "python_timeout_s": 10.0}[k], scope, CallSettings(0.0, 0))
    env = ToolEnv(scope, settings)
    tools = [Python(), Submit()]
    specs = [t.spec(env, {**prompt_values(task), "timeout_s": "10", "output_chars": 2000})
             for t in tools]
    policy = ToolPolicy(max_python_runs=10 ** 9)
    try:
        tool_s, script_s, io_s = [], [], []
        for i, (_, arguments) in enumerate(calls):
            args = json.loads(arguments)
            code, stdin = args.get("code", ""), args.get("stdin") or ""
            run_calls(env, [ToolCall(f"s{i}", "python", arguments)], tools, specs, policy, 1, 1)
            tool_s.append(scope.events[-1].seconds)
            run = run_script(sandbox, code, stdin, timeout_s=10.0, domain="agent")
            script_s.append(run.job_s)
            started = time.perf_counter()
            sandbox.run(RunRequest(code, [IoCase(stdin, run.stdout)], timeout_s=10.0, domain="agent", blind=False))
            io_s.append(time.perf_counter() - started)
    finally:
        sandbox.close()
    return {"calls": len(calls), "tool_s": statistics.median(tool_s), "script_job_s": statistics.median(script_s),
            "io_job_s": statistics.median(io_s), "in_run_s": statistics.median(c[0] for c in calls)}


def _pct(x) -> str:
    return "  n/a" if x is None else f"{100 * x:5.1f}%"


def report(m: dict) -> list[str]:
    lines = [f"{m['label']}: {m['tasks']} tasks ({m['compared']} compared), model {m['model']}, tool protocol "
             f"{m['tool_protocol']}; run {m['run']}",
             f"  {'strategy':<16} {'pass@1':>6} {'95% CI':>16} {'calls':>6} {'tokens':>7} {'time':>7} {'turns':>5}"
             "  how attempts stopped (agents: tool calls)"]
    for s in STRATEGIES:
        r = m["strategies"].get(s)
        if r is None:
            continue
        ci = f"[{_pct(r['ci'][0]).strip()}, {_pct(r['ci'][1]).strip()}]" if r["ci"][0] is not None else "n/a"
        stops = ", ".join(f"{k} {v}" for k, v in sorted(r["stops"].items()))
        tools = f" ({', '.join(f'{k} {v}' for k, v in r['tools'].items())})" if r["tools"] else ""
        turns = f"{r['turns']:5.1f}" if r["turns"] is not None else "    -"
        lines.append(f"  {s:<16} {_pct(r['pass@1'])} {ci:>16} {r['calls']:6.1f} {r['tokens']:7.0f} "
                     f"{r['seconds']:6.1f}s {turns}  {stops}{tools}"
                     + (f"; {r['incomplete']} incomplete" if r["incomplete"] else ""))
    lines.append("  (per complete attempt: model calls, input + output tokens, trial time; turns per episode)")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", action="store_true", help="the scripted model on 4 + 4 tasks, process sandbox")
    ap.add_argument("--model", default="local", help="model spec (default: local, the embedded model)")
    ap.add_argument("--tasks", default="builtin:quick,humaneval", help="task sets, comma-separated (default %(default)s)")
    ap.add_argument("--limit", type=int, default=4, help="the first N tasks of each set (default %(default)s)")
    ap.add_argument("--trials", type=int, default=2, help="trials (episodes) per attempt (default %(default)s)")
    ap.add_argument("--max-turns", type=int, default=4, help="the agents' turns per episode (default %(default)s)")
    ap.add_argument("--sandbox", help="docker (default) or process (--smoke's default)")
    ap.add_argument("--out", type=Path, help="folder for the runs (default: a new temporary folder)")
    ap.add_argument("--json", type=Path, help="also write the measures here")
    ap.add_argument("--speed-scripts", type=int, default=60, help="scripts run again for the tool's speed")
    ap.add_argument("--runs", type=Path, nargs="*", default=[], metavar="RUN_DIR",
                    help="finished run folders of these four strategies to measure beside the new runs "
                         "(e.g. one resumed with `python -m harness run --resume`); --tasks '' runs nothing new")
    ap.add_argument("--extra", default="", help="more flags for every run, e.g. '--local-slots 2 --tool-protocol text'")
    args = ap.parse_args(argv)

    out = args.out or Path(tempfile.mkdtemp(prefix="bench-agent-"))
    out.mkdir(parents=True, exist_ok=True)
    sets = [s.strip() for s in args.tasks.split(",") if s.strip()]
    limit = min(args.limit, 4) if args.smoke else args.limit
    sandbox = args.sandbox or ("process" if args.smoke else "docker")
    model = args.model
    if args.smoke:
        model = "scripted:" + str(smoke_script([(s, limit) for s in sets], out / "smoke_script.jsonl"))
    options = [f"{a}.max_turns={args.max_turns}" for a in AGENTS]
    common = ["--model", model, "--out", str(out / "results"), "--memory-dir", str(out / "reflections"),
              "--sandbox", sandbox, "--strategy", ",".join(STRATEGIES), "--trials", str(args.trials),
              "--limit", str(limit), "--no-report", *sum((["--strategy-option", o] for o in options), []),
              *args.extra.split()]
    started = time.perf_counter()
    measures, runs = [], []
    for run_dir in args.runs:
        if not (run_dir / "run.json").is_file():
            sys.exit(f"error: --runs {run_dir}: not a run folder (no run.json)")
        runs.append(run_dir)
        m = measure(run_dir)
        config = folder.load(run_dir).header.get("config") or {}
        m["label"] = f"{config.get('tasks')}[:{config.get('limit')}]"
        measures.append(m)
    for spec in sets:
        run_dir = harness_run(["--tasks", spec, *common], out / f"{re.sub(r'[^A-Za-z0-9]+', '-', spec)}.log")
        runs.append(run_dir)
        m = measure(run_dir)
        m["label"] = f"{spec}[:{limit}]"
        measures.append(m)
    speed = tool_speed(runs, sandbox, args.speed_scripts)
    elapsed = time.perf_counter() - started
    for m in measures:
        print("\n".join(report(m)))
    if speed["calls"]:
        print(f"python tool, {speed['calls']} of the runs' scripts again, one at a time (medians): the tool's round "
              f"trip {speed['tool_s']:.3f} s, the same script as a sandbox job {speed['script_job_s']:.3f} s "
              f"(run_script) and {speed['io_job_s']:.3f} s (a plain io job): the tool adds "
              f"{speed['tool_s'] - speed['script_job_s']:+.3f} s; in the runs, with the other units' jobs queued "
              f"beside it, a call took {speed['in_run_s']:.3f} s")
    else:
        print("python tool: no script ran")
    print(f"elapsed {elapsed:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"runs": measures, "speed": speed, "elapsed_s": elapsed}, indent=2,
                                        default=str) + "\n")
    total = {s: [] for s in STRATEGIES}
    tasks = 0
    for m in measures:
        tasks += m["compared"]
        for s in STRATEGIES:
            if s in m["strategies"] and m["strategies"][s]["pass@1"] is not None:
                total[s].append((m["strategies"][s]["pass@1"], m["compared"]))
    pooled = {s: (sum(p * n for p, n in v) / sum(n for _, n in v)) if v and sum(n for _, n in v) else None
              for s, v in total.items()}
    tool = f"{speed['tool_s']:.3f} s vs sandbox job {speed['script_job_s']:.3f} s" if speed["calls"] else "n/a"
    print("agent: " + " ".join(f"{s} {'n/a' if pooled[s] is None else f'{pooled[s]:.3f}'}" for s in STRATEGIES)
          + f" (pass@1, {tasks} tasks); python tool {tool} (medians)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
