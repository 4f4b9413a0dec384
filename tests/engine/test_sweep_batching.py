"""The sweep sends deadline answers in batches, and one answer SQS refuses never holds back the others.

Runs on the embedded moto server; SQS calls are counted with botocore event hooks on the session the
sweep's clients are built from, exactly as `build_sweep` builds them for the Lambda.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.support.aws_stack import REGION, HostStack

from agent_wait.aws.ledger import DynamoDbLedger
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.messages import DEADLINE_ORIGIN, deadline_answer_id, group_id_for
from agent_wait.engine import RecordingMetrics, SqsEntryQueue, Sweep
from agent_wait.engine.metrics import METRIC_NAMES
from agent_wait.host import HostSettings, build_sweep
from agent_wait.policy import WaitPolicy

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)
LATER = T0 + timedelta(hours=2)  # every question below has a one-hour deadline
SWEEP_ERRORS = METRIC_NAMES["sweep_errors"]


def open_overdue(ledger: DynamoDbLedger, prefix: str, count: int) -> list[tuple[str, str]]:
    """`count` open, announced questions asked at T0 with a one-hour deadline; returns (thread_id, question_id)."""
    opened = []
    for n in range(count):
        thread_id, question_id = f"{prefix}-{n:02d}", f"{prefix}-q{n:02d}"
        question = Question(
            thread_id,
            question_id,
            {"function": "issue_refund", "args": {"order_id": f"o-{n}", "amount": 900}},
            WaitPolicy(timeout="PT1H", default={"action": "reject", "reason": "timeout"}),
            source={"function": "issue_refund"},
            asked_at=T0,
        )
        opened_row = ledger.open(WaitEnvelope.create(question, now=T0), now=T0).record
        ledger.mark_announced(thread_id, question_id, due_at=opened_row.next_due(announced=True))
        opened.append((thread_id, question_id))
    return opened


@dataclass
class SqsCalls:
    """Counts SQS operations made through one boto3 session; can make SQS refuse chosen entries of a batch."""

    calls: Counter[str] = field(default_factory=Counter)
    refuse_groups: set[str] = field(default_factory=set)
    """Entries of a SendMessageBatch in these groups are refused, as SQS refuses an entry it finds invalid."""

    def register(self, session: Any) -> None:
        session.events.register("before-call.sqs.*", self._count)
        session.events.register("before-parameter-build.sqs.SendMessageBatch", self._drop_refused)
        session.events.register("after-call.sqs.SendMessageBatch", self._report_refused)

    def _count(self, event_name: str, **_: Any) -> None:
        self.calls[event_name.rsplit(".", 1)[-1]] += 1

    def _drop_refused(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        refused = [entry for entry in params["Entries"] if entry["MessageGroupId"] in self.refuse_groups]
        params["Entries"] = [entry for entry in params["Entries"] if entry not in refused]
        context["refused_ids"] = [entry["Id"] for entry in refused]

    def _report_refused(self, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        for entry_id in context.get("refused_ids", []):
            parsed.setdefault("Failed", []).append(
                {"Id": entry_id, "SenderFault": True, "Code": "InvalidParameterValue", "Message": "refused"}
            )


@pytest.fixture
def counted(host: HostStack) -> tuple[Sweep, SqsCalls, RecordingMetrics]:
    """The sweep as the Lambda builds it, on the host stack, its SQS calls counted; its clock past T0's deadlines."""
    import boto3

    calls, metrics = SqsCalls(), RecordingMetrics()
    session = boto3.Session(region_name=REGION)
    calls.register(session)
    sweep = build_sweep(HostSettings.from_env("sweep"), session=session, metrics=metrics)
    sweep.clock = lambda: LATER
    return sweep, calls, metrics


def test_twenty_five_overdue_questions_are_sent_in_three_send_message_batch_calls(
    host: HostStack, counted: tuple[Sweep, SqsCalls, RecordingMetrics], unique: str
) -> None:
    # GIVEN 25 open questions past their deadline
    sweep, calls, _ = counted
    opened = open_overdue(host.ledger(), f"batch-{unique}", 25)

    # WHEN the sweep runs
    report = sweep.run()

    # THEN their defaults went out in 3 SendMessageBatch calls (10 + 10 + 5) and not one SendMessage
    assert calls.calls["SendMessageBatch"] == 3, calls.calls
    assert calls.calls["SendMessage"] == 0, calls.calls
    assert sorted(report.expired_sent) == sorted(question_id for _, question_id in opened)
    assert report.send_failed == ()
    assert report.failed_steps == ()
    assert report.ok
    # ... each in its thread's group, deduplicated on its deadline answer id, marked as the deadline's
    messages = host.entry_messages()
    assert len(messages) == 25
    for message in messages:
        body = json.loads(message["Body"])
        assert message["Attributes"]["MessageGroupId"] == group_id_for(body["thread_id"])
        assert body["origin"] == DEADLINE_ORIGIN
        assert body["answer_id"] == deadline_answer_id(body["question_id"])
        assert body["answer"] == {"action": "reject", "reason": "timeout"}


def test_a_deadline_answer_sqs_refuses_is_logged_and_counted_and_the_others_are_sent(
    host: HostStack,
    counted: tuple[Sweep, SqsCalls, RecordingMetrics],
    unique: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # GIVEN 12 overdue questions, and SQS refusing the entry of one of them
    sweep, calls, metrics = counted
    opened = open_overdue(host.ledger(), f"refuse-{unique}", 12)
    bad_thread, bad_question = opened[4]
    calls.refuse_groups = {group_id_for(bad_thread)}
    caplog.set_level(logging.INFO, logger="agent_wait.host")

    # WHEN the sweep runs
    report = sweep.run()

    # THEN the other 11 are sent, the refused one is reported, logged with its ids and code, and counted
    assert report.send_failed == (bad_question,)
    assert sorted(report.expired_sent) == sorted(q for _, q in opened if q != bad_question)
    assert report.failed_steps == ()
    assert not report.ok
    sent = [json.loads(m["Body"]) for m in host.entry_messages()]
    assert sorted(b["question_id"] for b in sent) == sorted(report.expired_sent)
    assert metrics.counts[(SWEEP_ERRORS, "send")] == 1
    (line,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert (line.thread_id, line.question_id, line.error_code) == (bad_thread, bad_question, "InvalidParameterValue")  # type: ignore[attr-defined]
    assert "issue_refund" not in caplog.text
    assert "o-4" not in caplog.text
    # ... and the question stays open, so the next run sends it
    assert host.ledger().get(bad_thread, bad_question).status.value == "open"  # type: ignore[union-attr]
    calls.refuse_groups = set()
    assert bad_question in sweep.run().expired_sent


def test_a_batch_call_sqs_fails_as_a_whole_fails_only_its_own_messages(
    host: HostStack, moto_server: str, unique: str
) -> None:
    # GIVEN 15 messages for the entry queue, and SQS failing the second SendMessageBatch call as a whole
    import boto3

    from agent_wait.engine.entry_queue import EntryMessage

    session = boto3.Session(region_name=REGION)
    seen: list[str] = []

    def fail_second_call(params: dict[str, Any], **_: Any) -> None:
        seen.append(params["QueueUrl"])
        if len(seen) == 2:
            params["QueueUrl"] = params["QueueUrl"].replace(".fifo", "-missing.fifo")

    session.events.register("before-parameter-build.sqs.SendMessageBatch", fail_second_call)
    queue = SqsEntryQueue(host.queue_url, client=session.client("sqs", endpoint_url=moto_server))
    messages = [EntryMessage({"thread_id": f"t-{n}", "n": n}, f"t-{unique}-{n}", f"d-{unique}-{n}") for n in range(15)]

    # WHEN they are sent as one batch
    failures = queue.send_batch(messages)

    # THEN the first ten are sent; the last five fail, each with the call's error code, and nothing raised
    assert len(seen) == 2
    assert [f.index for f in failures] == list(range(10, 15))
    assert {f.code for f in failures} <= {"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"}
    assert [f.entry for f in failures] == messages[10:]
    assert sorted(json.loads(m["Body"])["n"] for m in host.entry_messages()) == list(range(10))


def test_a_batch_over_sqs_payload_limit_is_split_into_calls_that_fit(host: HostStack, moto_server: str) -> None:
    # GIVEN four messages of about 100 KiB each: 400 KiB, more than one SendMessageBatch may carry
    import boto3

    from agent_wait.engine.entry_queue import MAX_BATCH_BYTES, EntryMessage

    session = boto3.Session(region_name=REGION)
    calls: list[int] = []
    session.events.register(
        "before-parameter-build.sqs.SendMessageBatch", lambda params, **_: calls.append(len(params["Entries"]))
    )
    queue = SqsEntryQueue(host.queue_url, client=session.client("sqs", endpoint_url=moto_server))
    padding = "x" * (100 * 1024)
    messages = [EntryMessage({"n": n, "pad": padding}, f"big-{n}", f"big-{n}") for n in range(4)]

    # WHEN they are sent
    failures = queue.send_batch(messages)

    # THEN two calls of two carry them (each within 256 KiB), and every message arrives
    assert failures == []
    assert calls == [2, 2]
    assert 2 * len(padding) < MAX_BATCH_BYTES < 3 * len(padding)
    assert sorted(json.loads(m["Body"])["n"] for m in host.entry_messages()) == [0, 1, 2, 3]
