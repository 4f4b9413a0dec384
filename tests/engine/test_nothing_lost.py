"""Nothing is lost: a failed announcement is retried by the sweep; a message the router cannot process
goes to the dead-letter queue with its reason, and is neither dropped nor retried forever."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import tests.agents.graphs as graphs
from langgraph.checkpoint.memory import InMemorySaver
from tests.support.aws_stack import (
    FakeLambdaContext,
    HostStack,
    answer_message,
    reset_handlers,
    run_router,
    sqs_event,
    sqs_record,
    start_message,
)

from agent_wait import BaseAnnounce, InMemoryAnnounce
from agent_wait.common.times import format_rfc3339, utc_now
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus, Settings
from agent_wait.engine import InMemoryDeadLetter, InMemoryEntryQueue, OutcomeKind, RecordingMetrics, Router, Sweep
from agent_wait.engine.dead_letter import REASON_ATTRIBUTE
from agent_wait.engine.metrics import METRIC_NAMES
from agent_wait.host import HostSettings, build_router, build_sweep
from agent_wait.host.links import LinkKeys, verify_token
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)


class BrokenAnnounce(BaseAnnounce):
    """An announcer whose backend is down."""

    name = "broken"

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        raise ConnectionError("backend unreachable")


def test_a_question_whose_announcement_failed_stays_in_the_ledger_and_the_sweep_announces_it(
    host: HostStack, unique: str
) -> None:
    # GIVEN a router whose only announcer is down
    metrics = RecordingMetrics()
    router = build_router(HostSettings.from_env("router"), metrics=metrics)
    router.announcers = (BrokenAnnounce(),)
    router.clock = lambda: T0
    thread_id = f"order-{unique}"

    # WHEN a start parks the thread on a question
    outcome = router.handle(json.dumps(start_message(thread_id, f"o-{unique}")))

    # THEN the run is not disturbed, the failure is counted, and the question waits in the ledger as due
    assert outcome.kind is OutcomeKind.STARTED
    (question_id,) = outcome.asked
    assert metrics.counts[(METRIC_NAMES["announce_failed"], "broken")] == 1
    ledger = host.ledger()
    assert [r.question_id for r in ledger.due(T0, limit=10)] == [question_id]
    waiting = ledger.get(thread_id, question_id)
    assert waiting is not None
    assert waiting.announced is False
    assert waiting.due_at == format_rfc3339(T0)  # due at once: the sweep retries it

    # WHEN the sweep runs inside the announce grace (the router may still be announcing)
    sweep = build_sweep(HostSettings.from_env("sweep"))
    sweep.clock = lambda: T0 + sweep.announce_grace - timedelta(seconds=1)
    assert sweep.run().reannounced == ()

    # ... and again once the grace has passed
    sweep.clock = lambda: T0 + sweep.announce_grace + timedelta(seconds=1)
    report = sweep.run()

    # THEN it announced the question (on SNS) and the question is due next only at what its policy sets
    assert report.reannounced == (question_id,)
    assert host.types_for(question_id) == ["wait.created"]
    assert ledger.due(T0 + sweep.announce_grace + timedelta(seconds=1), limit=10) == []
    announced = ledger.get(thread_id, question_id)
    assert announced is not None
    assert announced.announced is True
    assert announced.due_at is not None
    assert announced.due_at == announced.next_due() == announced.expires_at
    assert sweep.run().reannounced == ()


def test_a_question_announced_at_once_is_written_once(host: HostStack, unique: str) -> None:
    # GIVEN a router on the emulator whose announcers work, and every write it makes to the question table watched
    import boto3

    session = boto3.Session(region_name="us-east-1")
    writes: list[tuple[str, str]] = []

    def watch(params: dict[str, Any], model: Any, **_: Any) -> None:
        if model.name in {"PutItem", "UpdateItem"} and params.get("TableName") == host.table:
            key = params.get("Item") or params.get("Key") or {}
            writes.append((model.name, key["sk"]["S"]))

    session.events.register("before-parameter-build.dynamodb.*", watch)
    router = build_router(HostSettings.from_env("router"), session=session)
    thread_id = f"order-{unique}"

    # WHEN a start parks the thread on a question, announced on SNS at once
    (question_id,) = router.handle(json.dumps(start_message(thread_id, f"o-{unique}"))).asked

    # THEN the question's row was written once, by its put: a successful announcement writes nothing
    assert host.types_for(question_id) == ["wait.created"]
    assert [name for name, sort_key in writes if sort_key.endswith(question_id)] == ["PutItem"]
    row = host.ledger().get(thread_id, question_id)
    assert row is not None
    assert row.announced
    assert row.due_at == row.expires_at  # due only at its deadline


def test_the_sweeps_re_announcement_carries_the_signed_links_the_first_would_have(
    host: HostStack, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a deployment whose SNS envelopes carry signed answer links, and a router whose announcement fails
    import boto3

    secrets = boto3.client("secretsmanager", region_name="us-east-1", endpoint_url=host.endpoint)
    keys = json.dumps({"active": "k1", "k1": "k" * 48})
    arn = secrets.create_secret(Name=f"link-keys-{unique}", SecretString=keys)["ARN"]
    api_url = "https://answers.example.com"
    monkeypatch.setenv(Settings.API_URL.value, api_url)
    monkeypatch.setenv(Settings.LINK_KEYS_ARN.value, arn)
    monkeypatch.setenv(Settings.LINK_ANNOUNCERS.value, "sns")
    router = build_router(HostSettings.from_env("router"))
    router.announcers = (BrokenAnnounce(),)
    asked_at = utc_now()  # links are signed for now, and expire with the question
    router.clock = lambda: asked_at
    (question_id,) = router.handle(json.dumps(start_message(f"order-{unique}", f"o-{unique}"))).asked

    # WHEN the sweep announces it once the grace has passed
    sweep = build_sweep(HostSettings.from_env("sweep"))
    sweep.clock = lambda: asked_at + sweep.announce_grace + timedelta(seconds=1)
    assert sweep.run().reannounced == (question_id,)

    # THEN the envelope SNS delivered has one working link per action, as the router's would have
    (created,) = [e for e in host.announcements() if e["question_id"] == question_id]
    links = created["reply_to"]["links"]
    assert sorted(links) == ["approve", "reject"]
    assert links["approve"].startswith(f"{api_url}/questions/{question_id}/confirm#")
    token = links["approve"].split("#", 1)[1]
    claims = verify_token(LinkKeys.parse(keys), token, question_id=question_id, now=utc_now())
    assert claims.action == "approve"


def test_a_broken_announcer_never_raises_into_the_run_and_the_others_still_deliver(unique: str) -> None:
    # GIVEN a router with a broken announcer beside a working one
    memory, metrics, ledger = InMemoryAnnounce(), RecordingMetrics(), InMemoryLedger()
    router = Router(
        LangGraphAdapter(graphs.build_graph(InMemorySaver())),
        ledger,
        dead_letter=InMemoryDeadLetter(),
        announce=[BrokenAnnounce(), memory],
        metrics=metrics,
    )
    thread_id, order_id = f"order-{unique}", f"o-{unique}"

    # WHEN a whole lifecycle runs
    (question_id,) = router.handle(json.dumps(start_message(thread_id, order_id))).asked
    applied = router.handle(
        json.dumps({"thread_id": thread_id, "question_id": question_id, "answer": {"action": "approve"}})
    )

    # THEN the agent ran as if nothing failed, the working announcer delivered wait.created, and the failure was
    # counted; what follows waits behind the wait.created still owed (never before it, for any announcer)
    assert applied.kind is OutcomeKind.APPLIED
    assert graphs.refunds_paid(order_id) == 1
    assert [t.value for t, _ in memory.events] == ["created"]
    assert metrics.counts[(METRIC_NAMES["announce_failed"], "broken")] == 1

    # WHEN the sweep runs with the same announcers
    sweep = Sweep(ledger, InMemoryEntryQueue(), announce=[BrokenAnnounce(), memory], metrics=metrics)
    sweep.clock = lambda: utc_now() + timedelta(minutes=2)
    sweep.run()

    # THEN the working announcer delivered every transition, in order (wait.created again, a repeat its consumer
    # drops by dedupe_key); the broken one was sent nothing after the wait.created it failed again
    assert [t.value for t, _ in memory.events] == ["created", "created", "answered", "resumed"]
    assert metrics.counts[(METRIC_NAMES["announce_failed"], "broken")] == 2


MALFORMED: dict[str, str] = {
    "not_json": "this is { not JSON",
    "not_object": "[1, 2, 3]",
    "bad_thread_id": json.dumps({"input": {"order_id": "o-1", "amount": 900}}),
    "bad_thread_id:type": json.dumps({"thread_id": 4471, "input": {}}),
    "missing_input": json.dumps({"thread_id": "order-1"}),
    "missing_answer": json.dumps({"thread_id": "order-1", "question_id": "q-1"}),
    "bad_valid_until": json.dumps(
        {"thread_id": "order-1", "question_id": "q-1", "answer": {"action": "approve"}, "valid_until": "tomorrow"}
    ),
    "bad_origin": json.dumps(
        {"thread_id": "order-1", "question_id": "q-1", "answer": {"action": "approve"}, "origin": "human"}
    ),
}


# Dead-letter metrics carry a reason dimension, so they flush on their own; Powertools then warns that the
# batch's own metric set is empty.
@pytest.mark.filterwarnings("ignore:No application metrics to publish")
def test_malformed_messages_go_to_the_dead_letter_queue_with_their_reason_and_are_not_retried(
    host: HostStack, lambda_context: FakeLambdaContext
) -> None:
    # GIVEN a batch of malformed messages, each in its own group
    records = [sqs_record(body, group_id=f"g-{i}") for i, body in enumerate(MALFORMED.values())]

    # WHEN the router handles it
    from agent_wait.host import router

    response = router.handler(sqs_event(*records), lambda_context)

    # THEN no record is reported as failed (SQS will not retry them forever) ...
    assert response == {"batchItemFailures": []}
    # ... and every one is in the DLQ, body intact, with its reason
    dead = {m["Body"]: m["MessageAttributes"][REASON_ATTRIBUTE]["StringValue"] for m in host.dead_letters()}
    assert dead == {body: case.split(":")[0] for case, body in MALFORMED.items()}


def test_a_malformed_message_is_reported_as_failed_when_the_dead_letter_queue_refuses_it(
    host: HostStack, lambda_context: FakeLambdaContext, monkeypatch: pytest.MonkeyPatch, unique: str
) -> None:
    # GIVEN a router whose dead-letter queue does not exist
    monkeypatch.setenv(Settings.DLQ_URL.value, f"{host.endpoint}/123456789012/missing-{unique}.fifo")
    reset_handlers()
    malformed = sqs_record("not JSON", group_id="g-malformed")
    healthy = sqs_record(start_message(f"order-{unique}", f"o-{unique}"), group_id=f"order-{unique}")

    # WHEN the router handles a batch with a malformed message and a healthy start
    from agent_wait.host import router

    response: dict[str, Any] = router.handler(sqs_event(malformed, healthy), lambda_context)

    # THEN the malformed message is reported as failed (kept for SQS to retry, then redrive), the other applied
    assert response == {"batchItemFailures": [{"itemIdentifier": malformed["messageId"]}]}
    assert len(host.ledger().questions(f"order-{unique}")) == 1


# -- lifecycle envelopes, at least once -------------------------------------------------------------------------


def test_lifecycle_envelopes_that_fail_to_publish_are_owed_on_the_row_and_the_sweep_publishes_them(
    host: HostStack, unique: str
) -> None:
    # GIVEN a parked question, and SNS down when the answer comes
    router = build_router(HostSettings.from_env("router"))
    working = router.announcers
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    (question_id,) = router.handle(json.dumps(start_message(thread_id, order_id))).asked
    router.announcers = (BrokenAnnounce(),)
    answer = {"thread_id": thread_id, "question_id": question_id, "answer": {"action": "approve"}}

    # WHEN the answer applies (the agent resumes) while wait.answered and wait.resumed cannot be published
    assert router.handle(json.dumps(answer)).kind is OutcomeKind.APPLIED
    router.announcers = working

    # THEN the row owes both and is due at once
    owed = host.ledger().get(thread_id, question_id)
    assert owed is not None
    assert (owed.status, sorted(owed.notices)) == (QuestionStatus.RESUMED, ["answered", "resumed"])
    assert owed.due_at is not None
    assert host.types_for(question_id) == ["wait.created"]

    # WHEN the sweep runs
    sweep = build_sweep(HostSettings.from_env("sweep"))
    report = sweep.run()

    # THEN it published both on SNS (with their dedupe keys), and the row owes nothing and is never due again
    assert report.told == (question_id,)
    assert sorted(host.types_for(question_id)) == ["wait.answered", "wait.created", "wait.resumed"]
    told = host.ledger().get(thread_id, question_id)
    assert told is not None
    assert (told.notices, told.due_at) == ((), None)
    assert sweep.run().told == ()
    assert graphs.refunds_paid(order_id) == 1


def test_a_crash_between_the_resume_and_its_announcement_is_told_on_redelivery(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str
) -> None:
    # GIVEN a parked question, and a router that dies right after the agent resumed, before wait.resumed went out
    from agent_wait.host import router as hosted

    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    run_router(sqs_record(start_message(thread_id, order_id), group_id=thread_id), context=lambda_context)
    (question,) = host.ledger().questions(thread_id)
    questions = hosted._router().questions
    announce = questions.announce

    def dies_before_resumed(envelope: WaitEnvelope, transition: Transition, **kwargs: Any) -> Any:
        if transition is Transition.RESUMED:
            raise graphs.SimulatedCrashError("the function timed out before it told anyone")
        return announce(envelope, transition, **kwargs)

    questions.announce = dies_before_resumed  # type: ignore[method-assign]
    approve = sqs_record(answer_message(thread_id, question.question_id), group_id=thread_id)
    try:
        with pytest.raises(graphs.SimulatedCrashError):
            run_router(approve, context=lambda_context)
    finally:
        del questions.announce
    assert "wait.resumed" not in host.types_for(question.question_id)

    # WHEN SQS delivers the message again
    redelivered = {**approve, "attributes": {**approve["attributes"], "ApproximateReceiveCount": "2"}}
    assert run_router(redelivered, context=lambda_context) == {"batchItemFailures": []}

    # THEN wait.resumed went out (and wait.answered again: consumers drop it by its dedupe key), the refund ran once
    types = host.types_for(question.question_id)
    assert (types.count("wait.answered"), types.count("wait.resumed")) == (2, 1)
    assert graphs.refunds_paid(order_id) == 1


def test_a_crash_between_cancelling_a_question_and_telling_it_is_told_on_redelivery(
    host: HostStack, unique: str
) -> None:
    # GIVEN a thread parked on a question, and a new turn whose attempt dies right after cancelling it
    router = build_router(HostSettings.from_env("router"))
    thread_id, order_id = f"order-{unique}", f"o-{unique}"
    (moved_past,) = router.handle(json.dumps(start_message(thread_id, order_id, start_id="s-1"))).asked
    announce = router.questions.announce

    def dies_before_cancelled(envelope: WaitEnvelope, transition: Transition, **kwargs: Any) -> Any:
        if transition is Transition.CANCELLED:
            raise graphs.SimulatedCrashError("the function timed out before it told anyone")
        return announce(envelope, transition, **kwargs)

    router.questions.announce = dies_before_cancelled  # type: ignore[method-assign]
    new_turn = json.dumps(start_message(thread_id, f"{order_id}-2", start_id="s-2"))
    try:
        with pytest.raises(graphs.SimulatedCrashError):
            router.handle(new_turn)
    finally:
        del router.questions.announce
    row = host.ledger().get(thread_id, moved_past)
    assert row is not None
    assert row.status is QuestionStatus.CANCELLED
    assert "wait.cancelled" not in host.types_for(moved_past)

    # WHEN SQS delivers the new turn again
    outcome = router.handle(new_turn, redelivered=True)

    # THEN the cancellation is told, once, and the new turn's question is asked
    assert outcome.kind is OutcomeKind.STARTED, outcome
    assert host.types_for(moved_past).count("wait.cancelled") == 1
