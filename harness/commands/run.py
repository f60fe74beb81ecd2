"""`python -m harness run`: one task set x strategies x one model, into results/<run-id>/."""
from __future__ import annotations

import argparse
import errno
import os
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from harness.cli import UsageError, terminal_safe
from harness.config import ConfigError, RunConfig
from harness.models.registry import DEFAULT_REGISTRY, is_remote_api
from harness.registry import REGISTRY
from harness.tasks.registry import known_forms
from harness.rundata.wording import trials_phrase

# Settings a resumed run may change: how it runs, not what it measures (a budget: how far
# it goes).
RESUMABLE_OVERRIDES = ("workers", "sandbox", "sandbox_workers", "cache", "report", "executor", "ray_address",
                       "max_calls", "max_cost")
# The exit status of a run its budget stopped (--max-calls, --max-cost): not an error,
# not complete; `--resume` with a higher budget continues it.
EXIT_BUDGET = 3


@dataclass(frozen=True)
class CellOptions:
    """How `harness study` runs one of its cells through this command."""

    config: RunConfig | None = None  # a new cell's settings (None: args.resume names the cell to go on with)
    run_id: str | None = None  # a new cell's run id: its folder's name under config.out
    limiter: Any = None  # the rate limiter every cell of the study shares for this model
    resume_hint: str | None = None  # the study's own resume command, said when a cell stops
    on_folder: Callable[[Path], None] | None = None  # told the cell's run folder as soon as it exists


def strategy_help() -> str:
    """Every registered strategy and group, from the registry."""
    from harness.strategies import groups, strategy_names, traits_of

    names = "; ".join(f"{n}: {traits_of(n).description}" for n in strategy_names())  # type: ignore[union-attr]
    grouped = "; ".join(f"{g} = {'+'.join(m)}" for g, m in groups().items())
    return f"a strategy, a group or a comma list. Strategies: {names}. Groups: {grouped}"


def register(sub: argparse._SubParsersAction) -> None:
    d = RunConfig()
    p = sub.add_parser(
        "run",
        help="run strategies over a task set and write results/<run-id>/",
        description=(
            "Runs each strategy over a task set and writes run.json, trials.jsonl, "
            "summary.json and a report into a new run folder. With no flags: the embedded "
            f"local model on the '{d.tasks}' tasks, reflexion and baseline. Every flag can "
            "also be set in a TOML file given with --config (flags win)."
        ),
        epilog=(
            "Prices, last one winning: the built-in table (harness/data/prices.toml), --price-table FILE (the "
            "same format, any model id), the TOML file's `prices` table (model id -> {input, output, cache_read, "
            "cache_write}, dollars per million tokens) and --price IN/OUT for the run's model. A model without a "
            "price has an unknown cost, never $0: reports then put tokens on the cost axis."
        ),
    )
    a = p.add_argument
    a("--config", type=Path, metavar="FILE", help="TOML file of settings (top level or a [run] table)")
    a("--tasks", metavar="SPEC", help=f"task set: {'; '.join(known_forms())} (default {d.tasks})")
    a("--strategy", metavar="NAME[,NAME...]", help=f"{strategy_help()} (default {d.strategy})")
    a("--strategy-option", action="append", metavar="NAME.KEY=VALUE", dest="strategy_options",
      help="a strategy's own setting, e.g. lats.width=3 (repeatable; see docs/strategies.md)")
    a("--model", metavar="SPEC", help=f"{', '.join(DEFAULT_REGISTRY.usages())} (default {d.model})")
    a("--trials", type=int, metavar="N", help=f"max trials per attempt (default {d.trials})")
    a("--samples", type=int, metavar="N", help=f"independent attempts per task and strategy (default {d.samples})")
    a("--k", metavar="LIST", help="pass@k values to report, e.g. 1,5; each k <= samples (default 1)")
    a("--limit", type=int, metavar="N", help="only the first N tasks")
    a("--task-ids", metavar="ID,...", help="only these tasks")
    a("--after", metavar="YYYY-MM-DD", help="only problems dated (contest date) after this day: contamination control, e.g. a model's cutoff (livecodebench)")
    a("--before", metavar="YYYY-MM-DD", help="only problems dated before this day")
    a("--workers", type=int, metavar="N", help=f"units of work (task x strategy x attempt) in flight at once, per node with --executor ray (default {d.workers})")
    a("--local-slots", type=int, metavar="N", help=f"local model: sequences the engine generates together, per node with --executor ray (default: min(workers, 4)); more than 1 is faster but answers can depend on the batch")
    a("--reproducible", action="store_const", const=True, help="local model: one slot and no prompt reuse, so every answer depends on its request alone (bitwise the same run to run, without the cache; slower)")
    a("--speculative", metavar="MODE", help="local model: speculative decoding, auto (default: at one slot the model's measured best, at more slots off), off, ngram-mod, ngram-simple, ngram-map-k, ngram-map-k4v, draft (the catalogue's draft model), draft:<name or path.gguf>, or ngram-...+draft; answers can differ from plain decoding's (docs/models.md#speculative-decoding)")
    a("--executor", choices=["local", "ray"], help="local: a thread pool in this process (default); ray: units run across a Ray cluster's nodes (pip install 'reflexion-harness[ray]')")
    a("--ray-address", metavar="ADDR", help="with --executor ray: the cluster to join, e.g. 10.0.0.5:6379 or auto (default: RAY_ADDRESS, else a local Ray instance)")
    a("--sandbox", metavar="NAME", help=f"one of {', '.join(REGISTRY.names('sandboxes'))} (default {d.sandbox}; process is UNSAFE: model code runs on this host without isolation)")
    a("--sandbox-workers", type=int, metavar="N", help="tests graded at once; containers per sandbox domain (default: CPU cores)")
    a("--allow-process-sandbox-with-api", action="store_const", const=True,
      help="accept --sandbox process with an anthropic: or openai: model (model code could read your API keys)")
    a("--out", type=Path, metavar="DIR", help=f"folder for run folders (default {d.out})")
    a("--resume", type=Path, metavar="RUN_DIR", help="finish an interrupted run: no finished trial lost, none done twice")
    a("--resume-changed", action="store_true",
      help="with --resume: go on even though the model, task set, prompts or sandbox changed since the run "
           "started (refused otherwise); run.json records the override and what changed")
    a("--memory-dir", type=Path, metavar="DIR", help=f"long-term memory folder (default: reflections/ beside the --out folder, i.e. {d.out.parent / 'reflections'})")
    a("--memory-window", type=int, metavar="N", help=f"lessons the Actor sees (default {d.memory_window})")
    a("--memory-namespace", metavar="NAME", help="share lessons across runs under this name (default: the run's own, empty at start)")
    a("--recall-from", metavar="SOURCE", help="strategy reflexion+recall (or recall = reflexion with and without it): the frozen source of lessons from other tasks, an earlier run folder or namespace:NAME (in --memory-dir, as it stands at start)")
    a("--recall-k", type=int, metavar="K", help=f"lessons from other tasks the Actor sees per trial (default {d.recall_k})")
    a("--recall-scope", choices=["other_tasks", "other_task_sets"], help=f"which lessons recall may show: any other task's, or only those of another task set (default {d.recall_scope})")
    a("--recall-max-chars", type=int, metavar="N", help=f"a recalled lesson is cut to this many characters (default {d.recall_max_chars})")
    a("--max-internal-tests", type=int, metavar="M", help=f"internal tests the agent writes per attempt (default {d.max_internal_tests})")
    a("--temperature", type=float, metavar="T", help=f"sampling temperature (default {d.temperature})")
    a("--resample-temperature", type=float, metavar="T", help=f"resample's temperature from trial 2 on when --temperature is 0 (default {d.resample_temperature})")
    a("--prompts", type=Path, metavar="DIR", help="folder of prompt templates overriding the defaults by name (harness/prompts/README.md)")
    a("--seed", type=int, metavar="S", help=f"base seed; attempt i uses S+i-1 (default {d.seed})")
    a("--max-tokens", type=int, metavar="N", help=f"max tokens per Actor answer (default {d.max_tokens})")
    a("--max-tokens-tests", type=int, metavar="N", help=f"max tokens of the test writer's answer (default {d.max_tokens_tests})")
    a("--max-tokens-lesson", type=int, metavar="N", help=f"max tokens of a Self-Reflection lesson (default {d.max_tokens_lesson})")
    a("--model-timeout", dest="model_timeout_s", type=float, metavar="SEC", help=f"time limit per model call (default {d.model_timeout_s:g})")
    a("--max-retries", type=int, metavar="N", help=f"retries of a failed API call, with backoff (default {d.max_retries})")
    a("--tool-protocol", choices=["native", "text", "auto"], help="how tool calls reach the model: native (the backend's own), text (written in the reply, parsed by the harness) or auto (the model's measured preference; default)")
    a("--stream", action="store_const", const=True, help="stream replies where the backend can (openai)")
    a("--cache-dir", type=Path, metavar="DIR", help="response cache folder (default $HARNESS_CACHE_DIR or ~/.cache/reflexion-harness/responses)")
    a("--test-timeout", dest="test_timeout_s", type=float, metavar="SEC", help=f"per-test time limit (default {d.test_timeout_s})")
    a("--requests-per-minute", type=int, metavar="N", help="API rate limit shared by all workers")
    a("--tokens-per-minute", type=int, metavar="N", help="API token limit shared by all workers")
    a("--price", metavar="IN/OUT", help="the model's price in dollars per million input/output tokens, e.g. 3/15 "
      "(optionally /CACHE_READ/CACHE_WRITE; those default to the input price); beats every price table")
    a("--price-table", type=Path, metavar="FILE", help="a TOML price table extending the built-in one: "
      '[models."<model id>"] input = ..., output = ... (dollars per million tokens; harness/data/prices.toml\'s format)')
    a("--no-cache", dest="cache", action="store_const", const=False, help="do not use the response cache")
    a("--no-report", dest="report", action="store_const", const=False, help="skip the HTML/Markdown report")
    a("--oracle-feedback", action="store_const", const=True, help="ABLATION: feedback from the hidden tests (reports flag it)")
    a("--io-compare", choices=["strict", "source"], help="how io outputs and APPS call-based results are judged: strict (default: token for token, integers exactly, the source's float tolerance between two non-integers) or source (each source's own grader, lenient rules included, for comparability with its published numbers; the summary counts the verdicts it changed against strict)")
    a("--view", action="store_true", help="open `harness view` beside the run (127.0.0.1; its URL is printed)")
    a("--no-model-check", dest="model_check", action="store_false",
      help="do not check the model with one cheap call before the run (an API model is checked by default, "
           "so a server that is not running or a wrong model name stops the command before the run folder exists; "
           "a run with --max-calls or --max-cost makes no check call: every call it makes counts against its budget)")
    a("--check-tasks", action="store_const", const=True,
      help="first grade each task's reference solution (must pass) and a stub (must fail) on its hidden tests in the "
           "sandbox (as `harness tasks check`), and leave broken tasks out of the run (said in its caveats)")
    a("--estimate", action="store_true",
      help="print the expected model calls, tokens and dollars (at the fewest and at the most) from the strategies' "
           "call structure and the tasks' prompt lengths, and exit without calling the model")
    a("--max-calls", type=int, metavar="N", help="a cap: no model call starts once N have started over the whole run "
      "(cache hits not counted); exit status 3; --resume with a higher budget continues")
    a("--max-cost", type=float, metavar="USD", help="a cap: no model call starts that could take the run's spending past "
      "USD dollars (what was spent plus the worst case of the calls in flight and its own: its input and its whole "
      "max_tokens at the model's price, which it needs); exit status 3; --resume with a higher budget continues")
    p.set_defaults(func=run_command)


def _flag_values(args: argparse.Namespace) -> dict[str, Any]:
    skip = {"command", "func", "config", "resume", "resume_changed", "view", "strategy_options", "model_check", "estimate"}
    values = {k: v for k, v in vars(args).items() if k not in skip and v is not None}
    if args.strategy_options:
        options: dict[str, dict[str, str]] = {}
        for item in args.strategy_options:
            name_key, sep, value = item.partition("=")
            name, dot, key = name_key.rpartition(".")
            if not (sep and dot and name and key):
                raise UsageError(f"--strategy-option {item!r}: expected NAME.KEY=VALUE, e.g. lats.width=3")
            options.setdefault(name, {})[key] = value
        values["strategy_options"] = options
    return values


def build_config(args: argparse.Namespace) -> RunConfig:
    values: dict[str, Any] = {}
    if args.config is not None:
        values.update(RunConfig.load_toml(args.config))  # the file's own values are checked there, naming it
    values.update(_flag_values(args))
    return RunConfig.from_dict(values, source="command line").validate()


def run_command(args: argparse.Namespace, cell: CellOptions | None = None) -> int:
    try:
        return _run(args, cell)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


LOCAL_PRICE_SOURCE = "the local model runs on this machine: $0; its cost is the compute time below"


def run_prices_of(config: RunConfig) -> tuple[Any, str]:
    """The price of the run's model before any reply (the estimate, --max-cost) and where
    it comes from; (None, "") when unknown."""
    from harness.models.prices import load_table, model_id_of, price_for, run_prices

    prices = run_prices(config.prices, config.price_table, config.price)
    table = load_table()
    price = price_for(model_id_of(config.model), prices, table)
    if price is None and config.model.partition(":")[0] == "local":
        from harness.models.base import Price

        return Price(0.0, 0.0), LOCAL_PRICE_SOURCE
    if price is None:
        return None, ""
    if config.price:
        return price, "--price"
    if model_id_of(config.model) in prices or any(model_id_of(config.model).startswith(k + "-") for k in prices):
        return price, str(config.price_table or "the run's prices")
    return price, "harness/data/prices.toml"


def estimate_of(config: RunConfig, tasks: Any, prompts: Any, *, strict: bool = True) -> dict[str, Any] | None:
    """The run's estimate (harness/run/budget.py); a strategy that cannot be estimated is a
    usage error when the estimate was asked for (`strict`), else no estimate (None)."""
    from harness.run.budget import NoEstimate, estimate

    price, source = run_prices_of(config)
    from harness.models.speed import time_estimate

    try:
        doc = estimate(tasks.tasks, config.strategies, config.to_dict(), prompts, price, price_source=source)
    except NoEstimate as exc:
        if strict:
            raise UsageError(str(exc)) from None
        return None
    time = time_estimate(config.model, doc)
    if time is not None:
        doc["time"] = time
    return doc


def _run(args: argparse.Namespace, cell: CellOptions | None = None) -> int:
    # Imported here so `--help` and config errors stay fast.
    from harness.models import ModelConfigError
    from harness.text.prompting import PromptSetError
    from harness.rundata import SCHEMA_VERSION, read_run_header
    from harness.rundata.folder import FolderError, SessionLock
    from harness.run.runner import ResumeRefused, RunInterrupted, Runner, describe_changes, prepare_run_dir, resume_changes
    from harness.tasks import TaskError, load_tasks
    from harness.run.units import budget_gate, check_prompts, open_prompts, open_workbench
    from sandbox import SandboxUnavailable

    from harness.run.budget import Budget

    t0 = time.perf_counter()
    header: dict[str, Any] | None = None
    if getattr(args, "estimate", False) and args.resume is not None:
        raise UsageError("--estimate estimates a new run before it starts; drop --resume")
    if args.resume_changed and args.resume is None:
        raise UsageError("--resume-changed goes with --resume RUN_DIR")
    session = None  # the run's session lock, held until this process is done with the run
    if args.resume is not None:
        run_dir = args.resume
        try:
            session = SessionLock(run_dir).acquire()  # no two sessions write one run
            header = read_run_header(run_dir)
        except (FolderError, FileNotFoundError, ValueError) as exc:
            raise UsageError(f"--resume {run_dir}: {exc}") from None
        if header.get("schema") != SCHEMA_VERSION:
            raise UsageError(
                f"--resume {run_dir}: the run was written with trial record schema {header.get('schema')} "
                f"and this harness writes schema {SCHEMA_VERSION}; finish it with the harness version "
                "that started it, or start a new run"
            )
        # A run recorded before the setting existed decoded plainly: it goes on so.
        recorded = {"speculative": "off", **header["config"]}
        config = RunConfig.from_dict(recorded, source=f"{run_dir}/run.json")
        overrides = {k: v for k, v in _flag_values(args).items() if k in RESUMABLE_OVERRIDES}
        ignored = sorted(set(_flag_values(args)) - set(RESUMABLE_OVERRIDES))
        if ignored:
            print(f"note: resuming uses the run's own settings; ignoring --{', --'.join(ignored)}", file=sys.stderr)
        config = config.replace(**overrides).validate()
    elif cell is not None and cell.config is not None:
        config = cell.config.validate()
    else:
        config = build_config(args)

    try:
        tasks = load_tasks(config.tasks).select(
            task_ids=config.task_ids, limit=config.limit, after=config.after, before=config.before,
        )
    except TaskError as exc:
        raise UsageError(str(exc)) from None
    if not tasks.tasks:
        raise UsageError(f"task set {config.tasks!r} selects no task")
    if header is not None and isinstance(header.get("task_check"), dict):
        # the tasks the check left out when the run started stay out (checked once)
        left_out = {str(v.get("task_id")) for v in header["task_check"].get("left_out") or []}
        tasks = tasks.select(task_ids=[t.task_id for t in tasks.tasks if t.task_id not in left_out])
    prompts = open_prompts(config.prompts)
    try:
        check_prompts(prompts)
    except PromptSetError as exc:
        raise UsageError(str(exc)) from None
    if header is not None and not args.resume_changed:
        # Before the model and the sandbox open; the runner checks those once open.
        changes = resume_changes(header, {"tasks": {"digest": tasks.digest}, "prompts": {"digest": prompts.digest()}})
        if changes:
            raise UsageError(describe_changes(run_dir, changes))
    frozen = None
    if header is not None and header.get("recall"):
        from harness.core.recall import changed_source

        problem = changed_source(header, config, run_dir)
        if problem:
            raise UsageError(f"--resume {args.resume}: {problem}")
    elif config.recall_from:
        from harness.core.recall import RecallError, freeze

        try:
            frozen = freeze(config, tasks)  # the source as it stands now, before any model is opened
        except RecallError as exc:
            raise UsageError(str(exc)) from None
    if getattr(args, "estimate", False):
        from harness.run.budget import format_estimate

        print(format_estimate(estimate_of(config, tasks, prompts),
                              f"estimate: {len(tasks.tasks)} tasks from {tasks.name} x {', '.join(config.strategies)} x "
                              f"{config.samples} sample(s), {trials_phrase(config.trials, config.strategies)}; "
                              f"model {config.model}"))
        return 0
    budget = Budget(config.max_calls, config.max_cost)
    if config.max_cost is not None and run_prices_of(config)[1] == LOCAL_PRICE_SOURCE:
        raise UsageError("--max-cost counts dollars, and the local model costs $0 (it runs on this machine): "
                         "use --max-calls to cap it")
    if config.max_cost is not None and run_prices_of(config)[0] is None:
        raise UsageError(f"--max-cost counts dollars, and {config.model!r} has no price: give --price IN/OUT (dollars "
                         "per million tokens), or a --price-table that has it; or use --max-calls")
    if config.samples > 1 and config.temperature == 0.0:
        print("note: samples > 1 at temperature 0 gives near-identical attempts; pass@k>1 will say little", file=sys.stderr)

    gate = budget_gate(config) if budget.active else None  # on Ray, the driver's: nodes ask it (GateHost)
    workbench = None
    if config.executor != "ray":  # on Ray each node opens its own (harness/executors/ray_node.py)
        try:
            shared = {"limiter": cell.limiter} if cell is not None and cell.limiter is not None else {}
            if gate is not None:
                shared["budget"] = gate
            workbench = open_workbench(config, prompts, languages=tuple({task.language for task in tasks.tasks}),
                                       **shared)
        except (ModelConfigError, SandboxUnavailable) as exc:
            raise UsageError(str(exc)) from None
    model = workbench.model if workbench is not None else None
    # Under a budget every request the server sees is one of the run's calls, counted and
    # recorded: no check call outside it (a server that does not answer fails the first calls).
    checked = (_check_model(config, model, workbench, resuming=header is not None)
               if getattr(args, "model_check", True) and not budget.active else None)
    t_ready = time.perf_counter()

    if header is None:
        extra: dict[str, Any] = {}
        if config.check_tasks:
            tasks, extra["task_check"] = _check_tasks(config, tasks, workbench)
        extra["estimate"] = estimate_of(config, tasks, prompts, strict=False)  # the report says how far off it was
        try:
            run_dir, header = prepare_run_dir(config, tasks, config.sandbox, frozen,
                                              run_id=cell.run_id if cell is not None else None, extra=extra)
            session = SessionLock(run_dir).acquire()
            if checked is not None:  # what the check call cost, beside the trials (it decides nothing of them)
                from harness.rundata import write_json

                header = {**header, "model_check": checked}
                write_json(run_dir / "run.json", header)
        except OSError as exc:
            if workbench is not None:
                workbench.close()
            raise UsageError(f"the run folder cannot be written under {config.out} ({_os_error(exc)}); "
                             "free space there, or give another folder with --out") from None
    if cell is not None and cell.on_folder is not None:
        cell.on_folder(run_dir)
    print(
        f"run {header['run_id']}: {len(tasks.tasks)} tasks from {tasks.name} x {', '.join(config.strategies)}"
        f" x {config.samples} sample(s), {trials_phrase(config.trials, config.strategies)}; model {config.model}; "
        f"sandbox {config.sandbox} ({config.sandbox_workers} workers{' per node' if config.executor == 'ray' else ''}); "
        f"executor {config.executor}; folder {run_dir}",
        file=sys.stderr,
    )
    if model is not None and not model.accepts_temperature:
        print(
            f"warning: {config.model} does not accept a temperature: it samples at its own default, not at "
            f"{config.temperature:g}; records say temperature_used null and its answers are not cached",
            file=sys.stderr,
        )
    if model is not None and model.concurrency_note:
        print(f"model: {model.concurrency_note}", file=sys.stderr)

    viewer = _open_view(run_dir) if getattr(args, "view", False) else None
    runner = Runner(
        config, run_dir, header, tasks, model, workbench.sandbox if workbench is not None else None,
        show_progress=True, prompts=prompts, resumed=args.resume is not None, allow_changed=args.resume_changed,
        budget=budget, gate=gate,
    )
    try:
        result = runner.execute()
    except ResumeRefused as exc:
        if workbench is not None:
            workbench.close()
        if viewer is not None:
            viewer.stop()
        raise UsageError(str(exc)) from None
    except RunInterrupted as exc:
        print(str(exc), file=sys.stderr)
        if cell is not None and cell.resume_hint:
            print(f"the study: resume it with: {cell.resume_hint}", file=sys.stderr)
        if workbench is not None:
            workbench.sandbox.close()
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(130)  # worker threads may be inside a model call; do not wait for them
    except Exception as exc:  # e.g. the Docker engine went away mid-run, or the results disk is full
        resume = _resume_command(cell, run_dir)
        where = _log_trace(run_dir, "the run stopped")
        if _disk_full(exc):
            print(f"error: the run stopped: {_full(exc)} ({_os_error(exc)}) in {run_dir}. Finished trials "
                  f"are saved; free space, then resume with: {resume}", file=sys.stderr)
        else:
            print(f"error: the run stopped: {type(exc).__name__}: {terminal_safe(str(exc))} ({where}). Finished "
                  f"trials are saved; once fixed, resume with: {resume}", file=sys.stderr)
        if workbench is not None:
            workbench.sandbox.close()
        sys.stderr.flush()
        os._exit(1)
    if workbench is not None:  # on Ray the nodes hold their own
        workbench.close()
    try:
        opened = workbench.opened_s if workbench is not None else {"sandbox_start_s": 0.0}
        return finish_run(result, config, timings={
            "load_s": round(t_ready - t0 - opened["sandbox_start_s"], 3),  # task set, prompts, model
            "sandbox_start_s": opened["sandbox_start_s"],
            **result.timings,
        })
    except OSError as exc:
        if not _disk_full(exc):
            raise
        resume = _resume_command(cell, run_dir)
        print(f"error: the run's summary could not be written: {_full(exc)} ({_os_error(exc)}) in "
              f"{run_dir}. Finished trials are saved; free space, then resume with: {resume}", file=sys.stderr)
        return 1
    finally:
        if session is not None:  # after summary.json: the view reads an ended session, never a killed one
            session.release()
        if viewer is not None:  # stopped before the interpreter exits, mid-request or not
            viewer.stop()
            print(f"view: closed with the run; reopen with: python -m harness view {run_dir.parent}", file=sys.stderr)


def _resume_command(cell: CellOptions | None, run_dir: Path) -> str:
    return cell.resume_hint if cell is not None and cell.resume_hint else f"python -m harness run --resume {run_dir}"


def _disk_full(exc: BaseException) -> bool:
    """True for a write the disk (or a file size limit) refused, wherever it was wrapped."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _full(exc: BaseException) -> str:
    seen: BaseException | None = exc
    while seen is not None and not (isinstance(seen, OSError) and seen.errno == errno.EFBIG):
        seen = seen.__cause__ or seen.__context__
    return "a results file reached the size limit on files" if seen is not None else "the results disk is full"


def _os_error(exc: BaseException) -> str:
    """An OSError as a user reads it: its reason and the file, without the errno."""
    seen: BaseException | None = exc
    while seen is not None and not isinstance(seen, OSError):
        seen = seen.__cause__ or seen.__context__
    if seen is None:
        return terminal_safe(str(exc))
    reason = seen.strerror or str(seen)
    return terminal_safe(f"{reason}: {seen.filename}" if seen.filename else reason)


def _log_trace(run_dir: Path, what: str) -> str:
    """Appends the traceback to run_dir/error.log and says where it is; on a disk that
    refuses that too, says so instead (the one line on the terminal is what matters)."""
    log = run_dir / "error.log"
    try:
        with log.open("a", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(f"--- {what}\n{traceback.format_exc()}\n")
    except OSError as exc:
        return f"no traceback written: {exc.strerror}"
    return f"traceback in {log}"


def _check_model(config: RunConfig, model: Any, workbench: Any, *, resuming: bool) -> dict[str, Any] | None:
    """One cheap call before anything is written (harness/run/model_check.py); a model that
    does not answer is a usage error. The call goes through a client of its own, without
    the response cache and with at most CHECK_RETRIES retries, so that a server that is
    not running is told in a second or two. On Ray (no model opened here) an API model
    is checked the same way; a local model is opened, and proves itself, on each node."""
    from harness.run.model_check import CHECK_RETRIES, ModelCheckFailed, check_model, needs_check
    from harness.models import ModelConfigError, open_model
    from harness.run.units import model_settings

    if model is not None and not needs_check(model):
        return None
    if model is None and not is_remote_api(config.model):
        return None
    probe_config = config.replace(cache=False, max_retries=min(config.max_retries, CHECK_RETRIES))
    try:
        probe = open_model(config.model, model_settings(probe_config))
    except ModelConfigError as exc:
        raise UsageError(str(exc)) from None
    try:
        found = check_model(probe, temperature=config.temperature, resuming=resuming)
    except ModelCheckFailed as exc:
        if workbench is not None:
            workbench.close()
        raise UsageError(str(exc)) from None
    finally:
        probe.close()
    print(f"model: {config.model} answered a check call in {found['seconds']:.1f} s (as {terminal_safe(str(found['model']))})",
          file=sys.stderr)
    return found


def _open_view(run_dir: Path) -> Any:
    """`harness view` in a thread of this process, over the run's results folder."""
    from harness.view import DEFAULT_PORT, ViewServer
    from harness.view.server import free_port

    try:
        server = ViewServer(run_dir.parent, free_port(DEFAULT_PORT))
        server.start()
    except OSError as exc:
        print(f"note: --view: the view did not start ({exc}); the run goes on", file=sys.stderr)
        return None
    print(f"view: {server.url}runs/{run_dir.name} (live while this run goes)", file=sys.stderr)
    return server


def _causes(run_dir: Path, failed: dict[str, int]) -> dict[str, str]:
    """The first error text of each kind among this session's errors.jsonl lines (the
    last ones: the session appended them), cut to one short line."""
    from harness.rundata import read_errors

    rows = read_errors(run_dir / "errors.jsonl")[-sum(failed.values()):] if failed else []
    causes: dict[str, str] = {}
    for row in rows:
        text = " ".join(str(row.get("error") or "").split())
        causes.setdefault(str(row.get("kind")), text if len(text) <= 300 else text[:297] + "...")
    return causes


def _failure_line(result: Any, failed: dict[str, int], scored: bool) -> str:
    causes = _causes(result.run_dir, failed)
    parts = []
    for kind, what in (("model_error", "by a model error that outlived its retries"),
                       ("unit_exception", f"by an unexpected exception (tracebacks in {result.run_dir / 'error.log'})")):
        if failed.get(kind):
            cause = f": {terminal_safe(causes[kind])}" if causes.get(kind) else ""
            parts.append(f"{failed[kind]} {what}{cause}")
    resume = f"python -m harness run --resume {result.run_dir}"
    if not scored:
        return (f"error: no attempt finished: {sum(failed.values())} stopped, {'; '.join(parts)}. No trial was "
                f"recorded, so nothing is scored and there is no report. Once the cause is fixed, resume with: {resume}")
    return (f"error: {sum(failed.values())} attempt(s) did not finish: {'; '.join(parts)}. They are listed in "
            f"{result.run_dir / 'errors.jsonl'}, are not scored, and their finished trials are kept. "
            f"Retry them with: {resume}")


def _check_tasks(config: RunConfig, tasks: Any, workbench: Any) -> tuple[Any, dict[str, Any]]:
    """--check-tasks: the task set without its broken tasks, and run.json's "task_check"."""
    from harness.run.taskcheck import BROKEN, check_tasks, header_record, summary_line

    sandbox = workbench.sandbox if workbench is not None else None
    opened = None
    if sandbox is None:  # on Ray the nodes open theirs; the check runs here
        from sandbox import SandboxConfig, SandboxUnavailable, open_sandbox

        try:
            languages = tuple(sorted({t.language for t in tasks.tasks} - {"python"}))
            sandbox = opened = open_sandbox(SandboxConfig(backend=config.sandbox, workers=config.sandbox_workers,
                                                          domains=("hidden",), languages=languages))
        except SandboxUnavailable as exc:
            raise UsageError(str(exc)) from None
    try:
        verdicts = check_tasks(tasks.tasks, sandbox, timeout_s=config.test_timeout_s, workers=config.sandbox_workers,
                               compare_mode=config.io_compare)
    finally:
        if opened is not None:
            opened.close()
    for v in verdicts:
        if v.status == BROKEN:
            print(f"--check-tasks: left out {terminal_safe(v.task_id)}: {terminal_safe(v.reason)}", file=sys.stderr)
    print(f"--check-tasks: {summary_line(verdicts)}", file=sys.stderr)
    kept = [v.task_id for v in verdicts if v.status != BROKEN]
    if not kept:
        if workbench is not None:
            workbench.close()
        raise UsageError(f"--check-tasks: every task of {tasks.name} is broken; nothing to run "
                         f"(see: python -m harness tasks check {config.tasks})")
    return tasks.select(task_ids=kept), header_record(verdicts)


def finish_run(result: Any, config: RunConfig, *, timings: dict[str, float]) -> int:
    from harness.rundata import numbers
    from harness.report.table import format_summary

    records = result.records
    timings["model_s"] = round(sum(r.model_s for r in records), 3)
    timings["sandbox_s"] = round(sum(r.sandbox_s for r in records), 3)
    failed = getattr(result, "failed", None) or {}
    # The run's numbers, computed once with the session's end recorded: summary.json,
    # the report and the table below all show them.
    budget_stop = getattr(result, "budget_stop", None)
    exit_code = EXIT_BUDGET if budget_stop else 1 if failed else 0
    summary = numbers.end_session(result.run_dir, exit_code=exit_code, timings=timings, budget_stop=budget_stop)
    if not records and budget_stop:  # the budget refused the first call: say so, as any budget stop
        print(f"budget: {summary['status']['text']}", file=sys.stderr)
        return EXIT_BUDGET
    if not records:  # every attempt stopped before its first trial: nothing to report, say why
        print(_failure_line(result, failed, scored=False) if failed else
              f"error: the run recorded no trial; its folder is {result.run_dir}", file=sys.stderr)
        return 1
    report_path = None
    report_error = None
    if config.report:
        from harness.report import write_report

        t = time.perf_counter()
        try:
            report_path = write_report(result.run_dir, doc=summary)
        except Exception as exc:  # noqa: BLE001 - the results are saved; the report can be rebuilt
            where = _log_trace(result.run_dir, "the report could not be written")
            report_error = (f"error: the report could not be written ({type(exc).__name__}: "
                            f"{terminal_safe(' '.join(str(exc).split()))[:300]}; {where}). The results are "
                            f"saved; rebuild it with: python -m harness report {result.run_dir}")
            summary = numbers.end_session(result.run_dir, exit_code=exit_code or 1, timings=timings,
                                          budget_stop=budget_stop)
        timings["report_s"] = round(time.perf_counter() - t, 3)
    print(format_summary(summary))
    print(
        "time: " + ", ".join(f"{k.removesuffix('_s')} {v:.1f}s" for k, v in timings.items())
        + "  (model and sandbox are summed over workers)"
    )
    print(f"run folder: {result.run_dir}")
    if report_path is not None:
        print(f"report: {report_path}")
    if report_error is not None:
        print(report_error, file=sys.stderr)
    if budget_stop:
        print(f"budget: {summary['status']['text']}", file=sys.stderr)
    if failed:
        print(_failure_line(result, failed, scored=True), file=sys.stderr)
    return exit_code or (1 if report_error is not None else 0)
