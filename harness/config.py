"""RunConfig: every run setting and its default in one place.

Built from the defaults, then a TOML file (`--config`), then command-line flags;
validated once; written whole into run.json.
"""
from __future__ import annotations

import collections.abc
import dataclasses
import datetime as _dt
import importlib.util
import math
import os
import re
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from harness.models.hostinfo import available_cores
from harness.models.base import TOOL_PROTOCOLS
from harness.models.registry import is_remote_api
from harness.models.speculative import check_setting as check_speculative
from harness.tasks.registry import DEFAULT_TASKS

SCOPES = ("other_tasks", "other_task_sets")  # which lessons recall may show
DEFAULT_STRATEGY = "both"  # a group of the registry (harness/strategies/): see `harness run --help`


EXECUTORS = ("local", "ray")
IO_COMPARE_MODES = ("strict", "source")  # sandbox/worker/io_compare.py MODES
# Past 4 slots the 2-core machine measured in FACTS.md gains nothing (~32 tok/s).
LOCAL_SLOTS_DEFAULT_MAX = 4
RAY_INSTALL_HINT = "pip install 'reflexion-harness[ray]' (or pip install ray)"


class ConfigError(ValueError):
    """A setting is wrong; the message names the setting (and the file, if any)."""


def default_cache_dir() -> Path:
    """The response cache: $HARNESS_CACHE_DIR, else <user cache>/reflexion-harness/responses
    ($XDG_CACHE_HOME or ~/.cache), so that it is one folder whatever folder a command
    starts in (the models live beside it, in .../models)."""
    env = os.environ.get("HARNESS_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "reflexion-harness" / "responses"




@dataclass(frozen=True)
class RunConfig:
    tasks: str = DEFAULT_TASKS  # task-set spec: builtin[:tag], humaneval, mbpp, hf:..., jsonl:..., a path
    # a strategy's name, a group, or names and groups joined by commas (harness/strategies/)
    strategy: str = DEFAULT_STRATEGY
    # a strategy's own settings: strategy name -> {key: value} (`--strategy-option NAME.KEY=VALUE`)
    strategy_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    model: str = "local"  # model spec: local[:gguf], anthropic:<m>, openai:<m>@<url>, scripted:<file>
    trials: int = 3  # max trials per attempt (reflexion, feedback); baseline always 1
    samples: int = 1  # independent attempts per task and strategy
    k: tuple[int, ...] = (1,)  # pass@k to report; each k <= samples
    limit: int | None = None  # first N tasks
    task_ids: tuple[str, ...] | None = None  # only these tasks, in this order
    # Contamination control: only problems dated (contest date) strictly after / before
    # this day, YYYY-MM-DD (LiveCodeBench, or any task whose meta has contest_date).
    after: str | None = None
    before: str | None = None
    workers: int = 8  # units of work (task x strategy x attempt) in flight at once (per node on Ray)
    # Local model: sequences generated together by the engine (per node on Ray); None:
    # min(workers, LOCAL_SLOTS_DEFAULT_MAX), resolved by validate() and recorded.
    local_slots: int | None = None
    # Bitwise-reproducible local answers without the cache: one slot, no prompt reuse,
    # and no drafter whose answers depend on other calls ("auto" drafting is then off).
    reproducible: bool = False
    # Local model: speculative decoding (harness/models/speculative.py): "auto" (the
    # catalogue's measured best for the model), "off", an n-gram drafter, a draft model.
    speculative: str = "auto"
    executor: str = "local"  # local (a thread pool in this process) | ray (a Ray cluster)
    ray_address: str | None = None  # with executor "ray": the cluster to join; None = Ray's default
    sandbox: str = "docker"  # docker | process (unsafe: no isolation)
    # The process sandbox lets model code read this process's environment (API keys)
    # and reach the network: with an API model it must be asked for by name.
    allow_process_sandbox_with_api: bool = False
    sandbox_workers: int = field(default_factory=available_cores)  # tests at once; containers per domain
    out: Path = Path("results")
    memory_dir: Path | None = None  # long-term memory; None: reflections/ beside the --out folder
    memory_window: int = 3  # lessons the Actor sees
    memory_namespace: str | None = None  # share lessons across runs under this name
    max_internal_tests: int = 6
    temperature: float = 0.0
    # resample's Actor from trial 2 on, when `temperature` is 0: independent samples
    # need a temperature above 0 (at a temperature above 0, resample uses that one).
    resample_temperature: float = 0.8
    seed: int = 0
    max_tokens: int = 768  # per Actor answer
    max_tokens_tests: int = 256
    max_tokens_lesson: int = 160
    test_timeout_s: float = 5.0  # per test, internal and hidden (a task may set its own)
    cache: bool = True  # response cache for temperature-0 calls
    cache_dir: Path = field(default_factory=default_cache_dir)
    model_timeout_s: float = 120.0
    max_retries: int = 5
    # Tool calls: the backend's own ("native"), written in the reply and parsed by the
    # harness ("text", harness/models/text_tools.py), or the model's measured preference
    # ("auto": the catalogue's per-model choice for a local model, else native).
    tool_protocol: str = "auto"
    stream: bool = False  # stream replies where the backend can (openai)
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    prices: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # model id -> {input, output, ...} $/Mtok
    # A user's price table (harness/data/prices.toml's format) extending the shipped one.
    price_table: Path | None = None
    # The run's model's price, "IN/OUT[/CACHE_READ[/CACHE_WRITE]]" in $/Mtok: beats every table.
    price: str | None = None
    oracle_feedback: bool = False  # ablation: feedback from hidden tests (reports flag it)
    # How io outputs (and APPS's call-based results) are judged (sandbox/worker/io_compare.py):
    # "strict", token for token with the source's float tolerance only between two
    # non-integers; or "source", each source's own grader's rule, lenient ones included
    # (APPS's set of token sets, CodeContests' int32 -> double), for comparability with
    # its published numbers: records keep the strict verdict beside it, and the summary
    # counts the verdicts it changed.
    io_compare: str = "strict"
    # Recall across tasks (strategy reflexion+recall): the frozen source of lessons from
    # other tasks (an earlier run folder, or namespace:<name> in memory_dir as it stands
    # at start), how many the Actor sees, which are eligible, and the length each is cut
    # to. Ranking is BM25 (bm25s), recorded in run.json; there is no dense ranker: no
    # small embedding model ships offline the way the default model does.
    recall_from: str | None = None
    recall_k: int = 3
    recall_scope: str = "other_tasks"  # other_tasks | other_task_sets (only lessons of another task set)
    recall_max_chars: int = 300
    prompts: Path | None = None  # a folder of templates overriding harness/prompts/ by name
    report: bool = True  # write the report at the end of the run
    # Before the run: grade each task's reference (must pass) and a stub (must fail) on
    # its hidden tests, and leave broken tasks out (harness/run/taskcheck.py).
    check_tasks: bool = False
    # Budgets over the whole run (every session), caps enforced before each call starts
    # (harness/models/gate.py): no call once this many have started (cache hits not
    # counted), none that could take the spending past this many dollars.
    max_calls: int | None = None
    max_cost: float | None = None

    @property
    def strategies(self) -> tuple[str, ...]:
        from harness.strategies import resolve

        return resolve(self.strategy)

    def validate(self) -> "RunConfig":
        from harness.strategies import StrategyError, get_strategy, groups, strategy_names

        for f in dataclasses.fields(self):  # the types first: a RunConfig made in code is checked too
            value = getattr(self, f.name)
            checked = _coerce(f.name, value, "config")
            if checked is not value and (type(checked) is not type(value) or checked != value):
                return self.replace(**{f.name: checked}).validate()
        if not isinstance(self.strategy, str):
            raise ConfigError(f"strategy must be a name, a group or a comma-separated list, got {self.strategy!r}")
        try:
            chosen = self.strategies
        except StrategyError as exc:
            shown = ", ".join(f"{g} = {'+'.join(m)}" for g, m in groups().items())
            raise ConfigError(f"{exc}; groups: {shown}") from None
        for name, given in self.strategy_options.items():
            if name not in strategy_names():
                raise ConfigError(f"strategy_options: unknown strategy {name!r}")
            strategy = get_strategy(name)
            allowed = strategy.options
            for key, value in given.items():
                if key not in allowed:
                    raise ConfigError(f"strategy_options: {name} has no option {key!r}; its options: "
                                      f"{', '.join(allowed) or 'none'}")
                try:
                    strategy.convert_option(key, value)
                except ValueError as exc:
                    raise ConfigError(f"strategy_options: {exc}") from None
            try:
                strategy.check_options(given)
            except ValueError as exc:
                raise ConfigError(f"strategy_options: {name}: {exc}") from None
        del chosen
        positive = {
            "trials": self.trials,
            "samples": self.samples,
            "workers": self.workers,
            "sandbox_workers": self.sandbox_workers,
            "max_internal_tests": self.max_internal_tests,
            "max_tokens": self.max_tokens,
            "max_tokens_tests": self.max_tokens_tests,
            "max_tokens_lesson": self.max_tokens_lesson,
        }
        for name, value in positive.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be an integer >= 1, got {value!r}")
        if self.local_slots is None or (self.reproducible and self.local_slots != 1):
            if self.reproducible and self.local_slots not in (None, 1):
                raise ConfigError(
                    f"reproducible runs the local model with one slot; local_slots={self.local_slots!r} "
                    "contradicts it (drop one of the two)"
                )
            slots = 1 if self.reproducible else min(self.workers, LOCAL_SLOTS_DEFAULT_MAX)
            return self.replace(local_slots=slots).validate()
        if not isinstance(self.local_slots, int) or isinstance(self.local_slots, bool) or self.local_slots < 1:
            raise ConfigError(f"local_slots must be an integer >= 1, got {self.local_slots!r}")
        speculative = self._validate_speculative()
        if speculative != self.speculative:
            return self.replace(speculative=speculative).validate()
        if self.limit is not None and (not isinstance(self.limit, int) or self.limit < 1):
            raise ConfigError(f"limit must be an integer >= 1, got {self.limit!r}")
        for name in ("after", "before"):
            value = getattr(self, name)
            if value is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(value)):
                raise ConfigError(f"{name} must be a date as YYYY-MM-DD, got {value!r}")
        if self.memory_window < 0:
            raise ConfigError(f"memory_window must be >= 0, got {self.memory_window!r}")
        if not self.k or any((not isinstance(k, int)) or k < 1 for k in self.k):
            shown = ",".join(str(k) for k in self.k) if self.k else "nothing"
            raise ConfigError(f"k must be a list of integers >= 1, e.g. --k 1,5; got {shown}")
        too_big = [k for k in self.k if k > self.samples]
        if too_big:
            raise ConfigError(
                f"k={','.join(map(str, too_big))} exceeds samples={self.samples}: "
                "pass@k needs at least k samples per task (raise --samples)"
            )
        if not 0.0 <= self.temperature <= 2.0:
            raise ConfigError(f"temperature must be within [0, 2], got {self.temperature!r}")
        if not 0.0 < self.resample_temperature <= 2.0:
            raise ConfigError(
                f"resample_temperature must be within (0, 2], got {self.resample_temperature!r}: "
                "resample draws independent samples, which needs a temperature above 0"
            )
        if self.prompts is not None and not self.prompts.is_dir():
            raise ConfigError(f"prompts {str(self.prompts)!r} is not a folder of prompt templates")
        if self.io_compare not in IO_COMPARE_MODES:
            raise ConfigError(f"io_compare must be one of {', '.join(IO_COMPARE_MODES)}, got {self.io_compare!r}")
        if self.test_timeout_s <= 0:
            raise ConfigError(f"test_timeout_s must be > 0, got {self.test_timeout_s!r}")
        if self.model_timeout_s <= 0:
            raise ConfigError(f"model_timeout_s must be > 0, got {self.model_timeout_s!r}")
        if self.max_retries < 0:
            raise ConfigError(f"max_retries must be >= 0, got {self.max_retries!r}")
        for name in ("requests_per_minute", "tokens_per_minute"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1 (or left out: no limit), got {getattr(self, name)!r}")
        self._validate_recall()
        self._validate_prices()
        self._validate_budget()
        if self.memory_dir is None:
            # Beside the results folder, whatever folder the command starts in: with the
            # default --out (results/) that is the project's reflections/ folder.
            return self.replace(memory_dir=self.out.parent / "reflections").validate()
        for name in ("out", "memory_dir", "cache_dir"):
            path = getattr(self, name)
            if path.exists() and not path.is_dir():
                raise ConfigError(f"{name} {str(path)!r} exists and is not a folder")
        if self.executor not in EXECUTORS:
            raise ConfigError(f"executor must be one of {', '.join(EXECUTORS)}, got {self.executor!r}")
        if self.executor == "ray" and not _installed("ray"):
            raise ConfigError(f"executor 'ray' needs Ray, which is not installed: {RAY_INSTALL_HINT}")
        from harness.registry import REGISTRY

        if self.sandbox not in REGISTRY.names("sandboxes"):
            raise ConfigError(f"sandbox must be one of {', '.join(REGISTRY.names('sandboxes'))}, got {self.sandbox!r}")
        if self.tool_protocol not in TOOL_PROTOCOLS:
            raise ConfigError(f"tool_protocol must be one of {', '.join(TOOL_PROTOCOLS)}, got {self.tool_protocol!r}")
        # The model's backend declares whether it is a remote API (read from its class,
        # without opening it; a backend from another package included).
        if self.sandbox == "process" and is_remote_api(self.model) and not self.allow_process_sandbox_with_api:
            raise ConfigError(
                f"sandbox 'process' with the API model {self.model!r}: model-written code would run "
                "as your user, where it can read this process's environment (your API keys) "
                "through /proc and reach the network. Use --sandbox docker, or accept that with "
                "--allow-process-sandbox-with-api"
            )
        return self

    def recalling_strategies(self) -> tuple[str, ...]:
        """The run's strategies that recall lessons from other tasks."""
        from harness.strategies import traits_of

        return tuple(s for s in self.strategies if (t := traits_of(s)) is not None and t.recalls)

    def _validate_speculative(self) -> str:
        """The speculative setting, checked; with `reproducible`, "auto" becomes "off" (an
        answer must not depend on other calls, as ngram-mod's shared table makes it)."""
        try:
            history = check_speculative(self.speculative)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if self.reproducible and self.speculative == "auto":
            return "off"
        if self.reproducible and history:
            raise ConfigError(
                f"reproducible answers depend on their request alone; speculative={self.speculative!r} drafts "
                "from every earlier call (drop one of the two, or draft with ngram-simple, ngram-map-k or a draft model)"
            )
        return self.speculative

    def _validate_recall(self) -> None:
        from harness.strategies import groups, traits_of

        recalling = list(self.recalling_strategies())
        if recalling and not self.recall_from:
            raise ConfigError(
                f"strategy {recalling[0]!r} recalls lessons from other tasks: name their frozen source with "
                "--recall-from RUN_DIR (an earlier run folder) or --recall-from namespace:NAME"
            )
        if self.recall_from and not recalling:
            pairs = [f"{g} ({'+'.join(m)})" for g, m in groups().items()
                     if any(traits_of(x) and traits_of(x).recalls for x in m)]
            raise ConfigError(
                f"recall_from is set but no strategy of {self.strategy!r} recalls; use one that does: "
                + ", ".join(pairs)
            )
        for name in ("recall_k", "recall_max_chars"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be an integer >= 1, got {value!r}")
        if self.recall_max_chars < 40:
            raise ConfigError(f"recall_max_chars must be >= 40 (a lesson cut shorter says nothing), got {self.recall_max_chars}")
        if self.recall_scope not in SCOPES:
            raise ConfigError(f"recall_scope must be one of {', '.join(SCOPES)}, got {self.recall_scope!r}")
        if recalling and self.executor == "ray":
            raise ConfigError(f"recall ({recalling[0]}) runs on the local executor only; drop --executor ray")

    def _validate_budget(self) -> None:
        if self.max_calls is not None and (not isinstance(self.max_calls, int) or isinstance(self.max_calls, bool)
                                           or self.max_calls < 1):
            raise ConfigError(f"max_calls must be an integer >= 1, got {self.max_calls!r}")
        if self.max_cost is not None and (isinstance(self.max_cost, bool) or not isinstance(self.max_cost, (int, float))
                                          or not self.max_cost > 0 or self.max_cost == float("inf")):
            raise ConfigError(f"max_cost must be a number of dollars > 0, got {self.max_cost!r}")

    def _validate_prices(self) -> None:
        from harness.models.prices import PriceError, run_prices

        if self.price_table is not None and not self.price_table.is_file():
            raise ConfigError(f"price_table {str(self.price_table)!r} is not a file (a TOML price table: "
                              '[models."<model id>"] input = ..., output = ..., in dollars per million tokens)')
        try:
            run_prices(self.prices, self.price_table, self.price)
        except PriceError as exc:
            raise ConfigError(str(exc)) from None

    def replace(self, **changes: Any) -> "RunConfig":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Path):  # (None stays None)
                value = str(value)
            elif isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, Mapping):
                value = {k: dict(v) if isinstance(v, Mapping) else v for k, v in value.items()}
            out[f.name] = value
        out["strategies"] = list(self.strategies)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "config") -> "RunConfig":
        """Builds from plain values (a TOML table, or run.json's config)."""
        known = {f.name: f for f in dataclasses.fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            name = key.replace("-", "_")
            if name == "strategies":
                continue  # derived from `strategy`
            if name not in known:
                raise ConfigError(f"{source}: unknown setting {key!r}")
            kwargs[name] = _coerce(name, value, source, key)
        return cls(**kwargs)

    @classmethod
    def load_toml(cls, path: Path) -> dict[str, Any]:
        """Reads a TOML config file; settings may sit at top level or under [run]."""
        if not path.is_file():
            raise ConfigError(f"config file not found: {path}")
        data = _read_toml(path)
        if "study" in data:
            raise ConfigError(f"{path}: a [study] table is a study (several models or task sets): run it with "
                              f"`python -m harness study {path}`")
        if "run" in data:
            stray = sorted(k for k in data if k != "run")
            if stray:
                raise ConfigError(
                    f"{path}: settings at top level ({', '.join(stray)}) and in a [run] table; "
                    f"put them all in one place (the [run] table would hide the others)"
                )
            data = data["run"]
            if not isinstance(data, dict):
                raise ConfigError(f"{path}: run must be a [run] table of settings, got {_shown(data)}")
        data = dict(data)
        cls.from_dict(data, source=str(path))  # fail early on unknown keys / bad types
        return data


def _read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's table; every way it can be unreadable is one ConfigError naming it."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1}); "
                          "save it as UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


# --------------------------------------------------------------------------- setting types
# Every setting's value is checked against its field's type (from the annotations above),
# wherever it comes from: a TOML file, run.json's config, flags, or code. A value of the
# wrong type is one ConfigError naming the source and the setting, never a crash later.

_HINTS: dict[str, Any] = {}
_SPLIT_LISTS = ("k", "task_ids")  # also written as one comma-separated string, as their flags take them


def _hints() -> dict[str, Any]:
    if not _HINTS:
        _HINTS.update(typing.get_type_hints(RunConfig))
    return _HINTS


class _Bad(TypeError):
    def __init__(self, expected: str, got: str) -> None:
        super().__init__(expected)
        self.expected, self.got = expected, got


def _shown(value: Any) -> str:
    """A value as the error names it: its TOML-ish type and, when short, itself."""
    names = {str: "the string", bool: "the boolean", int: "the integer", float: "the number", list: "a list",
             tuple: "a list", dict: "a table"}
    name = names.get(type(value), f"a {type(value).__name__}")
    if isinstance(value, (list, tuple, dict)):
        return name
    text = str(value).lower() if isinstance(value, bool) else repr(value)
    return f"{name} {text}" if len(text) <= 60 else name


_WORDS = {str: "a string", int: "an integer", float: "a number", bool: "true or false", Path: "a folder path (a string)"}
_TABLES = {
    "prices": "a table of model id -> {input, output, ...} prices in dollars per million tokens",
    "strategy_options": "a table of strategy name -> {option = value}",
}


def _expected(name: str, tp: Any) -> str:
    if tp in _WORDS:
        return _WORDS[tp]
    if typing.get_origin(tp) is tuple:
        return f"a list of {_WORDS[typing.get_args(tp)[0]].split(' ', 1)[1]}s"
    return _TABLES.get(name, "a table")


def _hint(name: str) -> str | None:
    if name == "model":
        return "one model spec per run; to run several models, use `python -m harness study`"
    if name == "tasks":
        return "one task set per run; to run several task sets, use `python -m harness study`"
    if name == "strategy":
        return 'a strategy, a group, or several joined by commas in one string, e.g. "reflexion,baseline"'
    return None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_type(name: str, tp: Any, value: Any) -> Any:
    """`value` as the setting holds it (a path from a string, a tuple from a list, a date
    from TOML as its text), or _Bad naming what it must be."""
    args = typing.get_args(tp)
    if type(None) in args:  # X | None
        if value is None:
            return None
        tp = next(a for a in args if a is not type(None))
    if tp is str:
        if isinstance(value, (_dt.date, _dt.datetime)) and name in ("after", "before"):
            return value.isoformat()[:10]  # TOML's own date: 2024-08-01 unquoted
        if isinstance(value, str):
            return value
    elif tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise _Bad("a finite number", _shown(value))
            return float(value)
    elif tp is Path:
        if isinstance(value, Path) or isinstance(value, str) and value.strip():
            return Path(value)
    elif typing.get_origin(tp) is tuple:
        item = typing.get_args(tp)[0]
        if isinstance(value, str) and name in _SPLIT_LISTS:
            parts = [v.strip() for v in value.split(",") if v.strip()]
            if item is int and all(re.fullmatch(r"[+-]?\d+", p) for p in parts):
                return tuple(int(p) for p in parts)
            if item is str:
                return tuple(parts)
        elif isinstance(value, (list, tuple)):
            out = []
            for v in value:
                try:
                    out.append(_check_type(name, item, v))
                except _Bad:
                    raise _Bad(_expected(name, tp), f"a list holding {_shown(v)}") from None
            return tuple(out)
    elif typing.get_origin(tp) in (Mapping, dict, collections.abc.Mapping):
        if isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, Mapping)
                                              and all(isinstance(x, str) for x in v) for k, v in value.items()):
            if name == "prices":
                if all(_number(x) for p in value.values() for x in p.values()):
                    return {m: {k: float(v) for k, v in p.items()} for m, p in value.items()}
            else:  # strategy_options: each strategy converts its own values (validate)
                return {n: dict(opts) for n, opts in value.items()}
    else:
        return value  # a type this checker does not know: as given
    raise _Bad(_expected(name, tp), _shown(value))


def _coerce(name: str, value: Any, source: str, key: str | None = None) -> Any:
    tp = _hints().get(name)
    if tp is None:
        return value
    try:
        return _check_type(name, tp, value)
    except _Bad as exc:
        hint = _hint(name)
        raise ConfigError(f"{source}: setting {key or name!r} must be {exc.expected}, got {exc.got}"
                          + (f" ({hint})" if hint else "")) from None
