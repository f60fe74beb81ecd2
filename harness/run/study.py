"""A study: several models x several task sets x strategies, run as one resumable unit.

A study file is TOML with a `[study]` table::

    [study]
    name = "reflection-2x2"
    models = ["anthropic:claude-haiku-4-5", "openai:qwen@http://127.0.0.1:8000/v1"]
    tasks = ["builtin:quick", "humaneval"]
    strategies = ["reflexion", "feedback", "resample", "baseline"]
    limit = 20          # any `run` setting, for every cell
    trials = 3
    labels = {"openai:qwen@http://127.0.0.1:8000/v1" = "Qwen", "builtin:quick" = "quick"}
    seeds = [1, 2, 3]   # optional: every cell repeated once per seed

`seeds` (optional) makes repeats a first-class axis: each model x task set runs once per
seed, as a cell of its own (its run's `seed`, so every call's seed differs and the
response cache, which keys on it, asks the model again); the study report gives, per
model x task set x strategy, the mean over repeats, the run-to-run standard deviation
and an interval over tasks that pools the repeats (harness.rundata.study.repeats).

`labels` (optional) gives a model or task set a short label that the study's report,
tables, figures and view use in place of its spec (without one: the spec less any
base URL). Labels change no result: they are left out of the study's digest.

Each cell (model x task set) is an ordinary run folder under the study's folder (`out`,
default results/<name>), made and resumed by the run command itself. study.json at the
study folder's top keeps the study as given and each cell's run folder, written before
the cell starts, so a killed study resumes (`study --resume DIR`) without redoing a
finished cell and goes on with an unfinished one where it stopped. Cells run one after
another, share the response cache (one cache folder) and, per model, one rate limiter;
a study's budget (--max-calls, --max-cost) counts every cell's spending.
"""
from __future__ import annotations

import hashlib
import json
import re
import secrets
import tomllib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from harness.config import ConfigError, RunConfig
from harness.rundata import folder

STUDY_FILE = "study.json"
STUDY_SCHEMA = 1
# Settings a study sets per cell, or that name one run only: not for the [study] table.
_PER_CELL = {"model": "models", "tasks": "tasks", "strategy": "strategies", "strategies": "strategies"}
_NOT_IN_STUDY = ("task_ids",)


class StudyError(ValueError):
    """A study file or folder that cannot be used; the message says where and why."""


@dataclass(frozen=True)
class StudySpec:
    name: str
    models: tuple[str, ...]
    tasks: tuple[str, ...]
    strategy: str  # the run setting: a group or a comma list of names
    settings: Mapping[str, Any]  # every other run setting, for every cell
    out: Path | None = None  # the study's folder, if the file names one
    labels: Mapping[str, str] | None = None  # model or task set -> its short label
    seeds: tuple[int, ...] = ()  # repeats: every cell once per seed

    def as_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "models": list(self.models), "tasks": list(self.tasks),
               "strategy": self.strategy, "settings": dict(self.settings),
               "out": str(self.out) if self.out is not None else None}
        if self.labels:
            out["labels"] = dict(self.labels)
        if self.seeds:
            out["seeds"] = list(self.seeds)
        return out

    @property
    def digest(self) -> str:
        blob = json.dumps({k: v for k, v in self.as_dict().items() if k not in ("out", "labels")}, sort_keys=True,
                          default=str)
        return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "StudySpec":
        return cls(str(data["name"]), tuple(data["models"]), tuple(data["tasks"]), str(data["strategy"]),
                   dict(data.get("settings") or {}), Path(data["out"]) if data.get("out") else None,
                   dict(data["labels"]) if isinstance(data.get("labels"), dict) else None,
                   tuple(int(s) for s in data.get("seeds") or ()))

    def cells(self) -> list[tuple[str, str]]:
        """(model, task set) of every cell, models first (once, whatever the seeds)."""
        return [(m, t) for m in self.models for t in self.tasks]

    def cell_rows(self) -> list[dict[str, Any]]:
        """Every cell as study.json lists it: model, task set and, with `seeds`, its seed."""
        seeds: tuple[int | None, ...] = self.seeds or (None,)
        return [{"model": m, "tasks": t, **({"seed": s} if s is not None else {})}
                for m, t in self.cells() for s in seeds]


def _strategy_value(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise StudyError(f"{where}: strategies must be a list of strategy names, e.g. "
                         'strategies = ["reflexion", "feedback", "resample", "baseline"]')
    from harness.strategies import groups

    for group, members in groups().items():  # a group by its name, in run.json as a run would say it
        if len(members) > 1 and list(members) == value:
            return group
    return ",".join(value)


def _names(value: Any, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise StudyError(f"{where}: {key} must be a non-empty list of strings, e.g. {key} = [\"...\", \"...\"]")
    if len(set(value)) != len(value):
        raise StudyError(f"{where}: {key} names {sorted({v for v in value if value.count(v) > 1})[0]!r} twice")
    return tuple(v.strip() for v in value)


def _labels(value: Any, names: tuple[str, ...], where: str) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(v, str) and v.strip() for v in value.values()):
        raise StudyError(f'{where}: labels must be a table of short names, e.g. labels = {{"{names[0]}" = "short"}}')
    unknown = sorted(set(value) - set(names))
    if unknown:
        raise StudyError(f"{where}: labels names {unknown[0]!r}, which is none of the study's models or task sets")
    given = [v.strip() for v in value.values()]
    if len(set(given)) != len(given):
        raise StudyError(f"{where}: labels gives {sorted({g for g in given if given.count(g) > 1})[0]!r} twice")
    return {k: v.strip() for k, v in value.items()}


def _seeds(value: Any, where: str) -> tuple[int, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) < 2 or not all(isinstance(v, int) and not isinstance(v, bool)
                                                                 for v in value):
        raise StudyError(f"{where}: seeds must be a list of at least two integers, e.g. seeds = [1, 2, 3]")
    if len(set(value)) != len(value):
        raise StudyError(f"{where}: seeds names {sorted({v for v in value if value.count(v) > 1})[0]} twice")
    return tuple(value)


def load_spec(path: Path) -> StudySpec:
    """A study file's [study] table, checked: every cell's settings must make a valid run."""
    path = Path(path)
    if not path.is_file():
        raise StudyError(f"study file not found: {path}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{path}: not valid TOML ({exc})") from None
    except UnicodeDecodeError as exc:
        raise StudyError(f"{path}: not UTF-8 text (byte {exc.start + 1}); save it as UTF-8") from None
    except OSError as exc:
        raise StudyError(f"{path}: cannot be read ({exc.strerror})") from None
    table = data.get("study")
    if not isinstance(table, dict):
        raise StudyError(f"{path}: no [study] table; a study file holds [study] with name, models = [...], "
                         "tasks = [...], strategies = [...] and any run setting")
    stray = sorted(k for k in data if k != "study")
    if stray:
        raise StudyError(f"{path}: settings outside the [study] table ({', '.join(stray)}); put them all in it")
    where = f"{path} [study]"
    table = dict(table)
    for key in ("name", "models", "tasks", "strategies"):
        if key not in table:
            raise StudyError(f"{where}: {key} is missing")
    name = table.pop("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}", name):
        raise StudyError(f"{where}: name must be a short folder name (letters, digits, . _ -), got {name!r}")
    models = _names(table.pop("models"), "models", where)
    tasks = _names(table.pop("tasks"), "tasks", where)
    strategy = _strategy_value(table.pop("strategies"), where)
    for key in list(table):
        k = key.replace("-", "_")
        if k in _PER_CELL:
            raise StudyError(f"{where}: {key} is set per cell; write {_PER_CELL[k]} = [...]")
        if k in _NOT_IN_STUDY or k == "resume":
            raise StudyError(f"{where}: {key} is not a study setting")
    if "price" in table and len(models) > 1:
        raise StudyError(f"{where}: price is one model's price, and the study has {len(models)} models; give "
                         'prices = {"<model id>" = {input = ..., output = ...}, ...} or a price_table file instead')
    out = table.pop("out", None)
    if out is not None and (not isinstance(out, str) or not out.strip()):
        raise StudyError(f"{where}: out must be a folder path (a string), got {repr(out)[:60]}")
    labels = _labels(table.pop("labels", None), models + tasks, where)
    seeds = _seeds(table.pop("seeds", None), where)
    if seeds and "seed" in table:
        raise StudyError(f"{where}: give seed or seeds, not both (seeds repeats every cell once per seed)")
    spec = StudySpec(name, models, tasks, strategy, table, Path(out) if out else None, labels, seeds)
    for model, task_set in spec.cells():  # fail before any cell runs
        try:
            cell_config(spec, Path("."), model, task_set, source=where)
        except ConfigError as exc:
            text = str(exc)
            raise StudyError(text if text.startswith(where) else f"{where}: {text}") from None
    return spec


def cell_config(spec: StudySpec, study_dir: Path, model: str, tasks: str, *, source: str = "study",
                seed: int | None = None) -> RunConfig:
    """One cell's run settings: the study's, its model and task set (and seed, for a
    repeat), its folder under the study's."""
    values = {**spec.settings, "model": model, "tasks": tasks, "strategy": spec.strategy, "out": str(study_dir)}
    if seed is not None:
        values["seed"] = seed
    values.setdefault("memory_dir", str(study_dir / "reflections"))
    return RunConfig.from_dict(values, source=source).validate()


def slug(text: str, limit: int = 40) -> str:
    s = re.sub(r"[^A-Za-z0-9]+", "-", text.split("@", 1)[0]).strip("-").lower()
    return (s or "x")[:limit].strip("-")


def new_cell_id(model: str, tasks: str, seed: int | None = None) -> str:
    repeat = f"-seed{seed}" if seed is not None else ""
    return f"{slug(model)}--{slug(tasks)}{repeat}-{secrets.token_hex(2)}"


# ------------------------------------------------------------------ study.json

def read_study(study_dir: Path) -> dict[str, Any]:
    path = Path(study_dir) / STUDY_FILE
    data = folder.read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("spec"), dict) or not isinstance(data.get("cells"), list):
        raise StudyError(f"{study_dir}: no study here ({STUDY_FILE} missing or unreadable); give a folder written by "
                         "`python -m harness study FILE`")
    return data


def write_study(study_dir: Path, data: dict[str, Any]) -> None:
    folder.write_json(Path(study_dir) / STUDY_FILE, data)


def new_study(spec: StudySpec, study_dir: Path, source: Path, command: list[str]) -> dict[str, Any]:
    return {"schema": STUDY_SCHEMA, "name": spec.name, "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "source": str(source), "spec": spec.as_dict(), "spec_digest": spec.digest, "command": command,
            "cells": [{**row, "run_id": None, "state": "pending"} for row in spec.cell_rows()],
            "sessions": []}


def cell_dir(study_dir: Path, cell: Mapping[str, Any]) -> Path | None:
    return Path(study_dir) / cell["run_id"] if cell.get("run_id") else None


def cell_state(study_dir: Path, cell: Mapping[str, Any]) -> str:
    """pending (no folder yet) | the run's own status state (complete, budget, ...) |
    started (a folder, no summary yet: a killed session)."""
    path = cell_dir(study_dir, cell)
    if path is None or not (path / folder.HEADER).is_file():
        return "pending"
    summary = folder.read_summary(path) or {}
    state = (summary.get("status") or {}).get("state")
    return str(state) if state else "started"
