"""A shared run folder is data: opening it in the view or the report runs none of its code,
and the view answers only its own local host, never a request another site starts."""
from __future__ import annotations

import http.client
import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from harness.text.prompting import PromptSetError, Prompts
from harness.tasks import load_tasks
from harness.view.app import create_app
from viewruns import trial, write_run

TASK = "builtin/alternate_case"


def _hostile_folder(tmp_path: Path, marker: Path) -> Path:
    """A prompt folder whose every template would run a shell command as the user."""
    folder = tmp_path / "shared" / "prompts"
    folder.mkdir(parents=True)
    payload = "{{ cycler.__init__.__globals__.os.system('touch %s') }}" % marker
    for name in Prompts().template_names():
        (folder / f"{name}.j2").write_text(payload + "\n", encoding="utf-8")
    return folder


def _hostile_run(tmp_path: Path, marker: Path) -> Path:
    tasks = load_tasks("builtin").select(task_ids=[TASK])
    head = {"schema": 2, "run_id": "hostile", "created_at": "2026-12-01T00:00:00+00:00", "model": "scripted:test",
            "config": {"strategy": "reflexion", "strategies": ["reflexion"], "samples": 1, "k": [1], "trials": 2,
                       "model": "scripted:test", "tasks": "builtin"},
            "tasks": {"spec": "builtin", "name": "builtin", "digest": tasks.digest, "count": 1, "task_ids": [TASK]},
            "prompts": {"folder": str(_hostile_folder(tmp_path, marker)), "digest": "sha256:0", "overridden": ["actor_task"]}}
    records = [trial(TASK, "reflexion", 1, final=False, internal=False, hidden=False, run_id="hostile"),
               trial(TASK, "reflexion", 2, final=True, internal=True, hidden=True, run_id="hostile", stop="internal_pass",
                     lesson="a lesson")]
    return write_run(tmp_path / "results" / "hostile", head, records)


def test_a_run_folders_templates_never_run_in_the_view_or_the_report(tmp_path):
    marker = tmp_path / "ran"
    run = _hostile_run(tmp_path, marker)
    app = create_app(run.parent, warm=False)
    client = TestClient(app, base_url="http://127.0.0.1")
    assert client.get(f"/runs/hostile/tasks/{TASK}").status_code == 200  # (indexes the run)
    for t in (1, 2):
        resp = client.get("/runs/hostile/prompt", params={"task": TASK, "strategy": "reflexion", "attempt": 1, "trial": t},
                          headers={"X-View-Token": app.policy.token})
        assert resp.status_code == 200, resp.text
        assert "which the view does not read" in resp.text
        assert "Implement" in resp.text or "alternate" in resp.text  # rebuilt with the harness's own templates
    from harness.report.render import write_report

    write_report(run)
    assert (run / "report.html").is_file()
    assert not marker.exists()


def test_the_sandboxed_prompt_set_refuses_a_template_that_reaches_python(tmp_path):
    marker = tmp_path / "ran"
    folder = _hostile_folder(tmp_path, marker)
    with pytest.raises(PromptSetError, match="reaches outside its values"):
        Prompts(folder, sandboxed=True).render("actor_task", prompt="p", entry_point="f", lessons=[], recalled=[])
    assert not marker.exists()


@pytest.mark.parametrize("host,status", [
    ("127.0.0.1", 200), ("127.0.0.1:8765", 200), ("localhost:1", 200), ("LOCALHOST", 200), ("[::1]:80", 200),
    ("evil.example", 421), ("evil.example:8765", 421), ("127.0.0.1.evil.example", 421), ("localhost.", 421), ("", 421),
])
def test_the_view_answers_only_its_own_host(results, host, status):
    client = TestClient(create_app(results, warm=False), base_url="http://127.0.0.1")
    for path in ("/", "/runs/run-a", "/api/runs"):
        resp = client.get(path, headers={"host": host})
        assert resp.status_code == status, (host, path, resp.text[:200])
        if status == 421:
            assert "run-a" not in resp.text


def test_the_real_server_refuses_a_rebound_name(results, serve):
    server = serve(results)
    for host, status in (("attacker.example:%d" % server.port, 421), ("127.0.0.1:%d" % server.port, 200)):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        conn.request("GET", "/api/runs", headers={"Host": host})
        resp = conn.getresponse()
        body = resp.read().decode()
        conn.close()
        assert resp.status == status, (host, body)
    assert json.loads(body)["runs"]


CROSS_IMAGE = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image"}
CROSS_FETCH = {"sec-fetch-site": "same-site", "sec-fetch-mode": "cors", "sec-fetch-dest": "empty"}
CROSS_LINK = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document"}
SAME = {"sec-fetch-site": "same-origin", "sec-fetch-mode": "cors", "sec-fetch-dest": "empty"}


def test_another_site_cannot_make_the_view_render(results):
    app = create_app(results, warm=False)
    client = TestClient(app, base_url="http://127.0.0.1")
    prompt = "/runs/run-a/prompt?task=T/fix&strategy=reflexion&attempt=1&trial=1"
    token = {"x-view-token": app.policy.token}
    for headers in (CROSS_IMAGE, CROSS_FETCH, {**CROSS_IMAGE, **token}):
        for path in (prompt, "/runs/run-a/tasks/T/fix", "/api/runs", "/runs/run-a"):
            assert client.get(path, headers=headers).status_code == 403, (headers, path)
    # a link followed from elsewhere (the static report) opens a page, never the prompt fragment
    assert client.get("/runs/run-a", headers=CROSS_LINK).status_code == 200
    assert client.get(prompt, headers=CROSS_LINK).status_code == 403
    # the prompt fragment wants the page's token, even from the same origin
    assert client.get(prompt, headers=SAME).status_code == 403
    assert client.get(prompt, headers={**SAME, "x-view-token": "guess"}).status_code == 403
    assert client.get(prompt, headers={**SAME, **token}).status_code < 500
    page = client.get("/runs/run-a/tasks/T/fix", headers=SAME).text
    assert f'name="view-token" content="{app.policy.token}"' in page
