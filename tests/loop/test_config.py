"""RunConfig: defaults < file < flags, the file's layout, and the round trip resume relies on."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness.cli import build_parser
from harness.commands.run import build_config
from harness.config import ConfigError, RunConfig


def config_from(argv: list[str]) -> RunConfig:
    return build_config(build_parser().parse_args(["run", *argv]))


def test_defaults_then_file_then_flags(tmp_path: Path):
    (tmp_path / "run.toml").write_text('trials = 2\nseed = 5\ntask-ids = ["a", "b"]\nmodel = "scripted:x"\n')
    assert config_from([]) == RunConfig().validate()  # no file, no flag: the defaults
    from_file = config_from(["--config", str(tmp_path / "run.toml")])
    assert (from_file.trials, from_file.seed, from_file.task_ids, from_file.model) == (2, 5, ("a", "b"), "scripted:x")
    assert from_file.workers == RunConfig().workers  # not in the file: the default
    both = config_from(["--config", str(tmp_path / "run.toml"), "--trials", "4", "--task-ids", "c"])
    assert (both.trials, both.seed, both.task_ids) == (4, 5, ("c",))  # flags win, the rest from the file


def test_a_flag_equal_to_the_default_still_beats_the_file(tmp_path: Path):
    (tmp_path / "run.toml").write_text("trials = 2\n")
    config = config_from(["--config", str(tmp_path / "run.toml"), "--trials", str(RunConfig().trials)])
    assert config.trials == RunConfig().trials


def test_settings_may_sit_in_a_run_table_or_at_top_level_but_not_both(tmp_path: Path):
    table, top, both = tmp_path / "table.toml", tmp_path / "top.toml", tmp_path / "both.toml"
    table.write_text("[run]\ntrials = 2\n")
    top.write_text("trials = 2\n")
    both.write_text("seed = 9\n[run]\ntrials = 2\n")
    assert config_from(["--config", str(table)]).trials == 2
    assert config_from(["--config", str(top)]).trials == 2
    with pytest.raises(ConfigError, match=r"both.toml: settings at top level \(seed\) and in a \[run\] table"):
        config_from(["--config", str(both)])


def test_unknown_or_badly_typed_settings_name_the_file(tmp_path: Path):
    (tmp_path / "typo.toml").write_text("[run]\ntrails = 2\n")
    with pytest.raises(ConfigError, match=r"typo.toml: unknown setting 'trails'"):
        config_from(["--config", str(tmp_path / "typo.toml")])
    (tmp_path / "bad.toml").write_text('k = "one"\n')
    with pytest.raises(ConfigError, match=r"bad.toml: setting 'k' must be a list of integers, got the string 'one'"):
        config_from(["--config", str(tmp_path / "bad.toml")])


def test_io_compare_is_strict_unless_a_source_s_own_rules_are_asked_for(tmp_path: Path):
    assert RunConfig().io_compare == "strict"
    assert config_from(["--io-compare", "source"]).io_compare == "source"
    with pytest.raises(ConfigError, match="io_compare must be one of strict, source"):
        RunConfig(io_compare="lenient").validate()
    with pytest.raises(ConfigError, match="setting 'io_compare' must be a string, got a list"):
        RunConfig(io_compare=["source"]).validate()


def _every_field_changed() -> RunConfig:
    """A config where no field keeps its default, so the round trip checks each one."""
    changed = RunConfig(
        tasks="jsonl:/data/t.jsonl", strategy="all", model="openai:m@http://127.0.0.1:9/v1", trials=4,
        samples=3, k=(1, 3), limit=7, task_ids=("t/1", "t/2"), after="2024-01-31", before="2025-01-01", workers=3, sandbox="process",
        sandbox_workers=5, out=Path("/tmp/out"), memory_dir=Path("mem"), memory_window=0,
        memory_namespace="shared", max_internal_tests=2, temperature=0.7, seed=11, max_tokens=99,
        max_tokens_tests=98, max_tokens_lesson=97, test_timeout_s=2.5, cache=False,
        cache_dir=Path("c"), model_timeout_s=30.0, max_retries=1, requests_per_minute=10,
        tokens_per_minute=1000, prices={"m": {"input": 1.0, "output": 2.0}}, oracle_feedback=True,
        report=False, resample_temperature=0.3, prompts=Path("my-prompts"), executor="ray",
        ray_address="ray://127.0.0.1:10001", allow_process_sandbox_with_api=True,
        recall_from="results/earlier-run", recall_k=5, recall_scope="other_task_sets", recall_max_chars=200,
        local_slots=1, reproducible=True, speculative="off", strategy_options={"reflexion": {"window": 2}}, io_compare="source",
        tool_protocol="text", stream=True,
        price_table=Path("prices.toml"), price="1/2", check_tasks=True, max_calls=50, max_cost=1.5,
    )
    defaults = RunConfig()
    same = [f.name for f in dataclasses.fields(RunConfig) if getattr(changed, f.name) == getattr(defaults, f.name)]
    assert same == [], f"give these fields a non-default value: {same}"
    return changed


def test_to_dict_round_trips_through_json_as_run_json_stores_it():
    config = _every_field_changed()
    stored = json.loads(json.dumps(config.to_dict()))  # what run.json holds
    assert stored["strategies"] == ["reflexion", "feedback", "resample", "baseline"]
    assert RunConfig.from_dict(stored, source="run.json") == config


def test_defaults_round_trip_too():
    assert RunConfig.from_dict(json.loads(json.dumps(RunConfig().to_dict()))) == RunConfig()


def test_local_slots_default_to_the_workers_up_to_four_and_reproducible_means_one():
    assert RunConfig().validate().local_slots == 4  # 8 workers by default
    assert RunConfig(workers=2).validate().local_slots == 2
    assert RunConfig(workers=2, local_slots=6).validate().local_slots == 6
    assert config_from(["--local-slots", "3"]).local_slots == 3
    repro = config_from(["--reproducible"])
    assert (repro.local_slots, repro.reproducible) == (1, True)
    with pytest.raises(ConfigError, match="reproducible runs the local model with one slot"):
        config_from(["--reproducible", "--local-slots", "4"])
    with pytest.raises(ConfigError, match="local_slots must be an integer >= 1"):
        config_from(["--local-slots", "0"])
    # resolved once and recorded: a resume keeps the run's slots whatever --workers it gets
    stored = json.loads(json.dumps(RunConfig(workers=3).validate().to_dict()))
    assert stored["local_slots"] == 3


@pytest.mark.parametrize("toml, words", [
    ('model = ["a", "b"]', "setting 'model' must be a string, got a list (one model spec per run; to run several "
                           "models, use `python -m harness study`)"),
    ('strategy = ["reflexion", "baseline"]', "setting 'strategy' must be a string, got a list (a strategy, a group, "
                                             'or several joined by commas in one string, e.g. "reflexion,baseline")'),
    ('temperature = "hot"', "setting 'temperature' must be a number, got the string 'hot'"),
    ("seed = true", "setting 'seed' must be an integer, got the boolean true"),
    ("workers = 2.0", "setting 'workers' must be an integer, got the number 2.0"),
    ('memory_dir = ""', "setting 'memory_dir' must be a folder path (a string), got the string ''"),
    ("strategy_options = 3", "setting 'strategy_options' must be a table of strategy name -> {option = value}"),
    ('prices = {m = {input = "x"}}', "setting 'prices' must be a table of model id"),
    ('k = "1,x"', "setting 'k' must be a list of integers, got the string '1,x'"),
])
def test_every_setting_s_type_is_checked_naming_the_file(tmp_path: Path, toml: str, words: str):
    (tmp_path / "bad.toml").write_text(toml + "\n")
    with pytest.raises(ConfigError) as info:
        config_from(["--config", str(tmp_path / "bad.toml")])
    assert str(info.value).startswith(f"{tmp_path / 'bad.toml'}: {words}"), str(info.value)


def test_types_are_checked_for_a_config_made_in_code_and_values_are_kept_as_their_type():
    with pytest.raises(ConfigError, match="config: setting 'trials' must be an integer, got the string '3'"):
        RunConfig(trials="3").validate()  # type: ignore[arg-type]
    config = RunConfig(out="elsewhere", k=[1], temperature=1, after="2024-08-01").validate()  # type: ignore[arg-type]
    assert config.out == Path("elsewhere") and config.k == (1,) and isinstance(config.temperature, float)
    import datetime

    (dated,) = [RunConfig.from_dict({"after": datetime.date(2024, 8, 1)}).validate().after]
    assert dated == "2024-08-01"  # TOML's own date, unquoted, reads as the day
    assert config_from(["--k", "1"]).k == (1,)
    with pytest.raises(ConfigError, match="command line: setting 'k' must be a list of integers, got the string '1,x'"):
        config_from(["--k", "1,x"])
