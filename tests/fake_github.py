"""A small GitHub REST API on 127.0.0.1 (http.server in a thread) for `kbase ci` tests.

It serves under `/api/v3` as GitHub Enterprise Server does, so a client that drops the
base path fails. Tokens decide who the caller is and whether it may write:
- a token with a login answers `GET /user` (a personal token);
- a token without one gets 403 there, and writes as `github-actions[bot]` (GITHUB_TOKEN);
- a read-only token gets 403 on every write (a fork PR's token).
`fail_next` makes the next N requests to a method return 502.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PREFIX = "/api/v3"
BOT = "github-actions[bot]"


@dataclass
class Token:
    login: str | None
    write: bool = True


@dataclass
class FakeGitHub:
    repository: str = "octo/vault"
    tokens: dict[str, Token] = field(default_factory=dict)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    pulls: list[dict[str, Any]] = field(default_factory=list)
    hide_fork_pulls: bool = True
    """`commits/{sha}/pulls` lists no fork PRs (what makes `workflow_run` lookups hard)."""
    fail_next: dict[str, int] = field(default_factory=dict)
    requests: list[tuple[str, str, int]] = field(default_factory=list)
    """(method, path without prefix, status) of every request, in order."""
    _next_id: int = 1000
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{PREFIX}"

    def start(self) -> FakeGitHub:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add_comment(self, number: int, author: str, body: str) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            c = {"id": self._next_id, "body": body, "user": {"login": author},
                 "html_url": f"https://github.example/{self.repository}/pull/{number}"
                             f"#issuecomment-{self._next_id}"}
            self.comments.setdefault(number, []).append(c)
            return c

    def writes(self) -> list[tuple[str, str, int]]:
        return [r for r in self.requests if r[0] in ("POST", "PATCH")]

    # -- request handling --------------------------------------------------------------
    def handle(self, method: str, raw_path: str, token: str | None,
               body: Any) -> tuple[int, Any, dict[str, str]]:
        parts = urlsplit(raw_path)
        if not parts.path.startswith(PREFIX + "/"):
            return 404, {"message": "Not Found"}, {}
        path = parts.path[len(PREFIX):]
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if self.fail_next.get(method, 0) > 0:
            self.fail_next[method] -= 1
            return 502, {"message": "Bad Gateway"}, {}
        who = self.tokens.get(token or "")
        if who is None:
            return 401, {"message": "Bad credentials"}, {}
        repo = f"/repos/{self.repository}"
        if method == "GET" and path == "/user":
            if who.login is None:
                return 403, {"message": "Resource not accessible by integration"}, {}
            return 200, {"login": who.login}, {}
        if method in ("POST", "PATCH") and not who.write:
            return 403, {"message": "Resource not accessible by integration"}, {}
        author = who.login or BOT
        if m := re.fullmatch(rf"{repo}/issues/(\d+)/comments", path):
            number = int(m.group(1))
            if method == "GET":
                return self._page(raw_path, self.comments.get(number, []), query)
            if method == "POST":
                return 201, self.add_comment(number, author, body["body"]), {}
        if (m := re.fullmatch(rf"{repo}/issues/comments/(\d+)", path)) and method == "PATCH":
            for c in (c for cs in self.comments.values() for c in cs):
                if c["id"] == int(m.group(1)):
                    if c["user"]["login"] != author:
                        return 403, {"message": "Must have admin rights to Repository."}, {}
                    c["body"] = body["body"]
                    return 200, c, {}
            return 404, {"message": "Not Found"}, {}
        if (m := re.fullmatch(rf"{repo}/commits/([0-9a-f]+)/pulls", path)) and method == "GET":
            hits = [p for p in self.pulls if p["head"]["sha"] == m.group(1)
                    and not (self.hide_fork_pulls and p.get("fork"))]
            return self._page(raw_path, hits, query)
        if path == f"{repo}/pulls" and method == "GET":
            state = query.get("state", "open")
            return self._page(raw_path, [p for p in self.pulls if p["state"] == state], query)
        return 404, {"message": "Not Found"}, {}

    def _page(self, raw_path: str, items: list[Any], query: dict[str, str]
              ) -> tuple[int, Any, dict[str, str]]:
        per_page = min(int(query.get("per_page", "30")), 100)
        page = int(query.get("page", "1"))
        chunk = items[(page - 1) * per_page: page * per_page]
        headers = {}
        if page * per_page < len(items):
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            nxt = re.sub(r"([?&])page=\d+", "", raw_path).rstrip("?&")
            sep = "&" if "?" in nxt else "?"
            headers["Link"] = f'<{base}{nxt}{sep}page={page + 1}>; rel="next"'
        return 200, chunk, headers


def _handler(fake: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _serve(self, method: str) -> None:
            auth = self.headers.get("Authorization", "")
            token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            status, data, headers = fake.handle(method, self.path, token, body)
            fake.requests.append((method, urlsplit(self.path).path[len(PREFIX):], status))
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PATCH(self) -> None:
            self._serve("PATCH")

    return Handler
