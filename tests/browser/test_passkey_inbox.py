"""Passkey-signed decisions in Chromium with its virtual authenticator (DevTools `WebAuthn.addVirtualAuthenticator`,
an internal platform authenticator that verifies the person): Alice registers a passkey from the inbox's header,
approves a `require_passkey` question with it, and the record `GET /audit` exports verifies with the standalone
script; changing an argument value, the action or the question id in that export makes it fail. Bob, who has no
passkey, is told to register one; and the answer API without an assertion is refused `passkey_required` (Slack and
the email link: tests/host/test_passkey_decisions.py).

The answer API (in-memory ledger) behind the local API server, opened at `http://localhost:<port>`: WebAuthn needs a
secure context and a relying party id that is a host name, and localhost is both. `AGENT_WAIT_SCREENSHOTS=<dir>`
keeps the screenshots (`passkey-*.png`; default `/tmp/shots-passkey`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from _inbox_page import EXPECT_MS

from agent_wait.common.times import utc_now
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, create_app
from agent_wait.host.passkeys import WebAuthnPasskeys
from agent_wait.ledger import InMemoryLedger
from agent_wait.ledger.passkeys import InMemoryPasskeyBook
from agent_wait.local.api_server import LocalApi
from agent_wait.policy import WaitPolicy

pytestmark = pytest.mark.timeout(300)

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "verify_decision.py"
SIGNED = WaitPolicy(timeout="P1D", default={"action": "reject"}, allow_edits=True, require_passkey=True)
ALICE, BOB = "alice@example.com", "bob@example.com"


@dataclass
class Stack:
    """The answer API with passkeys for `http://localhost:<port>`, over an in-memory ledger."""

    server: LocalApi
    ledger: InMemoryLedger
    queue: InMemoryEntryQueue

    @property
    def origin(self) -> str:
        return f"http://localhost:{self.server.port}"

    def ask(self, amount: int = 900) -> str:
        question_id = uuid.uuid4().hex
        call = {"function": "issue_refund", "args": {"order_id": f"o-{question_id[:6]}", "amount": amount}}
        asked = Question(f"t-{question_id[:8]}", question_id, call, policy=SIGNED, source={"function": "issue_refund"})
        self.ledger.open(WaitEnvelope.create(asked), now=utc_now())
        return question_id

    def api(self, method: str, path: str, body: Any = None, *, user: str, groups: tuple[str, ...] = ()) -> Any:
        """One request over HTTP with `user`'s token from the local issuer: (status, JSON body)."""
        request = urllib.request.Request(
            self.server.url + path,
            data=json.dumps(body).encode() if body is not None else None,
            method=method,
            headers={"Authorization": f"Bearer {self.server.issuer.token(user, groups)}",
                     "Content-Type": "application/json"},
        )  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=60) as reply:
                return reply.status, json.loads(reply.read() or b"{}")
        except urllib.error.HTTPError as refused:
            return refused.code, json.loads(refused.read() or b"{}")


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    ledger, queue = InMemoryLedger(), InMemoryEntryQueue()
    app_holder: dict[str, Any] = {}
    server = LocalApi(lambda event: app_holder["app"].resolve(event, {}))
    passkeys = WebAuthnPasskeys(InMemoryPasskeyBook(), origin=f"http://localhost:{server.port}")
    service = AnswerService(ledger, queue, passkeys=passkeys)
    context = ApiContext(ledger=ledger, service=service, passkeys=passkeys, audit_group="auditors")
    app_holder["app"] = create_app(lambda: context)
    with server:
        yield Stack(server, ledger, queue)


@pytest.fixture(scope="module")
def shots() -> Path:
    directory = Path(os.environ.get("AGENT_WAIT_SCREENSHOTS") or "/tmp/shots-passkey")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def signed_in(browser: Any, stack: Stack, user: str, *, width: int = 1200, height: int = 800) -> Any:
    """A fresh page at the inbox on localhost, with a virtual authenticator, signed in as `user`."""
    context = browser.new_context(viewport={"width": width, "height": height}, locale="en-GB", timezone_id="UTC")
    context.set_default_timeout(EXPECT_MS)
    page = context.new_page()
    page.errors = []  # pyright: ignore[reportAttributeAccessIssue]
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable", {"enableUI": False})
    options = {
        "protocol": "ctap2",
        "transport": "internal",
        "hasResidentKey": True,
        "hasUserVerification": True,
        "isUserVerified": True,
        "automaticPresenceSimulation": True,
    }
    page.authenticator = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": options})  # pyright: ignore[reportAttributeAccessIssue]
    page.cdp = cdp  # pyright: ignore[reportAttributeAccessIssue]
    # Signed in with the local issuer's token in this tab's session storage, where the page keeps it: the dev sign-in
    # form posts to the issuer's own 127.0.0.1 address, another origin than localhost, which the page's CSP refuses.
    token = stack.server.issuer.token(user, ["finance"])
    context.add_init_script(f"sessionStorage.setItem('agent-wait.inbox.token', {json.dumps(token)});")
    page.goto(f"{stack.origin}/inbox")
    expect(page.locator("#who")).to_contain_text(user)
    return page


def verify(export: str, question_id: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / f"audit-{uuid.uuid4().hex[:6]}.json"
    path.write_text(export)
    command = [sys.executable, str(SCRIPT), str(path), "--question", question_id]
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)


def test_alice_registers_a_passkey_approves_with_it_and_the_exported_record_verifies(
    browser: Any, stack: Stack, shots: Path, tmp_path: Path
) -> None:
    # GIVEN alice signed in, with a virtual authenticator, and a refund that needs a passkey
    question_id = stack.ask(900)
    page = signed_in(browser, stack, ALICE)

    # WHEN she registers a passkey from the header
    register = page.get_by_role("button", name="Register a passkey")
    expect(register).to_be_visible()
    register.click()
    expect(page.locator("#status")).to_contain_text("Passkey registered")
    page.screenshot(path=str(shots / "passkey-registered.png"))
    credentials = page.cdp.send("WebAuthn.getCredentials", {"authenticatorId": page.authenticator["authenticatorId"]})  # pyright: ignore[reportAttributeAccessIssue]
    assert len(credentials["credentials"]) == 1

    # ... and approves the question, which says her passkey confirms it, with the amount edited down to 850
    page.goto(f"{stack.origin}/inbox#/questions/{question_id}")
    expect(page.locator("#detail-id")).to_have_text(question_id)
    expect(page.locator("#passkey-note")).to_contain_text("Your passkey confirms your answer")
    page.locator("#args-rows tr", has_text="amount").locator("input").fill("850")
    page.screenshot(path=str(shots / "passkey-question.png"), full_page=True)
    page.locator("#actions").get_by_role("button", name="Approve").click()
    expect(page.locator("#status")).to_contain_text("Done: your answer “approve” is recorded")
    expect(page.locator("#passkey-proof")).to_contain_text("Confirmed with passkey")
    page.screenshot(path=str(shots / "passkey-approved.png"), full_page=True)
    assert page.errors == []  # pyright: ignore[reportAttributeAccessIssue]

    # THEN it is decided by alice with her passkey's proof on the row
    record = stack.ledger.find(question_id)
    assert record is not None
    assert (record.status, record.answered_by) == (QuestionStatus.ANSWERED, ALICE)
    assert record.passkey is not None
    assert record.passkey["origin"] == stack.origin

    # ... and the audit trail's export of it verifies offline with the standalone script
    since = (utc_now() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    status, body = stack.api("GET", f"/audit?since={urllib.parse.quote(since)}", user="audit@example.com",
                             groups=("auditors",))  # fmt: skip
    assert status == 200, body
    export = json.dumps(body)
    checked = verify(export, question_id, tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith(f"verified: question {question_id} decided 'approve' by {ALICE}")

    # ... and fails once an argument value, the action or the question id in the export is changed
    [row] = [r for r in body["questions"] if r["question_id"] == question_id]
    for change, named in (("amount", "arguments"), ("action", "action"), ("question_id", "question id")):
        tampered = json.loads(json.dumps(row))
        if change == "amount":
            tampered["approved_args"]["amount"] = 901
        elif change == "action":
            tampered["action"] = "reject"
        else:
            tampered["question_id"] = "0" * 32
        failed = verify(json.dumps(tampered), tampered["question_id"], tmp_path)
        assert failed.returncode == 1, failed.stdout
        assert failed.stdout.startswith(f"not verified: {named}"), failed.stdout


def test_bob_without_a_passkey_is_told_to_register_one_and_nothing_is_decided(
    browser: Any, stack: Stack, shots: Path
) -> None:
    question_id = stack.ask(700)
    page = signed_in(browser, stack, BOB, width=390, height=844)

    page.goto(f"{stack.origin}/inbox#/questions/{question_id}")
    expect(page.locator("#detail-id")).to_have_text(question_id)
    page.locator("#actions").get_by_role("button", name="Approve").click()

    expect(page.locator("#status")).to_contain_text("This question needs a passkey: register one")
    page.screenshot(path=str(shots / "passkey-none-phone.png"), full_page=True)
    record = stack.ledger.find(question_id)
    assert record is not None
    assert record.status is QuestionStatus.OPEN


def test_the_api_without_an_assertion_is_refused_passkey_required_pointing_to_the_inbox(stack: Stack) -> None:
    question_id = stack.ask(600)

    status, body = stack.api("POST", f"/questions/{question_id}/answer", {"answer": {"action": "approve"}}, user=ALICE)

    assert (status, body["reason"]) == (403, "passkey_required"), body
    assert f"/inbox#/questions/{question_id}" in body["detail"]
