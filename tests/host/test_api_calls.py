"""The answer API's POST costs what its work needs (issue 46): the question found by its id, read with its thread,
decided and handed over in one write, and the router woken. Seven AWS calls before (the row read twice, a lease taken
and released around the decision); every call counted here with a botocore hook on the API's own session."""

from __future__ import annotations

import json
from typing import Any

import boto3
from tests.support.api_events import call
from tests.support.aws_stack import REGION, HostStack, start_message

from agent_wait.contract.schema import QuestionStatus
from agent_wait.host import HostSettings, build_router
from agent_wait.host.api import ApiContext, create_app

FINANCE = {"iss": "https://issuer.example.com", "sub": "u-fin", "email": "fin@example.com", "email_verified": "true"}

API_POST_CALLS = ("dynamodb.Query", "dynamodb.BatchGetItem", "dynamodb.TransactWriteItems", "sqs.SendMessage")
"""The question's thread by its id (`by_question`), the row and the thread item read together, the decision and its
hand-over in one conditional write, the resume on the entry queue."""


class CountedCalls:
    """Every AWS call a boto3 session makes, as `service.Operation`, in order."""

    def __init__(self, session: Any) -> None:
        self.calls: list[str] = []
        session.events.register("before-call.*.*", self._count)

    def _count(self, model: Any, **_: Any) -> None:
        self.calls.append(f"{model.service_model.service_name}.{model.name}")


def test_an_answer_through_the_api_is_four_aws_calls_at_most_five(host: HostStack, unique: str) -> None:
    # GIVEN a refund parked on finance's question by the router on the emulator
    router = build_router(HostSettings.from_env("router"))
    thread_id = f"t-calls-{unique}"
    (question_id,) = router.handle(json.dumps(start_message(thread_id, f"o-calls-{unique}"))).asked
    # AND the answer API as deployed, every AWS call it makes counted
    session = boto3.Session(region_name=REGION)
    counted = CountedCalls(session)
    context = ApiContext.from_settings(HostSettings.from_env("api"), session=session)
    app = create_app(lambda: context)
    counted.calls.clear()  # what the cold start read (nothing today) is not the answer's

    # WHEN finance approves through POST /questions/{id}/answer
    reply = call(app, "POST", f"/questions/{question_id}/answer", {"answer": {"action": "approve"}}, claims=FINANCE)

    # THEN the approval won and was handed over, in four calls: found, read with its thread, decided, sent
    assert reply.status == 200, reply.body
    assert (reply.json()["result"], reply.json()["handed_over"]) == ("won", True)
    assert tuple(counted.calls) == API_POST_CALLS, counted.calls
    assert len(counted.calls) <= 5  # issue 46's bound
    # AND the router finds the decision on the thread and resumes the agent with it
    (message,) = host.entry_messages()
    router.handle(message["Body"], deduplication_id=message["Attributes"]["MessageDeduplicationId"])
    row = host.ledger().get(thread_id, question_id)
    assert row is not None
    assert (row.status, row.answered_by, row.via) == (QuestionStatus.RESUMED, "fin@example.com", "api")
