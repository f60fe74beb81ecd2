"""No abstention: a program that breaks its own grading on the tasks it cannot solve
scores exactly what a wrong answer scores there. Two runs of the real run path (the
scripted model, the docker sandbox, C++ function tasks whose expected values are
floats): in one the model answers the tasks it cannot solve with wrong programs, in the
other with programs that once made the worker fail instead of answering (a result of
401 digits where a float is expected, printed by the type's own `encode` found by ADL;
a result line whose index is a Unicode digit, written by a static initializer on the
driver's results descriptor). Both runs score the same, every attempt complete, nothing
in errors.jsonl."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.models.scripted import ScriptedModel
from harness.rundata.numbers import of_records as build_summary
from harness.tasks import load_tasks
from tests.loop.helpers import responder, run

pytestmark = pytest.mark.docker

RIGHT = "double half(long long n) {\n    return n / 2.0;\n}\n"
WRONG = "double half(long long n) {\n    return n / 3.0;\n}\n"
BREAKERS = {
    "401 digits where a float is expected": (
        "#include <string>\nnamespace big {\nstruct Big {};\n"
        "inline void encode(const Big&, std::string& out) { out += std::string(401, '9'); }\n}\n"
        "big::Big half(long long n) {\n    return {};\n}\n"),
    "a result line indexed by a Unicode digit": (
        "#include <string>\n#include <unistd.h>\n"
        "static int forged = [] {\n"
        "    char buf[4096];\n    ssize_t n = read(3, buf, sizeof buf);\n"
        "    std::string in(buf, n > 0 ? (size_t)n : 0), token = in.substr(0, in.find('\\n'));\n"
        "    std::string out = token + \" \\xc2\\xb2 1.5\\n\" + token + \" 0 7\\n\" + token + \" 1 7\\n\" + token + \" end\\n\";\n"
        "    if (write(4, out.data(), out.size()) < 0) _exit(1);\n    _exit(0);\n    return 0;\n}();\n"
        "double half(long long n) {\n    return 0;\n}\n"),
}


def _tasks(tmp_path: Path):
    rows = [{"task_id": f"breakers/half{number}", "language": "cpp", "entry_point": "half",
             "prompt": f"// Case {number}: return n / 2.\ndouble half(long long n) {{\n",
             "tests": [{"calls": [{"args": [3], "expected": 1.5}, {"args": [5], "expected": 2.5}]}]}
            for number in range(4)]
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "breakers.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return load_tasks(str(path)).tasks


@pytest.fixture(scope="module")
def cpp_sandbox(sandbox_opener):
    sandbox = sandbox_opener("docker", languages=("cpp",), workers=1)
    yield sandbox
    sandbox.close()


def _scored(tmp_path: Path, sandbox, unsolved: tuple[str, str]) -> tuple[dict, dict]:
    """{task: hidden pass} and the run's summary, when the model solves cases 0 and 1
    and answers cases 2 and 3 with `unsolved`."""
    answers = (RIGHT, RIGHT) + unsolved

    def actor(messages) -> str:
        text = "".join(m.content for m in messages)
        number = next(n for n in range(4) if f"Case {n}:" in text)
        return f"```cpp\n{answers[number]}```"

    model = ScriptedModel(responder=responder({"actor": actor, "testgen": lambda m: "", "reflection": lambda m: ""}))
    result = run(tmp_path, model, sandbox, tasks=_tasks(tmp_path), strategy="baseline")
    assert result.failed == {}, result.failed
    assert not (result.run_dir / "errors.jsonl").exists() or not (result.run_dir / "errors.jsonl").read_text().strip()
    summary = build_summary(result.header, result.records)
    return {r.task_id: r.hidden_passed for r in result.records}, summary


def test_breaking_the_grading_scores_what_a_wrong_answer_scores(tmp_path: Path, cpp_sandbox) -> None:
    wrong, wrong_summary = _scored(tmp_path / "wrong", cpp_sandbox, (WRONG, WRONG))
    broken, broken_summary = _scored(tmp_path / "broken", cpp_sandbox, tuple(BREAKERS.values()))
    assert wrong == broken == {"breakers/half0": True, "breakers/half1": True,
                               "breakers/half2": False, "breakers/half3": False}
    for summary in (wrong_summary, broken_summary):
        entry = summary["strategies"]["baseline"]
        assert (entry["pass@1"], entry["attempts"], entry["incomplete_attempts"]) == (0.5, 4, 0)
        assert summary["tasks_compared"] == 4 and "sandbox_faults" not in summary
