"""Granting through AG-UI: a resume entry whose payload carries `grant` reaches the one desk, which makes the grant in
the signed-in person's name and hands the agent the approval without it; a grant that may not be made refuses the
entry (422 `grant_refused`) and decides nothing."""

from __future__ import annotations

from tests.host.test_agui_routes import T0, Api, resolved

from agent_wait.contract.messages import AnswerMessage, parse_message
from agent_wait.contract.schema import QuestionStatus
from agent_wait.policy import Grants

GRANTS = Grants(max_ttl="PT1H", max_uses=3)
UP_TO_1000 = {"scope": "agent", "ttl": "PT1H", "uses": 3, "pins": {"amount": {"at_most": 1000}}}


def ask(api: Api) -> None:
    api.ask("q-1", source={"function": "refund"}, grants=GRANTS)


def test_a_resume_carrying_a_grant_approves_and_makes_one_grant_in_the_signed_in_persons_name() -> None:
    # GIVEN a refund of 900 whose policy allows grants
    api = Api()
    ask(api)

    # WHEN an AG-UI client resolves it with an approval and a grant of refunds up to 1000
    response = api.resume({"resume": [resolved("q-1", {"action": "approve", "grant": UP_TO_1000})]}, key="k-1")

    # THEN it is decided, the response shows the grant, and the grant is Alice's, made through the API
    assert response.status == 200, response.body
    assert response.json()["grant"]["pins"] == {"amount": {"at_most": 1000}}
    (grant,) = api.ledger.grants(now=T0)
    assert (grant.granted_by, grant.via, grant.question_id) == ("alice@example.com", "api", "q-1")
    # AND the row and the agent's resume hold the approval without the grant
    assert api.record("q-1").status is QuestionStatus.ANSWERED
    assert api.record("q-1").answer == {"action": "approve"}
    [(message, _group, _dedup)] = api.queue.messages
    parsed = parse_message(message)
    assert isinstance(parsed, AnswerMessage)
    assert parsed.answer == {"action": "approve"}


def test_a_resume_whose_grant_would_widen_the_call_is_refused_and_decides_nothing() -> None:
    # GIVEN a refund of 900
    api = Api()
    ask(api)

    # WHEN the grant pins amount to at most 500 (the call asked does not satisfy it), alone and among several entries
    widening = {**UP_TO_1000, "pins": {"amount": {"at_most": 500}}}
    alone = api.resume({"resume": [resolved("q-1", {"action": "approve", "grant": widening})]})

    # THEN it is 422 grant_refused, saying why; nothing is decided, queued or granted
    assert (alone.status, alone.json()["reason"]) == (422, "grant_refused")
    assert "the grant was refused (widens)" in alone.json()["detail"]
    assert api.record("q-1").status is QuestionStatus.OPEN
    assert api.queue.messages == []
    assert api.ledger.grants(now=T0) == []
