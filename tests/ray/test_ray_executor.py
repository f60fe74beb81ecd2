"""`harness run --executor ray` on a real 3-node Ray cluster, the Docker sandbox and the stub API.

Every run here is compared with one local run of the same deterministic agent:
the same trials, each found the same way, each exactly once.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import ray  # noqa: F401  (a test dependency: its absence must fail, never skip)

from harness.cli import main  # noqa: E402
from harness.strategies import resolve  # noqa: E402
from tests.doubles.stub_server import Reply, Status, StubServer  # noqa: E402

from tests.helpers import ctrl_c_reaches_it, wait_until  # noqa: E402
from ray_helpers import Agent, only_run, outcomes, read_trials, start_cluster, stored_lessons, trial_keys  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.docker, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
N_TASKS = 4
TASKS = ["--tasks", "builtin", "--limit", str(N_TASKS), "--strategy", "all", "--trials", "3"]
N_ATTEMPTS = N_TASKS * len(resolve("all"))


def run_args(stub: StubServer, tmp: Path, *extra: str) -> list[str]:
    return [
        "run", *TASKS, "--model", f"openai:stub-model@{stub.openai_url}",
        "--out", str(tmp / "results"), "--memory-dir", str(tmp / "memory"),
        # the executor is under test, not the check of the model before a run
        "--no-cache", "--no-report", "--no-model-check", "--sandbox-workers", "1", *extra,
    ]


def ray_args(cluster, workers: int = 2) -> list[str]:
    return ["--executor", "ray", "--ray-address", cluster.address, "--workers", str(workers)]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, cluster) -> dict:
    """The local run every Ray run must equal: its trials and its stored lessons."""
    tmp = tmp_path_factory.mktemp("local")
    with StubServer(default=Reply(Agent())) as stub:
        assert main(run_args(stub, tmp, "--executor", "local", "--workers", "4", "--sandbox-workers", "2")) == 0
    records = read_trials(only_run(tmp / "results"))
    assert len({(r["task_id"], r["strategy"], r["attempt"]) for r in records if r["final"]}) == N_ATTEMPTS
    assert any(r["hidden_passed"] for r in records) and not all(r["hidden_passed"] for r in records)
    assert any(r["lesson"] for r in records)
    lessons = {key[:4] + (key[4],) for key in stored_lessons(tmp / "memory")}
    return {"outcomes": outcomes(records), "lessons": lessons}


def assert_same_as_local(run_dir: Path, memory: Path, reference: dict) -> None:
    records = read_trials(run_dir)
    keys = trial_keys(records)
    assert [k for k, n in keys.items() if n > 1] == []  # no trial twice
    assert set(keys) == set(reference["outcomes"])  # none missing, none extra
    assert outcomes(records) == reference["outcomes"]
    lessons = stored_lessons(memory)
    assert [k for k, n in lessons.items() if n > 1] == []
    assert set(lessons) == reference["lessons"]


def test_results_equal_a_local_run_and_units_spread_over_nodes(
    tmp_path: Path, cluster, reference: dict, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="harness.ray")
    with StubServer(default=Reply(Agent())) as stub:
        assert main(run_args(stub, tmp_path, *ray_args(cluster))) == 0
    assert_same_as_local(only_run(tmp_path / "results"), tmp_path / "memory", reference)
    ran = [r.getMessage() for r in caplog.records if " units" in r.getMessage() and r.getMessage().startswith("node ")]
    assert len(ran) == 3, ran  # every node of the cluster took units


def test_memory_namespace_is_shared_with_earlier_runs(tmp_path: Path, cluster) -> None:
    """A lesson a local run left under a shared namespace is shown to the Ray run's Actor."""
    shared = ["--memory-namespace", "team", "--task-ids", "builtin/compress_runs", "--strategy", "reflexion"]
    with StubServer(default=Reply(Agent())) as stub:
        args = run_args(stub, tmp_path, *shared)
        args[args.index("--limit") : args.index("--limit") + 2] = []
        assert main([*args, "--executor", "local", "--out", str(tmp_path / "first")]) == 0
        assert main([*args, *ray_args(cluster), "--out", str(tmp_path / "second")]) == 0
    first = read_trials(only_run(tmp_path / "first"))
    second = read_trials(only_run(tmp_path / "second"))
    lesson = next(r["lesson"] for r in first if r["lesson"])
    # Trial 2 sees the earlier run's lesson and its own (same text: a deterministic agent).
    assert [r["memory_shown"] for r in first if r["trial"] == 2] == [[lesson]]
    assert [r["memory_shown"] for r in second if r["trial"] == 2] == [[lesson, lesson]]


def test_a_model_error_on_a_node_leaves_its_attempt_incomplete_and_the_run_goes_on(tmp_path: Path, cluster) -> None:
    with StubServer(default=Reply(Agent())) as stub:
        stub.script(Status(400, message="bad request from the stub"))  # the first call only; not retried
        # The run finishes every other attempt, then exits 1: one attempt is incomplete.
        assert main(run_args(stub, tmp_path, *ray_args(cluster))) == 1
    run_dir = only_run(tmp_path / "results")
    errors = [json.loads(line) for line in (run_dir / "errors.jsonl").read_text().splitlines()]
    assert [(e["kind"], e["trial"]) for e in errors] == [("model_error", 1)]
    assert "HTTP 400" in errors[0]["error"]
    broken = (errors[0]["task_id"], errors[0]["strategy"], errors[0]["attempt"])
    records = read_trials(run_dir)
    complete = {(r["task_id"], r["strategy"], r["attempt"]) for r in records if r["final"]}
    assert broken not in complete and len(complete) == N_ATTEMPTS - 1


def test_a_node_killed_mid_run_loses_and_repeats_nothing(
    tmp_path: Path, reference: dict, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="harness.ray")
    cluster = start_cluster(3)
    try:
        victim = next(iter(cluster.worker_nodes))
        killed = threading.Event()

        def kill_when_running() -> None:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                runs = list((tmp_path / "results").glob("*/trials.jsonl"))
                if runs and len(runs[0].read_text().splitlines()) >= 6:
                    cluster.remove_node(victim, allow_graceful=False)
                    killed.set()
                    return
                time.sleep(0.05)

        killer = threading.Thread(target=kill_when_running, daemon=True)
        with StubServer(default=Reply(Agent()), latency_s=0.3) as stub:
            killer.start()
            assert main(run_args(stub, tmp_path, *ray_args(cluster))) == 0
            killer.join()
        assert killed.is_set()
        assert any("lost Ray node" in r.getMessage() for r in caplog.records)
        assert_same_as_local(only_run(tmp_path / "results"), tmp_path / "memory", reference)
    finally:
        cluster.shutdown()


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _wait_for_lines(path_glob: Path, pattern: str, lines: int, proc: subprocess.Popen, timeout_s: float = 120) -> Path:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = list(path_glob.glob(pattern))
        if found and len(found[0].read_text().splitlines()) >= lines:
            return found[0]
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"fewer than {lines} trials after {timeout_s} s")


def test_driver_kill_9_then_resume_keeps_exactly_once(tmp_path: Path, cluster, reference: dict) -> None:
    with StubServer(default=Reply(Agent()), latency_s=0.3) as stub:
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness", *run_args(stub, tmp_path, *ray_args(cluster))],
            cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        trials = _wait_for_lines(tmp_path / "results", "*/trials.jsonl", 8, proc)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        killed_at = len(read_trials(trials.parent))
        assert 8 <= killed_at < len(reference["outcomes"])
        assert main(["run", "--resume", str(trials.parent)]) == 0
    assert_same_as_local(trials.parent, tmp_path / "memory", reference)


def test_rate_limit_holds_for_the_whole_cluster_and_ctrl_c_stops_it(tmp_path: Path, cluster) -> None:
    """5 requests a minute for 3 nodes with 2 units each: 5 in the first minute, not 15.

    Then Ctrl-C: the driver exits 130 with the resume command and no request follows.
    """
    with StubServer(default=Reply(Agent())) as stub:
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness", *run_args(stub, tmp_path, *ray_args(cluster), "--requests-per-minute", "5")],
            cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=ctrl_c_reaches_it,
        )

        def five_sent() -> bool:
            assert proc.poll() is None, proc.communicate()
            return len(stub.requests) >= 5

        wait_until(five_sent, "the first 5 requests", timeout_s=300)
        time.sleep(8.0)  # a window to watch: without one cluster-wide limit, the other nodes' requests come in it
        # Counted by when the stub received them, so a slow machine (which sends later)
        # cannot make a working limit look broken.
        first = stub.requests[0].received_at
        assert len([r for r in stub.requests if r.received_at < first + 60]) <= 5, len(stub.requests)
        starts = [r.received_at for r in stub.requests]
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "Resume with: python -m harness run --resume" in err
        time.sleep(1.0)
        assert [r.received_at for r in stub.requests] == starts  # nothing ran after Ctrl-C


@pytest.mark.model
def test_each_node_loads_its_own_embedded_model(tmp_path: Path, cluster, caplog: pytest.LogCaptureFixture) -> None:
    from harness.models.fetch import catalogue, is_ready, model_path, resolve_models_dir

    info = catalogue()["smollm2-135m"]
    if not is_ready(info, resolve_models_dir()):
        if os.environ.get("HARNESS_REQUIRE_MODEL") == "1":
            pytest.fail("HARNESS_REQUIRE_MODEL=1 but the SmolLM2 GGUF is not fetched")
        pytest.skip("run `python -m harness model fetch smollm2-135m`")
    gguf = model_path(info, resolve_models_dir())
    caplog.set_level(logging.INFO, logger="harness.ray")
    args = [
        "run", "--tasks", "builtin", "--limit", "3", "--strategy", "baseline", "--max-tokens", "48",
        "--model", f"local:{gguf}", "--out", str(tmp_path / "results"), "--memory-dir", str(tmp_path / "memory"),
        "--no-cache", "--no-report", "--sandbox-workers", "1", *ray_args(cluster, workers=1),
    ]
    assert main(args) == 0
    records = read_trials(only_run(tmp_path / "results"))
    assert len(records) == 3 and all(r["model_calls"] == 1 and r["raw_output"] for r in records)
    ran = [r.getMessage() for r in caplog.records if r.getMessage().startswith("node ") and r.getMessage().endswith(" ran 1 units")]
    assert len(ran) == 3, ran  # one unit on each node: three NodeWorkers, each with its own model


def test_without_an_address_the_run_starts_its_own_instance_and_never_joins_another(
    tmp_path: Path, cluster, reference: dict
) -> None:
    """A second cluster runs on this machine and RAY_ADDRESS points at it (what Ray itself
    would follow): without --ray-address the run (a process of its own, as a user's) starts
    a private instance, says so, runs there, and ends it."""
    import re
    import socket

    with StubServer(default=Reply(Agent())) as stub:
        done = subprocess.run(
            [sys.executable, "-m", "harness", *run_args(stub, tmp_path, "--executor", "ray", "--workers", "2")],
            cwd=tmp_path, env={**_env(), "RAY_ADDRESS": cluster.address}, capture_output=True, text=True, timeout=600,
        )
    assert done.returncode == 0, done.stderr
    found = re.search(r"ray: started a private Ray instance for this run at (\S+) \(1 node\(s\), [\d.]+ CPUs\); "
                      r"it ends with the run", done.stderr)
    assert found, done.stderr
    address = found.group(1)
    assert address != cluster.address
    assert_same_as_local(only_run(tmp_path / "results"), tmp_path / "memory", reference)
    host, _, port = address.rpartition(":")
    with pytest.raises(OSError):  # the private instance ended with the run
        socket.create_connection((host, int(port)), timeout=2).close()
    other_host, _, other_port = cluster.address.rpartition(":")
    socket.create_connection((other_host, int(other_port)), timeout=2).close()  # the other one still runs


def test_with_auto_the_run_says_which_cluster_it_joined(
    tmp_path: Path, cluster, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("RAY_ADDRESS", cluster.address)
    with StubServer(default=Reply(Agent())) as stub:
        args = run_args(stub, tmp_path, "--executor", "ray", "--ray-address", "auto", "--workers", "2")
        args[args.index("--limit") + 1] = "1"
        assert main(args) == 0
    err = capsys.readouterr().err
    assert f"ray: joined the Ray cluster at {cluster.address} (3 node(s), 3 CPUs), " \
           "as --ray-address auto asked" in err


def test_nodes_open_the_sandbox_image_of_every_language_the_run_holds(tmp_path: Path, cluster) -> None:
    """A run of Rust tasks on the cluster: each node opens the Rust image beside Python's,
    so the references the stub answers with compile and pass their hidden tests there."""
    from harness.tasks import load_tasks

    tasks = load_tasks("builtin:rust").select(limit=2).tasks
    solutions = {t.entry_point: t.canonical_solution for t in tasks}

    def answer(request) -> str:
        name = next(n for n in solutions if f"`{n}`" in request.prompt_text or f"fn {n}(" in request.prompt_text)
        return f"```rust\n{solutions[name]}\n```"

    with StubServer(default=Reply(answer)) as stub:
        args = run_args(stub, tmp_path, *ray_args(cluster))
        args[args.index("--tasks") + 1] = "builtin:rust"
        args[args.index("--limit") + 1] = "2"
        args[args.index("--strategy") + 1] = "baseline"
        assert main(args) == 0
    records = read_trials(only_run(tmp_path / "results"))
    assert {r["task_id"] for r in records} == {t.task_id for t in tasks}
    assert all(r["language"] == "rust" and r["hidden_passed"] for r in records), records


def test_budgets_hold_for_the_whole_cluster(tmp_path: Path, cluster) -> None:
    """--max-calls 5 over 3 nodes with 2 units each, calls overlapping: exactly 5 requests
    reach the server, and the summary counts them, those of the attempts cut included."""
    with StubServer(default=Reply(Agent()), latency_s=0.3) as stub:
        code = main(run_args(stub, tmp_path, *ray_args(cluster), "--max-calls", "5", "--price", "1/2"))
        assert code == 3
        assert len(stub.requests) == len(stub.billed) == 5
        billed = sum(u["prompt_tokens"] * 1 + u["completion_tokens"] * 2 for u in stub.billed) / 1e6
    doc = json.loads((only_run(tmp_path / "results") / "summary.json").read_text())
    rows = doc["resources"]
    assert sum(r["model_calls"] - r["cached_calls"] for r in rows) == 5
    assert sum(r["cost_usd"] or 0.0 for r in rows) == pytest.approx(billed)
    stop = doc["status"]["budget_stop"]
    assert doc["status"]["state"] == "budget" and stop["kind"] == "max_calls" and stop["spent"] == 5
