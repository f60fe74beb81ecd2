"""pass^k beside pass@k, the per-test CSV, and the model's latency and retries in the
run's numbers (harness.rundata.metrics, harness.rundata.modelcalls)."""
from __future__ import annotations

import itertools
import json
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from harness.report import write_report
from harness.rundata import metrics, modelcalls, numbers
from harness.rundata.folder import load
from synthrun import RUN_ID, header, synthetic_records, write_run


@pytest.mark.parametrize("n, c", [(n, c) for n in range(1, 7) for c in range(n + 1)])
def test_pass_hat_k_is_the_share_of_k_subsets_that_all_pass(n: int, c: int):
    samples = [True] * c + [False] * (n - c)
    for k in range(1, n + 1):
        subsets = list(itertools.combinations(samples, k))
        assert metrics.pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))
        # and pass@k is the share of k-subsets with at least one pass
        assert metrics.pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))


def test_pass_hat_k_refuses_what_is_not_defined():
    with pytest.raises(ValueError, match="at least 3 samples"):
        metrics.pass_hat_k(2, 1, 3)
    with pytest.raises(ValueError):
        metrics.pass_hat_k(2, 3, 1)


def test_pass_hat_k_in_the_numbers(run_dir: Path):
    doc = numbers.of_folder(load(run_dir))
    base, refl = doc["strategies"]["baseline"], doc["strategies"]["reflexion"]
    # baseline (a1, a2) on the 4 compared tasks: /0 (T,F), /1 (F,F), /3 (F,F), Evil (T,T)
    assert base["pass^2"] == 0.25 and base["pass@2"] == 0.5
    # reflexion's finals: /0 (T,T), /1 (F,F), /3 (F,F), Evil (T,T): every task all or nothing
    assert refl["pass^2"] == 0.5 == refl["pass@1"] == refl["pass@2"]
    for s in doc["strategies"].values():
        assert s["pass^1"] == s["pass@1"] and s["pass^1_ci95"] == s["pass@1_ci95"]
        assert s["pass^2"] <= s["pass@1"] <= s["pass@2"]
    rows = {(r["strategy"], r["k"]): r for r in doc["pass_at_k"]}
    assert rows[("baseline", 2)]["pass_hat"] == 0.25
    lo, hi = base["pass^2_ci95"]
    assert lo <= 0.25 <= hi


def test_tests_csv_has_a_row_per_test_of_every_trial(run_dir: Path):
    write_report(run_dir)
    frame = pd.read_csv(run_dir / "tests.csv")
    assert list(frame.columns) == ["run", "task_id", "strategy", "attempt", "trial", "domain", "test", "status",
                                   "seconds"]
    records = load(run_dir).records
    assert len(frame) == sum(len(r.internal_results) + len(r.hidden_results) for r in records)
    assert set(frame["domain"]) == {"agent", "hidden"}
    hidden = frame[(frame["domain"] == "hidden") & (frame["task_id"] == "HumanEval/0")
                   & (frame["strategy"] == "baseline")]
    assert list(hidden["status"]) == ["passed", "failed"]  # attempts 1 and 2
    assert frame["seconds"].isna().all()  # these records do not time their tests


def _trial(**fields):
    base = dict(model_calls=1, cached_calls=0, model_s=0.0, events=None, retries=None)
    return SimpleNamespace(**{**base, **fields})


def test_call_facts_from_events_from_a_retries_field_or_from_one_call_trials():
    events = [{"type": "model_call", "latency_s": 1.5, "cached": False, "retries": [{"status": 429, "after_s": 2}]},
              {"type": "model_call", "latency_s": 0.0, "cached": True, "retries": []},
              {"type": "lesson", "text": "x"},
              {"type": "model_call", "latency_s": 0.5, "cached": False,
               "retries": [{"status": 503, "after_s": 1}, {"status": 429, "after_s": 1}]}]
    facts = modelcalls.call_facts(_trial(model_calls=3, cached_calls=1, model_s=2.0, events=events))
    assert facts == modelcalls.CallFacts((1.5, 0.5), ("429", "503", "429"), "events", True)
    one = modelcalls.call_facts(_trial(model_s=0.8, retries=[{"status": 500, "after_s": 0.5}]))
    assert one == modelcalls.CallFacts((0.8,), ("500",), "single_call_trials", True)
    # two calls in one trial: its model time is not one call's
    assert modelcalls.call_facts(_trial(model_calls=2, model_s=3.0)) == modelcalls.CallFacts((), (), "", False)
    # a cache hit took no model time
    assert modelcalls.call_facts(_trial(model_calls=1, cached_calls=1, model_s=0.0)).latencies == ()


def test_latency_percentiles_and_retries_by_status():
    lat = modelcalls.latency_summary([float(x) for x in range(1, 101)], ["events"] * 3)
    import numpy as np

    assert (lat["calls"], lat["max"]) == (100, 100.0)
    assert [lat["p50"], lat["p90"], lat["p99"]] == pytest.approx(list(np.percentile(range(1, 101), [50, 90, 99])))
    assert lat["basis"] == "events"
    assert modelcalls.latency_summary([1.0], ["events", "single_call_trials", ""])["basis"] == "single_call_trials"
    none = modelcalls.latency_summary([], [""])
    assert none["p50"] is None and none["basis"] == ""
    ret = modelcalls.retry_summary([("429", "503"), (), ("429",)], [True, True, False])
    assert ret == {"total": 3, "by_status": {"429": 2, "503": 1}, "recorded_trials": 2}


def test_the_numbers_time_the_model_calls_of_one_call_trials(tmp_path: Path):
    import msgspec

    records = [msgspec.structs.replace(r, model_s=0.25 * (i % 4 + 1)) for i, r in enumerate(synthetic_records())]
    run = write_run(tmp_path / RUN_ID, header(), records)
    doc = numbers.of_folder(load(run))
    one_call = [r.model_s for r in records if r.model_calls == 1]
    lat = doc["model"]["latency_s"]
    assert lat["calls"] == len(one_call) > 0 and lat["basis"] == "single_call_trials"
    assert lat["max"] == max(one_call)
    assert doc["model"]["retries"] == {"total": 0, "by_status": {}, "recorded_trials": 0}
    from harness.report.table import format_summary

    text = format_summary(doc)
    assert "model latency per call: p50 " in text and "trials with exactly one model call" in text
    assert "retries: not recorded" in text
    json.dumps(doc)  # JSON-ready
