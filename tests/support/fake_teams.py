"""A local Teams Workflows webhook over real HTTP, as Microsoft documents its "When a Teams webhook request is
received" trigger: a POST of JSON to the trigger URL, whose query carries the flow's signature (`sig`), answered
`202 Accepted` with an empty body. It keeps every body it accepted, and can be told to answer the next requests with
a 429 (with `Retry-After`) or a 5xx, as a throttled or failing flow does.

    with FakeTeams() as teams:
        announcer = TeamsAnnounce(teams.url, mode="channel")
        ...
        [card] = teams.cards()
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SIGNATURE = "fake-teams-signature"
TRIGGER_PATH = "/workflows/0123abcd/triggers/manual/paths/invoke"


@dataclass
class Received:
    """One request the webhook answered, accepted or not."""

    status: int
    body: Any
    headers: dict[str, str]


@dataclass
class FakeTeams:
    """The webhook; `url` is its trigger URL with the signature."""

    received: list[Received] = field(default_factory=list)
    _failures: list[tuple[int, str | None]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: Any = None
    _thread: threading.Thread | None = None

    def start(self) -> FakeTeams:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                fake._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeTeams:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        query = urllib.parse.urlencode({"api-version": "2016-06-01", "sp": "/triggers/manual/run", "sig": SIGNATURE})
        return f"http://{host}:{port}{TRIGGER_PATH}?{query}"

    def fail_next(self, status: int, *, times: int = 1, retry_after: str | None = None) -> None:
        """Answer the next `times` requests with `status` (and `Retry-After`), accepting none of them."""
        with self._lock:
            self._failures.extend([(status, retry_after)] * times)

    def accepted(self) -> list[Any]:
        """The bodies the webhook accepted (202), in order."""
        with self._lock:
            return [r.body for r in self.received if r.status == 202]

    def cards(self) -> list[dict[str, Any]]:
        """The Adaptive Cards of the accepted bodies, in order."""
        return [a["content"] for body in self.accepted() for a in body.get("attachments", [])]

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length) if length else b""
        path, _, query = request.path.partition("?")
        signature = urllib.parse.parse_qs(query).get("sig", [""])[0]
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in request.headers.items()}
        with self._lock:
            failure = self._failures.pop(0) if self._failures else None
        if path != TRIGGER_PATH:
            status, payload, extra = 404, {"error": {"code": "WorkflowNotFound"}}, {}
        elif signature != SIGNATURE:
            status, payload, extra = 401, {"error": {"code": "DirectApiAuthorizationRequired"}}, {}
        elif failure is not None:
            status, payload = failure[0], {"error": {"code": "TooManyRequests" if failure[0] == 429 else "Failed"}}
            extra = {"Retry-After": failure[1]} if failure[1] is not None else {}
        elif not isinstance(body, dict) or not headers.get("content-type", "").startswith("application/json"):
            status, payload, extra = 400, {"error": {"code": "InvalidRequestContent"}}, {}
        else:
            status, payload, extra = 202, None, {}
        with self._lock:
            self.received.append(Received(status, body, headers))
        data = json.dumps(payload).encode() if payload is not None else b""
        request.send_response(status)
        for name, value in extra.items():
            request.send_header(name, value)
        if data:
            request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)
