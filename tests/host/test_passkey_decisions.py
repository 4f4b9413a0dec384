"""Passkey-signed decisions through the real doors: a `require_passkey` question is decided only by an answer that
carries a verified WebAuthn assertion over exactly its digest, by a passkey of the person answering; every door that
cannot do WebAuthn is refused with a pointer to the inbox; and the decided row, exported, verifies offline with the
standalone script (`scripts/verify_decision.py`, run as its own process), and fails once anything in it changes.

The router on a LangGraph graph, the answer API's routes (`create_app`), the Slack door over HTTP with the fake
Slack, over one in-memory ledger and entry queue; the passkey is a software authenticator (`SoftPasskey`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import tests.agents.passkey_graphs as passkey_graphs
from langgraph.checkpoint.memory import InMemorySaver
from tests.support.api_events import Response, call
from tests.support.fake_slack import FakeSlack
from tests.support.slack_endpoint import SlackEndpoint
from tests.support.soft_passkey import SoftPasskey

from agent_wait.channels.slack import InMemorySlackMessages, SlackAnnounce, SlackInteractions, SlackRouting
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import (
    AnswerService,
    InMemoryDeadLetter,
    InMemoryEntryQueue,
    OutcomeKind,
    RecordingMetrics,
    RefusalReason,
    Router,
)
from agent_wait.engine.audit import audit_row
from agent_wait.engine.metrics import METRIC_NAMES
from agent_wait.engine.proof import canonical_bytes
from agent_wait.engine.senders import SenderPolicy
from agent_wait.host.api import ApiContext, create_app
from agent_wait.host.links import LinkKeys, mint_token
from agent_wait.host.passkeys import WebAuthnPasskeys
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger
from agent_wait.ledger.passkeys import InMemoryPasskeyBook

T0 = datetime.now(UTC).replace(microsecond=0)
"""Now: the Slack door checks a request's timestamp against its clock, as Slack's signature scheme requires."""
ORIGIN = "https://approvals.example.com"
ISSUER = "https://issuer.example.com"
API_ROLE = "AROAAPIFUNCTION"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
KEYS = LinkKeys.parse(json.dumps({"active": "k1", "k1": "k1-secret-" + "a" * 40}))
ALICE, BOB = "alice@example.com", "bob@example.com"
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "verify_decision.py"


def claims(address: str) -> dict[str, Any]:
    subject = address.split("@", maxsplit=1)[0]
    return {"iss": ISSUER, "sub": subject, "email": address, "email_verified": "true"}


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(team_id="T0TEAM") as fake:
        yield fake


@pytest.fixture(scope="module")
def endpoint() -> Iterator[SlackEndpoint]:
    with SlackEndpoint(None) as served:
        yield served


@dataclass
class World:
    """The router, the answer API (with passkeys) and the Slack door over one ledger and entry queue."""

    slack: FakeSlack
    endpoint: SlackEndpoint
    ledger: InMemoryLedger = field(default_factory=InMemoryLedger)
    queue: InMemoryEntryQueue = field(default_factory=InMemoryEntryQueue)
    metrics: RecordingMetrics = field(default_factory=RecordingMetrics)
    book: InMemoryPasskeyBook = field(default_factory=InMemoryPasskeyBook)
    now: datetime = T0

    def __post_init__(self) -> None:
        from slack_sdk import WebClient

        client = WebClient(token=self.slack.token, base_url=f"{self.slack.url}/api/")
        announce = SlackAnnounce(client, SlackRouting(channels={"*": "C0ALL"}), InMemorySlackMessages())
        self.router = Router(
            LangGraphAdapter(passkey_graphs.build_passkey_graph(InMemorySaver())),
            self.ledger,
            dead_letter=InMemoryDeadLetter(),
            announce=announce,
            clock=lambda: self.now,
            lease_wait=5.0,
            senders=SenderPolicy(trusted=frozenset({API_ROLE})),
        )
        self.passkeys = WebAuthnPasskeys(self.book, origin=ORIGIN, clock=lambda: self.now)
        self.service = AnswerService(
            self.ledger, self.queue, clock=lambda: self.now, metrics=self.metrics, passkeys=self.passkeys
        )
        context = ApiContext(
            ledger=self.ledger, service=self.service, link_keys=KEYS, clock=lambda: self.now, passkeys=self.passkeys
        )
        self.app = create_app(lambda: context)
        self.endpoint.interactions = SlackInteractions(
            signing_secret=SIGNING_SECRET,
            service=self.service,
            find=self.ledger.find,
            client=client,
            routing=SlackRouting(),
            clock=lambda: self.now,
        )

    def ask(self, amount: int = 900) -> tuple[str, str]:
        thread = f"t-{uuid.uuid4().hex[:10]}"
        body = {"thread_id": thread, "input": {"order_id": thread, "amount": amount}, "start_id": thread}
        (question_id,) = self.router.handle(json.dumps(body)).asked
        return thread, question_id

    def register(self, person: str) -> SoftPasskey:
        """`person` registers a new passkey through the API's routes."""
        passkey = SoftPasskey(ORIGIN)
        options = self.call("POST", "/passkeys/registration/options", {}, person)
        assert options.status == 200, options.body
        registered = self.call("POST", "/passkeys/registration", {"credential": passkey.create(options.json())}, person)
        assert registered.status == 201, registered.body
        return passkey

    def options(self, question_id: str, answer: Any, person: str = ALICE) -> dict[str, Any]:
        reply = self.call("POST", f"/questions/{question_id}/passkey", {"answer": answer}, person)
        assert reply.status == 200, reply.body
        return reply.json()

    def answer(self, question_id: str, answer: Any, person: str = ALICE, passkey: Any = None) -> Response:
        body = {"answer": answer} if passkey is None else {"answer": answer, "passkey": passkey}
        return self.call("POST", f"/questions/{question_id}/answer", body, person)

    def signed(self, question_id: str, answer: Any, passkey: SoftPasskey, person: str = ALICE) -> dict[str, Any]:
        """The `passkey` field the inbox sends: the options' time and `passkey`'s assertion over their challenge."""
        options = self.options(question_id, answer, person)
        return {"at": options["at"], "credential": passkey.get(options["publicKey"])}

    def call(self, method: str, path: str, body: Any, person: str) -> Response:
        return call(self.app, method, path, body, claims=claims(person))

    def deliver(self) -> None:
        while self.queue.messages:
            message, _, dedup = self.queue.messages.pop(0)
            self.router.handle(json.dumps(message), deduplication_id=dedup, sender=API_ROLE)

    def row(self, question_id: str) -> Any:
        record = self.ledger.find(question_id)
        assert record is not None
        return record

    def refused(self, reason: RefusalReason) -> float:
        return self.metrics.counts[(METRIC_NAMES["refused"], reason.value)]


@pytest.fixture
def world(slack: FakeSlack, endpoint: SlackEndpoint) -> World:
    return World(slack, endpoint)


def verify(row: dict[str, Any], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run the standalone script on `row` written as a one-line export, in its own process."""
    export = tmp_path / f"audit-{uuid.uuid4().hex[:6]}.jsonl"
    export.write_text(json.dumps(row) + "\n")
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(export), "--question", row["question_id"]],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def approved_row(world: World, tmp_path: Path) -> dict[str, Any]:
    """Alice registers a passkey and approves a refund, edited to 850, with it; the decided row as exported."""
    passkey = world.register(ALICE)
    _, question_id = world.ask(900)
    answer = {"action": "approve", "args": {"amount": 850}}
    reply = world.answer(question_id, answer, passkey=world.signed(question_id, answer, passkey))
    assert reply.status == 200, reply.body
    return json.loads(json.dumps(audit_row(world.row(question_id))))


# -- a passkey confirms the answer, and the record proves it ---------------------------------------------------------


def test_a_registered_passkey_confirms_an_edited_approval_and_the_export_verifies_offline(
    world: World, tmp_path: Path
) -> None:
    # GIVEN alice's registered passkey, WHEN she approves a refund edited to 850 with it
    row = approved_row(world, tmp_path)
    world.deliver()

    # THEN it is decided by her, the agent ran exactly the approved call, and the row keeps the proof
    assert (row["status"], row["answered_by"], row["approved_args"]["amount"]) == ("answered", ALICE, 850)
    assert (row["thread_id"], 850) in passkey_graphs.PAID
    proof = row["passkey"]
    assert proof["signed"] == {"v": 1, "question_id": row["question_id"], "args": row["approved_args"],
                               "action": "approve", "at": rfc3339(T0)}  # fmt: skip
    assert {"credential_id", "authenticator_data", "client_data_json", "signature", "public_key"} <= set(proof)
    assert (proof["person"], proof["rp_id"], proof["origin"]) == (ALICE, "approvals.example.com", ORIGIN)
    # ... and the standalone script verifies the exported record
    checked = verify(row, tmp_path)
    assert (checked.returncode, checked.stdout.split(":")[0]) == (0, "verified"), checked.stdout + checked.stderr


def rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _change_amount(row: dict[str, Any]) -> None:
    row["approved_args"]["amount"] = 851


def _change_asked_order(row: dict[str, Any]) -> None:
    row["question"]["args"]["order_id"] = "someone-else"


def _redigest(row: dict[str, Any]) -> None:
    """Write the digest of the (changed) signed inputs into the record too, as a careful forger would."""
    digest = hashlib.sha256(canonical_bytes(row["passkey"]["signed"])).digest()
    row["passkey"]["digest"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _change_signed_amount(row: dict[str, Any]) -> None:
    row["passkey"]["signed"]["args"]["amount"] = 851
    row["approved_args"]["amount"] = 851
    row["args"]["amount"] = 851
    _redigest(row)


def _change_action(row: dict[str, Any]) -> None:
    row["action"] = "reject"


def _change_signed_action(row: dict[str, Any]) -> None:
    row["action"] = row["passkey"]["signed"]["action"] = "reject"
    _redigest(row)


def _change_question_id(row: dict[str, Any]) -> None:
    row["question_id"] = "0" * 32


def _change_signature(row: dict[str, Any]) -> None:
    signature = row["passkey"]["signature"]
    row["passkey"]["signature"] = ("A" if signature[0] != "A" else "B") + signature[1:]


TAMPERED = {
    "an argument value": (_change_amount, "arguments"),
    "an asked argument": (_change_asked_order, "arguments"),
    "the signed arguments too": (_change_signed_amount, "challenge"),
    "the action": (_change_action, "action"),
    "the signed action too": (_change_signed_action, "challenge"),
    "the question id": (_change_question_id, "question id"),
    "the signature": (_change_signature, "signature"),
}


@pytest.mark.parametrize("change", list(TAMPERED))
def test_changing_the_exported_record_makes_verification_fail_naming_what(
    world: World, tmp_path: Path, change: str
) -> None:
    # GIVEN an exported, passkey-signed approval that verifies
    row = approved_row(world, tmp_path)
    tamper, named = TAMPERED[change]

    # WHEN one thing in it is changed
    tamper(row)

    # THEN the script exits non-zero and names the check that failed
    checked = verify(row, tmp_path)
    assert checked.returncode == 1, checked.stdout
    assert checked.stdout.startswith(f"not verified: {named}"), checked.stdout


# -- the doors that cannot do WebAuthn -------------------------------------------------------------------------------


def _by_api(world: World, thread: str, question_id: str) -> None:
    reply = world.answer(question_id, {"action": "approve"})
    assert (reply.status, reply.json()["reason"]) == (403, "passkey_required"), reply.body
    assert f"/inbox#/questions/{question_id}" in reply.json()["detail"]


def _by_bulk(world: World, thread: str, question_id: str) -> None:
    answers = [{"question_id": question_id, "answer": {"action": "approve"}}]
    world.call("POST", "/questions/answers", {"answers": answers}, ALICE)


def _by_agui(world: World, thread: str, question_id: str) -> None:
    entry = {"interruptId": question_id, "status": "resolved", "payload": {"action": "approve"}}
    world.call("POST", "/agui/resume", {"resume": [entry]}, ALICE)


def _by_link(world: World, thread: str, question_id: str) -> None:
    """An email's (or a Teams card's) signed link, made for alice."""
    token = mint_token(
        KEYS,
        question_id=question_id,
        thread_id=thread,
        action="approve",
        expires_at=world.now + timedelta(hours=1),
        now=world.now,
        approver=f"email:{ALICE}",
    )
    reply = call(world.app, "POST", f"/questions/{question_id}/link/answer", {"token": token})
    assert reply.json()["reason"] == "passkey_required", reply.body


def _slack_message(world: World, question_id: str) -> Any:
    [message] = [
        m
        for m in world.slack.messages()
        if (m.metadata or {}).get("event_payload", {}).get("question_id") == question_id
    ]
    return message


def _by_slack_button(world: World, thread: str, question_id: str) -> None:
    user = f"U{uuid.uuid4().hex[:8].upper()}"
    world.slack.add_user(user, email=ALICE, name="alice")
    reply = world.slack.click(
        world.endpoint.url,
        _slack_message(world, question_id),
        "agent_wait:answer:approve",
        user_id=user,
        signing_secret=SIGNING_SECRET,
        timestamp=int(world.now.timestamp()),
    )
    assert reply.status == 200, reply.body


def _by_queue(world: World, thread: str, question_id: str) -> None:
    message = {"thread_id": thread, "question_id": question_id, "answer": {"action": "approve"}}
    body = json.dumps({**message, "answered_by": ALICE, "answer_id": f"queue-{uuid.uuid4().hex}"})
    outcome = world.router.handle(body, sender=f"{API_ROLE}:answer-api")
    assert (outcome.kind, outcome.reason) == (OutcomeKind.REFUSED, RefusalReason.PASSKEY_REQUIRED), outcome
    world.metrics.count(METRIC_NAMES["refused"], reason=str(outcome.reason))  # the router counts in its own


DOORS = {
    "api without an assertion": _by_api,
    "bulk answers": _by_bulk,
    "ag-ui": _by_agui,
    "email or teams link": _by_link,
    "slack button": _by_slack_button,
    "queue": _by_queue,
}


@pytest.mark.parametrize("door", list(DOORS))
def test_a_door_without_webauthn_is_refused_passkey_required_and_the_question_stays_open(
    world: World, door: str
) -> None:
    # GIVEN alice has a passkey, and a question that needs one
    world.register(ALICE)
    thread, question_id = world.ask()

    # WHEN she answers it through a door that cannot do WebAuthn
    DOORS[door](world, thread, question_id)
    world.deliver()

    # THEN it is refused passkey_required, and the question is still open for her passkey
    assert world.refused(RefusalReason.PASSKEY_REQUIRED) == 1
    assert world.row(question_id).status is QuestionStatus.OPEN
    assert passkey_graphs.PAID.count((thread, 900)) == 0


# -- assertions that do not confirm this answer -----------------------------------------------------------------------


def test_an_assertion_made_for_another_question_is_refused(world: World) -> None:
    passkey = world.register(ALICE)
    _, first = world.ask()
    _, second = world.ask()
    approve = {"action": "approve"}
    replayed = world.signed(first, approve, passkey)

    reply = world.answer(second, approve, passkey=replayed)

    assert (reply.status, reply.json()["reason"]) == (403, "passkey_refused"), reply.body
    assert "did not confirm this answer" in reply.json()["detail"]
    assert world.row(second).status is QuestionStatus.OPEN


def test_another_persons_passkey_is_refused(world: World) -> None:
    world.register(ALICE)
    bobs = world.register(BOB)
    _, question_id = world.ask()
    approve = {"action": "approve"}
    # bob's passkey signs the options made for alice's answer
    options = world.options(question_id, approve, ALICE)
    signed = {"at": options["at"], "credential": bobs.get(options["publicKey"])}

    reply = world.answer(question_id, approve, ALICE, passkey=signed)

    assert (reply.status, reply.json()["reason"]) == (403, "passkey_refused"), reply.body
    assert f"is not one of {ALICE}'s passkeys" in reply.json()["detail"]


def test_arguments_edited_after_signing_are_refused(world: World) -> None:
    passkey = world.register(ALICE)
    _, question_id = world.ask()
    signed = world.signed(question_id, {"action": "approve", "args": {"amount": 100}}, passkey)

    reply = world.answer(question_id, {"action": "approve", "args": {"amount": 99_999}}, passkey=signed)

    assert (reply.status, reply.json()["reason"]) == (403, "passkey_refused"), reply.body


def test_an_assertion_prepared_too_long_ago_is_refused(world: World) -> None:
    passkey = world.register(ALICE)
    _, question_id = world.ask()
    approve = {"action": "approve"}
    signed = world.signed(question_id, approve, passkey)
    world.now = T0 + timedelta(minutes=6)

    reply = world.answer(question_id, approve, passkey=signed)

    assert (reply.status, reply.json()["reason"]) == (403, "passkey_refused"), reply.body
    assert "outside the 5 minutes before it arrived" in reply.json()["detail"]


def test_an_assertion_from_another_origin_is_refused(world: World) -> None:
    passkey = world.register(ALICE)
    _, question_id = world.ask()
    approve = {"action": "approve"}
    options = world.options(question_id, approve)
    signed = {"at": options["at"], "credential": passkey.get(options["publicKey"], origin="https://evil.example.com")}

    reply = world.answer(question_id, approve, passkey=signed)

    assert (reply.status, reply.json()["reason"]) == (403, "passkey_refused"), reply.body


def test_answer_options_need_a_registered_passkey(world: World) -> None:
    _, question_id = world.ask()

    reply = world.call("POST", f"/questions/{question_id}/passkey", {"answer": {"action": "approve"}}, ALICE)

    assert (reply.status, reply.json()["reason"]) == (409, "no_passkey"), reply.body
    assert "register one in the inbox" in reply.json()["detail"]


def test_a_registration_without_its_options_is_refused(world: World) -> None:
    passkey = SoftPasskey(ORIGIN)
    made_up = {"challenge": "AAAA", "rp": {"id": "approvals.example.com"}}

    reply = world.call("POST", "/passkeys/registration", {"credential": passkey.create(made_up)}, ALICE)

    assert (reply.status, reply.json()["reason"]) == (409, "no_challenge"), reply.body
    assert world.call("GET", "/passkeys", None, ALICE).json() == {"passkeys": []}


def test_a_registration_signed_for_another_challenge_is_refused(world: World) -> None:
    passkey = SoftPasskey(ORIGIN)
    assert world.call("POST", "/passkeys/registration/options", {}, ALICE).status == 200

    reply = world.call("POST", "/passkeys/registration", {"credential": passkey.create({"challenge": "AAAA"})}, ALICE)

    assert (reply.status, reply.json()["reason"]) == (422, "registration_refused"), reply.body


def test_a_person_lists_only_their_own_passkeys(world: World) -> None:
    mine = world.register(ALICE)
    world.register(BOB)

    listed = world.call("GET", "/passkeys", None, ALICE).json()["passkeys"]

    assert [p["credential_id"] for p in listed] == [mine.id]


def test_with_passkeys_off_the_routes_say_so_and_answers_are_refused(world: World) -> None:
    # GIVEN a deployment without AGENT_WAIT_PASSKEY_ORIGIN: no passkeys in the context, no verifier in the desk
    service = AnswerService(world.ledger, world.queue, clock=lambda: world.now, metrics=world.metrics)
    context = ApiContext(ledger=world.ledger, service=service, link_keys=KEYS, clock=lambda: world.now)
    app = create_app(lambda: context)
    _, question_id = world.ask()

    options = call(app, "POST", "/passkeys/registration/options", {}, claims=claims(ALICE))
    answered = call(app, "POST", f"/questions/{question_id}/answer", {"answer": {"action": "approve"}},
                    claims=claims(ALICE))  # fmt: skip

    assert (options.status, options.json()["reason"]) == (404, "passkeys_off")
    assert (answered.status, answered.json()["reason"]) == (403, "passkey_required")


def test_a_malformed_passkey_field_is_a_400(world: World) -> None:
    _, question_id = world.ask()

    reply = world.answer(question_id, {"action": "approve"}, passkey={"credential": "nope"})

    assert (reply.status, reply.json()["reason"]) == (400, "bad_passkey"), reply.body
