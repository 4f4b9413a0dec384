"""What a passkey signs (`agent_wait.engine.proof`), and the desk's rule: a `require_passkey` question is decided only
by an answer the injected verifier confirms over the digest the desk computes itself; the policy's checks.

The desk here gets a stand-in verifier (the WebAuthn one is `tests/host/test_passkey_decisions.py`'s), so each rule
is the desk's own: which answers need a passkey, which digest is asked for, what is kept, what is refused.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerAttempt, AnswerDesk, RefusalReason, ThreadState, VerdictKind, answerer_for
from agent_wait.engine.audit import audit_row
from agent_wait.engine.checks import Answerer
from agent_wait.engine.proof import (
    PasskeyAssertion,
    PasskeyCheck,
    PasskeyVerifier,
    canonical_bytes,
    decision_digest,
    needs_passkey,
    signed_inputs,
)
from agent_wait.errors import PolicyError
from agent_wait.ledger import InMemoryLedger
from agent_wait.policy import WaitPolicy
from agent_wait.policy.grants import Grants

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
AT = "2030-01-01T09:00:00Z"
ALICE = answerer_for("api", person="alice@example.com", subject="https://issuer#alice")
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "verify_decision.py"


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("verify_decision", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the digest ---------------------------------------------------------------------------------------------------


def test_the_digest_is_sha256_over_canonical_json_and_stays_the_same() -> None:
    # The pinned value: a change to the digest's form breaks every record made before it (give it a new `v`).
    digest = decision_digest("q-1", {"order_id": "A-1", "amount": 900}, "approve", AT)
    expected = canonical_bytes({"v": 1, "question_id": "q-1", "args": {"amount": 900, "order_id": "A-1"},
                                "action": "approve", "at": AT})  # fmt: skip
    assert expected == (
        b'{"action":"approve","args":{"amount":900,"order_id":"A-1"},"at":"2030-01-01T09:00:00Z",'
        b'"question_id":"q-1","v":1}'
    )
    assert digest.hex() == "52f658b1323ca3ee997a96a9325ed0b20653f810b85ce1cca248a639e5a1317a"
    assert digest == decision_digest("q-1", {"amount": 900, "order_id": "A-1"}, "approve", AT), "key order matters"


def test_a_whole_number_hashes_the_same_as_an_integer_or_a_float() -> None:
    # A store hands 900.0 back as 900 (DynamoDB's decimals): the same value must give the same digest.
    assert decision_digest("q", {"amount": 900.0}, "approve", AT) == decision_digest(
        "q", {"amount": 900}, "approve", AT
    )
    assert decision_digest("q", {"amount": 0.5}, "approve", AT) != decision_digest("q", {"amount": 1}, "approve", AT)


@pytest.mark.parametrize(
    "change",
    [
        ("q-2", {"amount": 900}, "approve", AT),
        ("q-1", {"amount": 901}, "approve", AT),
        ("q-1", {"amount": 900, "memo": None}, "approve", AT),
        ("q-1", {"amount": 900}, "reject", AT),
        ("q-1", {"amount": 900}, "approve", "2030-01-01T09:00:01Z"),
    ],
    ids=["question", "argument", "added argument", "action", "time"],
)
def test_every_input_changes_the_digest(change: tuple[Any, ...]) -> None:
    assert decision_digest(*change) != decision_digest("q-1", {"amount": 900}, "approve", AT)


@pytest.mark.parametrize(
    "value",
    [{"b": 1, "a": [1.0, 2.5, "é", None, True]}, {"ünï": {"z": {"y": -0.0}}}, [], "text", 10**18, 2.0],
    ids=["nested", "unicode", "list", "text", "large", "float"],
)
def test_the_standalone_script_hashes_exactly_as_the_engine(value: Any) -> None:
    assert _script().canonical_bytes(value) == canonical_bytes(value)


# -- what is signed for an answer ---------------------------------------------------------------------------------


def _record(policy: WaitPolicy, question: Any = None, *, source: Any = None) -> Any:
    ledger = InMemoryLedger()
    call = {"function": "refund", "args": {"order_id": "A-1", "amount": 900}}
    asked = Question(
        "order-1",
        "q-1",
        call if question is None else question,
        policy=policy,
        source={"function": "refund"} if source is None else source,
        asked_at=T0,
    )
    return ledger, ledger.open(WaitEnvelope.create(asked), now=T0).record


SIGNED = WaitPolicy(timeout="PT4H", allow_edits=True, require_passkey=True)


def test_a_calls_signed_arguments_are_those_asked_with_the_answers_edits() -> None:
    _, record = _record(SIGNED)

    inputs = signed_inputs(record, {"action": "approve", "args": {"amount": 850}}, AT)

    assert inputs.to_dict() == {"v": 1, "question_id": "q-1", "args": {"order_id": "A-1", "amount": 850},
                                "action": "approve", "at": AT}  # fmt: skip


def test_any_other_questions_signed_arguments_are_the_question_as_asked() -> None:
    _, record = _record(SIGNED, {"prompt": "Ship it?"}, source={"node": "ship"})

    assert signed_inputs(record, {"action": "reject"}, AT).args == {"prompt": "Ship it?"}


def test_a_passkey_for_some_actions_only_is_needed_for_those() -> None:
    _, record = _record(WaitPolicy(timeout="PT4H", require_passkey=("approve",)))

    assert needs_passkey(record, {"action": "approve"})
    assert not needs_passkey(record, {"action": "reject"})
    assert needs_passkey(record, "a dialect's own answer, naming no action of ours")


# -- the desk ------------------------------------------------------------------------------------------------------


@dataclass
class StandIn(PasskeyVerifier):
    """Confirms what it is told to, and remembers what it was asked."""

    problem: str | None = None
    asked: list[tuple[bytes, str | None]] = field(default_factory=list)
    kept: list[dict[str, Any]] = field(default_factory=list)

    def verify(self, assertion: PasskeyAssertion, *, challenge: bytes, answerer: Answerer) -> PasskeyCheck:
        self.asked.append((challenge, answerer.answered_by))
        if self.problem is not None:
            return PasskeyCheck(problem=self.problem)
        return PasskeyCheck({"credential_id": assertion.credential["id"], "person": answerer.answered_by})

    def used(self, check: PasskeyCheck, answerer: Answerer) -> None:
        self.kept.append(dict(check.proof or {}))


ASSERTION = PasskeyAssertion(AT, {"id": "cred-1"})


def _attempt(answer: Any, passkey: PasskeyAssertion | None = ASSERTION, **fields: Any) -> AnswerAttempt:
    return AnswerAttempt("order-1", "q-1", answer, "a-1", ALICE, T0 + timedelta(minutes=1), passkey=passkey, **fields)


def test_the_desk_asks_the_verifier_for_the_digest_it_computes_and_keeps_the_proof() -> None:
    ledger, _ = _record(SIGNED)
    verifier = StandIn()
    answer = {"action": "approve", "args": {"amount": 850}}

    verdict = AnswerDesk(ledger, passkeys=verifier).decide(_attempt(answer), ThreadState())

    assert verdict.kind is VerdictKind.DECIDED, verdict
    expected = decision_digest("q-1", {"order_id": "A-1", "amount": 850}, "approve", AT)
    assert verifier.asked == [(expected, "alice@example.com")]
    proof = verdict.record.passkey if verdict.record else None
    assert proof is not None
    assert proof["signed"]["args"] == {"order_id": "A-1", "amount": 850}
    assert proof["credential_id"] == "cred-1"
    assert verifier.kept == [dict(proof)]
    assert audit_row(ledger.find("q-1")).get("passkey") == proof  # kept on the row, and in the audit export


def test_without_a_verifier_the_desk_refuses_passkey_required_pointing_to_the_inbox() -> None:
    ledger, _ = _record(SIGNED)

    verdict = AnswerDesk(ledger).decide(_attempt({"action": "approve"}), ThreadState())

    assert (verdict.kind, verdict.reason) == (VerdictKind.REFUSED, RefusalReason.PASSKEY_REQUIRED)
    assert "AGENT_WAIT_PASSKEY_ORIGIN" in verdict.detail
    assert "/inbox#/questions/q-1" in verdict.detail
    assert ledger.find("q-1").status is QuestionStatus.OPEN


def test_an_answer_without_an_assertion_is_refused_passkey_required() -> None:
    ledger, _ = _record(SIGNED)

    verdict = AnswerDesk(ledger, passkeys=StandIn()).decide(_attempt({"action": "reject"}, None), ThreadState())

    assert verdict.reason is RefusalReason.PASSKEY_REQUIRED, verdict
    assert verdict.detail.startswith("this question needs the answer confirmed with a passkey; api sent none")


def test_an_assertion_the_verifier_does_not_confirm_is_refused_passkey_refused_with_its_problem() -> None:
    ledger, _ = _record(SIGNED)
    verifier = StandIn(problem="passkey cred-1 is not one of alice@example.com's passkeys")

    verdict = AnswerDesk(ledger, passkeys=verifier).decide(_attempt({"action": "approve"}), ThreadState())

    assert (verdict.reason, verdict.detail) == (RefusalReason.PASSKEY_REFUSED, verifier.problem)
    assert verifier.kept == []
    assert ledger.find("q-1").status is QuestionStatus.OPEN


@pytest.mark.parametrize("at", ["2030-01-01T08:54:59Z", "2030-01-01T09:01:01Z", "yesterday"])
def test_an_assertion_prepared_outside_the_window_or_at_no_time_is_refused(at: str) -> None:
    ledger, _ = _record(SIGNED)

    verdict = AnswerDesk(ledger, passkeys=StandIn()).decide(
        _attempt({"action": "approve"}, PasskeyAssertion(at, {"id": "cred-1"})), ThreadState()
    )

    assert verdict.reason is RefusalReason.PASSKEY_REFUSED, verdict


def test_an_action_the_policy_does_not_name_is_decided_without_a_passkey() -> None:
    ledger, _ = _record(WaitPolicy(timeout="PT4H", require_passkey=("approve",)))

    verdict = AnswerDesk(ledger).decide(_attempt({"action": "reject"}, None), ThreadState())

    assert verdict.kind is VerdictKind.DECIDED
    assert verdict.record is not None
    assert verdict.record.passkey is None


def test_the_deadline_applies_the_default_without_a_passkey() -> None:
    ledger, _ = _record(WaitPolicy(timeout="PT4H", default={"action": "reject"}, require_passkey=True))
    deadline = AnswerAttempt("order-1", "q-1", None, "d-1", ALICE, T0 + timedelta(hours=5), deadline=True)

    verdict = AnswerDesk(ledger).decide(deadline, ThreadState())

    assert verdict.kind is VerdictKind.DECIDED
    assert ledger.find("q-1").status is QuestionStatus.EXPIRED


def test_a_persons_cancel_applies_the_policys_cancellation_without_a_passkey() -> None:
    ledger, _ = _record(SIGNED)
    cancel = AnswerAttempt("order-1", "q-1", None, "c-1", ALICE, T0, cancel=True, reason="ordered twice")

    verdict = AnswerDesk(ledger).decide(cancel, ThreadState())

    assert verdict.kind is VerdictKind.DECIDED
    assert ledger.find("q-1").status is QuestionStatus.CANCELLED


# -- the policy -----------------------------------------------------------------------------------------------------


def test_require_passkey_rides_in_the_rules_and_survives_a_round_trip() -> None:
    every = WaitPolicy(timeout="PT4H", require_passkey=True)
    some = WaitPolicy(timeout="PT4H", require_passkey=["approve"])

    assert every.require_passkey == ("approve", "reject")
    assert every.rules()["passkey"] == {"actions": ["approve", "reject"]}
    assert some.rules()["passkey"] == {"actions": ["approve"]}
    assert WaitPolicy.from_dict(some.to_dict()) == some
    assert "passkey" not in WaitPolicy(timeout="PT4H").rules()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"require_passkey": ("approve", "escalate")},
            "require_passkey must name some of the policy's allowed_actions ['approve', 'reject']; got ['approve', "
            "'escalate'] (['escalate'] not allowed)",
        ),
        (
            {"require_passkey": "approve"},
            "require_passkey must be True, False, or a tuple of actions such as ('approve',); got 'approve'",
        ),
        (
            {"require_passkey": True, "grants": Grants(max_ttl="PT1H")},
            "a question that needs a passkey is not grantable: a standing grant would decide later asks with no "
            "passkey. Leave grants unset, or require_passkey unset",
        ),
        (
            {"require_passkey": True, "quorum": 2},
            "a quorum question cannot require a passkey: it is decided by votes, and a signed decision is one "
            "person's. Ask without a quorum, or leave require_passkey unset",
        ),
    ],
    ids=["unknown action", "a bare string", "with grants", "with a quorum"],
)
def test_a_policy_that_cannot_require_a_passkey_says_why(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError, match=re.escape(message)):
        WaitPolicy(timeout="PT4H", **fields)
