"""Who sees and revokes which standing grant (`GrantBook`): its granter, the people its policy lets grant, the audit
group and the operator; anyone else is told there is no such grant. A revoke holds for the very next use."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_wait.engine.checks import Answerer, answerer_for
from agent_wait.engine.grant_book import OPERATOR, GrantBook
from agent_wait.errors import GrantError
from agent_wait.ledger import Grant, InMemoryLedger, new_grant
from agent_wait.policy import GrantRequest, grant_terms
from agent_wait.policy.grants import Grants

T0 = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)


class _Policy:
    grants = Grants(max_ttl="PT1H", groups=["leads"], people=["cy@example.com"])
    response_schema = None
    allowed_actions = ("approve", "reject")
    quorum = None
    tags: dict[str, str] = {}


def _kept(ledger: InMemoryLedger) -> Grant:
    request = GrantRequest.parse({"scope": "agent", "ttl": "PT1H", "uses": 2})
    terms = grant_terms(
        request,
        call=("issue_refund", {"amount": 200}),
        thread_id="t",
        policy=_Policy(),
        answer={"action": "approve"},
        groups=["leads"],
    )
    grant = new_grant(
        terms,
        question_id="q-1",
        granted_by="ana@example.com",
        via="api",
        now=T0,
        groups=("leads",),
        granters={"groups": ("leads",), "people": ("cy@example.com",)},
    )
    return ledger.add_grant(grant)


@pytest.mark.parametrize(
    ("who", "sees"),
    [
        (answerer_for("api", person="Ana@Example.com"), True),  # the granter, by her key however spelled
        (answerer_for("api", person="lee@example.com", groups=["leads"]), True),  # the policy lets leads grant
        (answerer_for("api", person="email:cy@example.com"), True),  # the policy names Cy
        (answerer_for("api", person="aud@example.com", groups=["auditors"]), True),  # the audit group
        (answerer_for("api", person="bo@example.com", groups=["finance"]), False),
        (OPERATOR, True),
    ],
    ids=["granter", "granter-group", "granter-person", "auditor", "stranger", "operator"],
)
def test_a_grant_is_seen_by_its_granter_its_policys_granters_the_audit_group_and_the_operator(
    who: Answerer | None, sees: bool
) -> None:
    ledger = InMemoryLedger()
    grant = _kept(ledger)
    book = GrantBook(ledger, audit_group="auditors", clock=lambda: T0)

    assert [g.grant_id for g in book.list(who)] == ([grant.grant_id] if sees else [])
    if sees:
        assert book.show(grant.grant_id, who) == grant
    else:
        with pytest.raises(GrantError) as hidden:
            book.show(grant.grant_id, who)
        assert hidden.value.code == "unknown_grant"
        with pytest.raises(GrantError):
            book.revoke(grant.grant_id, who)
        assert ledger.grant(grant.grant_id) == grant  # a refused revoke writes nothing


def test_a_revoke_holds_for_the_next_use_and_keeps_who_revoked() -> None:
    ledger = InMemoryLedger()
    grant = _kept(ledger)
    book = GrantBook(ledger, clock=lambda: T0 + timedelta(minutes=5))

    revoked = book.revoke(grant.grant_id, answerer_for("api", person="ana@example.com"))

    assert (revoked.revoked_by, revoked.revoked_at) == ("ana@example.com", "2026-12-07T09:05:00Z")
    assert ledger.use_grant(grant.grant_id, "q-2", now=T0 + timedelta(minutes=6)) is None
    assert book.list(OPERATOR) == []  # live only, by default
    assert [g.grant_id for g in book.list(OPERATOR, live_only=False)] == [grant.grant_id]
    with pytest.raises(GrantError, match="no grant 'issue_refund~nope'"):
        book.revoke("issue_refund~nope", OPERATOR)
