"""A callback completed with this very answer already counts as completed; every other refusal stands.

`LambdaCallbacks` against botocore's stubber, in the shapes of Lambda's API: `SendDurableExecutionCallbackSuccess`
refused with `CallbackTimeoutException` (AWS's code for a callback "expired or ... already closed"), then the
execution's `GetDurableExecutionHistory`. And the router's side: the row of a question asked from a durable function
names its execution, and the router passes it along. The whole path over HTTP, with the router dying right after
Lambda accepted the completion, is `test_durable_redelivery.py`.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

import boto3
import pytest
from aws_durable_execution_sdk_python.context import ExecutionContext
from botocore.stub import Stubber

from agent_wait import WaitPolicy
from agent_wait.asking.callbacks import DURABLE_ONLY, callback_execution_of, callback_question_id, callback_source
from agent_wait.aws.callbacks import MAX_HISTORY_PAGES, LambdaCallbacks
from agent_wait.durable import ask
from agent_wait.engine.dead_letter import InMemoryDeadLetter
from agent_wait.engine.outcomes import OutcomeKind
from agent_wait.engine.router import Router
from agent_wait.errors import CallbackRefusedError, CallbackUnavailableError
from agent_wait.ledger import InMemoryLedger

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
ARN = "arn:aws:lambda:us-east-1:123456789012:function:refund:$LATEST/durable-execution/run-1/0b1c"
CALLBACK_ID = "eyJhcm4iOiJydW4tMSIsIm9wIjoiMSJ9+/=="
APPROVE = '{"action":"approve"}'
CLOSED = ("CallbackTimeoutException", 400)


@pytest.fixture
def lambda_stub() -> Any:
    client = boto3.client("lambda", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()  # no history read where none should be, none left unread


def _refused(stub: Stubber, code: str = CLOSED[0], status: int = CLOSED[1]) -> None:
    stub.add_client_error(
        "send_durable_execution_callback_success",
        service_error_code=code,
        http_status_code=status,
        expected_params={"CallbackId": CALLBACK_ID, "Result": APPROVE.encode()},
    )


def _started(callback_id: str = CALLBACK_ID, operation: str = "op-1") -> dict[str, Any]:
    return {
        "EventType": "CallbackStarted",
        "EventId": 2,
        "Id": operation,
        "EventTimestamp": T0,
        "CallbackStartedDetails": {"CallbackId": callback_id},
    }


def _succeeded(payload: str, *, truncated: bool = False, operation: str = "op-1") -> dict[str, Any]:
    return {
        "EventType": "CallbackSucceeded",
        "EventId": 3,
        "Id": operation,
        "EventTimestamp": T0,
        "CallbackSucceededDetails": {"Result": {"Payload": payload, "Truncated": truncated}},
    }


def _closed_as(event_type: str, operation: str = "op-1") -> dict[str, Any]:
    return {"EventType": event_type, "EventId": 3, "Id": operation, "EventTimestamp": T0}


def _history(stub: Stubber, *pages: list[dict[str, Any]], more: bool = False) -> None:
    """The execution's history in `pages`; `more`: Lambda says there are pages after the last."""
    for number, events in enumerate(pages):
        response: dict[str, Any] = {"Events": events}
        if more or number < len(pages) - 1:
            response["NextMarker"] = f"page-{number + 1}"
        expected: dict[str, Any] = {"DurableExecutionArn": ARN, "IncludeExecutionData": True}
        if number:
            expected["Marker"] = f"page-{number}"
        stub.add_response("get_durable_execution_history", response, expected)


def test_a_callback_completed_with_this_answer_already_counts_as_completed(lambda_stub: Any) -> None:
    client, stub = lambda_stub
    # GIVEN Lambda refuses the completion as closed, and the history (over two pages) says it succeeded with it
    _refused(stub)
    _history(stub, [_started()], [_succeeded(APPROVE)])

    # WHEN the router completes it again; THEN nothing is raised: the execution has this answer
    LambdaCallbacks(client=client).succeed(CALLBACK_ID, APPROVE, execution=ARN)


@pytest.mark.parametrize(
    "history",
    [
        [[_started(), _succeeded('{"action":"reject"}')]],
        [[_started(), _closed_as("CallbackTimedOut")]],
        [[_started(), _closed_as("CallbackFailed")]],
        [[_started(), _succeeded(APPROVE[:8], truncated=True)]],
        [[_started("another-callback"), _succeeded(APPROVE)]],
        [[_started()]],
    ],
    ids=["completed-with-another-answer", "timed-out", "failed", "result-truncated", "not-this-callback", "open"],
)
def test_a_callback_closed_any_other_way_stays_refused(lambda_stub: Any, history: list[list[dict[str, Any]]]) -> None:
    client, stub = lambda_stub
    # GIVEN Lambda refuses the completion as closed, and the history does not show this answer completing it
    _refused(stub)
    _history(stub, *history)

    # WHEN the router completes it; THEN Lambda's refusal stands, with its code
    with pytest.raises(CallbackRefusedError, match=re.escape("the durable execution no longer waits")) as refused:
        LambdaCallbacks(client=client).succeed(CALLBACK_ID, APPROVE, execution=ARN)
    assert refused.value.code == "CallbackTimeoutException"


@pytest.mark.parametrize(
    ("refusal", "execution"),
    [(("ResourceNotFoundException", 404), ARN), (("InvalidParameterValueException", 400), ARN), (CLOSED, None)],
    ids=["unknown-callback", "invalid", "closed-on-a-row-without-its-execution"],
)
def test_a_refusal_the_history_cannot_undo_is_refused_without_reading_it(
    lambda_stub: Any, refusal: tuple[str, int], execution: str | None
) -> None:
    client, stub = lambda_stub
    # GIVEN a callback id Lambda does not know or a parameter it refuses, or a row that names no execution
    _refused(stub, *refusal)

    # WHEN the router completes it; THEN refused at once (the stubber holds no history read: none is made)
    with pytest.raises(CallbackRefusedError) as refused:
        LambdaCallbacks(client=client).succeed(CALLBACK_ID, APPROVE, execution=execution)
    assert refused.value.code == refusal[0]


def test_a_history_that_cannot_be_read_for_now_retries_the_message(lambda_stub: Any) -> None:
    client, stub = lambda_stub
    _refused(stub)
    stub.add_client_error(
        "get_durable_execution_history", service_error_code="TooManyRequestsException", http_status_code=429
    )

    with pytest.raises(CallbackUnavailableError, match=re.escape("GetDurableExecutionHistory failed with")) as later:
        LambdaCallbacks(client=client).succeed(CALLBACK_ID, APPROVE, execution=ARN)
    assert later.value.code == "TooManyRequestsException"


def test_a_history_the_router_may_not_read_leaves_the_refusal_and_says_which_grant_is_missing(
    lambda_stub: Any, caplog: pytest.LogCaptureFixture
) -> None:
    client, stub = lambda_stub
    _refused(stub)
    stub.add_client_error(
        "get_durable_execution_history", service_error_code="AccessDeniedException", http_status_code=403
    )

    with caplog.at_level(logging.WARNING, logger="agent_wait.aws"), pytest.raises(CallbackRefusedError):
        LambdaCallbacks(client=client).succeed(CALLBACK_ID, APPROVE, execution=ARN)
    assert "lambda:GetDurableExecutionHistory" in caplog.text


def test_a_history_longer_than_the_pages_read_counts_as_not_delivered(lambda_stub: Any) -> None:
    client, stub = lambda_stub
    # GIVEN a history whose pages, as many as are read, never reach this callback
    _refused(stub)
    _history(stub, *([[_started("another-callback")]] * MAX_HISTORY_PAGES), more=True)
    asked: list[str] = []
    client.meta.events.register(
        "before-parameter-build.lambda.GetDurableExecutionHistory", lambda params, **_: asked.append("page")
    )

    # WHEN the router completes it; THEN the refusal stands, and no page past the limit is asked for
    with pytest.raises(CallbackRefusedError):
        LambdaCallbacks(client=client).succeed(CALLBACK_ID, APPROVE, execution=ARN)
    assert len(asked) == MAX_HISTORY_PAGES


# -- the row names its execution, and the router passes it -----------------------------------------------------


@dataclass
class StandInContext:
    """Plays `DurableContext.wait_for_callback` for `ARN`: runs the submitter once, returns the answer."""

    execution_context: ExecutionContext = field(default_factory=lambda: ExecutionContext(ARN))

    def wait_for_callback(self, submitter: Any, name: str | None = None, config: Any = None) -> Any:
        submitter(CALLBACK_ID, None)
        return APPROVE


@dataclass
class Completer:
    calls: list[tuple[str, str, str | None]] = field(default_factory=list)

    def succeed(self, callback_id: str, result: str, *, execution: str | None = None) -> None:
        self.calls.append((callback_id, result, execution))


def test_the_router_completes_a_callback_naming_the_execution_its_question_was_asked_in() -> None:
    # GIVEN a question asked from a durable execution under a thread of the caller's own
    ledger, completer = InMemoryLedger(), Completer()
    ask(cast(Any, StandInContext()), "refund?", WaitPolicy(timeout="P1D"), ledger=ledger, thread_id="order-1")
    question_id = callback_question_id(CALLBACK_ID)
    record = ledger.get("order-1", question_id)
    assert record is not None
    assert callback_execution_of(record.envelope.source) == ARN, "the row names the execution, whatever the thread"

    # WHEN it is answered
    router = Router(DURABLE_ONLY, ledger, dead_letter=InMemoryDeadLetter(), callbacks=completer)
    body = {"thread_id": "order-1", "question_id": question_id, "answer": {"action": "approve"}, "answer_id": "a-1"}
    outcome = router.handle(json.dumps(body), message_id="a-1")

    # THEN the callback is completed naming that execution, so a refusal as closed can be checked against it
    assert outcome.kind is OutcomeKind.APPLIED
    assert completer.calls == [(CALLBACK_ID, APPROVE, ARN)]


def test_a_source_without_an_execution_names_none() -> None:
    assert callback_execution_of(callback_source(CALLBACK_ID)) is None, "a row recorded before the ARN was"
    assert callback_execution_of({"function": "refund", "execution": ARN}) is None, "not a callback's question"
    assert callback_source(CALLBACK_ID, execution=ARN)["execution"] == ARN
