"""What the view answers: requests for its own local host, and nothing another site starts.

The view shows model output, file paths and task data, so it serves 127.0.0.1 only, and:

- A request whose `Host` is not 127.0.0.1, localhost, [::1] or the host the server was
  bound to (any port) gets 421: a page on another site that re-points its own name at
  127.0.0.1 (DNS rebinding) would otherwise read every run.
- A request another site started (`Sec-Fetch-Site: cross-site` or `same-site`) is
  answered only when it is a top-level navigation to a page (a link in the static report
  or a bookmark); an `<img>`, `<script>`, frame or `fetch()` from elsewhere gets 403.
- An endpoint that renders something costly (a trial's prompts, rebuilt from its task
  set) also wants the per-process token the view's own pages carry, sent as the
  `X-View-Token` header: a browser without Sec-Fetch headers still cannot be made to ask
  for it from elsewhere (a custom header cannot cross sites without CORS, which the view
  never grants).
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable

TOKEN_HEADER = "x-view-token"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def new_token() -> str:
    return secrets.token_urlsafe(24)


def host_name(value: str) -> str:
    """The host of a Host header, without its port: `[::1]:8765` -> `::1`, `a:1` -> `a`."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


@dataclass(frozen=True)
class Policy:
    """The hosts answered (any port) and the paths that want the token."""

    hosts: frozenset[str] = frozenset(LOCAL_HOSTS)
    token: str = field(default_factory=new_token)
    token_paths: tuple[str, ...] = ()  # path suffixes, e.g. "/prompt"

    @classmethod
    def for_host(cls, bound: str | None, token_paths: Iterable[str] = (), token: str | None = None) -> "Policy":
        hosts = set(LOCAL_HOSTS) | ({host_name(bound)} if bound else set())
        return cls(frozenset(hosts), token or new_token(), tuple(token_paths))

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """(status, why) for a request the view does not answer, else None."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = host_name(headers.get("host", ""))
        if host not in self.hosts:
            return 421, (f"this view answers only requests for {', '.join(sorted(self.hosts))} "
                         f"(this one was for {host[:80]!r}); open it as http://127.0.0.1:<port>/")
        site = headers.get("sec-fetch-site", "")
        if site in ("cross-site", "same-site"):
            top_level = headers.get("sec-fetch-mode") == "navigate" and headers.get("sec-fetch-dest", "document") == "document"
            if not top_level:
                return 403, "the view answers another site's page only when a link to it is followed"
        path = str(scope.get("path", ""))
        if any(path.endswith(suffix) for suffix in self.token_paths):
            if not secrets.compare_digest(headers.get(TOKEN_HEADER, ""), self.token):
                return 403, "this part is loaded by the view's own pages (open the task page and expand it)"
        return None


class Guard:
    """ASGI middleware applying a Policy to every HTTP request."""

    def __init__(self, app: App, policy: Policy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") == "http":
            refused = self.policy.refusal(scope)
            if refused is not None:
                status, why = refused
                body = (why + "\n").encode()
                await send({"type": "http.response.start", "status": status,
                            "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
