"""No hidden test data in the agent's domain: every strategy runs on a Go exercise whose
test file and test data (cases_test.go) hold a marker, the model's own tests try to
print that data, and no request the model received holds the marker. The agent's own
test file is built with none of the exercise's test files."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Sequence

import pytest

from harness.models.base import Message
from harness.models.scripted import ScriptedModel, ScriptedReply
from harness.models.tools import ToolCall
from harness.strategies import strategy_names, traits_of
from harness.tasks.registry import load_tasks
from tests.loop.helpers import kind, run

DATA = Path(__file__).resolve().parents[1] / "data" / "exercism"
MARKER = "HIDDEN-DATA-MARKER-5c1e"
RIGHT = ("package clamp\n\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n"
         "\tif x > hi {\n\t\treturn hi\n\t}\n\treturn x\n}\n")
# The model's own tests: one prints whatever the exercise's test data would hold.
OWN_TESTS = ("package clamp\n\nimport \"testing\"\n\nfunc TestPrintsTheData(t *testing.T) {\n"
             "\tt.Errorf(\"%v\", testCases)\n}\n\nfunc TestOwn(t *testing.T) {\n"
             "\tif Clamp(5, 1, 9) != 5 {\n\t\tt.Error(\"inside\")\n\t}\n}\n")


def _exercise(tmp_path: Path) -> Path:
    practice = tmp_path / "go" / "exercises" / "practice"
    folder = practice / "clamp"
    shutil.copytree(DATA / "go" / "exercises" / "practice" / "clamp", folder)
    cases = folder / "cases_test.go"
    cases.write_text(cases.read_text().replace('"inside"', f'"inside {MARKER}"'))
    test = folder / "clamp_test.go"
    test.write_text(test.read_text() + f"\n// {MARKER}\n")
    return tmp_path / "go" / "exercises" / "practice"


def _model() -> ScriptedModel:
    block = f"```go\n{RIGHT}```"

    def respond(system: str | None, messages: Sequence[Message]):
        step = kind(system)
        if step == "testgen":
            return f"```go\n{OWN_TESTS}```"
        if step == "reflection":
            return "LESSON: the tests print what they hold."
        if step == "summary":
            return "Summary: the solution clamps."
        if step == "agent":
            return ScriptedReply("Done.", (ToolCall("", "submit", json.dumps({"code": block})),))
        return block

    return ScriptedModel(responder=respond)


@pytest.mark.docker
@pytest.mark.slow
def test_no_request_of_any_strategy_holds_the_exercise_s_test_data(tmp_path, sandbox_opener):
    practice = _exercise(tmp_path)
    (task,) = load_tasks(f"exercism:{practice}:go").tasks
    suite = task.hidden_tests[0].suite
    assert MARKER in suite.file("cases_test.go") and MARKER in suite.file("clamp_test.go")  # the hidden data has it
    assert [path for path, _ in suite.with_tests(OWN_TESTS).files] == ["clamp_test.go"]
    sandbox = sandbox_opener("docker", languages=("go",), workers=2)
    try:
        plain = [s for s in strategy_names() if not traits_of(s).recalls]
        recalling = [s for s in strategy_names() if traits_of(s).recalls]
        for group, extra in ((plain, {}), (recalling, {"recall_from": "namespace:pool"})):
            model = _model()
            folder = tmp_path / group[0]
            (folder / "reflections" / "pool").mkdir(parents=True)
            result = run(folder, model, sandbox, tasks=(task,), strategy=",".join(group), trials=2, **extra)
            records = [json.loads(line) for line in (result.run_dir / "trials.jsonl").read_text().splitlines()]
            for strategy in group:
                mine = [r for r in records if r["strategy"] == strategy]
                assert any(r["hidden_passed"] for r in mine), strategy  # it ran, and was graded
                if traits_of(strategy).writes_tests and not traits_of(strategy).uses_tools:
                    # the model's test that prints the data did not build: there is no data to print
                    assert "undefined: testCases" in json.dumps(mine), strategy
            assert model.calls
            for call in model.calls:
                assert MARKER not in call.prompt, f"{group}: the exercise's test data reached a request"
    finally:
        sandbox.close()
