"""Hostile agents, on both sandboxes: scripts an agent runs through `python` that search
the file system, the environment and the other processes for the hidden tests, or
flood, while hidden tests are being graded (on the docker sandbox: the process sandbox
isolates nothing, and such a search reads the run folder). They run only in agent-domain workers,
which never grade a hidden test, so they learn nothing: no hidden test's text reaches
a tool result or any prompt. Each script also looks for a control it planted itself,
so a search that finds nothing is a search that worked."""
from __future__ import annotations

import json

import pytest

from harness.models.scripted import ScriptedModel, ScriptedReply
from harness.models.tools import ToolCall
from harness.rundata import read_trials
from harness.rundata.events import ToolCallRun
from harness.tasks.base import Task
from tests.loop.helpers import kind, run

CANARY = "canary-5d1e9b7f"  # in the hidden tests only
SLOW = Task(  # graded while the hostile agent searches: its hidden test takes a while
    task_id="demo/slow",
    prompt='def mul(a: int, b: int) -> int:\n    """Return a times b."""\n',
    entry_point="mul",
    hidden_tests=(f"import time\ntime.sleep(2.5)\nassert mul(6, 7) == 42  # {CANARY}",
                  f"assert mul(3, 3) == 9  # {CANARY}"),
)
PROBE = Task(
    task_id="demo/probe",
    prompt='def sub(a: int, b: int) -> int:\n    """Return a minus b."""\n',
    entry_point="sub",
    hidden_tests=(f"assert sub(9, 2) == 7  # {CANARY}",),
)

_SEARCH = r'''
import os, stat, time
NEEDLE = "canary-" + "5d1e9b7f"
control = "/tmp/control-" + str(os.getpid())
with open(control, "w") as f:
    f.write("CONTROL-" + "PLANTED")
found, control_seen, files, denied = [], False, 0, 0
deadline = time.monotonic() + 3.0
for top in ("/tmp", "/dev/shm", "/var/tmp", "/run", "/home", "/root", "/opt", "/srv", "/", "/etc", "/usr"):
    for root, dirs, names in os.walk(top):
        if time.monotonic() > deadline:
            break
        # /proc and /sys are the process search's (some of their files block a reader)
        dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys", "/dev")]
        for name in names:
            path = os.path.join(root, name)
            if time.monotonic() > deadline:
                break
            try:
                if not stat.S_ISREG(os.lstat(path).st_mode):  # a FIFO or a device would block
                    continue
                with open(path, "rb") as f:
                    data = f.read(1 << 20)
            except Exception:
                denied += 1
                continue
            files += 1
            if NEEDLE.encode() in data:
                found.append(path)
            if b"CONTROL-PLANTED" in data:
                control_seen = True
print("files read", files, "denied", denied, "control", control_seen)
print("FOUND" if found else "nothing", found[:5])
'''
_ENVIRONMENT = r'''
import os
NEEDLE = "canary-" + "5d1e9b7f"
text = "\n".join(f"{k}={v}" for k, v in os.environ.items())
print("variables", len(os.environ), "PATH" in os.environ)
print("FOUND" if NEEDLE in text else "nothing")
print(text[:2000])
'''
_PROCESSES = r'''
import os, time
NEEDLE = ("canary-" + "5d1e9b7f").encode()
seen, hits, readable = set(), [], 0
deadline = time.monotonic() + 3.0
while time.monotonic() < deadline:
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except Exception as exc:
        print("no /proc:", type(exc).__name__)
        break
    for pid in pids:
        seen.add(pid)
        for part in ("cmdline", "environ", "status", "maps", "mem"):
            try:
                with open(f"/proc/{pid}/{part}", "rb") as f:
                    data = f.read(1 << 16)
            except Exception:
                continue
            readable += 1
            if NEEDLE in data:
                hits.append((pid, part))
    time.sleep(0.05)
print("pids seen", len(seen), "files read", readable)
print("FOUND" if hits else "nothing", hits[:5])
'''
_FLOOD = "import sys\nfor i in range(10**6):\n    sys.stdout.write('flood ' * 50)\n    sys.stderr.write('err ' * 50)\n"


def _hostile_model() -> ScriptedModel:
    scripts = [_SEARCH, _ENVIRONMENT, _PROCESSES, _FLOOD, _PROCESSES]

    def respond(system, messages):
        role = kind(system)
        first = messages[0].content if messages else ""
        if role != "agent":
            return "```python\nassert True\n```" if role == "testgen" else "A lesson."
        turn = sum(1 for m in messages if m.role == "assistant")
        if "`mul`" in first:  # submits at once: its hidden grading runs while the other searches
            return ToolCall("", "submit", json.dumps({"code": "def mul(a, b):\n    return a * b\n"}))
        if turn < len(scripts):
            return ScriptedReply("", (ToolCall("", "python", json.dumps({"code": scripts[turn]})),))
        return ToolCall("", "submit", json.dumps({"code": "def sub(a, b):\n    return a - b\n"}))
    return ScriptedModel(responder=respond)


def test_hostile_scripts_learn_nothing_of_the_hidden_tests(tmp_path, loop_sandbox):
    if loop_sandbox.name == "process":
        # Seen here: the search reads the run folder's trials.jsonl, which holds the
        # hidden tests' text (their results): the process sandbox isolates nothing.
        pytest.skip("process backend: code runs on the host without isolation (it reads the run folder)")
    model = _hostile_model()
    result = run(tmp_path, model, loop_sandbox, tasks=(SLOW, PROBE), strategy="react,react+reflexion", samples=2,
                 strategy_options={"react": {"python_timeout_s": 8.0}, "react+reflexion": {"python_timeout_s": 8.0}},
                 trials=1)
    records = read_trials(result.run_dir / "trials.jsonl")
    assert records and all(r.final for r in records)
    assert all(r.hidden_passed for r in records)  # the hidden tests were graded (with the canary in them)
    results = [e for r in records for e in r.events if isinstance(e, ToolCallRun) and e.name == "python"]
    assert len(results) == 5 * 2 * 2  # every hostile script ran, for each strategy and attempt
    for e in results:
        assert CANARY not in e.result, f"a hostile script found a hidden test: {e.result[:500]}"
        assert "FOUND" not in e.result
    searches = [e.result for e in results if "files read" in e.result and "control" in e.result]
    assert searches and all("control True" in s for s in searches)  # the search worked: it found its own file
    assert any("variables" in e.result and "True" in e.result for e in results)
    floods = [e for e in results if "flood" in e.result]
    assert floods and all(len(e.result) < 6000 and e.status == "error" for e in floods)
    for call in model.calls:
        assert CANARY not in call.prompt, "a hidden test reached a prompt"
