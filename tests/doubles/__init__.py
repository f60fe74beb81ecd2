"""Test doubles the tests and the benches share; not part of the harness (the wheel ships none).

- `stub_server`: a scriptable HTTP server speaking the Anthropic and OpenAI APIs.
- `ray_cluster`: a multi-node Ray cluster on this one machine.
"""
