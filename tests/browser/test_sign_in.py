"""The inbox's deployed sign-in in Chromium: the OIDC authorization code flow with PKCE, against a small issuer on
127.0.0.1 (authorize and token endpoints, a different origin from the API, as Cognito's hosted UI is).

The API is the Lambda app itself (`create_app`, with `SignIn` settings as `AGENT_WAIT_SIGN_IN_*` give them)
behind the local server's JWT authorizer with its dev sign-in off, so the page reads the app's own
`config.json`. The issuer checks what a real one checks: the client, the callback URL, S256, and that the
verifier hashes to the challenge; the ID token echoes the nonce and is signed by the key the authorizer trusts.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, SignIn, create_app
from agent_wait.ledger import InMemoryLedger
from agent_wait.local.api_server import LocalApi
from agent_wait.policy import WaitPolicy

CLIENT_ID = "inbox-client"


@dataclass
class Issuer:
    """What the fake issuer saw and handed out."""

    api: LocalApi | None = None
    user: str = "carol@example.com"
    requests: list[dict[str, str]] = field(default_factory=list)
    exchanges: list[dict[str, str]] = field(default_factory=list)
    codes: dict[str, dict[str, str]] = field(default_factory=dict)


def _issuer_handler(issuer: Issuer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            params = dict(urllib.parse.parse_qsl(query))
            issuer.requests.append(params)
            if path != "/authorize" or params.get("client_id") != CLIENT_ID:
                self.send_error(400)
                return
            code = secrets.token_urlsafe(16)
            issuer.codes[code] = params
            back = f"{params['redirect_uri']}?{urllib.parse.urlencode({'code': code, 'state': params['state']})}"
            self.send_response(302)
            self.send_header("Location", back)
            self.end_headers()

        def do_POST(self) -> None:
            form = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers["Content-Length"])).decode()))
            issuer.exchanges.append(form)
            asked = issuer.codes.pop(form.get("code", ""), None)
            digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
            challenge = base64.urlsafe_b64encode(digest).decode().rstrip("=")
            ok = (
                asked is not None
                and form.get("grant_type") == "authorization_code"
                and form.get("client_id") == CLIENT_ID
                and form.get("redirect_uri") == asked["redirect_uri"]
                and asked.get("code_challenge_method") == "S256"
                and asked.get("code_challenge") == challenge
            )
            if ok:
                assert issuer.api is not None
                assert asked is not None
                token = issuer.api.issuer.token(issuer.user, ["finance"], nonce=asked["nonce"])
                status, body = 200, {"id_token": token, "token_type": "Bearer", "expires_in": 3600}
            else:
                status, body = 400, {"error": "invalid_grant"}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Access-Control-Allow-Origin", self.headers.get("Origin") or "*")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture(scope="module")
def signed_in_api() -> Iterator[tuple[LocalApi, Issuer]]:
    issuer = Issuer()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _issuer_handler(issuer))
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    ledger = InMemoryLedger()
    asked = {"function": "issue_refund", "args": {"order_id": "order-oidc", "amount": 900}}
    question = Question("order-oidc", "q-oidc", asked, policy=WaitPolicy(timeout="P3D"))
    ledger.open(WaitEnvelope.create(question), now=datetime.now(UTC))
    context = ApiContext(
        ledger=ledger,
        service=AnswerService(ledger, InMemoryEntryQueue()),
        sign_in=SignIn(authorize_url=f"{origin}/authorize", token_url=f"{origin}/token", client_id=CLIENT_ID),
    )
    app = create_app(lambda: context)
    api = LocalApi(lambda event: app.resolve(event, {}), dev_sign_in=False)
    issuer.api = api
    api.start()
    try:
        yield api, issuer
    finally:
        api.stop()
        server.shutdown()
        server.server_close()


def test_the_page_signs_in_with_the_authorization_code_flow_and_pkce(
    signed_in_api: tuple[LocalApi, Issuer], browser: Any
) -> None:
    from playwright.sync_api import expect

    api, issuer = signed_in_api
    page = browser.new_context().new_page()
    # GIVEN the deployed page, whose config names the issuer
    page.goto(f"{api.url}/inbox")
    # WHEN the person signs in (the issuer signs them in at once and sends them back with a code)
    page.get_by_role("button", name="Sign in").click()
    # THEN the page exchanged the code for a token, left no code in the address bar, and lists questions
    expect(page.locator("#who")).to_have_text("carol@example.com (finance)")
    expect(page.get_by_role("row").filter(has_text="order-oidc")).to_have_count(1)
    assert page.url.split("#")[0] == f"{api.url}/inbox"
    [asked] = issuer.requests
    assert (asked["response_type"], asked["code_challenge_method"], asked["scope"]) == ("code", "S256", "openid email")
    assert asked["redirect_uri"] == f"{api.url}/inbox"
    [exchange] = issuer.exchanges
    assert len(exchange["code_verifier"]) >= 43
    assert "code_verifier" not in asked
    assert exchange["code_verifier"] not in json.dumps(asked)
