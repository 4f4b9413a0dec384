"""A durable function asks through agent-wait; the one engine decides; the router completes its callback.

The durable handler runs under the SDK's own local runner (`aws-durable-execution-sdk-python-testing`), whose
Lambda API is served over real HTTP by the SDK's own web server, so the router's boto3 Lambda client
(`LambdaCallbacks`, `endpoint_url`) completes callbacks exactly as it would on AWS. The ledger is `DynamoDbLedger` on
the embedded emulator (moto); people answer through the answer API (`create_app`) with JWT claims, the sweep applies
deadlines, and the router applies what they decided. One stack serves the module; every test asks on its own
execution.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aws_durable_execution_sdk_python import CallbackTimeoutError, DurableContext, durable_execution
from aws_durable_execution_sdk_python_testing.runner import DurableFunctionTestRunner
from tests.support.api_events import Response, call
from tests.support.durable_lambda import lambda_api_server

from agent_wait.asking.callbacks import CallbacksOnly, callback_id_of, callback_question_id
from agent_wait.aws import DynamoDbLedger
from agent_wait.aws.callbacks import LambdaCallbacks
from agent_wait.contract.announcer import BaseAnnounce
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.contract.schema import QUESTION_TABLE, QuestionStatus
from agent_wait.durable import CALLBACK_MARGIN, ask
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.engine.dead_letter import InMemoryDeadLetter
from agent_wait.engine.outcomes import DeadLetterReason, Outcome, OutcomeKind
from agent_wait.engine.router import Router
from agent_wait.engine.sweep import Sweep
from agent_wait.host.api import ApiContext, create_app
from agent_wait.policy import WaitPolicy

REGION = "us-east-1"
ISSUER = "https://issuer.example.com"
ALICE = {"iss": ISSUER, "sub": "u-alice", "email": "alice@example.com", "cognito:groups": "[finance]"}
BOB = {"iss": ISSUER, "sub": "u-bob", "email": "bob@example.com", "cognito:groups": "[finance]"}
POLICIES = {
    "refund": WaitPolicy(timeout="PT1H", default={"action": "reject"}, allowed_actions=("approve", "reject")),
    "quorum": WaitPolicy(timeout="PT1H", default={"action": "reject"}, allowed_actions=("approve", "reject"), quorum=2),
    "hasty": WaitPolicy(timeout="PT1S", default={"action": "reject"}, allowed_actions=("approve", "reject")),
    "twice": WaitPolicy(),  # the handler asks twice under "refund"
}
MARGINS = {"hasty": timedelta(0)}
"""Policies whose callback waits no longer than the deadline (the default margin otherwise)."""


class Announced(BaseAnnounce):
    """Keeps every envelope; a test waits on it for the question its execution asks."""

    name = "memory"

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[Transition, WaitEnvelope]] = []
        self._changed = threading.Condition()

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        with self._changed:
            self.events.append((transition, envelope))
            self._changed.notify_all()

    def created_on(self, thread_id: str, *, nth: int = 1, timeout: float = 20.0) -> WaitEnvelope:
        """The `wait.created` envelope of the `nth` question asked on `thread_id`, once the submitter announced it."""

        def found() -> WaitEnvelope | None:
            created = [e for t, e in self.events if t is Transition.CREATED and e.thread_id == thread_id]
            asked = list(dict.fromkeys(e.question_id for e in created))
            if len(asked) < nth:
                return None
            return next(e for t, e in self.events if t is Transition.CREATED and e.question_id == asked[nth - 1])

        with self._changed:
            assert self._changed.wait_for(lambda: found() is not None, timeout=timeout), "the question was never asked"
            envelope = found()
        assert envelope is not None
        return envelope

    def types_for(self, question_id: str) -> list[str]:
        return [t.value for t, e in self.events if e.question_id == question_id]


@dataclass
class Stack:
    runner: DurableFunctionTestRunner
    ledger: DynamoDbLedger
    announced: Announced
    router: Router
    queue: InMemoryEntryQueue
    dead_letter: InMemoryDeadLetter
    app: Any
    now: datetime = field(default_factory=lambda: datetime.now(UTC).replace(microsecond=0))
    effects: list[tuple[str, Any]] = field(default_factory=list)

    def clock(self) -> datetime:
        return self.now

    def start(self, policy: str) -> tuple[str, WaitEnvelope]:
        """Start an execution that asks under `policy`; its ARN and the question's `wait.created` envelope."""
        arn = self.runner.run_async(
            input=json.dumps({"order": "A-1", "policy": policy}), execution_name=f"refund-{uuid.uuid4().hex[:12]}"
        )
        return arn, self.announced.created_on(arn)

    def answer(self, question_id: str, action: str, claims: dict[str, Any]) -> Response:
        body = {"answer": {"action": action}}
        return call(self.app, "POST", f"/questions/{question_id}/answer", body, claims=claims)

    def deliver(self) -> list[Outcome]:
        """The router applies every message on the entry queue, in order, as SQS's event source would."""
        outcomes = []
        while self.queue.messages:
            message, group_id, deduplication_id = self.queue.messages.pop(0)
            outcomes.append(
                self.router.handle(
                    json.dumps(message),
                    message_id=str(uuid.uuid4()),
                    deduplication_id=deduplication_id,
                    group_id=group_id,
                    sent_at=self.now,
                )
            )
        return outcomes

    def result(self, arn: str) -> Any:
        finished = self.runner.wait_for_result(arn, timeout=30)
        assert finished.result is not None, f"the execution ended {finished.status}: {finished.error}"
        return json.loads(finished.result)

    def running(self, arn: str) -> bool:
        return self.runner.get_execution_history(arn).events[-1].event_type not in {
            "ExecutionSucceeded",
            "ExecutionFailed",
        }


STACK: dict[str, Stack] = {}
"""The module's stack, which the durable handler reads (a handler takes only its event and context)."""


@durable_execution
def refund(event: dict[str, Any], context: DurableContext) -> dict[str, Any]:
    """A refund agent as a durable function: ask finance, then refund (a step: it runs once) only if approved."""
    stack = STACK["stack"]
    policy = POLICIES[event["policy"]]
    arn = context.execution_context.durable_execution_arn
    question = {"function": "refund", "args": {"order": event["order"], "amount": 900}}
    if event["policy"] == "twice":  # finance, then the warehouse: two questions on one execution, in turn
        first = ask(context, question, POLICIES["refund"], ledger=stack.ledger, announce=[stack.announced], name="f")
        ship = {"function": "ship", "args": {"order": event["order"]}}
        second = ask(context, ship, POLICIES["refund"], ledger=stack.ledger, announce=[stack.announced], name="w")
        return {"answers": [first, second]}
    margin = MARGINS.get(event["policy"], CALLBACK_MARGIN)
    try:
        answer = ask(
            context, question, policy, ledger=stack.ledger, announce=[stack.announced], clock=stack.clock, margin=margin
        )
    except CallbackTimeoutError as exc:
        return {"error": type(exc).__name__}

    def carry_on(_: Any) -> str:
        stack.effects.append((arn, answer))
        return "refunded" if answer.get("action") == "approve" else "declined"

    return {"answer": answer, "outcome": context.step(carry_on, name="refund")}


@pytest.fixture(scope="module")
def stack(moto_server: str) -> Iterator[Stack]:
    import boto3

    dynamodb = boto3.client("dynamodb", region_name=REGION, endpoint_url=moto_server)
    table = f"durable-questions-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(**QUESTION_TABLE.create_table_request(table))
    ledger = DynamoDbLedger(table, client=dynamodb)
    runner = DurableFunctionTestRunner(refund, poll_interval=0.01, skip_time=False, region=REGION)
    announced = Announced()
    queue = InMemoryEntryQueue()
    dead_letter = InMemoryDeadLetter()

    def now() -> datetime:
        return STACK["stack"].now

    try:
        # The SDK's own Lambda API over HTTP, on the runner's executor (refusing a closed callback as AWS documents
        # it): the callbacks the router completes.
        with lambda_api_server(runner) as endpoint:
            lambda_client = boto3.client(
                "lambda",
                region_name=REGION,
                endpoint_url=endpoint,
                aws_access_key_id="testing",
                aws_secret_access_key="testing",
            )
            router = Router(
                CallbacksOnly(),
                ledger,
                dead_letter=dead_letter,
                announce=[announced],
                clock=now,
                callbacks=LambdaCallbacks(client=lambda_client),
            )
            service = AnswerService(ledger, queue, clock=now)
            app = create_app(lambda: ApiContext(ledger=ledger, service=service, clock=now))
            STACK["stack"] = Stack(runner, ledger, announced, router, queue, dead_letter, app)
            yield STACK["stack"]
    finally:
        STACK.clear()
        runner.close()


def test_an_answer_through_the_api_completes_the_callback_and_the_handler_carries_on_once(stack: Stack) -> None:
    arn, created = stack.start("refund")
    question_id = created.question_id
    callback_id = callback_id_of(created.source)
    assert callback_id is not None
    assert question_id == callback_question_id(callback_id)
    assert created.thread_id == arn, "the thread is the durable execution"
    assert stack.running(arn), "the execution waits on its callback"

    reply = stack.answer(question_id, "approve", ALICE)

    assert reply.status == 200, reply.body
    [outcome] = stack.deliver()
    assert outcome.kind is OutcomeKind.APPLIED
    assert stack.result(arn) == {"answer": {"action": "approve"}, "outcome": "refunded"}
    assert [effect for effect in stack.effects if effect[0] == arn] == [(arn, {"action": "approve"})]
    record = stack.ledger.find(question_id)
    assert record is not None
    assert (record.status, record.outcome, record.via) == (QuestionStatus.RESUMED, QuestionStatus.ANSWERED, "api")
    assert stack.announced.types_for(question_id) == ["created", "answered", "resumed"]

    second = stack.answer(question_id, "reject", BOB)

    assert second.status == 409, second.body
    assert second.json()["reason"] == "already_decided"
    assert stack.deliver() == [], "a refused answer hands nothing to the router"
    assert [effect for effect in stack.effects if effect[0] == arn] == [(arn, {"action": "approve"})]


def test_the_deadline_sends_the_policy_default_through_the_callback(stack: Stack) -> None:
    arn, created = stack.start("refund")
    stack.now += timedelta(hours=1, seconds=1)
    try:
        report = Sweep(stack.ledger, stack.queue, announce=[stack.announced], clock=stack.clock).run()
        assert created.question_id in report.expired_sent
        [outcome] = stack.deliver()
    finally:
        stack.now -= timedelta(hours=1, seconds=1)

    assert outcome.kind is OutcomeKind.APPLIED
    assert stack.result(arn) == {"answer": {"action": "reject"}, "outcome": "declined"}
    record = stack.ledger.find(created.question_id)
    assert record is not None
    assert (record.status, record.outcome) == (QuestionStatus.RESUMED, QuestionStatus.EXPIRED)
    assert record.answered_by == "agent-wait:deadline"


def test_a_two_person_quorum_completes_the_callback_only_on_the_second_person(stack: Stack) -> None:
    arn, created = stack.start("quorum")
    question_id = created.question_id

    first = stack.answer(question_id, "approve", ALICE)

    assert first.status == 202, first.body
    assert [outcome.kind for outcome in stack.deliver()] == [OutcomeKind.VOTED]
    assert stack.running(arn), "one approval of two: the execution still waits"
    assert not [effect for effect in stack.effects if effect[0] == arn]

    second = stack.answer(question_id, "approve", BOB)

    assert second.status == 200, second.body
    assert [outcome.kind for outcome in stack.deliver()] == [OutcomeKind.APPLIED]
    result = stack.result(arn)
    assert result["outcome"] == "refunded"
    assert [vote["by"] for vote in result["answer"]["votes"]] == [f"{ISSUER}#u-alice", f"{ISSUER}#u-bob"], "as a graph"
    assert [effect[1]["action"] for effect in stack.effects if effect[0] == arn] == ["approve"]


def test_a_callback_lambda_refuses_fails_the_question_and_never_says_resumed(stack: Stack) -> None:
    arn, created = stack.start("refund")
    callback_id = callback_id_of(created.source)
    assert callback_id is not None
    stack.runner.send_callback_success(callback_id, result=json.dumps({"action": "reject"}).encode())
    assert stack.result(arn)["outcome"] == "declined", "completed outside agent-wait"

    reply = stack.answer(created.question_id, "approve", ALICE)
    assert reply.status == 200, "the ledger's question was still open: the decision is recorded"
    [outcome] = stack.deliver()

    assert (outcome.kind, outcome.reason) == (OutcomeKind.DEAD_LETTERED, DeadLetterReason.CALLBACK_REFUSED.value)
    record = stack.ledger.find(created.question_id)
    assert record is not None
    assert record.status is QuestionStatus.FAILED
    assert record.resumed_at is None
    assert stack.ledger.thread_failure(arn) is None, "the execution's other questions are still answerable"
    assert "resumed" not in stack.announced.types_for(created.question_id)
    assert stack.announced.types_for(created.question_id)[-1] == "failed"
    assert stack.dead_letter.records[-1].reason == DeadLetterReason.CALLBACK_REFUSED.value


def test_a_callback_that_times_out_before_the_deadline_default_is_refused_and_failed(stack: Stack) -> None:
    # With no margin the callback's own timeout (1 s) comes with the deadline: the execution gets the SDK's
    # CallbackTimeoutError first, and the ledger's default, sent later, can no longer reach it.
    arn, created = stack.start("hasty")
    finished = stack.runner.wait_for_result(arn, timeout=30)
    assert "CallbackTimeoutError" in json.dumps(finished.result or str(finished.error))

    stack.now += timedelta(seconds=2)
    try:
        Sweep(stack.ledger, stack.queue, announce=[stack.announced], clock=stack.clock).run()
        [outcome] = stack.deliver()
    finally:
        stack.now -= timedelta(seconds=2)

    assert (outcome.kind, outcome.reason) == (OutcomeKind.DEAD_LETTERED, DeadLetterReason.CALLBACK_REFUSED.value)
    record = stack.ledger.find(created.question_id)
    assert record is not None
    assert (record.status, record.outcome) == (QuestionStatus.FAILED, QuestionStatus.EXPIRED)


def test_an_execution_that_asks_twice_gets_each_answer_through_the_api_in_turn(stack: Stack) -> None:
    arn, first = stack.start("twice")
    assert stack.answer(first.question_id, "approve", ALICE).status == 200
    assert [outcome.kind for outcome in stack.deliver()] == [OutcomeKind.APPLIED]

    second = stack.announced.created_on(arn, nth=2)
    assert second.question == {"function": "ship", "args": {"order": "A-1"}}
    assert second.question_id != first.question_id
    assert stack.answer(second.question_id, "reject", BOB).status == 200
    assert [outcome.kind for outcome in stack.deliver()] == [OutcomeKind.APPLIED]

    assert stack.result(arn) == {"answers": [{"action": "approve"}, {"action": "reject"}]}
