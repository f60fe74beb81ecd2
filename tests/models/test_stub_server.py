"""The stub server itself: concurrency the benchmark relies on, recording, routes."""
from __future__ import annotations

import threading

import openai
import pytest

from harness.models import Message, ModelSettings, open_model
from tests.doubles.stub_server import Reply, StubServer


def test_serves_40_concurrent_slow_requests_in_parallel():
    """No request is answered before all 40 are in the server at once: a server that
    handled them one at a time (or a few at a time) could never answer any."""
    n = 40
    all_in = threading.Barrier(n)

    def answer(request) -> str:
        all_in.wait(timeout=120)  # raises BrokenBarrierError (a 500) if they never meet
        return "together"

    with StubServer(default=Reply(answer)) as stub:
        model = open_model(f"openai:m@{stub.openai_url}", ModelSettings(timeout_s=180, max_retries=0))
        texts: list[str] = []
        lock = threading.Lock()

        def call(i: int) -> None:
            text = model.complete([Message("user", f"n {i}")]).text
            with lock:
                texts.append(text)

        threads = [threading.Thread(target=call, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert texts == ["together"] * n
    assert stub.max_active == n


def test_records_requests_and_answers_unknown_routes_404(stub):
    client = openai.OpenAI(base_url=stub.url + "/nowhere", api_key="k", max_retries=0)
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert stub.requests == []  # only API routes are recorded


def test_reply_can_be_a_function_of_the_request(stub):
    stub.default = Reply(lambda req: req.body["model"].upper())
    model = open_model(f"openai:shout@{stub.openai_url}", ModelSettings(max_retries=0))
    assert model.complete([Message("user", "x")]).text == "SHOUT"
