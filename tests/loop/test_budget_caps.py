"""Budgets are caps, as the server sees them: the real OpenAI client talks to the stub API
server, which counts the requests that reach it and bills each answer by the usage it
reports. With 8 workers whose calls overlap (the server answers slowly), `--max-calls N`
lets exactly N requests through, `--max-cost X` never lets the billed total pass X, and
the summary's calls and dollars are the server's, the calls of attempts cut mid-way
included. Invariants only: nothing here depends on how fast the machine is."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.doubles.stub_server import Reply, StubServer
from tests.helpers import run_harness

N_TASKS = 8
PRICE_IN, PRICE_OUT = 100.0, 10.0  # dollars per million tokens (--price)
LATENCY_S = 0.3  # slow enough that the 8 workers' calls are in flight together


def write_tasks(folder: Path) -> Path:
    rows = [{"task_id": f"add/{i}", "prompt": f'def add{i}(n: int) -> int:\n    """Return n plus {i}."""\n',
             "entry_point": f"add{i}", "tests": [f"assert add{i}(1) == {1 + i}"]} for i in range(N_TASKS)]
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def stub_for(strategy: str) -> StubServer:
    """react: every turn asks for a tool that does not exist (the episode reads the
    refusal and goes on, no sandbox run); reflexion: a wrong answer to every role, so
    each attempt spends its whole trial budget."""
    if strategy.startswith("react"):
        reply = Reply("let me look", tool_calls=({"id": "c1", "name": "look", "arguments": "{}"},))
    else:
        def wrong(request: Any) -> str:
            name = re.search(r"add\d+", request.prompt_text)
            f = name.group(0) if name else "add0"
            return f"```python\nassert {f}(1) == 99\n\ndef {f}(n):\n    return n\n```"

        reply = Reply(wrong)
    return StubServer(default=reply, latency_s=LATENCY_S)


def run(tmp_path: Path, stub: StubServer, strategy: str, *budget: str) -> tuple[Any, Path]:
    tasks = write_tasks(tmp_path)
    done = run_harness(
        "run", "--tasks", f"jsonl:{tasks}", "--model", f"openai:stub-model@{stub.openai_url}", "--strategy", strategy,
        "--trials", "3", "--workers", "8", "--sandbox", "process", "--allow-process-sandbox-with-api",
        "--out", str(tmp_path / "out"), "--memory-dir", str(tmp_path / "mem"), "--no-cache", "--no-report",
        "--price", f"{PRICE_IN:g}/{PRICE_OUT:g}", *budget, cwd=tmp_path, timeout=600)
    (run_dir,) = list((tmp_path / "out").iterdir())
    return done, run_dir


def billed_usd(stub: StubServer) -> float:
    return sum(u["prompt_tokens"] * PRICE_IN + u["completion_tokens"] * PRICE_OUT for u in stub.billed) / 1e6


def summary_spend(run_dir: Path) -> tuple[int, float]:
    """The summary's model calls (cache hits apart) and dollars, over its strategies."""
    doc = json.loads((run_dir / "summary.json").read_text())
    rows = doc["resources"]
    return (sum(r["model_calls"] - r["cached_calls"] for r in rows), sum(r["cost_usd"] or 0.0 for r in rows))


def cut_attempts(run_dir: Path) -> list[dict[str, Any]]:
    errors = run_dir / "errors.jsonl"
    lines = [json.loads(x) for x in errors.read_text().splitlines()] if errors.exists() else []
    return [e for e in lines if e["kind"] == "budget"]


@pytest.mark.parametrize("strategy", ["react", "reflexion", "react+reflexion", "lats", "resample"])
def test_max_calls_lets_exactly_that_many_requests_reach_the_server(tmp_path: Path, strategy: str):
    with stub_for(strategy) as stub:
        done, run_dir = run(tmp_path, stub, strategy, "--max-calls", "2")
        assert done.returncode == 3, done.stderr
        assert len(stub.requests) == 2 and len(stub.billed) == 2
        calls, usd = summary_spend(run_dir)
        assert calls == 2 and usd == pytest.approx(billed_usd(stub), rel=1e-9, abs=1e-12)
    status = json.loads((run_dir / "summary.json").read_text())["status"]
    assert status["state"] == "budget" and status["budget_stop"]["spent"] == 2
    # the attempts whose first calls were answered are cut at their next one, with what they spent
    cut = cut_attempts(run_dir)
    assert cut and sum(e["spent"]["model_calls"] for e in cut) == 2
    assert status["budget_cut"] == len(cut) and f"{len(cut)} attempt" in status["text"]
    assert "budget: stopped by its budget: --max-calls 2 reached (2 model calls made)" in done.stderr


# caps between one call's worst case and what the whole run would spend
@pytest.mark.parametrize("strategy,cap", [("react", 0.8), ("reflexion", 0.25)])
def test_max_cost_is_never_passed_and_the_summary_is_what_the_server_billed(tmp_path: Path, strategy: str, cap: float):
    with stub_for(strategy) as stub:
        done, run_dir = run(tmp_path, stub, strategy, "--max-cost", str(cap))
        assert done.returncode == 3, done.stderr
        billed = billed_usd(stub)
        assert 0 < billed <= cap
        calls, usd = summary_spend(run_dir)
        assert calls == len(stub.requests) == len(stub.billed)
        assert usd == pytest.approx(billed, rel=1e-9, abs=1e-12)
    status = json.loads((run_dir / "summary.json").read_text())["status"]
    assert status["budget_stop"]["kind"] == "max_cost" and status["budget_stop"]["spent"] == pytest.approx(billed)
