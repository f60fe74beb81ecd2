"""Small things a reader meets: caveats that follow a strategy's traits, the trial count
said as the traits declare it, tool-call arguments shown as code."""
from __future__ import annotations

import json

import msgspec

from harness.report.render import _env
from harness.rundata import wording
from harness.rundata.agents import arguments_text, conversation
from harness.rundata.events import ModelCall, Note, ToolCallRun
from harness.rundata.numbers import of_records as build_summary
from synthrun import header, rec


def _header(strategies: list[str], tasks: list[str]) -> dict:
    h = header(strategies=strategies, samples=1, k=[1])
    return {**h, "tasks": {**h["tasks"], "count": len(tasks), "task_ids": tasks}}


def _no_internal_tests(task: str, strategy: str):
    r = rec(task, strategy, 1, 1, final=True, hidden=True, stop="submitted" if strategy == "react" else "budget")
    return msgspec.structs.replace(r, internal_tests=[], internal_results=[], internal_passed=None)


def test_a_strategy_that_writes_no_tests_gets_no_caveat_about_its_test_writer():
    tasks = ["T1", "T2"]
    records = [_no_internal_tests(t, s) for t in tasks for s in ("react", "reflexion")]
    records += [rec(t, "baseline", 1, 1, final=True, hidden=True, stop="single_sample") for t in tasks]
    doc = build_summary(_header(["react", "reflexion", "baseline"], tasks), records)
    caveat = next(c["text"] for c in doc["caveats"] if c["key"] == "no_tests")
    assert "(2 reflexion)" in caveat and "react" not in caveat
    only_react = [r for r in records if r.strategy != "reflexion"]
    doc = build_summary(_header(["react", "baseline"], tasks), only_react)
    assert "no_tests" not in {c["key"] for c in doc["caveats"]}


def test_the_trial_budget_is_said_as_each_strategy_declares_it():
    assert wording.trials_phrase(3, ["reflexion", "feedback"]) == "up to 3 trials"
    assert wording.trials_phrase(3, ["baseline", "react"]) == "1 trial each"
    assert wording.trials_phrase(3, ["reflexion", "baseline", "react"]) == \
        "up to 3 trials (reflexion), 1 trial (baseline, react)"


def test_tool_call_arguments_render_as_code_not_escaped_json():
    code = "def f(x):\n    return x * 2\n"
    assert arguments_text(json.dumps({"code": code})) == code
    assert arguments_text(json.dumps({"path": "a.py", "text": code})) == f"path: a.py\ntext:\n{code}"
    assert arguments_text("not json {") == "not json {"
    events = [ModelCall(role="agent", turn=1, tool_calls=[{"id": "c1", "name": "python", "arguments": json.dumps({"code": code})}]),
              ToolCallRun(id="c1", name="python", arguments=json.dumps({"code": code}), result="4", turn=1),
              Note(name="episode", data={"stop": "submitted", "turns": 1, "tool_calls": {"python": 1}, "compactions": 0,
                                         "context_tokens": 4096, "context_source": "model"})]
    html = _env().get_template("conversation.html.j2").module.conversation(conversation(events))
    assert "<pre class=\"code\">def f(x):\n    return x * 2\n</pre>" in str(html)
    assert "\\n" not in str(html)


def test_extending_md_gives_every_trait_a_type_and_every_step_a_signature():
    import dataclasses
    import inspect
    from pathlib import Path

    import harness.core as core
    from harness.strategies.base import Traits

    doc = (Path(__file__).resolve().parents[2] / "docs" / "extending.md").read_text()
    rows = [line for line in doc.splitlines() if line.startswith("  | `")]
    for field in dataclasses.fields(Traits):
        row = next((r for r in rows if f"`{field.name}`" in r.split("|")[1]), None)
        assert row is not None and row.split("|")[2].strip(), field.name
    for step in ("write_tests", "write_code", "evaluate", "grade_hidden", "reflect", "memory_lessons",
                 "recall_lessons", "store_lessons", "tests_of", "verdicts"):
        params = inspect.signature(getattr(core, step)).parameters
        line = next(line for line in doc.splitlines() if line.strip().startswith(f"{step}("))
        assert list(params)[0] in line, step
