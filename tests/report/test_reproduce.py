"""bench/reproduce_humaneval.py on the first HumanEval problems, with the scripted model
through the real Docker sandbox (the full 164 with the embedded model is a bench run)."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "reproduce_humaneval.py"

RIGHT_0 = ("```python\nfrom typing import List\n\ndef has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
           "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for j, b in enumerate(numbers) if i != j)\n```")
WRONG_1 = "```python\ndef separate_paren_groups(paren_string):\n    return []\n```"
RIGHT_2 = "```python\ndef truncate_number(number: float) -> float:\n    return number % 1.0\n```"
RIGHT_3 = ("```python\ndef below_zero(operations):\n    total = 0\n    for op in operations:\n        total += op\n"
           "        if total < 0:\n            return True\n    return False\n```")


def bench_module():
    spec = importlib.util.spec_from_file_location("reproduce_humaneval", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_bench(tmp_path: Path, rules: list[dict], limit: int) -> subprocess.CompletedProcess:
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in rules))
    return subprocess.run([sys.executable, str(BENCH), "--model", f"scripted:{script}", "--limit", str(limit),
                           "--out", str(tmp_path / "results"), "--workers", "2"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)


@pytest.mark.docker
@pytest.mark.slow
def test_reproduce_prints_pass1_with_ci_and_the_last_line(tmp_path: Path):
    proc = run_bench(tmp_path, [{"match": "def has_close_elements", "reply": RIGHT_0},
                                {"match": "def separate_paren_groups", "reply": WRONG_1},
                                {"match": "def truncate_number", "reply": RIGHT_2}], limit=3)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert lines[-1] == "humaneval baseline pass@1: 66.7 (published unknown)"
    assert "pass@1 66.7% [95% CI 20.8, 93.9] (Wilson score interval over tasks)" in lines
    assert "tasks: 3 scored of 3 run (164 in HumanEval); 0 incomplete attempt(s), not scored" in lines
    assert "note: 3 of 164 tasks scored: not comparable with the published figure" in lines
    runs = list((tmp_path / "results").iterdir())
    assert len(runs) == 1 and (runs[0] / "trials.jsonl").is_file()


@pytest.mark.docker
@pytest.mark.slow
def test_reproduce_leaves_model_errors_out_instead_of_scoring_them(tmp_path: Path):
    proc = run_bench(tmp_path, [{"match": "def has_close_elements", "reply": RIGHT_0},
                                {"match": "def separate_paren_groups", "reply": "!error: 503 after 5 retries"},
                                {"match": "def truncate_number", "reply": RIGHT_2},
                                {"match": "def below_zero", "reply": RIGHT_3}], limit=4)
    lines = proc.stdout.strip().splitlines()
    # 3 of 3 scored tasks pass; the errored one is counted, not a failure
    assert lines[-1] == "humaneval baseline pass@1: 100.0 (published unknown)", proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "tasks: 3 scored of 4 run (164 in HumanEval); 1 incomplete attempt(s), not scored" in lines


def test_published_figures_by_model():
    bench = bench_module()
    assert bench.published_for("local", {})[0] == 61.6  # the default embedded model is the 0.5B
    assert bench.published_for("local:qwen2.5-coder-0.5b", {})[0] == 61.6
    assert bench.published_for("local:smollm2-135m", {}) is None
    assert bench.published_for("openai:Qwen2.5-Coder-1.5B-Instruct@http://127.0.0.1:8000/v1", {})[0] == 70.7
    assert bench.published_for("local:/models/qwen2.5_coder_1.5b_instruct_q4_k_m.gguf", {})[0] == 70.7
    assert bench.published_for("scripted:x.jsonl", {}) is None
