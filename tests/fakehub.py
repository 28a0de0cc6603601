"""A small Hugging Face hub on 127.0.0.1 (http.server in a thread) for model downloads.

It serves what huggingface_hub asks for when kbase downloads a model
(kbase_ci.state.downloads): the model's listing with file sizes
(`GET /api/models/{id}/revision/{rev}`), each file's metadata (`HEAD
/{id}/resolve/{rev}/{file}`: commit, etag, size) and its bytes (`GET` of the same).
Misbehaviour on demand, per file: `listed` (sizes the listing and the HEAD claim; None:
no size at all),
`endless` (a body that never ends, chunked), `stall_after` (bytes sent before going
silent until the hub stops), `slow_headers` (seconds before any answer at all), and
`gate` (an event a download of that file waits for before its body).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

COMMIT = "c0ffee" + "0" * 34


@dataclass
class FakeHub:
    models: dict[str, dict[str, bytes]] = field(default_factory=dict)
    listed: dict[str, int | None] = field(default_factory=dict)
    endless: set[str] = field(default_factory=set)
    stall_after: dict[str, int] = field(default_factory=dict)
    slow_headers: float = 0.0
    gate: dict[str, threading.Event] = field(default_factory=dict)
    commit: str = COMMIT
    asked: list[tuple[str, str]] = field(default_factory=list)
    """(method, path) of every request, in order."""
    stopping: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def serve(self, folder: Path, model_id: str) -> None:
        """Serve the files of a model folder (its top level) as `model_id`."""
        self.models[model_id] = {p.name: p.read_bytes() for p in folder.iterdir()
                                 if p.is_file()}

    def gets(self, name: str) -> int:
        """How many times the bytes of a file called `name` were asked for."""
        return sum(1 for method, path in self.asked
                   if method == "GET" and path.endswith(f"/{name}") and "/resolve/" in path)

    def start(self) -> FakeHub:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        for event in self.gate.values():
            event.set()
        self.server.shutdown()
        self.server.server_close()

    def size(self, name: str, data: bytes) -> int | None:
        return self.listed[name] if name in self.listed else len(data)


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _send(self, code: int, headers: dict[str, str], body: bytes = b"") -> None:
            self.send_response(code)
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            if body and self.command != "HEAD":
                self.wfile.write(body)

        def _route(self) -> tuple[str, dict[str, bytes], str] | None:
            """(kind, model files, rest) of the path: `api` or `resolve`."""
            path = self.path.split("?", 1)[0]
            parts = path.lstrip("/").split("/")
            if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] == "revision":
                files = hub.models.get("/".join(parts[2:4]))
                return ("api", files, "") if files is not None else None
            if len(parts) >= 5 and parts[2] == "resolve":
                files = hub.models.get("/".join(parts[:2]))
                return ("resolve", files, "/".join(parts[4:])) if files is not None else None
            return None

        def do_HEAD(self) -> None:
            self._answer()

        def do_GET(self) -> None:
            self._answer()

        def _answer(self) -> None:
            hub.asked.append((self.command, self.path))
            if hub.slow_headers:
                hub.stopping.wait(hub.slow_headers)
            route = self._route()
            if route is None:
                self._send(404, {"Content-Length": "0", "X-Error-Code": "RepoNotFound"})
                return
            kind, files, name = route
            if kind == "api":
                siblings = [{"rfilename": n, **({} if (size := hub.size(n, d)) is None
                                                 else {"size": size})}
                            for n, d in sorted(files.items())]
                body = json.dumps({"id": "model", "sha": hub.commit,
                                   "siblings": siblings}).encode()
                self._send(200, {"Content-Type": "application/json",
                                 "Content-Length": str(len(body))}, body)
                return
            data = files.get(name)
            if data is None:
                self._send(404, {"Content-Length": "0", "X-Error-Code": "EntryNotFound"})
                return
            meta = {"X-Repo-Commit": hub.commit,
                    "ETag": f'"{hashlib.sha256(data).hexdigest()}"'}
            if self.command == "HEAD":
                size = hub.size(name, data)
                self._send(200, {**meta, "Content-Length": str(size if size is not None
                                                               else len(data))})
                return
            gate = hub.gate.get(name)
            if gate is not None:
                gate.wait(30)
            if name in hub.endless:
                self._endless(meta)
            elif name in hub.stall_after:
                self._stalled(meta, data, hub.stall_after[name])
            else:
                self._send(200, {**meta, "Content-Length": str(len(data))}, data)

        def _endless(self, meta: dict[str, Any]) -> None:
            self._send(200, {**meta, "Transfer-Encoding": "chunked"})
            block = b"x" * 65536
            try:
                while not hub.stopping.is_set():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
            except OSError:
                return  # the client gave up: what it should do

        def _stalled(self, meta: dict[str, Any], data: bytes, keep: int) -> None:
            self._send(200, {**meta, "Content-Length": str(len(data))})
            try:
                self.wfile.write(data[:keep])
                self.wfile.flush()
                while not hub.stopping.is_set():
                    time.sleep(0.05)
            except OSError:
                return

    return Handler
