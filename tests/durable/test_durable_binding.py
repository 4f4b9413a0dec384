"""The durable binding's pieces on their own: `ask` with a stand-in context, the callback's timeout, `LambdaCallbacks`
against botocore's stubber, and the router's callback path (a completer missing, failing for now, refusing).

The whole path, with the SDK's own local runner and its Lambda API over HTTP, is `test_durable_answers.py`.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import boto3
import pytest
from aws_durable_execution_sdk_python.config import WaitForCallbackConfig
from aws_durable_execution_sdk_python.context import ExecutionContext
from aws_durable_execution_sdk_python.types import WaitForCallbackContext
from botocore.stub import Stubber

from agent_wait import InMemoryAnnounce, MissingExtraError, WaitPolicy
from agent_wait.asking.callbacks import DURABLE_ONLY, CallbacksOnly, callback_id_of, callback_question_id
from agent_wait.aws.callbacks import LambdaCallbacks
from agent_wait.contract.announcer import BaseAnnounce
from agent_wait.contract.envelope import MAX_QUESTION_BYTES, Transition, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.durable import CALLBACK_MARGIN, LONGEST_CALLBACK, ask, callback_timeout
from agent_wait.engine.dead_letter import InMemoryDeadLetter
from agent_wait.engine.outcomes import DeadLetterReason, OutcomeKind
from agent_wait.engine.router import Router
from agent_wait.errors import (
    ArgumentError,
    CallbackRefusedError,
    CallbackUnavailableError,
    ConfigurationError,
    EnvelopeError,
    PolicyError,
    QuestionTooLargeError,
)
from agent_wait.ledger import FollowUpLedger, InMemoryLedger

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
ARN = "arn:aws:lambda:us-east-1:123456789012:function:refund:$LATEST/durable-execution/run-1/0b1c"
CALLBACK_ID = "eyJhcm4iOiJydW4tMSIsIm9wIjoiMSJ9+/=="
"""Base64, with the characters a URL path cannot carry as they are."""
FINANCE = WaitPolicy(timeout="P3D", default={"action": "reject"}, allowed_actions=("approve", "reject"))


@dataclass
class StandInContext:
    """Plays `DurableContext.wait_for_callback`: runs the submitter `submissions` times, then returns `result`."""

    result: Any = '{"action":"approve"}'
    submissions: int = 1
    execution_context: ExecutionContext = field(default_factory=lambda: ExecutionContext(ARN))
    configs: list[WaitForCallbackConfig | None] = field(default_factory=list)

    def wait_for_callback(
        self,
        submitter: Callable[[str, WaitForCallbackContext], None],
        name: str | None = None,
        config: WaitForCallbackConfig | None = None,
    ) -> Any:
        self.configs.append(config)
        for _ in range(self.submissions):
            submitter(CALLBACK_ID, cast(WaitForCallbackContext, None))
        return self.result


def asking(context: StandInContext, question: Any, policy: Any = FINANCE, **options: Any) -> Any:
    options.setdefault("ledger", InMemoryLedger())
    return ask(cast(Any, context), question, policy, **options)


class Broken(BaseAnnounce):
    name = "broken"

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        raise RuntimeError("the topic is gone")


# -- ask ---------------------------------------------------------------------------------------------------------


def test_ask_records_and_announces_the_question_from_the_submitter_and_returns_the_answer() -> None:
    ledger, announced, context = InMemoryLedger(), InMemoryAnnounce(), StandInContext()

    answer = asking(context, {"refund": "A-1"}, ledger=ledger, announce=[announced], clock=lambda: T0)

    assert answer == {"action": "approve"}
    question_id = callback_question_id(CALLBACK_ID)
    record = ledger.get(ARN, question_id)
    assert record is not None, "the thread is the durable execution's ARN unless given"
    assert (record.status, record.announced, record.asked_at) == (QuestionStatus.OPEN, True, "2030-01-01T09:00:00Z")
    assert callback_id_of(record.envelope.source) == CALLBACK_ID
    assert record.envelope.expires_at == "2030-01-04T09:00:00Z"
    assert re.fullmatch(r"[0-9a-f]{64}", question_id), "safe in a URL path, a link and a button"
    [created] = announced.of(Transition.CREATED)
    assert (created.question_id, created.question) == (question_id, {"refund": "A-1"})
    [config] = context.configs
    assert config is not None
    assert config.timeout.to_seconds() == (timedelta(days=3) + CALLBACK_MARGIN).total_seconds()


def test_a_submitter_that_runs_again_records_one_question_and_announces_it_again() -> None:
    # A step runs at least once: Lambda may stop after the submitter recorded the question, before or after it
    # announced it. The row (and its deadline) stays; the announcement goes out again, under the same dedupe key.
    ledger, announced = InMemoryLedger(), InMemoryAnnounce()
    times = iter([T0, T0 + timedelta(minutes=5)])

    asking(StandInContext(submissions=2), "refund?", ledger=ledger, announce=[announced], clock=lambda: next(times))

    [record] = ledger.questions(ARN)
    assert record.asked_at == "2030-01-01T09:00:00Z", "the deadline counts from the first time"
    assert record.envelope.expires_at == "2030-01-04T09:00:00Z"
    assert {e.dedupe_key for e in announced.of(Transition.CREATED)} == {f"wait.created:{record.question_id}"}


class PutUnannouncedLedger(InMemoryLedger):
    """A ledger that cannot mark a question back unannounced, so every question is put with its marker."""

    mark_unannounced = FollowUpLedger.mark_unannounced  # type: ignore[assignment]


@pytest.mark.parametrize("ledger", [InMemoryLedger(), PutUnannouncedLedger()], ids=["put-announced", "put-marked"])
def test_a_failed_announcement_leaves_the_question_due_for_the_sweep(ledger: InMemoryLedger) -> None:

    asking(StandInContext(), "refund?", ledger=ledger, announce=[Broken()], clock=lambda: T0, thread_id="order-1")

    [record] = ledger.questions("order-1")
    assert not record.announced
    assert [due.question_id for due in ledger.due(T0, limit=10)] == [record.question_id]


def test_a_result_that_is_not_json_comes_back_as_the_text_it_is() -> None:
    # A callback completed by hand (the console, a script) may carry any text.
    assert asking(StandInContext(result="approved by phone"), "refund?") == "approved by phone"
    assert asking(StandInContext(result=None), "refund?") is None


@pytest.mark.parametrize(
    ("question", "policy", "options", "error", "says"),
    [
        ("refund?", {"timeout": "P3D"}, {}, EnvelopeError, "takes a WaitPolicy; got a dict"),
        (object(), FINANCE, {}, EnvelopeError, "question"),
        ("x" * (MAX_QUESTION_BYTES + 1), FINANCE, {}, QuestionTooLargeError, "publish a reference instead"),
        ("refund?", FINANCE, {"thread_id": ""}, ArgumentError, "thread_id must be a non-empty string"),
        ("refund?", WaitPolicy(timeout="P365D"), {}, PolicyError, "waits at most 365 days"),
        ("refund?", FINANCE, {"margin": timedelta(seconds=-1)}, ArgumentError, "margin must be zero or more"),
    ],
    ids=["policy-not-a-policy", "not-json", "too-large", "empty-thread", "longer-than-a-year", "negative-margin"],
)
def test_bad_input_is_refused_before_anything_waits(
    question: Any, policy: Any, options: dict[str, Any], error: type[Exception], says: str
) -> None:
    ledger, context = InMemoryLedger(), StandInContext()

    with pytest.raises(error) as raised:
        asking(context, question, policy, ledger=ledger, **options)

    assert says.lower() in str(raised.value).lower()
    assert context.configs == [], "no callback was created"
    assert ledger.questions(ARN) == []


def test_the_callback_timeout_is_the_policy_timeout_plus_the_margin_in_whole_seconds() -> None:
    assert callback_timeout(WaitPolicy()) == 0, "no deadline: the callback waits as long as the execution"
    assert callback_timeout(WaitPolicy(timeout="PT1H")) == 3600 + 900
    assert callback_timeout(WaitPolicy(timeout="PT1H"), timedelta(seconds=0.5)) == 3601, "rounded up"
    longest = LONGEST_CALLBACK - CALLBACK_MARGIN
    assert callback_timeout(WaitPolicy(timeout=longest.total_seconds())) == LONGEST_CALLBACK.total_seconds()


def test_importing_without_the_sdk_names_the_durable_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "aws_durable_execution_sdk_python", None)
    for name in [name for name in sys.modules if name.startswith("agent_wait.durable")]:
        monkeypatch.delitem(sys.modules, name)

    with pytest.raises(MissingExtraError, match=re.escape("pip install 'agent-wait[durable]'")) as missing:
        importlib.import_module("agent_wait.durable")

    assert missing.value.extra == "durable"


# -- LambdaCallbacks ---------------------------------------------------------------------------------------------


@pytest.fixture
def lambda_stub() -> Any:
    client = boto3.client("lambda", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


def test_lambda_callbacks_send_the_answer_as_the_callback_result(lambda_stub: Any) -> None:
    client, stub = lambda_stub
    stub.add_response(
        "send_durable_execution_callback_success", {}, {"CallbackId": CALLBACK_ID, "Result": b'{"action":"approve"}'}
    )

    LambdaCallbacks(client=client).succeed(CALLBACK_ID, '{"action":"approve"}')


@pytest.mark.parametrize(
    ("code", "status", "error", "says"),
    [
        ("CallbackTimeoutException", 400, CallbackRefusedError, "timed out, was completed already"),
        ("ResourceNotFoundException", 404, CallbackRefusedError, "no longer waits"),
        ("TooManyRequestsException", 429, CallbackUnavailableError, "the answer is retried"),
        ("ServiceException", 500, CallbackUnavailableError, "the answer is retried"),
        ("AccessDeniedException", 403, ConfigurationError, "grant this function lambda:SendDurableExecutionCallback"),
    ],
)
def test_lambda_callbacks_tell_refused_from_for_now_from_misconfigured(
    lambda_stub: Any, code: str, status: int, error: type[Exception], says: str
) -> None:
    client, stub = lambda_stub
    stub.add_client_error("send_durable_execution_callback_success", service_error_code=code, http_status_code=status)

    with pytest.raises(error, match=re.escape(says)) as raised:
        LambdaCallbacks(client=client).succeed(CALLBACK_ID, "{}")

    assert getattr(raised.value, "code", code) == code


def test_lambda_callbacks_take_a_client_or_a_region_not_both(lambda_stub: Any) -> None:
    client, _ = lambda_stub
    with pytest.raises(ArgumentError, match="pass client= or region_name=, not both"):
        LambdaCallbacks(client=client, region_name="us-east-1")


# -- the router's callback path ----------------------------------------------------------------------------------


@dataclass
class Completer:
    """Records each completion; `fail` raises instead (once per item) while it lasts."""

    calls: list[tuple[str, str]] = field(default_factory=list)
    fail: list[Exception] = field(default_factory=list)

    def succeed(self, callback_id: str, result: str, *, execution: str | None = None) -> None:
        if self.fail:
            raise self.fail.pop(0)
        self.calls.append((callback_id, result))


def durable_question(ledger: InMemoryLedger, *, thread_id: str = "order-1") -> str:
    asking(StandInContext(), {"refund": "A-1"}, ledger=ledger, thread_id=thread_id, clock=lambda: T0)
    return callback_question_id(CALLBACK_ID)


def answer(router: Router, question_id: str, action: str = "approve", *, answer_id: str = "a-1") -> Any:
    body = {"thread_id": "order-1", "question_id": question_id, "answer": {"action": action}, "answer_id": answer_id}
    return router.handle(json.dumps(body), message_id=answer_id, sent_at=T0 + timedelta(minutes=1))


def test_the_router_completes_the_callback_once_and_only_then_says_resumed() -> None:
    ledger, completer, announced = InMemoryLedger(), Completer(), InMemoryAnnounce()
    router = Router(DURABLE_ONLY, ledger, dead_letter=InMemoryDeadLetter(), announce=[announced], callbacks=completer)
    question_id = durable_question(ledger)

    first = answer(router, question_id)
    again = answer(router, question_id)

    assert first.kind is OutcomeKind.APPLIED
    assert (again.kind, again.reason) == (OutcomeKind.REFUSED, "duplicate")
    assert completer.calls == [(CALLBACK_ID, '{"action":"approve"}')]
    record = ledger.get("order-1", question_id)
    assert record is not None
    assert record.status is QuestionStatus.RESUMED
    assert [e.type for e in announced.of(Transition.RESUMED)] == ["wait.resumed"]


def test_a_callback_failing_for_now_retries_the_message_and_the_row_stays_answered() -> None:
    ledger = InMemoryLedger()
    completer = Completer(fail=[CallbackUnavailableError("throttled", code="TooManyRequestsException")])
    router = Router(DURABLE_ONLY, ledger, dead_letter=InMemoryDeadLetter(), callbacks=completer)
    question_id = durable_question(ledger)

    with pytest.raises(CallbackUnavailableError):
        answer(router, question_id)
    record = ledger.get("order-1", question_id)
    assert record is not None
    assert record.status is QuestionStatus.ANSWERED, "decided, not resumed: SQS delivers the message again"

    assert answer(router, question_id).kind is OutcomeKind.APPLIED
    assert len(completer.calls) == 1


def test_a_refused_callback_is_dead_lettered_and_the_thread_goes_on() -> None:
    ledger, dead_letter = InMemoryLedger(), InMemoryDeadLetter()
    completer = Completer(fail=[CallbackRefusedError("timed out", code="CallbackTimeoutException")])
    router = Router(DURABLE_ONLY, ledger, dead_letter=dead_letter, callbacks=completer)
    question_id = durable_question(ledger)

    outcome = answer(router, question_id)

    assert (outcome.kind, outcome.reason) == (OutcomeKind.DEAD_LETTERED, DeadLetterReason.CALLBACK_REFUSED.value)
    assert "CallbackTimeoutException" in outcome.detail
    record = ledger.get("order-1", question_id)
    assert record is not None
    assert (record.status, record.resumed_at) == (QuestionStatus.FAILED, None)
    assert ledger.thread_failure("order-1") is None
    assert [letter.reason for letter in dead_letter.records] == ["callback_refused"]


def test_a_router_that_completes_no_callbacks_fails_the_thread_saying_how_to_build_it() -> None:
    ledger, dead_letter = InMemoryLedger(), InMemoryDeadLetter()
    router = Router(CallbacksOnly(), ledger, dead_letter=dead_letter)
    question_id = durable_question(ledger)

    outcome = answer(router, question_id)

    assert (outcome.kind, outcome.reason) == (OutcomeKind.DEAD_LETTERED, "agent_failed")
    assert isinstance(outcome.error, ConfigurationError)
    assert "Router(callbacks=agent_wait.aws.callbacks.LambdaCallbacks())" in str(outcome.error)
    failure = ledger.thread_failure("order-1")
    assert failure is not None
    assert failure.error == "ConfigurationError"


def test_a_durable_only_router_refuses_a_start_saying_how_durable_executions_start() -> None:
    router = Router(DURABLE_ONLY, InMemoryLedger(), dead_letter=InMemoryDeadLetter())

    outcome = router.handle(json.dumps({"thread_id": "order-2", "input": {"order": "A-2"}}), message_id="m-1")

    assert outcome.kind is OutcomeKind.DEAD_LETTERED
    assert "start a durable execution by invoking its function" in str(outcome.error)
    assert DURABLE_ONLY.agent_wait_adapter(checkpoint_table="t", client=None) is DURABLE_ONLY
