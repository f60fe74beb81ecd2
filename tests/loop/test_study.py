"""`python -m harness study FILE` as a user meets it: models x task sets x strategies with
the scripted model and a real sandbox; a killed study resumed; the study report."""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from harness.run.study import StudyError, load_spec
from tests.helpers import cli, run_harness, start_harness, wait_until

SANDBOXES = ["process", pytest.param("docker", marks=pytest.mark.docker)]
STRATEGIES = '["reflexion", "feedback", "resample", "baseline"]'


def write_tasks(path: Path, prefix: str, n: int = 3) -> Path:
    rows = [{"task_id": f"{prefix}/{i}", "prompt": f'def f{i}(n: int) -> int:\n    """Return n times {i}."""\n',
             "entry_point": f"f{i}", "tests": [f"assert f{i}(3) == {3 * i}", f"assert f{i}(-2) == {-2 * i}"]}
            for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def write_script(path: Path, right_at_once: int, latency_s: float = 0.0, n: int = 3) -> Path:
    """f_i right at once for i < right_at_once, else right after feedback."""
    rules: list[dict] = [{"latency_s": latency_s}] if latency_s else []
    rules.append({"match": "what should the next implementation do differently", "reply": "Multiply, do not add."})
    for i in range(n):
        right = f"```python\ndef f{i}(n):\n    return n * {i}\n```"
        wrong = f"```python\ndef f{i}(n):\n    return n + {i}\n```"
        rules.append({"match": f"unit tests for the function `f{i}`", "reply": f"```python\nassert f{i}(5) == {5 * i}\n```"})
        rules.append({"match": f"improved implementation of `f{i}`", "reply": right})
        rules.append({"match": f"Implement the function `f{i}`", "reply": right if i < right_at_once else wrong})
    path.write_text("".join(json.dumps(r) + "\n" for r in rules))
    return path


def write_study(folder: Path, *, sandbox: str = "process", latency_s: float = 0.0, extra: str = "",
                copy_tasks: bool = False) -> Path:
    strong = write_script(folder / "strong.jsonl", 3, latency_s)
    weak = write_script(folder / "weak.jsonl", 1, latency_s)
    a = write_tasks(folder / "set-a.jsonl", "a")
    b = write_tasks(folder / ("set-a-copy.jsonl" if copy_tasks else "set-b.jsonl"), "a" if copy_tasks else "b")
    study = folder / "study.toml"
    study.write_text(
        "[study]\n"
        'name = "two-by-two"\n'
        f'models = ["scripted:{strong}", "scripted:{weak}"]\n'
        f'tasks = ["jsonl:{a}", "jsonl:{b}"]\n'
        f"strategies = {STRATEGIES}\n"
        f'trials = 2\nsandbox = "{sandbox}"\nworkers = 2\n'
        f'cache_dir = "{folder / "cache"}"\n' + extra)
    return study


def harness(folder: Path, *args: str) -> object:
    return run_harness(*args, cwd=folder, timeout=600)


def _cells(study_dir: Path) -> list[dict]:
    return json.loads((study_dir / "study.json").read_text())["cells"]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# ------------------------------------------------------------------ the study file

@pytest.mark.parametrize("text, words", [
    ('name = "x"\n', "no [study] table"),
    ('[study]\nmodels = ["local"]\ntasks = ["builtin"]\nstrategies = ["baseline"]\n', "name is missing"),
    ('[study]\nname = "x"\nmodels = "local"\ntasks = []\nstrategies = ["baseline"]\n', "tasks must be a non-empty list"),
    ('[study]\nname = "x"\nmodels = ["local"]\nmodel = "local"\ntasks = ["builtin"]\nstrategies = ["baseline"]\n',
     "model is set per cell; write models = [...]"),
    ('[study]\nname = "x"\nmodels = ["local", "local"]\ntasks = ["builtin"]\nstrategies = ["baseline"]\n',
     "models names 'local' twice"),
    ('[study]\nname = "x"\nmodels = ["scripted:a", "scripted:b"]\ntasks = ["builtin"]\nstrategies = ["baseline"]\n'
     'price = "1/2"\n', "price is one model's price"),
    ('[study]\nname = "x"\nmodels = ["local"]\ntasks = ["builtin"]\nstrategies = ["baseline"]\ntrials = 0\n',
     "trials must be an integer >= 1"),
    ('[study]\nname = "x"\nmodels = ["local"]\ntasks = ["builtin"]\nstrategies = ["baseline"]\nwhatever = 1\n',
     "unknown setting 'whatever'"),
    ('[study]\nname = "x"\nmodels = ["local"]\ntasks = ["builtin"]\nstrategies = ["nope"]\n', "unknown strategy 'nope'"),
    ('[study]\nname = "x"\nmodels = ["local"]\ntasks = ["builtin"]\nstrategies = ["baseline"]\nseeds = [1]\n',
     "seeds must be a list of at least two integers"),
    ('[study]\nname = "x"\nmodels = ["local"]\ntasks = ["builtin"]\nstrategies = ["baseline"]\nseeds = [1, 2]\n'
     'seed = 3\n', "give seed or seeds, not both"),
    ('[study]\nname = "x"\nmodels = ["local"]\ntasks = ["builtin"]\nstrategies = ["baseline"]\n'
     'labels = {"nope" = "N"}\n', "labels names 'nope'"),
])
def test_a_bad_study_file_says_what_and_where(tmp_path: Path, text: str, words: str):
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(StudyError, match="s.toml") as info:
        load_spec(path)
    assert words in str(info.value)


def test_strategies_are_a_group_or_a_comma_list(tmp_path: Path):
    path = tmp_path / "s.toml"
    path.write_text(f'[study]\nname = "x"\nmodels = ["local"]\ntasks = ["builtin"]\nstrategies = {STRATEGIES}\n')
    assert load_spec(path).strategy == "all"
    path.write_text('[study]\nname = "x"\nmodels = ["local"]\ntasks = ["builtin"]\nstrategies = ["feedback", "baseline"]\n')
    assert load_spec(path).strategy == "feedback,baseline"


def test_a_list_in_a_run_file_points_to_study(tmp_path: Path):
    (tmp_path / "run.toml").write_text('model = ["local", "anthropic:claude-haiku-4-5"]\n')
    done = harness(tmp_path, "run", "--config", "run.toml")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.strip() == ("error: run.toml: setting 'model' must be a string, got a list (one model spec per "
                                   "run; to run several models, use `python -m harness study`)")
    (tmp_path / "run.toml").write_text('[run]\ntasks = ["builtin", "humaneval"]\n')
    done = harness(tmp_path, "run", "--config", "run.toml")
    assert done.returncode == 2 and done.stderr.strip() == (
        "error: run.toml: setting 'tasks' must be a string, got a list (one task set per run; to run several task "
        "sets, use `python -m harness study`)")
    study = write_study(tmp_path)
    done = harness(tmp_path, "run", "--config", str(study))
    assert done.returncode == 2 and f"run it with `python -m harness study {study}`" in done.stderr
    (tmp_path / "run.toml").write_text('strategy = ["reflexion", "baseline"]\n')
    done = harness(tmp_path, "run", "--config", "run.toml")
    assert done.returncode == 2 and '"reflexion,baseline"' in done.stderr


# ------------------------------------------------------------------ a study, run

@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_two_by_two_study_runs_and_reports(tmp_path: Path, sandbox: str):
    labels = (f'labels = {{"scripted:{tmp_path / "strong.jsonl"}" = "Strong", "scripted:{tmp_path / "weak.jsonl"}" = '
              f'"Weak", "jsonl:{tmp_path / "set-a.jsonl"}" = "A"}}\n')
    study = write_study(tmp_path, sandbox=sandbox, extra=labels)
    out = tmp_path / "st"
    done = harness(tmp_path, "study", str(study), "--out", str(out))
    assert done.returncode == 0, done.stderr
    cells = _cells(out)
    assert [(c["model"].rsplit("/", 1)[-1], c["tasks"].rsplit("/", 1)[-1]) for c in cells] == [
        ("strong.jsonl", "set-a.jsonl"), ("strong.jsonl", "set-b.jsonl"),
        ("weak.jsonl", "set-a.jsonl"), ("weak.jsonl", "set-b.jsonl")]
    for c in cells:  # each an ordinary run folder
        run = out / c["run_id"]
        assert c["state"] == "complete" and c["exit"] == 0
        for name in ("run.json", "trials.jsonl", "summary.json", "report.html"):
            assert (run / name).is_file(), (run, name)
        header = json.loads((run / "run.json").read_text())
        assert header["config"]["model"] == c["model"] and header["config"]["tasks"] == c["tasks"]
        assert header["config"]["strategies"] == ["reflexion", "feedback", "resample", "baseline"]
        assert json.loads((run / "summary.json").read_text())["status"]["state"] == "complete"
    doc = json.loads((out / "study_summary.json").read_text())
    assert doc["status"]["text"] == "complete: 4 of 4 cells complete"
    by_cell = {}
    for e in doc["effects"]:
        by_cell.setdefault(e["cell"], []).append((e["effect"], e["a"], e["b"]))
    assert len(by_cell) == 4
    for effects in by_cell.values():
        assert effects == [("isolates", "reflexion", "feedback"), ("rival", "reflexion", "resample"),
                           ("total", "reflexion", "baseline")]
    weak_a = next(c for c in doc["cells"] if c["model"].endswith("weak.jsonl") and c["tasks"].endswith("set-a.jsonl"))
    # the weak model: f0 right at once, f1 and f2 only after feedback; resample and baseline never
    assert weak_a["strategies"]["reflexion"]["pass@1"] == 1.0 and weak_a["strategies"]["baseline"]["pass@1"] == pytest.approx(1 / 3)
    total = next(e for e in doc["effects"] if e["cell"] == weak_a["label"] and e["effect"] == "total")
    assert total["diff"] == pytest.approx(2 / 3) and (total["fixed"], total["broken"]) == (2, 0)
    assert 0 <= total["p_value"] <= 1 and total["ci_low"] <= total["diff"] <= total["ci_high"]
    for name in ("report.html", "report.md", "forest.svg", "cost.svg", "study_pass_at_1.csv", "study_effects.csv",
                 "forest.pdf", "forest.png", "cost.pdf", "cost.png", "tables.tex"):
        assert (out / name).is_file(), name
    # the study file's short labels name models and task sets everywhere (a task set without one: its spec)
    assert [c["label"] for c in doc["cells"]][:2] == ["Strong \u00d7 A", f"Strong \u00d7 jsonl:{tmp_path / 'set-b.jsonl'}"]
    from tests.report.test_latex import check_study_tables

    check_study_tables((out / "tables.tex").read_text(), doc)
    assert "Weak" in (out / "tables.tex").read_text() and "scripted:" not in (out / "tables.tex").read_text()
    assert "Strong \u00d7 A" in (out / "report.md").read_text()
    md = (out / "report.md").read_text()
    assert md.startswith("# Study two-by-two")
    assert "## Effects per model and task set" in md and "The lesson's own effect (feedback is reflexion without it)" in md
    assert "![effects, forest plot](forest.svg)" in md
    html = (out / "report.html").read_text()
    assert 'id="plot-forest"' in html and 'id="plot-cost"' in html
    assert done.stdout.count("The lesson's own effect") >= 4  # each cell's answer, then the study's
    assert "study two-by-two: complete: 4 of 4 cells complete" in done.stdout
    # a second `study FILE` on the same folder points to --resume
    again = harness(tmp_path, "study", str(study), "--out", str(out))
    assert again.returncode == 2 and f"python -m harness study --resume {out}" in again.stderr
    # --resume of a finished study redoes nothing
    before = {c["run_id"]: (out / c["run_id"] / "trials.jsonl").read_bytes() for c in cells}
    again = harness(tmp_path, "study", "--resume", str(out))
    assert again.returncode == 0, again.stderr
    assert {c["run_id"]: (out / c["run_id"] / "trials.jsonl").read_bytes() for c in cells} == before
    assert again.stderr.count("complete, kept") == 4
    # the report rebuilds from the folders
    assert cli("report", str(out)) == 0


def test_cells_share_the_response_cache(tmp_path: Path):
    study = write_study(tmp_path, copy_tasks=True)  # the second task set asks the very same prompts
    out = tmp_path / "st"
    done = harness(tmp_path, "study", str(study), "--out", str(out))
    assert done.returncode == 0, done.stderr
    cells = _cells(out)
    first, second = (_lines(out / c["run_id"] / "trials.jsonl") for c in cells[:2])
    # the first cell asked the model (its strategies share some first calls, hence some hits);
    # every temperature-0 call of the second was answered by entries the first cell wrote
    assert sum(r["model_calls"] - r["cached_calls"] for r in first) > 0
    zero = [r for r in second if r["temperature_used"] == 0.0]
    assert zero and sum(r["model_calls"] - r["cached_calls"] for r in zero) == 0


def test_cells_of_one_model_share_one_rate_limiter(tmp_path: Path, monkeypatch):
    import harness.run.units as units

    seen: list[tuple[str, object]] = []
    real = units.open_workbench

    def recording(config, prompts, **settings):
        seen.append((config.model, settings.get("limiter")))
        return real(config, prompts, **settings)

    monkeypatch.setattr(units, "open_workbench", recording)
    study = write_study(tmp_path, extra="requests_per_minute = 100000\n")
    assert cli("study", str(study), "--out", str(tmp_path / "st"), "--no-report") == 0
    assert len(seen) == 4 and all(limiter is not None for _, limiter in seen)
    by_model: dict[str, set[int]] = {}
    for model, limiter in seen:
        by_model.setdefault(model, set()).add(id(limiter))
    assert [len(ids) for ids in by_model.values()] == [1, 1]  # one limiter per model, for both its cells
    assert len(set().union(*by_model.values())) == 2


def test_a_killed_study_resumes_without_redoing_finished_cells(tmp_path: Path):
    study = write_study(tmp_path, latency_s=0.15)
    out = tmp_path / "st"
    proc = start_harness("study", str(study), "--out", str(out), cwd=tmp_path)
    try:
        def second_cell_started() -> bool:
            cells = _cells(out) if (out / "study.json").exists() else []
            if len(cells) < 2 or not cells[1].get("run_id"):
                return False
            trials = out / cells[1]["run_id"] / "trials.jsonl"
            return trials.exists() and len(trials.read_text().splitlines()) >= 2
        wait_until(second_cell_started, "the second cell's first trials", timeout_s=300)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    cells = _cells(out)
    first_trials = (out / cells[0]["run_id"] / "trials.jsonl").read_bytes()
    second_before = (out / cells[1]["run_id"] / "trials.jsonl").read_text().splitlines()
    assert cells[0]["state"] == "complete" and cells[1]["state"] == "running"
    assert not cells[2].get("run_id")
    done = harness(tmp_path, "study", "--resume", str(out))
    assert done.returncode == 0, done.stderr
    cells = _cells(out)
    assert all(c["state"] == "complete" for c in cells)
    assert (out / cells[0]["run_id"] / "trials.jsonl").read_bytes() == first_trials  # not redone
    second = out / cells[1]["run_id"]
    after = (second / "trials.jsonl").read_text().splitlines()
    assert after[:len(second_before)] == second_before  # went on where it stopped
    keys = [(r["task_id"], r["strategy"], r["attempt"], r["trial"]) for r in map(json.loads, after)]
    assert len(keys) == len(set(keys))
    assert len(json.loads((second / "run.json").read_text())["resumes"]) == 1
    assert "complete, kept" in done.stderr and f"resuming {second}" in done.stderr
    assert len([p for p in out.iterdir() if (p / "run.json").is_file()]) == 4  # no orphan run folder


def test_a_study_budget_counts_every_cell_and_a_higher_one_continues(tmp_path: Path):
    study = write_study(tmp_path)
    out = tmp_path / "st"
    done = harness(tmp_path, "study", str(study), "--out", str(out), "--max-calls", "12")
    assert done.returncode == 3, done.stderr
    doc = json.loads((out / "study_summary.json").read_text())
    assert doc["status"]["state"] == "budget"
    assert f"python -m harness study --resume {out} --max-calls N" in doc["status"]["text"]
    folders = [out / c["run_id"] for c in _cells(out) if c.get("run_id") and (out / c["run_id"] / "trials.jsonl").exists()]
    spent = sum(r["model_calls"] - r["cached_calls"] for f in folders for r in _lines(f / "trials.jsonl"))
    spent += sum(e["spent"]["model_calls"] for f in folders if (f / "errors.jsonl").exists()
                 for e in _lines(f / "errors.jsonl") if e.get("spent"))  # attempts the budget cut mid-way
    assert spent == 12  # a cap: no call started past it
    done = harness(tmp_path, "study", "--resume", str(out), "--max-calls", "10000")
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "study_summary.json").read_text())["status"]["state"] == "complete"


def test_study_estimate_calls_no_model(tmp_path: Path):
    study = write_study(tmp_path)
    text = study.read_text().replace("strong.jsonl", "missing-1.jsonl").replace("weak.jsonl", "missing-2.jsonl")
    study.write_text(text)
    done = harness(tmp_path, "study", str(study), "--out", str(tmp_path / "st"), "--estimate")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\ntotal ") == 4
    assert "study two-by-two, 4 cells: " in done.stdout and "No model was called." in done.stdout
    assert not (tmp_path / "st").exists()


def test_seeds_repeat_every_cell_and_the_report_gives_the_spread_across_repeats(tmp_path: Path):
    weak = write_script(tmp_path / "weak.jsonl", 1)
    a = write_tasks(tmp_path / "set-a.jsonl", "a")
    study = tmp_path / "study.toml"
    study.write_text('[study]\nname = "repeats"\n'
                     f'models = ["scripted:{weak}"]\ntasks = ["jsonl:{a}"]\nstrategies = ["baseline"]\n'
                     f'sandbox = "process"\nworkers = 2\ncache_dir = "{tmp_path / "cache"}"\nseeds = [11, 12]\n')
    out = tmp_path / "st"
    done = harness(tmp_path, "study", str(study), "--out", str(out))
    assert done.returncode == 0, done.stderr
    cells = _cells(out)
    assert [c["seed"] for c in cells] == [11, 12] and len({c["run_id"] for c in cells}) == 2
    for c in cells:  # each repeat a run of its own seed; the cache keys on it, so nothing is replayed
        header = json.loads((out / c["run_id"] / "run.json").read_text())
        summary = json.loads((out / c["run_id"] / "summary.json").read_text())
        assert header["config"]["seed"] == c["seed"]
        assert summary["strategies"]["baseline"]["cached_calls"] == 0
    doc = json.loads((out / "study_summary.json").read_text())
    (row,) = doc["repeats"]
    assert (row["strategy"], row["repeats"], row["seeds"], row["tasks_compared"]) == ("baseline", 2, [11, 12], 3)
    # the scripted model answers alike whatever the seed: no spread, yet an interval over 3 tasks is wide
    assert row["per_repeat"] == [pytest.approx(1 / 3)] * 2 and row["sd"] == 0.0
    assert row["ci95"][0] < 0.1 and row["ci95"][1] > 0.75 and "Miller" in doc["repeats_method"]
    assert (out / "study_repeats.csv").is_file() and "Across repeats (seeds)" in (out / "report.md").read_text()
    assert "tab:study-repeats" in (out / "tables.tex").read_text()
    # a second study over the same cache with the same seed replays it: the key is the seed
    again = tmp_path / "again.toml"
    again.write_text(study.read_text().replace('name = "repeats"', 'name = "again"').replace("[11, 12]", "[11, 13]"))
    assert harness(tmp_path, "study", str(again), "--out", str(tmp_path / "st2")).returncode == 0
    cached = {c["seed"]: json.loads((tmp_path / "st2" / c["run_id"] / "summary.json").read_text())
              ["strategies"]["baseline"]["cached_calls"] for c in _cells(tmp_path / "st2")}
    assert cached[11] == 3 and cached[13] == 0
