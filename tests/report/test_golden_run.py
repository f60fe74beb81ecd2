"""A stored run's numbers do not move: a run folder written by an earlier harness
(trial records of schema 2, a model outage in errors.jsonl, four strategies, two
samples) is reported again by this checkout and must give the numbers it gave then
(tests/data/golden_schema2/numbers.json, the summary.json of that run as written)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import cli

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden_schema2"


@pytest.fixture()
def golden_run(tmp_path: Path) -> Path:
    run = tmp_path / GOLDEN.name
    shutil.copytree(GOLDEN, run)
    (run / "numbers.json").unlink()
    return run


def test_a_schema_2_run_reports_the_numbers_it_was_written_with(golden_run: Path):
    assert cli("report", str(golden_run)) == 0
    now = json.loads((golden_run / "summary.json").read_text())
    then = json.loads((GOLDEN / "numbers.json").read_text())
    for key, value in then.items():  # summary.json may gain fields, never change or lose one
        if key == "answer":  # words: led by what each pair measures, in that order; every line still said
            assert all(any(line in said for said in now["answer"]) for line in value), now["answer"]
            continue
        assert _kept(now[key], value), key


def _kept(now, then) -> bool:
    """`now` holds everything `then` held, with the same values; dicts may hold more keys."""
    if isinstance(then, dict) and isinstance(now, dict):
        return all(k in now and _kept(now[k], v) for k, v in then.items())
    if isinstance(then, list) and isinstance(now, list):
        return len(now) == len(then) and all(_kept(a, b) for a, b in zip(now, then))
    return now == then


def test_every_line_of_the_stored_run_still_decodes():
    from harness.rundata import read_trials

    records = read_trials(GOLDEN / "trials.jsonl")
    assert len(records) == sum(1 for _ in (GOLDEN / "trials.jsonl").open())
    assert {r.schema for r in records} == {2}
