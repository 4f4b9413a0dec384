"""Where passkeys are kept (`PasskeyBook`): the in-memory reference and the question table (the embedded emulator) keep
the same rules; and a decision's passkey proof is kept on the question's row by both ledgers, read back equal."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from tests.support.aws_stack import create_question_table

from agent_wait.aws import DynamoDbLedger
from agent_wait.aws.passkeys import DynamoDbPasskeyBook
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.ledger import Decision, InMemoryLedger, Ledger
from agent_wait.ledger.passkeys import InMemoryPasskeyBook, PasskeyBook, PasskeyCredential, RegistrationChallenge
from agent_wait.policy import WaitPolicy

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
ALICE, BOB = "alice@example.com", "bob@example.com"


@pytest.fixture(scope="module")
def table(moto_server: str) -> tuple[str, Any]:
    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    name = f"passkeys-{uuid.uuid4().hex[:8]}"
    create_question_table(client, name)
    return name, client


@pytest.fixture(params=["memory", "dynamodb"])
def book(request: pytest.FixtureRequest, table: tuple[str, Any]) -> PasskeyBook:
    return InMemoryPasskeyBook() if request.param == "memory" else DynamoDbPasskeyBook(table[0], client=table[1])


def credential(person: str, credential_id: str | None = None, **fields: Any) -> PasskeyCredential:
    made = {"sign_count": 0, "registered_at": "2030-01-01T09:00:00Z", "label": "laptop", **fields}
    return PasskeyCredential(person, credential_id or uuid.uuid4().hex, "pQECAyYgASFYIA", **made)


def test_a_persons_passkeys_are_theirs_only_and_registered_once(book: PasskeyBook) -> None:
    alice, bob = f"{uuid.uuid4().hex[:6]}-{ALICE}", f"{uuid.uuid4().hex[:6]}-{BOB}"
    first = credential(alice, registered_at="2030-01-01T09:00:00Z")
    second = credential(alice, registered_at="2030-01-01T10:00:00Z")

    assert book.add_credential(second)
    assert book.add_credential(first)
    assert book.add_credential(credential(bob))
    assert not book.add_credential(credential(alice, first.credential_id, label="again")), "registered twice"

    assert book.credentials(alice) == [first, second]
    assert [c.person for c in book.credentials(bob)] == [bob]


def test_a_sign_count_moves_only_from_what_was_seen(book: PasskeyBook) -> None:
    alice = f"{uuid.uuid4().hex[:6]}-{ALICE}"
    kept = credential(alice)
    book.add_credential(kept)

    assert book.count_signature(alice, kept.credential_id, seen=0, now=3)
    assert not book.count_signature(alice, kept.credential_id, seen=0, now=4), "it moved meanwhile"
    assert not book.count_signature(BOB, kept.credential_id, seen=3, now=4), "not bob's"
    assert [c.sign_count for c in book.credentials(alice)] == [3]


def test_a_registration_challenge_serves_one_registration(book: PasskeyBook) -> None:
    alice = f"{uuid.uuid4().hex[:6]}-{ALICE}"
    book.put_challenge(alice, RegistrationChallenge("first", "2030-01-01T09:05:00Z"))
    book.put_challenge(alice, RegistrationChallenge("second", "2030-01-01T09:06:00Z"))

    taken = book.take_challenge(alice)

    assert taken == RegistrationChallenge("second", "2030-01-01T09:06:00Z")
    assert taken is not None
    assert taken.live(T0)
    assert not taken.live(datetime(2030, 1, 1, 9, 6, tzinfo=UTC))
    assert book.take_challenge(alice) is None


PROOF = {
    "credential_id": "Y3JlZA",
    "signature": "c2ln",
    "public_key": "a2V5",
    "sign_count": 7,
    "signed": {"v": 1, "question_id": "q-1", "args": {"amount": 900.0, "memo": None}, "action": "approve",
               "at": "2030-01-01T09:00:00Z"},
}  # fmt: skip


@pytest.mark.parametrize("kind", ["memory", "dynamodb"])
def test_a_decisions_passkey_proof_is_kept_on_its_row(kind: str, table: tuple[str, Any]) -> None:
    ledgers: dict[str, Callable[[], Ledger]] = {
        "memory": InMemoryLedger,
        "dynamodb": lambda: DynamoDbLedger(table[0], client=table[1]),
    }
    ledger = ledgers[kind]()
    thread = f"t-{uuid.uuid4().hex[:8]}"
    asked = Question(
        thread, "q-1", {"prompt": "ok?"}, policy=WaitPolicy(timeout="PT4H", require_passkey=True), asked_at=T0
    )
    ledger.open(WaitEnvelope.create(asked), now=T0)
    decision = Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-1", ALICE, via="api", passkey=PROOF)

    ledger.decide(thread, "q-1", decision, now=T0)

    row = ledger.get(thread, "q-1")
    assert row is not None
    assert row.passkey is not None
    assert row.passkey["signed"]["args"]["amount"] == 900  # a whole number reads back as one; it hashes the same
    assert {k: v for k, v in row.passkey.items() if k != "signed"} == {k: v for k, v in PROOF.items() if k != "signed"}
