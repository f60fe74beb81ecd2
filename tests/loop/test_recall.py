"""Recall across tasks: a frozen pool, its own prompt section, hygiene, resume."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.config import ConfigError, RunConfig
from harness.core.memory import Lesson, MemoryStore
from harness.models.scripted import ScriptedModel
from harness.core.recall import POOL_FILE, Recall, cap, changed_source, freeze
from harness.rundata import read_trials
from harness.run.runner import Runner, prepare_run_dir
from harness.tasks import load_tasks
from harness.tasks.base import Task, TaskSet

from tests.loop.helpers import ADD, ADD_TESTS, RIGHT_ADD, WRONG_ADD, kind, responder, run

SECTION = "Lessons from similar tasks"
SOURCE_LESSON = "Integer sums: add the two arguments with +, never subtract them."


def source_tasks_file(folder: Path) -> Path:
    rows = [
        {"task_id": "src/plus", "prompt": 'def plus(x: int, y: int) -> int:\n    """Return the sum of x and y."""\n',
         "entry_point": "plus", "tests": ["assert plus(4, 4) == 8", "assert plus(1, -1) == 0"]},
        {"task_id": "src/upper", "prompt": 'def upper(s: str) -> str:\n    """Return s in upper case."""\n',
         "entry_point": "upper", "tests": ["assert upper('ab') == 'AB'"]},
    ]
    path = folder / "source.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def source_model(lesson: str = SOURCE_LESSON) -> ScriptedModel:
    """Wrong at trial 1 on every source task, right after one lesson."""
    right = {"plus": "def plus(x, y):\n    return x + y\n", "upper": "def upper(s):\n    return s.upper()\n"}

    def actor(m):
        name = "plus" if "plus" in m[0].content else "upper"
        return f"```python\n{right[name] if len(m) > 1 else f'def {name}(*a):{chr(10)}    return None{chr(10)}'}```"

    def tests(m):
        return "assert plus(4, 4) == 8" if "plus" in m[0].content else "assert upper('ab') == 'AB'"

    return ScriptedModel(responder=responder({"testgen": tests, "reflection": lambda m: lesson, "actor": actor}))


def run_spec(tmp_path: Path, spec: str, model: ScriptedModel, pool, out: str, **config):
    """A run over a task set that can be loaded again from its spec (as a source must be)."""
    task_set = load_tasks(spec)
    cfg = RunConfig(tasks=spec, model=model.spec, out=tmp_path / out, memory_dir=tmp_path / "reflections",
                    cache=False, report=False, workers=2, sandbox="process", **config).validate()
    run_dir, header = prepare_run_dir(cfg, task_set, "process")
    return Runner(cfg, run_dir, header, task_set, model, pool, show_progress=False).execute()


def source_run(tmp_path: Path, sandbox, lesson: str = SOURCE_LESSON) -> Path:
    spec = f"jsonl:{source_tasks_file(tmp_path)}"
    return run_spec(tmp_path, spec, source_model(lesson), sandbox, "source-results", strategy="reflexion").run_dir


def add_model() -> ScriptedModel:
    return ScriptedModel(responder=responder({
        "testgen": lambda m: ADD_TESTS,
        "reflection": lambda m: "Own lesson: return a + b.",
        "actor": lambda m: WRONG_ADD if len(m) == 1 else RIGHT_ADD,
    }))


def test_recall_shows_other_tasks_lessons_in_their_own_section_and_records_them(tmp_path, process_sandbox):
    source = source_run(tmp_path, process_sandbox)
    model = add_model()
    result = run(tmp_path, model, process_sandbox, strategy="recall", trials=3, recall_from=str(source), recall_k=2)
    records = read_trials(result.run_dir / "trials.jsonl")
    assert {r.strategy for r in records} == {"reflexion", "reflexion+recall"}

    plain = [r for r in records if r.strategy == "reflexion"]
    recalling = sorted((r for r in records if r.strategy == "reflexion+recall"), key=lambda r: r.trial)
    assert all(r.recalled == [] for r in plain)
    assert [r.trial for r in recalling] == [1, 2]
    for r in recalling:  # the plus task's lesson ranks first for add (its prompt, too, speaks of a sum)
        assert r.recalled and r.recalled[0]["source_task"] == "src/plus"
        assert r.recalled[0]["lesson"] == SOURCE_LESSON and r.recalled[0]["score"] > 0
        assert r.recalled[0]["rank"] == 1 and len(r.recalled) <= 2
        assert [x["score"] for x in r.recalled] == sorted((x["score"] for x in r.recalled), reverse=True)
    # Trial 2's own lesson and the recalled one sit in separate sections.
    assert recalling[1].memory_shown == ["Own lesson: return a + b."]

    actor_calls = [c for c in model.calls if kind(c.system) == "actor"]
    with_recall = [c for c in actor_calls if SECTION in c.prompt]
    assert len(with_recall) == 2  # reflexion+recall's two trials; plain reflexion never
    retry = [c for c in with_recall if len(c.messages) > 1][0]
    assert SECTION not in retry.messages[0].content  # trial 2: the section is in the retry message
    own, recalled = retry.messages[-1].content.split(SECTION)
    assert "Own lesson: return a + b." in own and SOURCE_LESSON in recalled

    rec = result.header["recall"]
    assert rec["k"] == 2 and rec["scope"] == "other_tasks" and rec["ranking"]["library"] == "bm25s"
    assert rec["source"] == str(source.resolve()) and rec["source_digest"].startswith("sha256:")
    assert rec["pool_lessons"] == 2 and (result.run_dir / POOL_FILE).is_file()
    header = json.loads((result.run_dir / "run.json").read_text())
    assert header["recall"] == rec and header["config"]["recall_k"] == 2


def test_recall_reads_the_pool_frozen_at_start_not_what_the_run_writes(tmp_path, process_sandbox):
    # The source is the namespace the run itself writes into.
    earlier = MemoryStore(tmp_path / "reflections", "shared")
    spec = f"jsonl:{source_tasks_file(tmp_path)}"
    earlier.add(Lesson("old-run", "src/plus", "reflexion", 1, 1, SOURCE_LESSON, task_set=spec))
    other = Task("demo/sum", 'def total(a: int, b: int) -> int:\n    """Return the sum of a and b."""\n', "total",
                 ("assert total(1, 1) == 2",))
    model = ScriptedModel(responder=responder({
        "testgen": lambda m: ADD_TESTS if "add" in m[0].content else "assert total(1, 1) == 2",
        "reflection": lambda m: "Fresh lesson about the sum of a and b.",
        "actor": lambda m: WRONG_ADD if "add" in m[0].content else "```python\ndef total(a, b):\n    return a - b\n```",
    }))
    result = run(tmp_path, model, process_sandbox, tasks=(ADD, other), strategy="reflexion+recall", trials=3,
                 memory_namespace="shared", recall_from="namespace:shared")
    records = read_trials(result.run_dir / "trials.jsonl")
    assert any(r.lesson == "Fresh lesson about the sum of a and b." for r in records)  # written to the namespace
    shown = {x["id"] for r in records for x in r.recalled}
    assert shown == {"old-run/src/plus/reflexion/1/1"}  # never a lesson of this run
    assert all(x["source_run"] == "old-run" for r in records for x in r.recalled)
    # The namespace grew while the run went, with the run's own lessons only: a resume goes on.
    cfg = RunConfig.from_dict(result.header["config"]).validate()
    assert changed_source(result.header, cfg, result.run_dir) is None
    # Another run's lesson changes the source: resume refuses.
    MemoryStore(tmp_path / "reflections", "shared").add(Lesson("later", "src/upper", "reflexion", 1, 1, "x", task_set=spec))
    assert "changed since the run started" in changed_source(result.header, cfg, result.run_dir)


def test_resume_refuses_a_changed_source(tmp_path, process_sandbox, monkeypatch, capsys):
    from harness import cli

    source = source_run(tmp_path, process_sandbox)
    target = tmp_path / "target.jsonl"
    target.write_text(json.dumps({"task_id": ADD.task_id, "prompt": ADD.prompt, "entry_point": ADD.entry_point,
                                  "tests": list(ADD.hidden_tests)}) + "\n")
    result = run_spec(tmp_path, f"jsonl:{target}", add_model(), process_sandbox, "results", strategy="recall",
                      trials=3, recall_from=str(source))
    assert any(r.recalled for r in result.records)
    # Edit the source run: one more lesson in its trials.jsonl.
    log = source / "trials.jsonl"
    row = json.loads(log.read_text().splitlines()[-1])
    row.update(trial=row["trial"] + 1, final=True, events=[
        {"type": "lesson", "text": "A lesson added after the recalling run started.", "about_trial": row["trial"]}])
    with log.open("a") as fh:
        fh.write(json.dumps(row) + "\n")
    code = cli.main(["run", "--resume", str(result.run_dir)])
    err = capsys.readouterr().err
    assert code == 2 and "recall source" in err and "changed since the run started" in err
    # An edited frozen pool is refused too.
    log.write_text("".join(line + "\n" for line in log.read_text().splitlines()[:-1]))
    cfg = RunConfig.from_dict(result.header["config"]).validate()
    assert changed_source(result.header, cfg, result.run_dir) is None
    pool = result.run_dir / POOL_FILE
    pool.write_text(pool.read_text().replace(SOURCE_LESSON, "Edited."))
    assert "was edited" in changed_source(result.header, cfg, result.run_dir)


def _pool_config(tmp_path: Path, source: str, **extra) -> RunConfig:
    return RunConfig(tasks="test", model="scripted:x", out=tmp_path / "r", memory_dir=tmp_path / "reflections",
                     strategy="recall", recall_from=source, **extra).validate()


def test_hygiene_never_recalls_oracle_same_task_shared_or_quoted_hidden_tests(tmp_path):
    spec = f"jsonl:{source_tasks_file(tmp_path)}"
    store = MemoryStore(tmp_path / "reflections", "pool")
    # The source task set also holds a copy of the target under another id, with its hidden tests.
    path = Path(spec.removeprefix("jsonl:"))
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows.append({"task_id": "src/add_copy", "prompt": 'def add2(a, b):\n    """Add."""\n', "entry_point": "add2",
                 "tests": ["assert add2(10, 32) == 42"]})
    rows.append({"task_id": "src/add_dup", "prompt": ADD.prompt, "entry_point": "add", "tests": ["assert add(0, 1) == 1"]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    long = "word " * 200
    lessons = {
        "fine": ("src/plus", SOURCE_LESSON, False),
        "oracle": ("src/plus", "The sum of a and b, learnt from ORACLE feedback.", True),
        "same": ("src/add_dup", "The sum of a and b: the same task (same prompt) under another id.", False),
        "shared": ("src/add_copy", "The sum of a and b, from a task with the same hidden tests.", False),
        "quotes": ("src/upper", "The sum of a and b: make add(-7, 7) == 0 hold.", False),
        "long": ("src/upper", "The sum of a and b " + long, False),
    }
    for trial, (task_id, text, oracle) in enumerate(lessons.values(), 1):
        store.add(Lesson("old", task_id, "reflexion", 1, trial, text, oracle_feedback=oracle, task_set=spec))
    # demo/add's lesson is about a task the source set does not hold: it must name one it holds.
    store.add(Lesson("old", "demo/add", "reflexion", 2, 1, "unknown task set", task_set="test"))
    cfg = _pool_config(tmp_path, "namespace:pool", recall_max_chars=80)
    pool = freeze(cfg, TaskSet("test", "test", (ADD,)))
    assert all(not x.oracle_feedback for x in pool.lessons)
    counts = pool.counts
    assert counts["oracle_feedback"] == 1 and counts["unknown_source_task"] == 1 and counts["capped"] == 1
    assert counts["shared_hidden_tests"] == 1 and counts["quotes_hidden_tests"] == 1 and counts["same_task"] == 1
    assert all(len(x.text) <= 80 for x in pool.lessons)
    reasons = pool.excluded["demo/add"]
    assert sorted(reasons.values()) == ["quotes_hidden_tests", "same_task", "shared_hidden_tests"]
    recall = Recall.from_pool(pool, k=10)
    got = recall.for_trial(ADD, feedback="Tests failed: assert add(1, 2) == 3  # got -1")
    assert sorted(r.source_task for r in got) == ["src/plus", "src/upper"]  # the fine one, the capped long one
    texts = {r.source_task: r.lesson for r in got}
    assert texts["src/plus"] == SOURCE_LESSON and texts["src/upper"].endswith("\u2026") and len(texts["src/upper"]) <= 80
    for test in ADD.hidden_tests:  # no hidden-test text of the target in the frozen pool at all
        assert test not in json.dumps(pool.to_json())
    # An oracle-feedback run may recall oracle lessons, as long-term memory does.
    oracle_pool = freeze(_pool_config(tmp_path, "namespace:pool", oracle_feedback=True), TaskSet("test", "test", (ADD,)))
    assert "oracle_feedback" not in oracle_pool.counts


def test_scope_other_task_sets_keeps_only_lessons_of_another_set(tmp_path):
    spec = f"jsonl:{source_tasks_file(tmp_path)}"
    store = MemoryStore(tmp_path / "reflections", "pool")
    store.add(Lesson("old", "src/plus", "reflexion", 1, 1, SOURCE_LESSON, task_set=spec))
    same_set = load_tasks(spec)
    target = TaskSet(spec, "same", (same_set.tasks[1],))
    pool = freeze(_pool_config(tmp_path, "namespace:pool", recall_scope="other_task_sets"), target)
    assert pool.excluded == {"src/upper": {"old/src/plus/reflexion/1/1": "same_task_set"}}
    assert freeze(_pool_config(tmp_path, "namespace:pool"), target).excluded == {}


def test_ranking_is_bm25_from_bm25s_and_needs_overlap():
    from harness.core.recall import PoolLesson

    def lesson(i, prompt, text):
        return PoolLesson(f"r/t{i}/reflexion/1/1", text, f"t{i}", "r", "s", "reflexion", 1, 1, False, prompt)

    pool = [lesson(0, "def parse_date(s):", "Split on the dash before int()."),
            lesson(1, "def sort_words(ws):", "Sort case-insensitively with key=str.lower."),
            lesson(2, "def parse_time(s):", "Split on the colon; hours may exceed 24.")]
    recall = Recall(pool, {}, k=2)
    got = recall.ranked("parse a time string, split on the colon")
    assert [r.source_task for r in got] == ["t2", "t0"]
    assert got[0].score > got[1].score > 0
    assert recall.ranked("nothing in common zebra") == []


def test_cap_cuts_at_a_word_and_flattens():
    assert cap("a\nb  c", 100) == ("a b c", False)
    text, capped = cap("alpha beta gamma delta", 12)
    assert capped and text == "alpha beta\u2026" and len(text) <= 12


def test_recall_settings_are_validated():
    with pytest.raises(ConfigError, match="recall-from"):
        RunConfig(strategy="recall").validate()
    with pytest.raises(ConfigError, match="no strategy"):
        RunConfig(strategy="reflexion", recall_from="x").validate()
    with pytest.raises(ConfigError, match="recall_scope"):
        RunConfig(strategy="recall", recall_from="x", recall_scope="all").validate()
    with pytest.raises(ConfigError, match="recall_max_chars"):
        RunConfig(strategy="recall", recall_from="x", recall_max_chars=10).validate()
    assert RunConfig(strategy="recall", recall_from="x").strategies == ("reflexion", "reflexion+recall")


def test_memory_commands_show_search_and_export_the_pool_recall_reads(tmp_path, process_sandbox, capsys):
    from harness import cli

    source = source_run(tmp_path, process_sandbox)
    assert cli.main(["memory", "pool", str(source)]) == 0
    out = capsys.readouterr().out
    assert "2 lesson(s) recall may read" in out and "src/plus" in out and "src/upper" in out
    assert SOURCE_LESSON in out and "source attempt solved" in out

    assert cli.main(["memory", "search", str(source), "the sum of two integers", "--k", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1. score ") and "src/plus" in out and "src/upper" not in out

    dest = tmp_path / "pool.jsonl"
    assert cli.main(["memory", "export", str(source), "--out", str(dest)]) == 0
    rows = [json.loads(x) for x in dest.read_text().splitlines()]
    assert {r["source_task"] for r in rows} == {"src/plus", "src/upper"}
    assert all(r["text"] == SOURCE_LESSON and r["source_digest"].startswith("sha256:") for r in rows)

    # The pool a recall run froze, with what it left out for each of its tasks.
    result = run(tmp_path, add_model(), process_sandbox, strategy="recall", trials=3, recall_from=str(source))
    capsys.readouterr()
    frozen = f"frozen:{result.run_dir}"
    assert cli.main(["memory", "export", frozen]) == 0
    exported = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in exported] == [r["id"] for r in rows]
    assert exported[0]["source_digest"] == result.header["recall"]["source_digest"]
    assert cli.main(["memory", "search", frozen, "sum", "--task", "demo/add"]) == 0
    assert "src/plus" in capsys.readouterr().out
    assert cli.main(["memory", "pool", f"frozen:{source}"]) == 2  # no pool there
    assert "no recall_pool.json" in capsys.readouterr().err


def test_the_report_header_says_what_recall_read_and_pairs_it_with_reflexion(tmp_path, process_sandbox):
    from harness.report import write_report

    source = source_run(tmp_path, process_sandbox)
    result = run(tmp_path, add_model(), process_sandbox, strategy="recall", trials=3, recall_from=str(source))
    html = write_report(result.run_dir)
    md = (result.run_dir / "report.md").read_text()
    line = next(x for x in md.splitlines() if x.startswith("- recall: "))
    assert "K=3" in line and "scope other_tasks" in line and "bm25" in line and str(source.resolve()) in line
    assert result.header["recall"]["source_digest"][:23] in line
    assert "<dt>recall</dt>" in html.read_text()
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert [(p["a"], p["b"]) for p in summary["paired"]] == [("reflexion+recall", "reflexion")]
