"""The Slack door served over real HTTP on 127.0.0.1, as API Gateway serves `POST /slack/interactions`.

`FakeSlack.click` and `FakeSlack.submit_view` POST signed interaction payloads to a URL; this serves a
`SlackInteractions` there, so a test drives the door the way Slack does, without the whole answer API.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class SlackEndpoint:
    """Serve `interactions.handle(body, headers)` at `url` until stopped (a context manager)."""

    def __init__(self, interactions: Any) -> None:
        self.interactions = interactions
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                headers = {name.lower(): value for name, value in self.headers.items()}
                reply = endpoint.interactions.handle(body, headers)
                data = json.dumps(reply.body).encode() if reply.body is not None else b""
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/slack/interactions"

    def __enter__(self) -> SlackEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
