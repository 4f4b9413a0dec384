"""`POST /questions/{id}/extend` through `create_app`, with HTTP API v2 events carrying people's JWT claims.

In process, on the in-memory ledger: a good extension, and every refusal with its status and typed reason.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from tests.support.api_events import Response, call

from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, create_app
from agent_wait.ledger import Decision, InMemoryLedger
from agent_wait.policy import WaitPolicy
from agent_wait.policy.extension import Extension

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
ISSUER = "https://issuer.example.com"
MANAGER = {"iss": ISSUER, "sub": "u-m", "email": "m@example.com", "email_verified": "true", "cognito:groups": "[ops]"}
CLERK = {"iss": ISSUER, "sub": "u-c", "email": "c@example.com", "email_verified": "true", "cognito:groups": "[x]"}
POLICY = WaitPolicy(timeout="P1D", extend=Extension(groups=["ops"], max_total="P2D"))


class Api:
    def __init__(self) -> None:
        self.ledger = InMemoryLedger()
        service = AnswerService(self.ledger, InMemoryEntryQueue(), clock=lambda: T0)
        context = ApiContext(ledger=self.ledger, service=service, clock=lambda: T0)
        self.app = create_app(lambda: context)

    def ask(self, policy: WaitPolicy = POLICY) -> str:
        question_id = f"q-{uuid.uuid4().hex[:12]}"
        question = Question(
            f"t-{question_id}", question_id, {"amount": 1}, policy, source={"function": "f"}, asked_at=T0
        )
        self.ledger.open(WaitEnvelope.create(question, now=T0), now=T0, unannounced=False)
        return question_id

    def extend(self, question_id: str, body: Any, claims: dict[str, Any] | None = MANAGER) -> Response:
        return call(self.app, "POST", f"/questions/{question_id}/extend", body, claims=claims)


@pytest.fixture
def api() -> Api:
    return Api()


def test_an_allowed_person_extends_and_sees_the_new_deadline(api: Api) -> None:
    question_id = api.ask()
    response = api.extend(question_id, {"by": "PT2H"})
    assert response.status == 200, response.body
    body = response.json()
    assert (body["result"], body["announced"]) == ("extended", False)
    assert body["policy"]["expires_at"] == "2030-01-02T11:00:00Z"
    until = api.extend(question_id, {"until": "2030-01-03T09:00:00+00:00"})
    assert until.json()["policy"]["expires_at"] == "2030-01-03T09:00:00Z"


@pytest.mark.parametrize(
    ("body", "status", "reason", "detail"),
    [
        ("not json", 400, "not_json", 'the body must be JSON: {"by": "PT2H"} or {"until": "2026-09-14T09:00:00Z"}'),
        ({"by": "PT1H", "until": "x"}, 400, "bad_extend", "the body must hold exactly one of by or until: "),
        ({"for": "PT1H"}, 400, "bad_extend", "the body must hold exactly one of by or until: "),
        ({"by": "P1M"}, 400, "bad_duration", "by must be an ISO 8601 duration such as 'PT4H'"),
        ({"by": -5}, 400, "bad_duration", "by must be an ISO 8601 duration"),
        ({"until": "tomorrow"}, 400, "bad_time", "until must be an RFC 3339 time with its offset"),
        ({"until": "2030-01-03T09:00:00"}, 400, "bad_time", "until must be an RFC 3339 time with its offset"),
        (
            {"by": "P3D"},
            422,
            "beyond_maximum",
            "the policy lets the deadline move at most P2D past 2030-01-02T09:00:00Z",
        ),
        ({"until": "2030-01-02T08:00:00Z"}, 422, "not_later", "the new deadline 2030-01-02T08:00:00Z is not later"),
    ],
)
def test_a_bad_body_or_a_bad_new_deadline_is_refused_and_nothing_moves(
    api: Api, body: Any, status: int, reason: str, detail: str
) -> None:
    question_id = api.ask()
    response = api.extend(question_id, body)
    assert (response.status, response.json()["reason"]) == (status, reason), response.body
    assert response.json()["detail"].startswith(detail)
    assert response.headers["content-type"] == "application/problem+json"
    record = api.ledger.find(question_id)
    assert record is not None
    assert record.expires_at == "2030-01-02T09:00:00Z"


def test_who_may_not_extend_gets_403_and_a_decided_question_409(api: Api) -> None:
    question_id = api.ask()
    clerk = api.extend(question_id, {"by": "PT1H"}, claims=CLERK)
    assert (clerk.status, clerk.json()["reason"], clerk.json()["title"]) == (
        403,
        "extend_not_allowed",
        "Not allowed to extend",
    )
    nobody = api.ask(WaitPolicy(timeout="P1D"))
    assert api.extend(nobody, {"by": "PT1H"}).json()["reason"] == "extend_not_allowed"
    decision = Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-1")
    api.ledger.decide(f"t-{question_id}", question_id, decision, now=T0)
    decided = api.extend(question_id, {"by": "PT1H"})
    assert (decided.status, decided.json()["reason"]) == (409, "already_decided")
    assert decided.json()["question"]["status"] == "answered"


def test_an_unknown_question_is_404_and_no_token_is_401(api: Api) -> None:
    unknown = api.extend("q-none", {"by": "PT1H"})
    assert (unknown.status, unknown.json()["reason"]) == (404, "unknown_question")
    too_long = api.extend("q" * 600, {"by": "PT1H"})
    assert too_long.status == 404
    assert api.extend(api.ask(), {"by": "PT1H"}, claims=None).status == 401


def test_the_question_view_shows_the_escalation_step_moved_with_the_deadline(api: Api) -> None:
    from agent_wait.policy.followup import Escalation

    step = Escalation(after="PT12H", answerer_groups=["ops"], tags={"to": "ops"})
    question_id = api.ask(
        WaitPolicy(timeout="P1D", escalation=[step], extend=Extension(groups=["ops"], max_total="P1D"))
    )
    body = api.extend(question_id, {"by": "PT6H"}).json()
    assert body["escalation"]["next_at"] == "2030-01-02T03:00:00Z", "PT12H after asking, plus the six hours"
