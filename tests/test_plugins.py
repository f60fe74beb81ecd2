"""Plug-ins from another package: a strategy, a task source and a sandbox backend,
found through entry points (groups reflexion_harness.strategies, .tasks, .sandboxes)
of a distribution built here on the fly (an installed .dist-info with entry_points.txt
on sys.path is all Python's importlib.metadata needs), run end to end through the CLI
in a process of its own."""
from __future__ import annotations

import json
import re
import os
import textwrap
from pathlib import Path

from tests.helpers import harness_env, run_harness

PLUGIN = textwrap.dedent('''
    """A researcher's own package: one strategy, one task source, one sandbox."""
    from harness.core import grade_hidden, verdicts, write_code
    from harness.rundata.events import Note
    from harness.strategies import Strategy, Traits
    from harness.tasks.base import Task, TaskSet


    class SecondThoughts(Strategy):
        traits = Traits(name="second-thoughts", description="two answers, the second submitted",
                        writes_tests=False, iterates=False, writes_lessons=False)

        def run_attempt(self, ctx, task, attempt, done):
            scope = ctx.trial(task, self.traits.name, attempt, 1)
            write_code(scope, previous=None, settings=ctx.settings.first_call(attempt))
            draft = write_code(scope, previous=None, settings=ctx.settings.fresh_sample(attempt, 2))
            scope.event(Note(name="second-thoughts", data={"answers": 2}))
            hidden = grade_hidden(scope, draft)
            yield scope.record(final=True, stop_reason="second_answer", code=draft.code,
                               raw_output=draft.raw_output, error=draft.error, **verdicts(None, hidden, [], task))


    class DoubleTasks:
        usage = "double[:<n>]"

        def load(self, arg):
            n = int(arg or 2)
            tasks = tuple(Task(task_id=f"double/{i}", prompt=f"def double{i}(x):\\n    \\"\\"\\"Return 2 * x.\\"\\"\\"\\n",
                               entry_point=f"double{i}", hidden_tests=(f"assert double{i}(3) == 6",))
                          for i in range(n))
            return TaskSet(spec=f"double:{n}", name="double", tasks=tasks)


    def counting_sandbox(config):
        from dataclasses import replace
        from sandbox.process_backend import ProcessSandbox
        return ProcessSandbox(replace(config, backend="process"))
''')


def _install(site: Path) -> None:
    (site / "my_plugin").mkdir(parents=True)
    (site / "my_plugin" / "__init__.py").write_text(PLUGIN)
    info = site / "my_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[reflexion_harness.strategies]\nsecond-thoughts = my_plugin:SecondThoughts\n\n"
        "[reflexion_harness.tasks]\ndouble = my_plugin:DoubleTasks\n\n"
        "[reflexion_harness.sandboxes]\nplugin-process = my_plugin:counting_sandbox\n")


def test_a_plug_in_package_adds_a_strategy_a_task_source_and_a_sandbox(tmp_path: Path):
    site = tmp_path / "site"
    _install(site)
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"match": "double", "reply": "```python\ndef double0(x):\n    return 2 * x\n"
                                  "def double1(x):\n    return 2 * x\n```"}) + "\n")
    base = harness_env()
    env = {**base, "PYTHONPATH": os.pathsep.join(p for p in [str(site), base.get("PYTHONPATH", "")] if p)}
    listed = run_harness("run", "--help", cwd=tmp_path, env=env)
    # (argparse may wrap the help at a hyphen: "second-\nthoughts")
    help_text = re.sub(r"-\s+", "-", " ".join(listed.stdout.split()))
    assert "second-thoughts: two answers, the second submitted" in help_text
    assert "double[:<n>]" in help_text and "plugin-process" in help_text  # --tasks and --sandbox from the registry
    proc = run_harness("run", "--strategy", "second-thoughts,baseline", "--tasks", "double:2",
                       "--model", f"scripted:{script}", "--sandbox", "plugin-process", "--no-cache",
                       "--out", str(tmp_path / "results"), "--memory-dir", str(tmp_path / "mem"),
                       cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = (tmp_path / "results").iterdir()
    rows = [json.loads(line) for line in (run_dir / "trials.jsonl").read_text().splitlines()]
    ours = [r for r in rows if r["strategy"] == "second-thoughts"]
    assert len(ours) == 2 and all(r["hidden_passed"] and r["stop_reason"] == "second_answer" for r in ours)
    assert all(any(e["type"] == "note" and e["name"] == "second-thoughts" for e in r["events"]) for r in ours)
    assert all(sum(e["type"] == "model_call" for e in r["events"]) == 2 for r in ours)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["strategies"]["second-thoughts"]["pass@1"] == 1.0
    header = json.loads((run_dir / "run.json").read_text())
    assert header["config"]["sandbox"] == "plugin-process"
    # without the plug-in on the path, the same spec is one clear line
    plain = run_harness("run", "--strategy", "second-thoughts", "--tasks", "double:2", "--model",
                        f"scripted:{script}", "--out", str(tmp_path / "r2"), cwd=tmp_path)
    assert plain.returncode == 2 and "unknown strategy 'second-thoughts'" in plain.stderr
    assert len(plain.stderr.strip().splitlines()) == 1


def test_a_trait_of_the_wrong_type_is_one_line_naming_the_strategy_and_the_trait(tmp_path: Path):
    site = tmp_path / "site"
    _install(site)
    source = site / "my_plugin" / "__init__.py"
    source.write_text(source.read_text().replace("writes_lessons=False)", "writes_lessons=False, calls_per_trial=2)", 1))
    base = harness_env()
    env = {**base, "PYTHONPATH": os.pathsep.join(p for p in [str(site), base.get("PYTHONPATH", "")] if p)}
    proc = run_harness("run", "--strategy", "second-thoughts", "--tasks", "double:2", "--model", "scripted:x.jsonl",
                       "--out", str(tmp_path / "results"), cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "strategy 'second-thoughts': trait calls_per_trial must be a tuple of two numbers" in lines[0]
