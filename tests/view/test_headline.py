"""An honest headline: the effect that isolates a strategy's idea leads the answer and
says which it is; a total effect alone says what else it includes; the view's filters
say exactly what they count. Pairs come from the strategies' traits, not their names."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import harness.strategies as registry
from harness.rundata import effects, numbers
from harness.rundata.records import TrialRecord
from harness.strategies import Traits  # the contract's, registered below as any plug-in would be
from viewruns import get, header, trial, write_run

# Per task: (reflexion, feedback, resample, baseline) hidden verdicts, one attempt each.
PLAN = {"T/lesson": (True, False, False, False),   # only the lesson fixed it
        "T/feedback": (True, True, False, False),  # test feedback alone fixed it too
        "T/all": (True, True, True, True),
        "T/none": (False, False, False, False),
        "T/worse": (False, True, True, False)}    # the lesson broke what feedback fixed
ORDER = ("reflexion", "feedback", "resample", "baseline")


def records(strategies: tuple[str, ...], run_id: str = "run-h") -> list[dict]:
    out = []
    for task, verdicts in PLAN.items():
        for s, ok in zip(ORDER, verdicts):
            if s in strategies:
                out.append(trial(task, s, 1, final=True, internal=None if s == "baseline" else ok, hidden=ok,
                                 stop="single_sample" if s == "baseline" else "budget", run_id=run_id))
    return out


def doc_of(strategies: tuple[str, ...]) -> dict:
    recs = [TrialRecord.from_dict(r) for r in records(strategies)]
    return numbers.of_records(header("run-h", tasks=list(PLAN), strategies=list(strategies)), recs)


def test_pairs_come_from_the_traits():
    assert effects.default_pairs(list(ORDER)) == [
        ("reflexion", "baseline"), ("feedback", "baseline"), ("resample", "baseline"),
        ("reflexion", "feedback"), ("reflexion", "resample")]
    assert effects.default_pairs(["reflexion", "reflexion+recall"]) == [("reflexion+recall", "reflexion")]
    assert effects.default_pairs(["mystery", "baseline"]) == [("mystery", "baseline")]  # a plug-in not installed


def test_with_feedback_the_lesson_s_own_effect_leads():
    doc = doc_of(ORDER)
    assert doc["headline"] == "reflexion"
    a = doc["answer"]
    assert a[0].startswith("The lesson's own effect (feedback is reflexion without it): reflexion \u2212 feedback: +0.0 points")
    assert "fixed 1, broken 1 of 5 tasks" in a[0]  # T/lesson fixed, T/worse broken
    assert a[1].startswith("Compute-matched (resample: reflexion's rival at a similar budget of calls): "
                           "reflexion \u2212 resample: +20.0 points")
    assert a[2].startswith("Total, against baseline (plain sampling): reflexion \u2212 baseline: +40.0 points")
    assert "includes the effect" not in " ".join(a)  # the isolating effect is there
    assert [e["effect"] for e in doc["effects"]] == ["isolates", "rival", "total", "total", "total"]


def test_with_resample_only_the_compute_matched_effect_leads_and_the_total_says_what_it_includes():
    doc = doc_of(("reflexion", "resample", "baseline"))
    a = doc["answer"]
    assert a[0].startswith("Compute-matched (resample: ")
    assert a[1].startswith("Total, against baseline (plain sampling): reflexion \u2212 baseline")
    assert "includes the effect of everything feedback does too (retry with test feedback, no reflection)" in a[1]


def test_reflexion_and_baseline_alone_say_the_difference_includes_test_feedback():
    doc = doc_of(("reflexion", "baseline"))
    (line,) = doc["answer"]
    assert line.startswith("Total, against baseline (plain sampling): reflexion \u2212 baseline: +40.0 points")
    # feedback's own description (its traits) says what else the difference holds: test feedback itself
    assert line.endswith("; this difference includes the effect of everything feedback does too (retry with test "
                         "feedback, no reflection), not only the lesson's: run feedback beside them (--strategy all) "
                         "to isolate the lesson's own effect")


def test_filters_count_what_their_labels_say():
    doc = doc_of(ORDER)
    labels = {c["key"]: c["label"] for c in doc["categories"]}
    assert labels["fixed"] == "reflexion passes, baseline fails"
    assert labels["fixed_isolates"] == "fixed by reflexion, not by feedback"
    assert labels["broken_isolates"] == "broken by reflexion: feedback passes, reflexion fails"
    assert labels["fixed_rival"] == "fixed by reflexion, not by resample"
    tagged = {t["task_id"]: set(t["categories"]) | set(t["effect_categories"]) for t in doc["per_task"]}
    assert {t for t, c in tagged.items() if "fixed" in c} == {"T/lesson", "T/feedback"}
    assert {t for t, c in tagged.items() if "fixed_isolates" in c} == {"T/lesson"}  # not T/feedback
    assert {t for t, c in tagged.items() if "broken_isolates" in c} == {"T/worse"}
    assert {t for t, c in tagged.items() if "fixed_rival" in c} == {"T/lesson", "T/feedback"}
    assert "fixed by reflection" not in str(doc["categories"])


def test_the_view_filters_by_the_numbers_categories(tmp_path: Path, serve):
    root = tmp_path / "results"
    write_run(root / "run-h", header("run-h", tasks=list(PLAN), strategy="all", strategies=list(ORDER)),
              records(ORDER))
    server = serve(root)
    _, page = get(server.url + "runs/run-h")
    assert "fixed by reflexion, not by feedback" in page and "fixed by reflection" not in page
    _, tasks = get(server.url + "runs/run-h/tasks?category=fixed_isolates")
    rows = re.findall(r'<tr><td class="txt"><a href="[^"]*">([^<]+)</a>', tasks)
    assert rows == ["T/lesson"]
    assert 'id="task-count">1 task(s)' in tasks
    _, tasks = get(server.url + "runs/run-h/tasks?category=fixed")
    assert re.findall(r'<tr><td class="txt"><a href="[^"]*">([^<]+)</a>', tasks) == ["T/feedback", "T/lesson"]


def test_a_new_strategy_with_traits_needs_no_code_elsewhere():
    mine = Traits("mine", "a new idea", writes_tests=True, iterates=True, writes_lessons=True, isolates="mine-off",
                  order=5)
    off = Traits("mine-off", "the same without its idea", writes_tests=True, iterates=True, writes_lessons=False,
                 order=6)
    for traits in (mine, off):
        cls = type(f"S_{traits.order}", (registry.Strategy,), {"traits": traits, "run_attempt": lambda *a: iter(())})
        registry.register(cls)
    try:
        _check_new_strategy()
    finally:
        registry.unregister("mine")
        registry.unregister("mine-off")


def _check_new_strategy():
    assert effects.default_pairs(["mine", "mine-off", "baseline"]) == [
        ("mine", "baseline"), ("mine-off", "baseline"), ("mine", "mine-off")]
    pair = {"a": "mine", "b": "mine-off", "diff": 0.1, "ci_low": 0.0, "ci_high": 0.2, "p_value": 0.5, "fixed": 1,
            "broken": 0, "pairs": 3, "tasks": 3, "excluded": 0, "calls_ratio": 1.0}
    rows = effects.effects(["mine", "mine-off", "baseline"], [pair])
    assert rows[0]["label"] == "The lesson's own effect (mine-off is mine without it)"
    assert effects.answer(["mine", "mine-off", "baseline"], {}, [pair], rows)[0].startswith(
        "The lesson's own effect (mine-off is mine without it): mine \u2212 mine-off: +10.0 points")


@pytest.mark.parametrize("strategies", [("reflexion", "baseline"), ORDER])
def test_the_golden_rule_every_pair_is_said(strategies):
    doc = doc_of(strategies)
    said = " ".join(doc["answer"])
    for p in doc["paired"]:
        assert f"{p['a']} \u2212 {p['b']}: " in said
