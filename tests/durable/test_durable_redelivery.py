"""A durable callback delivered twice stays delivered: the router dies right after Lambda accepted the callback.

The stack is `test_durable_answers`'s: the durable SDK's local runner behind its Lambda API over HTTP (refusing a
closed callback with `CallbackTimeoutException`, as AWS documents it), the ledger on the emulator, the answer API.
The router here has its own AWS clients, and the process dies as Lambda would: right after the answer to
`SendDurableExecutionCallbackSuccess` arrives, and no AWS call of that invocation gets out after it. SQS then
delivers the resume again, once the dead invocation's lease has run out.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta
from typing import Any, cast

import boto3
import pytest
from tests.durable.test_durable_answers import ALICE, REGION, Stack, stack

from agent_wait.asking.callbacks import CallbacksOnly, callback_id_of
from agent_wait.aws import DynamoDbLedger
from agent_wait.aws.callbacks import LambdaCallbacks
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.outcomes import OutcomeKind
from agent_wait.engine.router import Router

__all__ = ("stack",)  # the module's stack, shared with test_durable_answers' handler


class InjectedCrashError(BaseException):
    """Lambda dying mid-invocation: no exception the router could handle, and nothing after it reaches AWS."""


class DiesAfterTheCallback:
    """A router on its own clients that dies right after Lambda answered `SendDurableExecutionCallbackSuccess`."""

    def __init__(self, stack: Stack, moto_server: str) -> None:
        self.armed = False
        self.dead = False
        self.offset = timedelta(0)
        self.lambda_client = lambda_client = boto3.client(
            "lambda",
            region_name=REGION,
            endpoint_url=cast(LambdaCallbacks, stack.router.callbacks).client.meta.endpoint_url,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        dynamodb = boto3.client("dynamodb", region_name=REGION, endpoint_url=moto_server)
        for client in (lambda_client, dynamodb):
            client.meta.events.register("before-call.*.*", self._no_call_once_dead)
        lambda_client.meta.events.register("after-call.lambda.SendDurableExecutionCallbackSuccess", self._die)
        self.router = Router(
            CallbacksOnly(),
            DynamoDbLedger(stack.ledger.table_name, client=dynamodb),
            dead_letter=stack.dead_letter,
            announce=[stack.announced],
            clock=lambda: stack.now + self.offset,
            callbacks=LambdaCallbacks(client=lambda_client),
        )

    def _die(self, **_: Any) -> None:
        if self.armed:
            self.dead = True
            raise InjectedCrashError("the router died right after Lambda accepted the callback")

    def _no_call_once_dead(self, **_: Any) -> None:
        if self.dead:
            raise InjectedCrashError("a dead invocation makes no AWS call")

    def deliver(self, message: dict[str, Any], *, message_id: str, sent_at: datetime, redelivered: bool) -> Any:
        return self.router.handle(
            json.dumps(message),
            message_id=message_id,
            deduplication_id=message["answer_id"],
            sent_at=sent_at,
            redelivered=redelivered,
        )

    def revive(self) -> None:
        """SQS delivers again after the visibility timeout, which outlasts the lease the dead invocation kept."""
        self.armed = self.dead = False
        self.offset += timedelta(seconds=self.router.lease_seconds + 1)


def _completions(lambda_client: Any, arn: str, callback_id: str) -> int:
    """How many times the execution's history says `callback_id` was completed."""
    events = lambda_client.get_durable_execution_history(DurableExecutionArn=arn, IncludeExecutionData=True)["Events"]
    ours = {e["Id"] for e in events if e.get("CallbackStartedDetails", {}).get("CallbackId") == callback_id}
    return sum(1 for e in events if e["EventType"] == "CallbackSucceeded" and e["Id"] in ours)


def test_a_callback_lambda_accepted_just_before_the_router_died_ends_resumed_when_sqs_delivers_it_again(
    stack: Stack, moto_server: str
) -> None:
    # GIVEN an execution waiting on its callback, approved through the API (the resume handed to the router)
    arn, created = stack.start("refund")
    question_id, callback_id = created.question_id, callback_id_of(created.source)
    assert stack.answer(question_id, "approve", ALICE).status == 200
    [(message, _, _)] = stack.queue.messages
    stack.queue.messages.clear()
    router = DiesAfterTheCallback(stack, moto_server)
    message_id = str(uuid.uuid4())

    # WHEN the router dies right after Lambda accepted the callback, and SQS delivers the resume again
    router.armed = True
    with pytest.raises(InjectedCrashError):
        router.deliver(message, message_id=message_id, sent_at=stack.now, redelivered=False)
    router.revive()
    outcome = router.deliver(message, message_id=message_id, sent_at=stack.now, redelivered=True)

    # THEN the answer is recorded as the execution received it: resumed, told so, never failed
    assert outcome.kind is OutcomeKind.APPLIED, outcome
    record = stack.ledger.find(question_id)
    assert record is not None
    assert (record.status, record.outcome, record.failure) == (QuestionStatus.RESUMED, QuestionStatus.ANSWERED, None)
    types = stack.announced.types_for(question_id)
    assert "resumed" in types, types
    assert "failed" not in types, types
    assert stack.ledger.thread_failure(arn) is None
    assert not [letter for letter in stack.dead_letter.records if letter.message_id == str(record.answer_id)]
    # AND the execution got the approval once: one completion, the refund step ran once
    assert stack.result(arn) == {"answer": {"action": "approve"}, "outcome": "refunded"}
    assert [effect for effect in stack.effects if effect[0] == arn] == [(arn, {"action": "approve"})]
    assert callback_id is not None
    assert _completions(router.lambda_client, arn, callback_id) == 1
