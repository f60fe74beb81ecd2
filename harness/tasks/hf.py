"""Hugging Face datasets: `hf:<dataset>[:<config>][:<split>]` and `mbpp[:full]`.

Rows are read with `datasets.load_dataset` and turned into tasks by the adapter
for the dataset's format (harness/tasks/adapters.py). A dataset may also be a
local folder or a .parquet/.json/.jsonl/.csv file with the same columns: it goes
through the same adapters, chosen by its columns.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from harness.tasks.adapters import (
    REQUIRED_COLUMNS, Adapter, humaneval_task, mbpp_task, mbpp_task_with_example, mbppplus_task,
)
from harness.tasks.base import TaskError, TaskSet, require_clean_text
from harness.tasks.rows import Limits, default_limits, size_text, strings_size

# Datasets we know by name -> adapter. Anything else is matched by its columns.
ADAPTERS: dict[str, Adapter] = {
    "openai_humaneval": humaneval_task,
    "openai/openai_humaneval": humaneval_task,
    "evalplus/humanevalplus": humaneval_task,
    "google-research-datasets/mbpp": mbpp_task,
    "mbpp": mbpp_task,
    "evalplus/mbppplus": mbppplus_task,
}
# With one part after the dataset, these words mean a split, anything else a config.
SPLIT_WORDS = frozenset({"train", "test", "validation", "prompt"})
DEFAULT_SPLIT = "test"
_FILE_BUILDERS = {".parquet": "parquet", ".json": "json", ".jsonl": "json", ".csv": "csv"}
_SEPARATOR = re.compile(r":(?![^\[]*\])")  # a colon outside a split slice like test[:10]
MBPP_DATASET = "google-research-datasets/mbpp"
MBPP_CONFIGS = ("sanitized", "full")
WITH_EXAMPLE = "with-example"
MBPP_FORMS = {
    False: "signature and description (no example assert)",
    True: "signature, description and the first test_list assert as an example (as the original MBPP)",
}


@dataclass(frozen=True)
class HfSpec:
    dataset: str
    config: str | None = None
    split: str | None = None  # None: "test" if the dataset has it, else its only split

    @classmethod
    def parse(cls, arg: str) -> "HfSpec":
        parts = _SEPARATOR.split(arg)
        if not parts[0].strip() or len(parts) > 3:
            raise TaskError(
                f"hf:{arg}: expected hf:<dataset>[:<config>][:<split>], "
                "e.g. hf:openai_humaneval, hf:google-research-datasets/mbpp:full:test"
            )
        dataset = parts[0].strip()
        if len(parts) == 3:
            return cls(dataset, parts[1] or None, parts[2] or None)
        if len(parts) == 2:
            word = parts[1]
            if word in SPLIT_WORDS or "[" in word:
                return cls(dataset, None, word)
            return cls(dataset, word or None, None)
        return cls(dataset)

    def describe(self) -> str:
        return f"{self.dataset!r} (config {self.config or 'default'}, split {self.split or DEFAULT_SPLIT})"


def _offline_hint(spec: HfSpec) -> str:
    return (
        f"could not reach the Hugging Face Hub for dataset {spec.describe()}. "
        "To work offline, use a local copy: download it once where there is network "
        "(it is kept in the Hugging Face cache, ~/.cache/huggingface or $HF_HOME), then "
        "set HF_DATASETS_OFFLINE=1 so the cached copy is used; or save the dataset's files "
        "in a folder and pass hf:<folder>"
    )


def _load_rows(spec: HfSpec) -> tuple[list[dict[str, Any]], list[str]]:
    try:
        import datasets
    except ImportError:
        raise TaskError("hf: task sets need the datasets package: pip install datasets") from None
    path, kwargs = spec.dataset, {"name": spec.config}
    local = Path(spec.dataset).expanduser()
    builders = _packaged_builders(datasets)
    if spec.dataset in builders and not local.exists():
        # `hf:pandas` would read every file of the working folder with that builder
        # (old versions of `datasets` unpickle them): a dataset id, not a file reader.
        raise TaskError(
            f"hf:{spec.dataset}: {spec.dataset!r} is one of datasets' file readers, not a dataset; "
            f"name a Hub dataset (owner/name), a folder, or a {', '.join(_FILE_BUILDERS)} file"
        )
    if local.is_dir() and (scripts := sorted(p.name for p in local.glob("*.py"))):
        raise TaskError(
            f"hf:{spec.dataset}: the folder holds a Python file ({', '.join(scripts[:3])}); a dataset loading "
            "script is code, and the harness runs none: keep only the data files (.parquet, .json, .jsonl, .csv)"
        )
    if local.is_file():
        builder = _FILE_BUILDERS.get(local.suffix.lower())
        if builder is None:
            raise TaskError(f"hf:{spec.dataset}: unknown file type; use one of {', '.join(_FILE_BUILDERS)} or a folder")
        path, kwargs = builder, {"data_files": {"test": str(local)}}
    # Never run a dataset's own code: older versions of `datasets` (before 3.0) ran a
    # dataset's loading script by default; 4.0 and later run none and accept the flag.
    kwargs["trust_remote_code"] = False
    try:
        if spec.split is not None:  # may be a slice, e.g. test[:20]
            rows = datasets.load_dataset(path, split=spec.split, **kwargs)
        else:
            splits = datasets.load_dataset(path, **kwargs)
            if DEFAULT_SPLIT not in splits and len(splits) != 1:
                raise TaskError(
                    f"dataset {spec.describe()} has no split {DEFAULT_SPLIT!r}; "
                    f"name one of: {', '.join(splits)}"
                )
            rows = splits[DEFAULT_SPLIT] if DEFAULT_SPLIT in splits else next(iter(splits.values()))
    except TaskError:
        raise
    except ConnectionError as exc:
        raise TaskError(f"{_offline_hint(spec)} ({exc})") from None
    except Exception as exc:  # datasets raises many kinds (missing config, bad files, hub errors)
        raise TaskError(f"could not load Hugging Face dataset {spec.describe()}: {type(exc).__name__}: {exc}") from None
    return _bounded(rows, spec), list(rows.column_names)


def _bounded(rows: Any, spec: HfSpec, limits: Limits | None = None) -> list[dict[str, Any]]:
    """The rows as dicts, each at most `limits.per_row` of text and all together at most
    `limits.per_set`: the dataset stays on disk (memory-mapped) until a row is taken."""
    limits = limits or default_limits()
    out: list[dict[str, Any]] = []
    used = 0
    for i, row in enumerate(rows):
        size = strings_size(row)
        if size > limits.per_row:
            raise TaskError(f"{spec.dataset} row {i}: {size_text(size)} of text, over the limit of "
                            f"{size_text(limits.per_row)} per row; the harness holds every task in memory")
        used += size
        if used > limits.per_set:
            raise TaskError(f"{spec.dataset} row {i}: the rows so far hold {size_text(used)} of text, over the "
                            f"limit of {size_text(limits.per_set)} per task set; the harness holds every task "
                            "in memory (select fewer rows, e.g. a split slice like test[:100])")
        out.append(row)
    return out


def _packaged_builders(datasets: Any) -> frozenset[str]:
    """The names `datasets.load_dataset` takes as its own file readers (csv, json, pandas, ...)."""
    try:
        from datasets.packaged_modules import _PACKAGED_DATASETS_MODULES
        return frozenset(_PACKAGED_DATASETS_MODULES)
    except ImportError:  # a layout we do not know: the names every version has
        return frozenset({"csv", "json", "pandas", "parquet", "arrow", "text", "imagefolder", "audiofolder",
                          "webdataset", "xml", "sql", "spark", "generator", "cache"})


def _adapter(spec: HfSpec, columns: Iterable[str]) -> Adapter:
    have = set(columns)
    known = ADAPTERS.get(spec.dataset)
    if known is not None:
        needed = next(cols for cols, fn in REQUIRED_COLUMNS.values() if fn is known)
        if not needed <= have:
            raise TaskError(
                f"dataset {spec.describe()} lacks the columns {sorted(needed - have)} its adapter reads; "
                f"it has {sorted(have)}"
            )
        return known
    for needed, adapter in REQUIRED_COLUMNS.values():
        if needed <= have:
            return adapter
    formats = "; ".join(f"{name}: {', '.join(sorted(cols))}" for name, (cols, _) in REQUIRED_COLUMNS.items())
    raise TaskError(
        f"dataset {spec.describe()} has columns {sorted(have)}, which match no known format ({formats})"
    )


def _adapted(adapter: Adapter, row: Any, where: str):
    """`adapter(row, where)`; whatever a row holds, a problem is one TaskError naming it
    (the adapters name the field; anything they did not foresee names the row)."""
    if not isinstance(row, dict):
        raise TaskError(f"{where}: expected a row of named columns, got {type(row).__name__}")
    try:
        return adapter(row, where)
    except TaskError:
        raise
    except RecursionError:
        raise TaskError(f"{where}: a field nests too deeply to read") from None
    except Exception as exc:  # noqa: BLE001 - a dataset's row is data: one clear error, never a traceback
        raise TaskError(f"{where}: unreadable ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})") from None


def load_hf(
    spec: HfSpec, *, user_spec: str, name: str, adapter: Adapter | None = None, prompt_form: str = "as published"
) -> TaskSet:
    rows, columns = _load_rows(spec)
    adapter = adapter or _adapter(spec, columns)
    tasks = tuple(require_clean_text(_adapted(adapter, row, f"{spec.dataset} row {i}"), f"{spec.dataset} row {i}")
                  for i, row in enumerate(rows))
    if not tasks:
        raise TaskError(f"dataset {spec.describe()} holds no rows")
    seen: set[str] = set()
    for task in tasks:
        if task.task_id in seen:
            raise TaskError(f"dataset {spec.describe()}: field 'task_id': duplicate {task.task_id!r}")
        seen.add(task.task_id)
    return TaskSet(spec=user_spec, name=name, tasks=tasks, prompt_form=prompt_form)


class HfSource:
    prefix = "hf"
    usage = "hf:<dataset>[:<config>][:<split>]"

    def load(self, arg: str) -> TaskSet:
        spec = HfSpec.parse(arg)
        split = spec.split or DEFAULT_SPLIT
        name = f"hf:{spec.dataset}" + (f":{spec.config}" if spec.config else "") + f":{split}"
        return load_hf(spec, user_spec=f"hf:{arg}", name=name)


class MbppSource:
    """`mbpp` = the sanitized split's 257 test problems; `mbpp:full` = the full 500.

    `:with-example` (e.g. `mbpp:with-example`, `mbpp:full:with-example`) shows the first
    test assert in the prompt, as the original benchmark does; without it the prompt
    is the signature and the description only.
    """

    prefix = "mbpp"
    usage = "mbpp[:sanitized|:full][:with-example]"

    def load(self, arg: str) -> TaskSet:
        parts = [p for p in arg.split(":") if p] if arg else []
        with_example = WITH_EXAMPLE in parts
        rest = [p for p in parts if p != WITH_EXAMPLE]
        config = rest[0] if rest else MBPP_CONFIGS[0]
        if len(rest) > 1 or config not in MBPP_CONFIGS:
            raise TaskError(
                f"mbpp:{arg}: expected mbpp[:sanitized|:full][:{WITH_EXAMPLE}], e.g. mbpp, mbpp:full, mbpp:{WITH_EXAMPLE}"
            )
        spec = HfSpec(MBPP_DATASET, config, DEFAULT_SPLIT)
        name = ("mbpp" if config == MBPP_CONFIGS[0] else f"mbpp:{config}") + (f":{WITH_EXAMPLE}" if with_example else "")
        return load_hf(
            spec, user_spec="mbpp" + (f":{arg}" if arg else ""), name=name,
            adapter=mbpp_task_with_example if with_example else mbpp_task, prompt_form=MBPP_FORMS[with_example],
        )
