"""A real HTTP receiver on 127.0.0.1 (threaded, random port) that records every request."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Captured:
    """One request as the receiver saw it."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: bytes


@dataclass
class Receiver:
    """A local webhook receiver. Set `status` to answer with another code, `hold` to answer late."""

    server: ThreadingHTTPServer
    requests: list[Captured] = field(default_factory=list)
    status: int = 200
    hold: bool = False
    release: threading.Event = field(default_factory=threading.Event)
    running: bool = True

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/hooks/agent-wait"

    def bodies(self) -> list[bytes]:
        return [request.body for request in self.requests]

    def stop(self) -> None:
        """Close the listening socket: later connections are refused."""
        if self.running:
            self.running = False
            self.release.set()
            self.server.shutdown()
            self.server.server_close()


def start_receiver() -> Receiver:
    receiver: Receiver

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            receiver.requests.append(Captured("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            if receiver.hold:
                receiver.release.wait(timeout=10)  # longer than any client timeout under test
            self.send_response(receiver.status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:  # a client that gave up: not an error
            pass

    receiver = Receiver(Server(("127.0.0.1", 0), Handler))
    # A short poll interval keeps shutdown() quick; the default (0.5 s) would add half a second per test.
    threading.Thread(
        target=receiver.server.serve_forever, kwargs={"poll_interval": 0.02}, name="webhook-receiver", daemon=True
    ).start()
    return receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A running receiver, stopped after the test."""
    running = start_receiver()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/hooks"
