"""Prices for any model (tables a user extends, --price), unknown costs said as unknown,
and accuracy against cost with its Pareto front, per run."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from harness.models.base import Message, Price, Usage
from harness.models.priced import PricedModel
from harness.models.prices import PriceError, parse_price_flag, price_for, run_prices
from harness.models.scripted import ScriptedModel
from harness.rundata import metrics
from tests.helpers import harness_env


def test_price_flag_reads_in_out_and_cache_rates():
    assert parse_price_flag("3/15") == Price(3.0, 15.0, 3.0, 3.0)  # cache tokens never free by omission
    assert parse_price_flag(" 0.5 / 2 /0.05/0.6") == Price(0.5, 2.0, 0.05, 0.6)
    for bad in ("3", "3/", "a/b", "-1/2", "1/2/3/4/5", "inf/1"):
        with pytest.raises(PriceError, match="--price"):
            parse_price_flag(bad)


def test_a_user_table_extends_the_shipped_one_and_the_flag_beats_every_table(tmp_path: Path):
    table = tmp_path / "prices.toml"
    table.write_text('[models."gpt-mini"]\ninput = 0.15\noutput = 0.6\n\n[models."claude-haiku-4-5"]\ninput = 9\noutput = 9\n')
    prices = run_prices({"other": {"input": 1, "output": 2}}, table)
    assert price_for("gpt-mini-2026-01-01", prices, {}) == Price(0.15, 0.6, 0.15, 0.15)
    assert price_for("claude-haiku-4-5", prices, {}).input == 9.0  # the user's table wins over the shipped one
    assert price_for("other", prices, {}) == Price(1.0, 2.0, 1.0, 1.0)
    assert price_for("nobody-knows", prices, {}) is None
    flagged = run_prices({"other": {"input": 1, "output": 2}}, table, "4/8")
    assert price_for("other", flagged, {}) == price_for("nobody-knows", flagged, {}) == Price(4.0, 8.0, 4.0, 4.0)


@pytest.mark.parametrize("text, words", [
    ("[models.x]\ninput = 1\n", "no output price"),
    ('[models."x"]\ninput = -1\noutput = 2\n', "input must be a number >= 0"),
    ("models = 3\n", "expected a [models."),
    ("[models\n", "not valid TOML"),
])
def test_a_bad_price_table_says_where(tmp_path: Path, text: str, words: str):
    table = tmp_path / "mine.toml"
    table.write_text(text)
    with pytest.raises(PriceError, match="mine.toml") as info:
        run_prices({}, table)
    assert words in str(info.value)


def test_any_model_is_priced_by_the_run_and_an_unknown_price_stays_unknown():
    model = ScriptedModel(["one two three"], spec="scripted:x")
    priced = PricedModel(model, run_prices({}, None, "2/10"))
    c = priced.complete([Message("user", "a b c d")], system="s")
    assert c.cost_usd == pytest.approx((c.usage.input_tokens * 2 + c.usage.output_tokens * 10) / 1e6)
    unpriced = PricedModel(ScriptedModel(["x"], spec="scripted:y"), run_prices({"other": {"input": 1, "output": 1}}))
    assert unpriced.complete([Message("user", "a")]).cost_usd is None
    assert priced.identity == model.identity  # the cache keys on what answers, not on the price


def test_pareto_front():
    pts = [(1.0, 0.5), (2.0, 0.5), (2.0, 0.8), (3.0, 0.7), (0.5, 0.2), (2.0, 0.8)]
    assert metrics.pareto_front(pts) == [True, False, True, False, True, True]
    assert metrics.pareto_front([(float("nan"), 0.5), (1.0, 0.2)]) == [False, True]


def _attempts(rows: list[tuple[str, str, bool, float | None, int]]) -> pd.DataFrame:
    return pd.DataFrame([{"task_id": t, "strategy": s, "attempt": 1, "passed": p, "cost": c, "tokens": k,
                          "calls": 1} for t, s, p, c, k in rows])


def test_cost_points_use_dollars_only_when_every_attempt_had_a_price():
    rows = [("t1", "a", True, 0.02, 200), ("t2", "a", True, 0.02, 200),
            ("t1", "b", False, 0.01, 100), ("t2", "b", True, 0.01, 100),
            ("t1", "c", False, 0.03, 300), ("t2", "c", False, 0.03, 300)]
    points, axis = metrics.cost_points(_attempts(rows), ["a", "b", "c"])
    assert axis == "dollars"
    by = points.set_index("strategy")
    assert by.loc["a", "usd"] == pytest.approx(0.02) and by.loc["b", "pass"] == 0.5
    assert list(by["pareto"]) == [True, True, False]  # c costs most and passes least
    free = [(t, s, p, 0.0, k) for t, s, p, _, k in rows]  # a local model's $0: no dollars to compare
    assert metrics.cost_points(_attempts(free), ["a", "b", "c"])[1] == "tokens"
    rows[0] = ("t1", "a", True, None, 200)
    points, axis = metrics.cost_points(_attempts(rows), ["a", "b", "c"])
    assert axis == "tokens" and not points.set_index("strategy").loc["a", "priced"]
    assert pd.isna(points.set_index("strategy").loc["a", "usd"])


# --------------------------------------------------------------- a real run, priced or not

N_TASKS = 4


def write_inputs(folder: Path) -> tuple[Path, Path]:
    tasks, rules = [], [{"match": "what should the next implementation do differently", "reply": "Multiply."}]
    for i in range(N_TASKS):
        tasks.append({"task_id": f"mul/{i}", "prompt": f'def f{i}(n: int) -> int:\n    """Return n times {i}."""\n',
                      "entry_point": f"f{i}", "tests": [f"assert f{i}(3) == {3 * i}", f"assert f{i}(-2) == {-2 * i}"]})
        right = f"```python\ndef f{i}(n):\n    return n * {i}\n```"
        wrong = f"```python\ndef f{i}(n):\n    return n + {i}\n```"
        rules.append({"match": f"unit tests for the function `f{i}`", "reply": f"```python\nassert f{i}(1) == {i}\n```"})
        rules.append({"match": f"improved implementation of `f{i}`", "reply": right})
        rules.append({"match": f"Implement the function `f{i}`", "reply": right if i % 2 == 0 else wrong})
    task_file, script = folder / "tasks.jsonl", folder / "script.jsonl"
    task_file.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    script.write_text("".join(json.dumps(r) + "\n" for r in rules))
    return task_file, script


def _run(tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    tasks, script = write_inputs(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "--tasks", f"jsonl:{tasks}", "--model",
                           f"scripted:{script}", "--strategy", "both", "--trials", "2", "--sandbox", "process",
                           "--out", str(out), "--memory-dir", str(tmp_path / "mem"), "--no-cache", *extra],
                          cwd=tmp_path, env=harness_env(), capture_output=True, text=True, timeout=300)
    runs = list(out.iterdir()) if out.exists() else []
    return proc, runs[0] if runs else out


@pytest.mark.slow
def test_a_priced_run_plots_dollars_and_an_unpriced_one_tokens(tmp_path: Path):
    (tmp_path / "priced").mkdir()
    (tmp_path / "unpriced").mkdir()
    proc, run = _run(tmp_path / "priced", "--price", "2/10")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((run / "summary.json").read_text())
    assert doc["cost_axis"] == "dollars"
    trials = [json.loads(line) for line in (run / "trials.jsonl").read_text().splitlines()]
    spent = sum((t["input_tokens"] * 2 + t["output_tokens"] * 10) / 1e6 for t in trials)
    assert sum(s["cost_usd"] for s in doc["strategies"].values()) == pytest.approx(spent)
    points = {p["strategy"]: p for p in doc["cost_points"]}
    assert set(points) == {"reflexion", "baseline"} and all(p["priced"] for p in points.values())
    assert any(p["pareto"] for p in points.values())
    html = (run / "report.html").read_text()
    assert 'id="plot-cost"' in html and "Pareto front" in html and (run / "cost.svg").is_file()
    assert json.loads((run / "run.json").read_text())["config"]["price"] == "2/10"
    tests = pd.read_csv(run / "tests.csv")
    assert (tests["seconds"] > 0).all()  # the sandbox timed each test

    proc, run = _run(tmp_path / "unpriced")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((run / "summary.json").read_text())
    assert doc["cost_axis"] == "tokens" and all(s["cost_usd"] is None for s in doc["strategies"].values())
    row = next(line for line in proc.stdout.splitlines() if line.startswith("reflexion ") and "%" in line
               and "points" not in line)
    assert " unknown " in row and " 0.0000 " not in row  # never $0
    assert all(not p["priced"] and p["usd"] is None for p in doc["cost_points"])
    assert "unknown" in (run / "report.md").read_text().split("## Accuracy against cost", 1)[1].split("##", 1)[0]


def test_a_bad_price_is_one_line_exit_2(tmp_path: Path):
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "--price", "cheap"], cwd=tmp_path,
                          env=harness_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error: --price 'cheap': write IN/OUT in dollars per million tokens")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_every_run_reports_its_compute_and_a_local_models_dollars_are_zero_and_said_so():
    import msgspec

    from harness.rundata.numbers import of_records
    from synthrun import header, rec

    def head(model: str) -> dict:
        h = header(strategies=["baseline"], samples=1, k=[1], model=model)
        return {**h, "tasks": {**h["tasks"], "count": 2, "task_ids": ["T1", "T2"]}}

    records = [msgspec.structs.replace(rec(t, "baseline", 1, 1, final=True, hidden=True, stop="single_sample"),
                                       cost_usd=0.0, model_s=2.0, output_tokens=40) for t in ("T1", "T2")]
    local = of_records(head("local"), records)["compute"]
    assert (local["dollars"], local["local"], local["model_s"], local["tokens_per_s"]) == (0.0, True, 4.0, 20.0)
    assert local["dollars_text"].startswith("$0: the local model runs on this machine")
    unpriced = [msgspec.structs.replace(r, cost_usd=None) for r in records]
    api = of_records(head("openai:x@http://h/v1"), unpriced)
    assert api["compute"]["dollars"] is None and api["compute"]["dollars_text"].startswith("unknown: no price")
    points = {p["strategy"]: p for p in api["cost_points"]}
    assert points["baseline"]["model_s"] == 2.0  # the time axis for a model without a price


def test_estimate_gives_the_local_model_a_time_range_from_its_catalogue_speed():
    from harness.run.budget import format_estimate
    from harness.models.speed import time_estimate

    bound = {"calls": 10, "input_tokens": 8600, "output_tokens": 3200, "tokens": 11800, "usd": 0.0}
    doc = {"total": {"fewest": bound, "most": {**bound, "output_tokens": 6400}}}
    t = time_estimate("local", doc)  # qwen2.5-coder-0.5b: 17.5..32 generated tokens/s, 86 prompt tokens/s
    assert t["fewest_s"] == round(3200 / 32 + 8600 / 86, 1) and t["most_s"] == round(6400 / 17.5 + 8600 / 86, 1)
    assert time_estimate("openai:x@http://h/v1", doc) is None and time_estimate("local:/m/x.gguf", doc) is None
    text = format_estimate({"strategies": {}, "total": doc["total"], "price": {"input": 0.0, "output": 0.0},
                            "price_source": "the local model runs on this machine: $0", "basis": "b",
                            "time": t}, "estimate")
    assert "time: 3.3 min .. 7.8 min of model time" in text
