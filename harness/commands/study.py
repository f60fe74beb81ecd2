"""`python -m harness study FILE`: models x task sets x strategies as one resumable unit.

Each cell is an ordinary run, made (or resumed) by the run command; the study keeps
study.json and writes one study report at the study folder's top (harness/run/study.py,
harness/rundata/study.py, harness/report/study.py).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.cli import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "study",
        help="run several models x task sets x strategies as one resumable study, with one study report",
        description=(
            "Runs a study file's [study] table (name, models = [...], tasks = [...], strategies = [...], and any "
            "`run` setting): each cell (model x task set) is an ordinary run folder under the study's folder; "
            "cells share the response cache and, per model, the rate limits. --resume DIR continues a killed "
            "study without redoing finished cells. The study report (report.html, report.md at the study "
            "folder's top; `python -m harness view DIR` has a study page) gives per model and task set each "
            "strategy's pass@1 with its CI and the effects: the idea's own (e.g. reflexion - feedback), the "
            "compute-matched one (reflexion - resample) and the total (reflexion - baseline), each a paired CI "
            "with McNemar's test, in a table and a forest plot, and accuracy against cost."
        ),
        epilog="Exit status: 0 every cell complete, 1 a cell ended with attempts unfinished, 2 bad input, "
               "3 the study's budget stopped it (--resume DIR with a higher one continues).",
    )
    p.add_argument("file", nargs="?", type=Path, metavar="FILE", help="the study file (TOML with a [study] table)")
    p.add_argument("--out", type=Path, metavar="DIR", help="the study's folder (default: the file's `out`, else results/<name>)")
    p.add_argument("--resume", type=Path, metavar="STUDY_DIR",
                   help="continue a study: finished cells are kept, unfinished ones go on where they stopped")
    p.add_argument("--estimate", action="store_true",
                   help="print every cell's expected model calls, tokens and dollars and exit without calling a model")
    p.add_argument("--max-calls", type=int, metavar="N", help="stop cleanly once the study's models have answered N calls")
    p.add_argument("--max-cost", type=float, metavar="USD", help="stop cleanly once the study has spent USD dollars")
    p.add_argument("--no-report", dest="report", action="store_false", help="skip the study report")
    p.set_defaults(func=study_command)


def study_command(args: argparse.Namespace) -> int:
    from harness.run.study import StudyError

    try:
        return _study(args)
    except StudyError as exc:
        raise UsageError(str(exc)) from None


def _spec_and_folder(args: argparse.Namespace) -> tuple[Any, Path, dict[str, Any] | None]:
    from harness.run.study import StudySpec, load_spec, read_study

    if args.resume is not None:
        data = read_study(args.resume)
        stored = StudySpec.from_dict(data["spec"])
        if args.file is not None:
            given = load_spec(args.file)
            if given.digest != stored.digest:
                raise UsageError(f"--resume {args.resume}: {args.file} differs from the study as it started "
                                 f"({data.get('source')}); start a new study (another --out) instead")
        if args.out is not None and args.out.resolve() != args.resume.resolve():
            raise UsageError("--out and --resume name different folders; --resume DIR is the study's folder")
        return stored, Path(args.resume), data
    if args.file is None:
        raise UsageError("give a study file (python -m harness study FILE), or --resume STUDY_DIR")
    spec = load_spec(args.file)
    study_dir = args.out or spec.out or Path("results") / spec.name
    return spec, Path(study_dir), None


def _study(args: argparse.Namespace) -> int:
    from harness.run.study import STUDY_FILE, cell_config, new_study, write_study

    spec, study_dir, data = _spec_and_folder(args)
    if args.estimate:
        return _estimate(spec, study_dir)
    if data is None:
        if (study_dir / STUDY_FILE).exists():
            raise UsageError(f"{study_dir} holds a study already; continue it with: "
                             f"python -m harness study --resume {study_dir}")
        study_dir.mkdir(parents=True, exist_ok=True)
        data = new_study(spec, study_dir, args.file, sys.argv)
        write_study(study_dir, data)
    for cell in data["cells"]:  # every cell's settings are a valid run before any runs
        try:
            cell_config(spec, study_dir, cell["model"], cell["tasks"], source=f"study {spec.name}",
                        seed=cell.get("seed"))
        except Exception as exc:  # ConfigError
            raise UsageError(f"study {spec.name}, cell {cell['model']} x {cell['tasks']}: {exc}") from None
    code = _run_cells(args, spec, study_dir, data)
    if args.report:
        from harness.report.study import write_study_report

        path = write_study_report(study_dir)
        from harness.rundata import study as study_numbers
        from harness.rundata.folder import read_json

        doc = read_json(study_dir / study_numbers.SUMMARY_FILE) or {}
        print(f"\nstudy {spec.name}: {(doc.get('status') or {}).get('text', '')}")
        for line in doc.get("answer") or []:
            print(line)
        print(f"study folder: {study_dir}\nstudy report: {path}")
    return code


def _spent_elsewhere(study_dir: Path, cells: list[dict[str, Any]], but: dict[str, Any]) -> Any:
    from harness.run.budget import Spend
    from harness.rundata import folder
    from harness.run.study import cell_dir

    total = Spend()
    for c in cells:
        path = cell_dir(study_dir, c)
        if c is but or path is None or not (path / folder.HEADER).is_file():
            continue
        s = Spend.of(folder.read_trials(path / folder.TRIALS), folder.read_errors(path))
        total.calls += s.calls
        total.usd += s.usd
    return total


def _run_cells(args: argparse.Namespace, spec: Any, study_dir: Path, data: dict[str, Any]) -> int:
    from datetime import datetime, timezone

    from harness.commands.run import EXIT_BUDGET, CellOptions, run_command
    from harness.models.limiter import RateLimiter
    from harness.run.study import cell_config, cell_dir, cell_state, new_cell_id, write_study

    resume_hint = f"python -m harness study --resume {study_dir}"
    data.setdefault("sessions", []).append({"at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                            "command": sys.argv, "max_calls": args.max_calls,
                                            "max_cost": args.max_cost})
    write_study(study_dir, data)
    limiters: dict[str, RateLimiter] = {}
    worst = 0
    n = len(data["cells"])
    for i, cell in enumerate(data["cells"], 1):
        state = cell_state(study_dir, cell)
        where = f"cell {i} of {n}: {cell['model']} x {cell['tasks']}" + \
            (f" (seed {cell['seed']})" if cell.get("seed") is not None else "")
        if state == "complete":
            print(f"study {spec.name}: {where}: complete, kept ({cell_dir(study_dir, cell)})", file=sys.stderr)
            continue
        config = cell_config(spec, study_dir, cell["model"], cell["tasks"], source=f"study {spec.name}",
                             seed=cell.get("seed"))
        budget: dict[str, Any] = {}
        if args.max_calls is not None or args.max_cost is not None:
            spent = _spent_elsewhere(study_dir, data["cells"], cell)
            if args.max_calls is not None:
                budget["max_calls"] = args.max_calls - spent.calls
            if args.max_cost is not None:
                budget["max_cost"] = args.max_cost - spent.usd
            if any(v <= 0 for v in budget.values()):
                print(f"study {spec.name}: its budget is spent before {where}; continue with a higher one: "
                      f"{resume_hint} --max-calls N (or --max-cost USD)", file=sys.stderr)
                return EXIT_BUDGET
            budget = {k: (max(1, int(v)) if k == "max_calls" else v) for k, v in budget.items()}
        if config.requests_per_minute or config.tokens_per_minute:
            limiter = limiters.setdefault(cell["model"], RateLimiter(config.requests_per_minute,
                                                                     config.tokens_per_minute))
        else:
            limiter = None
        path = cell_dir(study_dir, cell)
        resume = path if path is not None and (path / "run.json").is_file() else None
        if cell.get("run_id") is None or (resume is None and path is not None and path.exists()):
            # (a folder without run.json: a session killed as it made it; the cell starts afresh)
            cell["run_id"] = new_cell_id(cell["model"], cell["tasks"], cell.get("seed"))
        cell["state"] = "running"
        write_study(study_dir, data)  # the cell's folder is known before it exists: a kill leaves no orphan
        run_args = argparse.Namespace(resume=resume, resume_changed=False, view=False, estimate=False, config=None,
                                      strategy_options=None,
                                      **(budget if resume is not None else {}))
        options = CellOptions(config=None if resume is not None else config.replace(**budget),
                              run_id=cell["run_id"], limiter=limiter, resume_hint=resume_hint)
        print(f"study {spec.name}: {where}: {'resuming ' + str(resume) if resume else 'starting'}", file=sys.stderr)
        try:
            code = run_command(run_args, options)
        except UsageError as exc:
            raise UsageError(f"study {spec.name}, {where}: {exc}") from None
        cell["state"] = cell_state(study_dir, cell)
        cell["exit"] = code
        write_study(study_dir, data)
        if code == EXIT_BUDGET:
            print(f"study {spec.name}: stopped by its budget in {where}; continue with a higher one: "
                  f"{resume_hint} --max-calls N (or --max-cost USD)", file=sys.stderr)
            return EXIT_BUDGET
        worst = max(worst, code)
    return worst


def _estimate(spec: Any, study_dir: Path) -> int:
    from harness.run.budget import format_estimate
    from harness.commands.run import estimate_of
    from harness.run.study import cell_config
    from harness.tasks import TaskError, load_tasks
    from harness.run.units import open_prompts

    totals = {"fewest": {"calls": 0, "tokens": 0, "usd": 0.0}, "most": {"calls": 0, "tokens": 0, "usd": 0.0}}
    priced = True
    for model, task_spec in spec.cells():
        config = cell_config(spec, study_dir, model, task_spec, source=f"study {spec.name}")
        try:
            tasks = load_tasks(config.tasks).select(task_ids=config.task_ids, limit=config.limit,
                                                    after=config.after, before=config.before)
        except TaskError as exc:
            raise UsageError(f"study {spec.name}, cell {model} x {task_spec}: {exc}") from None
        doc = estimate_of(config, tasks, open_prompts(config.prompts))
        print(format_estimate(doc, f"cell {model} x {task_spec}: {len(tasks.tasks)} tasks x "
                                   f"{', '.join(config.strategies)} x {config.samples} sample(s), up to "
                                   f"{config.trials} trials"))
        print()
        repeats = len(spec.seeds) or 1  # each cell once per seed
        for bound in ("fewest", "most"):
            t = doc["total"][bound]
            totals[bound]["calls"] += repeats * t["calls"]
            totals[bound]["tokens"] += repeats * t["tokens"]
            if t["usd"] is None:
                priced = False
            else:
                totals[bound]["usd"] += repeats * t["usd"]
    f, m = totals["fewest"], totals["most"]
    money = f"${f['usd']:,.4f} .. ${m['usd']:,.4f}" if priced else "unknown (a model has no price: give --price in the study's settings or a price table)"
    print(f"study {spec.name}, {len(spec.cell_rows())} cells: {f['calls']:,} .. {m['calls']:,} model calls, "
          f"{f['tokens']:,} .. {m['tokens']:,} tokens, dollars {money}. No model was called.")
    return 0
