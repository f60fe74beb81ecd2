"""Do lessons from other tasks help a code agent? Recall across task sets, measured.

    python bench/recall.py                       # embedded model: lessons from builtin:quick, recalled on HumanEval
    python bench/recall.py --target-limit 10     # fewer HumanEval tasks
    python bench/recall.py --smoke               # the same code on the scripted model, about a minute

Two runs of `python -m harness run`, as a researcher would type them:

1. gather: reflexion on the source task set (default builtin:quick); its lessons are
   in its run folder.
2. recall: `--strategy recall` on the target set (default HumanEval, its first
   --target-limit tasks): reflexion and reflexion+recall on the same tasks in one run,
   recall reading the first run's lessons, frozen at the start of the second.

Then, from the second run's records with the project's own statistics
(harness.rundata.metrics: equal footing, paired comparison with its bootstrap CI and
McNemar's test, spend ratio): pass@1 with and without recall, the tokens recall
costs, how many lessons each attempt was shown, and how often a recalled lesson came
from a source attempt that was solved (the source run's hidden verdict) or was shown
to an attempt that then solved its task. The last line:

    recall: <with> - <without>: <+x> points [95% CI <a>, <b>] on <N> tasks; <r> lessons recalled per attempt

--smoke: a scripted model (answers built from each task's reference solution and
its docstring examples; the answers do not depend on what recall shows, so the
smoke's effect is 0 by construction) on 6 source and 6 target tasks, process sandbox.
"""
from __future__ import annotations

import argparse
import doctest
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _runs import harness_run  # noqa: E402
from harness.rundata import frames, metrics  # noqa: E402
from harness.rundata import read_run_header, read_trials  # noqa: E402
from harness.tasks import load_tasks  # noqa: E402

WITH, WITHOUT = "reflexion+recall", "reflexion"


def smoke_script(specs: list[tuple[str, int]], path: Path) -> Path:
    """Rules for the scripted model: per task, tests from the docstring's examples and
    the reference solution as the answer (every third task: a wrong first answer, the
    reference after feedback), one lesson per task. None depends on recall."""
    rules = []
    for spec, limit in specs:
        for i, task in enumerate(load_tasks(spec).select(limit=limit).tasks):
            ep = task.entry_point
            doc = re.search(r'("""|\'\'\')\s*(.+)', task.prompt)
            first_line = doc.group(2).strip() if doc else ep  # the docstring's first line
            rules.append({"match": f"The implementation:\n\n```python\ndef {ep}(*args",  # only Self-Reflection sees this
                          "reply": f"{ep} returned None: compute what its docstring asks for ({first_line[:60]}), "
                                   "and check the examples in the docstring before answering."})
            examples = [e for e in doctest.DocTestParser().get_examples(task.prompt) if e.want.strip()]
            tests = [f"assert {e.source.strip()} == {e.want.strip()}" for e in examples
                     if "\n" not in e.source.strip() and "\n" not in e.want.strip()][:3]
            right = f"```python\n{(task.canonical_solution or '').strip()}\n```"
            wrong = f"```python\ndef {ep}(*args, **kwargs):\n    return None\n```"
            rules.append({"match": f"unit tests for the function `{ep}`",
                          "reply": "```python\n" + "\n".join(tests or [f"assert {ep}() is None"]) + "\n```"})
            rules.append({"match": f"Write an improved implementation of `{ep}`", "reply": right})
            rules.append({"match": f"Implement the function `{ep}`", "reply": wrong if i % 3 == 0 else right})
    path.write_text("".join(json.dumps(r) + "\n" for r in rules))
    return path


def measure(run_dir: Path, source_dir: Path) -> dict:
    header = read_run_header(run_dir)
    records = read_trials(run_dir / "trials.jsonl")
    trials = frames.trials_frame(records)
    attempts = frames.attempts_frame(trials)
    task_ids = header["tasks"]["task_ids"]
    footing = frames.equal_footing(attempts, [WITH, WITHOUT], all_tasks=task_ids)
    paired = metrics.paired_comparison(attempts, WITH, WITHOUT, tasks=footing.shared, all_tasks=task_ids)
    shared = set(footing.shared)
    on = [r for r in records if r.task_id in shared]
    rate = {s: float(attempts[(attempts["strategy"] == s) & attempts["task_id"].isin(shared)]["passed"].mean())
            for s in (WITH, WITHOUT)}
    recall_trials = [r for r in on if r.strategy == WITH]
    shown = [x for r in recall_trials for x in r.recalled]
    n_attempts = len({(r.task_id, r.attempt) for r in recall_trials})
    solved_target = {(a.task_id, a.attempt) for a in attempts.itertuples() if a.strategy == WITH and a.passed}
    pool = json.loads((run_dir / header["recall"]["pool_file"]).read_text())
    source_solved = {x["id"]: x["source_solved"] for x in pool["lessons"]}
    known = [source_solved.get(x["id"]) for x in shown if source_solved.get(x["id"]) is not None]
    tokens = {s: float(attempts[(attempts["strategy"] == s) & attempts["task_id"].isin(shared)]["tokens"].mean())
              for s in (WITH, WITHOUT)}
    input_tokens = {s: sum(r.input_tokens for r in on if r.strategy == s) for s in (WITH, WITHOUT)}
    return {
        "run": str(run_dir), "source": str(source_dir), "model": header["config"]["model"],
        "recall": {k: header["recall"][k] for k in ("k", "scope", "max_chars", "pool_lessons", "source_digest")},
        "excluded": header["recall"]["hygiene"]["excluded"],
        "pass1": rate, "paired": paired, "tasks": len(shared), "excluded_tasks": len(footing.excluded),
        "lessons_per_attempt": len(shown) / n_attempts if n_attempts else 0.0,
        "trials_with_recall": sum(1 for r in recall_trials if r.recalled), "recall_trials": len(recall_trials),
        "recalled_chars_per_trial": sum(len(x["lesson"]) for x in shown) / len(recall_trials) if recall_trials else 0.0,
        "tokens_per_attempt": tokens, "token_ratio": metrics.spend_ratio(
            attempts[attempts["task_id"].isin(shared)], WITH, WITHOUT, "tokens"),
        "input_tokens": input_tokens,
        "calls_ratio": metrics.spend_ratio(attempts[attempts["task_id"].isin(shared)], WITH, WITHOUT, "calls"),
        "shown": len(shown),
        "from_solved_source": (sum(known) / len(known)) if known else None, "source_known": len(known),
        "shown_to_solved": (sum(1 for r in recall_trials for _ in r.recalled if (r.task_id, r.attempt) in solved_target)
                            / len(shown)) if shown else None,
    }


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def report(m: dict) -> str:
    p = m["paired"]
    lines = [
        f"source of lessons: {m['source']} ({m['recall']['pool_lessons']} lessons in the frozen pool, "
        f"digest {m['recall']['source_digest'][:19]}...)",
        f"recall: K={m['recall']['k']}, scope {m['recall']['scope']}, lessons cut to {m['recall']['max_chars']} chars, "
        f"BM25 (bm25s); left out or cut: " + (", ".join(f"{k} {v}" for k, v in sorted(m["excluded"].items())
                                                     if k != "source_lessons" and v) or "none"),
        f"run: {m['run']} (model {m['model']})",
        f"pass@1 on {m['tasks']} shared tasks ({m['excluded_tasks']} left out): with recall {m['pass1'][WITH]:.3f}, "
        f"without {m['pass1'][WITHOUT]:.3f}; fixed {p.fixed}, broken {p.broken}, McNemar p={p.p_value:.3f}",
        f"tokens per attempt: with {m['tokens_per_attempt'][WITH]:.0f}, without {m['tokens_per_attempt'][WITHOUT]:.0f} "
        f"(ratio {m['token_ratio']:.2f}; calls ratio {m['calls_ratio']:.2f}); input tokens in all: "
        f"{m['input_tokens'][WITH]} vs {m['input_tokens'][WITHOUT]}; recalled text: "
        f"{m['recalled_chars_per_trial']:.0f} chars per trial",
        f"recalled lessons: {m['shown']} shown in {m['trials_with_recall']} of {m['recall_trials']} trials; "
        f"from a solved source attempt: {_pct(m['from_solved_source'])} (of {m['source_known']} with a known outcome); "
        f"shown to an attempt that then solved its task: {_pct(m['shown_to_solved'])}",
    ]
    diff = 100 * p.diff
    lines.append(
        f"recall: {m['pass1'][WITH]:.3f} - {m['pass1'][WITHOUT]:.3f}: {diff:+.1f} points "
        f"[95% CI {100 * p.ci_low:+.1f}, {100 * p.ci_high:+.1f}] on {p.tasks} tasks; "
        f"{m['lessons_per_attempt']:.1f} lessons recalled per attempt"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", action="store_true", help="the scripted model on 6 + 6 tasks, process sandbox (~1 minute)")
    ap.add_argument("--model", default="local", help="model spec (default: local, the embedded model)")
    ap.add_argument("--source-tasks", default="builtin:quick", help="where lessons are gathered (default %(default)s)")
    ap.add_argument("--source-limit", type=int, help="only the first N source tasks")
    ap.add_argument("--target-tasks", default="humaneval", help="where they are recalled (default %(default)s)")
    ap.add_argument("--target-limit", type=int, default=20, help="the first N target tasks (default %(default)s)")
    ap.add_argument("--trials", type=int, default=3, help="trials per attempt (default %(default)s)")
    ap.add_argument("--target-trials", type=int, help="trials per attempt on the target set (default: --trials)")
    ap.add_argument("--source-run", type=Path, help="skip the gathering: recall from this earlier run folder")
    ap.add_argument("--k", type=int, default=3, help="lessons recalled per trial (default %(default)s)")
    ap.add_argument("--sandbox", help="docker (default) or process (--smoke's default)")
    ap.add_argument("--out", type=Path, help="folder for both runs (default: a new temporary folder)")
    ap.add_argument("--json", type=Path, help="also write the measures here")
    ap.add_argument("--extra", default="", help="more flags for both runs, e.g. '--local-slots 2'")
    args = ap.parse_args(argv)

    out = args.out or Path(tempfile.mkdtemp(prefix="bench-recall-"))
    out.mkdir(parents=True, exist_ok=True)
    model = args.model
    source_limit, target_limit = args.source_limit, args.target_limit
    sandbox = args.sandbox or ("process" if args.smoke else "docker")
    if args.smoke:
        source_limit, target_limit = source_limit or 6, min(target_limit, 6)
        model = "scripted:" + str(smoke_script([(args.source_tasks, source_limit), (args.target_tasks, target_limit)],
                                               out / "smoke_script.jsonl"))
    common = ["--model", model, "--out", str(out / "results"), "--memory-dir", str(out / "reflections"),
              "--sandbox", str(sandbox), "--no-report", *args.extra.split()]
    source_args = ["--tasks", args.source_tasks, "--strategy", "reflexion", "--trials", str(args.trials), *common]
    if source_limit:
        source_args += ["--limit", str(source_limit)]
    source = args.source_run or harness_run(source_args, out / "gather.log")
    target = harness_run(["--tasks", args.target_tasks, "--limit", str(target_limit), "--strategy", "recall",
                          "--trials", str(args.target_trials or args.trials), "--recall-from", str(source),
                          "--recall-k", str(args.k), *common], out / "recall.log")
    m = measure(target, source)
    if args.json:
        args.json.write_text(json.dumps({k: v for k, v in m.items() if k != "paired"} | {
            "paired": {f: getattr(m["paired"], f) for f in ("diff", "ci_low", "ci_high", "tasks", "fixed", "broken",
                                                           "p_value")}}, indent=2, default=str) + "\n")
    print(report(m))
    return 0


if __name__ == "__main__":
    sys.exit(main())
