"""WebhookAnnounce and redirects, against real HTTP servers on 127.0.0.1: nothing (no signature, no
`Authorization`, no body) is ever sent to another origin; a same-origin 307/308 is followed with the same POST."""

from __future__ import annotations

import threading
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agent_wait import Question, WaitEnvelope, WaitPolicy, WebhookAnnounce, publish
from agent_wait.channels.announce import verify_standard_webhook

SECRET = "whsec_ylEhkp/tHLafArlgCb7iYwUEVFBwzfRieHFneZAsb9Q="
API_KEY = "Bearer api-key-CANARY"
T = 1_800_000_000


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Redirector:
    """A server that answers each path from `routes`: (status, Location or None); 200 for any other path."""

    server: ThreadingHTTPServer
    routes: dict[str, tuple[int, str | None]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)

    @property
    def origin(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])


def start_redirector() -> Redirector:
    """A running `Redirector` on 127.0.0.1 at a random port; it records every request, whatever its method."""
    redirector: Redirector

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            redirector.seen.append(Seen(self.command, self.path, headers, body))
            status, location = redirector.routes.get(urllib.parse.urlsplit(self.path).path, (200, None))
            self.send_response(status)
            if location is not None:
                self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET = do_HEAD = do_PUT = _answer  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True

    redirector = Redirector(Server(("127.0.0.1", 0), Handler))
    threading.Thread(target=redirector.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return redirector


@pytest.fixture
def servers() -> Iterator[Callable[[], Redirector]]:
    """`servers()` starts one more recording server; all are stopped after the test."""
    started: list[Redirector] = []

    def start() -> Redirector:
        started.append(start_redirector())
        return started[-1]

    yield start
    for server in started:
        server.server.shutdown()
        server.server.server_close()


@pytest.fixture
def redirector(servers: Callable[[], Redirector]) -> Redirector:
    return servers()


def make_envelope() -> WaitEnvelope:
    return WaitEnvelope.create(
        Question(f"order-{uuid.uuid4().hex[:8]}", f"q-{uuid.uuid4().hex}", {"function": "refund"}, WaitPolicy())
    )


def announcer(url: str) -> WebhookAnnounce:
    return WebhookAnnounce(url, secret=SECRET, headers={"Authorization": API_KEY}, clock=lambda: T, timeout=2.0)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_port_is_a_failed_delivery_and_nothing_reaches_it(
    servers: Callable[[], Redirector], status: int, caplog: pytest.LogCaptureFixture
):
    # GIVEN a webhook URL whose server redirects to a second server on another port (another origin)
    first, second = servers(), servers()
    first.routes["/hook"] = (status, f"{second.origin}/collect?token=elsewhere")
    # WHEN an envelope is published
    report = publish(make_envelope(), announcer(f"{first.origin}/hook"))
    # THEN the delivery failed, saying what to do, naming both origins only
    (failure,) = report.failed
    assert failure.error == (
        f"WebhookDeliveryError: {first.origin} answered HTTP {status}, redirected to another host "
        f"({second.origin}); nothing was sent there: point the webhook at the final URL"
    )
    # AND the second server received nothing at all (no POST, no GET): no body, no signature, no Authorization
    assert second.seen == []
    assert [(seen.method, seen.path) for seen in first.seen] == [("POST", "/hook")]
    assert "api-key-CANARY" not in caplog.text
    assert "elsewhere" not in caplog.text


def test_a_redirect_to_another_host_name_on_the_same_port_is_refused(redirector: Redirector):
    # GIVEN a redirect from 127.0.0.1 to localhost: the same server, but another origin
    redirector.routes["/hook"] = (307, f"http://localhost:{redirector.port}/final")
    report = publish(make_envelope(), announcer(f"{redirector.origin}/hook"))
    (failure,) = report.failed
    assert f"redirected to another host (http://localhost:{redirector.port})" in (failure.error or "")
    assert [seen.path for seen in redirector.seen] == ["/hook"]


@pytest.mark.parametrize("status", [307, 308])
def test_a_same_origin_307_or_308_is_followed_with_the_same_post_body_and_headers(redirector: Redirector, status: int):
    # GIVEN a server that moved its hook to another path on the same origin (a trailing slash, say)
    redirector.routes["/hook"] = (status, "/hook/")
    envelope = make_envelope()
    # WHEN an envelope is published
    delivery = announcer(f"{redirector.origin}/hook").announce(envelope)
    # THEN it is delivered: the second request is the same POST, body and signed headers
    assert delivery.status == "delivered", delivery.error
    first, second = redirector.seen
    assert (first.method, first.path, second.method, second.path) == ("POST", "/hook", "POST", "/hook/")
    assert second.body == first.body == envelope.to_json().encode()
    for name in ("authorization", "webhook-signature", "x-agent-wait-signature", "content-type"):
        assert second.headers[name] == first.headers[name]
    assert verify_standard_webhook(SECRET, second.body, second.headers, now=T) == envelope.event_id


@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_same_origin_redirect_that_would_drop_the_body_is_a_failed_delivery(redirector: Redirector, status: int):
    # GIVEN a same-origin redirect that urllib would follow as a bodiless GET
    redirector.routes["/hook"] = (status, "/elsewhere")
    # WHEN an envelope is published
    report = publish(make_envelope(), announcer(f"{redirector.origin}/hook"))
    # THEN it failed, saying why, and no GET followed
    (failure,) = report.failed
    assert failure.error == (
        f"WebhookDeliveryError: {redirector.origin} answered HTTP {status}, a redirect that would resend the POST "
        "as a GET without its body; point the webhook at the final URL"
    )
    assert [(seen.method, seen.path) for seen in redirector.seen] == [("POST", "/hook")]


def test_a_same_origin_redirect_loop_is_a_failed_delivery(redirector: Redirector):
    redirector.routes["/hook"] = (307, "/hook")
    report = publish(make_envelope(), announcer(f"{redirector.origin}/hook"))
    (failure,) = report.failed
    assert failure.error == (
        f"WebhookDeliveryError: {redirector.origin} answered HTTP 307, a redirect that was not followed; "
        "point the webhook at the final URL"
    )
    assert len(redirector.seen) <= 5
