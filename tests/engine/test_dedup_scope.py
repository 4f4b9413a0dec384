"""The entry queue deduplicates within a message group (one thread), and nothing in the host needs more.

The constructs create both FIFO queues in high-throughput mode (`DeduplicationScope=messageGroup`): SQS
compares a deduplication id only with ids of the same group. That is safe because the router's own
idempotency keys are per thread too: a start is remembered under (thread, start id) and an answer is judged
on its own question, so two threads reusing one id never stand for the same message. These tests pin that,
and pin that moto does not model group scope (so no test here can show SQS delivering both).
"""

from __future__ import annotations

import json

from tests.support.aws_stack import HostStack, answer_message, start_message

from agent_wait.contract.messages import group_id_for
from agent_wait.contract.schema import ENTRY_QUEUE, QuestionStatus
from agent_wait.engine import OutcomeKind
from agent_wait.host import HostSettings, build_router


def test_two_threads_starting_under_one_deduplication_id_both_run(host: HostStack, unique: str) -> None:
    # GIVEN two threads whose starts carry the same transport deduplication id and no start id
    router = build_router(HostSettings.from_env("router"))
    threads = [f"order-{unique}-a", f"order-{unique}-b"]

    # WHEN each start arrives in its own thread's group
    outcomes = [
        router.handle(json.dumps(start_message(t, f"o-{n}")), deduplication_id="nightly-1", group_id=group_id_for(t))
        for n, t in enumerate(threads)
    ]

    # THEN both ran and parked on a question: the router remembers a start per thread, not per queue
    assert [o.kind for o in outcomes] == [OutcomeKind.STARTED, OutcomeKind.STARTED]
    assert all(len(o.asked) == 1 for o in outcomes)
    # ... and the same id again on one of them is that thread's redelivery: replayed, not run again
    again = router.handle(
        json.dumps(start_message(threads[0], "o-0")), deduplication_id="nightly-1", group_id=group_id_for(threads[0])
    )
    assert again.kind is OutcomeKind.START_REPLAYED


def test_two_threads_answered_under_one_answer_id_are_both_decided(host: HostStack, unique: str) -> None:
    # GIVEN two parked threads
    router = build_router(HostSettings.from_env("router"))
    threads = [f"order-{unique}-a", f"order-{unique}-b"]
    asked = {t: router.handle(json.dumps(start_message(t, f"o-{t}"))).asked[0] for t in threads}

    # WHEN each is answered with the same answer id (and the same deduplication id, as the API hands over)
    outcomes = [
        router.handle(
            json.dumps(answer_message(t, asked[t], answer_id="finance-1")),
            deduplication_id="finance-1",
            group_id=group_id_for(t),
        )
        for t in threads
    ]

    # THEN both answers won their own question: an answer id is judged per question, never queue-wide
    assert [o.kind for o in outcomes] == [OutcomeKind.APPLIED, OutcomeKind.APPLIED]
    ledger = host.ledger()
    for thread_id in threads:
        record = ledger.get(thread_id, asked[thread_id])
        assert record is not None
        assert record.status is QuestionStatus.RESUMED
        assert record.answer_id == "finance-1"


def test_moto_accepts_high_throughput_attributes_but_deduplicates_across_groups(host: HostStack, unique: str) -> None:
    """A fact about the emulator (moto 5.2.x), not about SQS.

    SQS in `messageGroup` scope delivers both messages below: they are in different groups. moto keeps the
    attributes but compares deduplication ids across the whole queue, so it drops the second. If this test
    fails, moto has learned group scope: turn it into a test that both messages arrive.
    """
    # GIVEN a queue in the entry queue's high-throughput mode, as the constructs create it
    attributes = {
        "FifoQueue": "true",
        "ContentBasedDeduplication": "true",
        "DeduplicationScope": ENTRY_QUEUE.deduplication_scope,
        "FifoThroughputLimit": ENTRY_QUEUE.fifo_throughput_limit,
    }
    queue_url = host.sqs.create_queue(QueueName=f"scope-{unique}.fifo", Attributes=attributes)["QueueUrl"]
    reported = host.sqs.get_queue_attributes(
        QueueUrl=queue_url, AttributeNames=["DeduplicationScope", "FifoThroughputLimit"]
    )["Attributes"]
    assert reported == {"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}

    # WHEN two threads' messages share one deduplication id, each in its own group
    for thread_id in (f"a-{unique}", f"b-{unique}"):
        host.sqs.send_message(
            QueueUrl=queue_url,
            MessageBody=json.dumps({"thread_id": thread_id}),
            MessageGroupId=group_id_for(thread_id),
            MessageDeduplicationId="same-id",
        )

    # THEN moto holds one of them (SQS would hold both)
    received = host.sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])
    assert len(received) == 1
