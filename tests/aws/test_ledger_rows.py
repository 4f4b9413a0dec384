"""The DynamoDB ledger's row: lean (no null attribute, nothing its keys say), under 1 KB for the refund example
decided and resumed, and rows the previous version wrote (full, with nulls) still read and move on."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from examples.refund_agent.graph import FINANCE

from agent_wait.aws import DynamoDbLedger
from agent_wait.aws.items import to_item
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus, shard_key
from agent_wait.ledger import Decision, QuestionRecord
from agent_wait.testing import ledger_contract

_SPEC = importlib.util.spec_from_file_location(
    "bench_capacity", Path(__file__).resolve().parents[2] / "bench" / "_capacity.py"
)
assert _SPEC is not None
assert _SPEC.loader is not None
_capacity: Any = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_capacity)
item_size = _capacity.item_size
"""DynamoDB's item size (the benches' billing rule, pinned in `tests/bench/test_capacity.py`)."""

T0 = ledger_contract.T0


def _raw(client: Any, table: str, envelope: WaitEnvelope) -> dict[str, Any]:
    key = {"pk": {"S": f"THREAD#{envelope.thread_id}"}, "sk": {"S": f"WAIT#{envelope.question_id}"}}
    return client.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]


REFUND_SOURCE = {
    "function": "issue_refund",
    # the version stamp LangGraphAdapter adds (docs/versions.md): the graph's hash, the function's parameters' hash
    "version": "P8xk2Q:a-9Zt0",
}


def _refund_question(unique: str) -> WaitEnvelope:
    """The refund example's question, as its graph asks it (`examples/refund_agent/graph.py`)."""
    question = {"function": "issue_refund", "args": {"order_id": f"order-{unique}", "amount": 900}}
    return WaitEnvelope.create(
        Question(f"refund-{unique}", f"{unique:0>32}", question, FINANCE, source=REFUND_SOURCE, asked_at=T0),
        reply_to={"queue_url": "https://sqs.us-east-1.amazonaws.com/123456789012/refund-agent-entry.fifo"},
        now=T0,
    )


def _nulls(value: dict[str, Any]) -> list[str]:
    return [name for name, attribute in value.items() if "NULL" in attribute]


def test_the_refund_examples_row_is_lean_and_under_one_kilobyte_decided_and_resumed(
    question_table: tuple[str, Any], unique: str
) -> None:
    # GIVEN the refund example's question on the DynamoDB ledger
    name, client = question_table
    ledger = DynamoDbLedger(name, client=client)
    envelope = _refund_question(unique)
    ledger.open(envelope, now=T0)
    asked = _raw(client, name, envelope)

    # WHEN it is announced, approved by finance through the entry queue (who, the queue sender and how recorded),
    # and resumed
    thread, question = envelope.thread_id, envelope.question_id
    ledger.mark_announced(thread, question, due_at="2026-09-11T13:00:00Z")
    answer = {"action": "approve"}
    decision = Decision(
        QuestionStatus.ANSWERED,
        answer,
        "51ffadc5049de96273bccfdab81552398943cbf3a44553f23e75752a6e9504cc",  # a content-based deduplication id
        "finance@example.com",
        sender="AROA3XFRBF535PLBIFPI4:finance-approvals",
        via="queue",
    )
    ledger.decide(thread, question, decision, now=T0)
    decided = _raw(client, name, envelope)
    ledger.mark_resumed(thread, question, now=T0)
    resumed = _raw(client, name, envelope)

    # THEN no row holds a null attribute or what its keys say, each stays under 1 KB (1 WRU a write)
    for row in (asked, decided, resumed):
        assert _nulls(row) == []
        assert not {"thread_id", "reply_with", "type"} & set(row)
        sizes = sorted(((item_size({k: v}), k) for k, v in row.items()), reverse=True)
        assert item_size(row) < 1024, f"{item_size(row)} bytes: {sizes}"

    # ... and it reads back as the envelope it was asked with, with its outcome
    record = ledger.get(thread, question)
    assert record is not None
    assert record.envelope.to_dict() == envelope.to_dict()
    assert (record.status, record.outcome, record.answer, record.via) == (
        QuestionStatus.RESUMED,
        QuestionStatus.ANSWERED,
        answer,
        "queue",
    )


def test_a_row_the_previous_version_wrote_still_reads_decides_resumes_and_lists(
    question_table: tuple[str, Any], unique: str
) -> None:
    # GIVEN rows as the previous version wrote them: every envelope field (nulls, reply_with, thread_id, type),
    # due when asked; one of them resumed there under `resumed#<shard>`
    name, client = question_table
    ledger = DynamoDbLedger(name, client=client)
    tag = {"batch": unique}
    old, old_resumed = (ledger_contract.sample_envelope(tags=tag) for _ in range(2))
    for envelope, status in ((old, QuestionStatus.OPEN), (old_resumed, QuestionStatus.RESUMED)):
        record = QuestionRecord(envelope=envelope, status=status, asked_at="2026-09-11T09:00:00Z")
        q = envelope.question_id
        row = record.to_item() | {"announce_due": "due", "due": shard_key("due", q, 8), "due_at": record.asked_at}
        row |= {"open_since": shard_key("open", q, 8), "status_shard": shard_key(status.value, q, 8)}
        if status is QuestionStatus.RESUMED:
            row |= {"outcome": "answered", "answer_id": "a-old", "decided_at": record.asked_at}
            for sparse in ("announce_due", "due", "due_at", "open_since"):
                del row[sparse]
        keys = {"pk": {"S": f"THREAD#{envelope.thread_id}"}, "sk": {"S": f"WAIT#{q}"}}
        client.put_item(TableName=name, Item=keys | to_item(row))
    assert "NULL" in _raw(client, name, old)["correlation"]

    # WHEN the current version reads, announces, decides and resumes the open one
    read = ledger.get(old.thread_id, old.question_id)
    assert read is not None
    assert read.envelope.to_dict() == old.to_dict()
    assert not read.announced
    ledger.mark_announced(old.thread_id, old.question_id, due_at=old.expires_at)
    assert ledger.get(old.thread_id, old.question_id).due_at == old.expires_at  # type: ignore[union-attr]
    won = ledger.decide(old.thread_id, old.question_id, Decision(QuestionStatus.ANSWERED, None, "a-new"), now=T0)
    assert won.won
    assert ledger.mark_resumed(old.thread_id, old.question_id, now=T0)

    # THEN both are listed as resumed (the new one under its outcome, the old one where it was put)
    seen, cursor = [], None
    while True:
        page = ledger.page(QuestionStatus.RESUMED, limit=10, cursor=cursor, tag=("batch", unique))
        seen += [r.question_id for r in page.records]
        cursor = page.cursor
        if cursor is None:
            break
    assert sorted(seen) == sorted([old.question_id, old_resumed.question_id])


def test_a_listing_reads_its_rows_eventually_consistent_and_the_sweep_consistently(
    question_table: tuple[str, Any],
) -> None:
    # GIVEN a question due now, and a client that remembers how each BatchGetItem read
    name, client = question_table
    reads: list[bool] = []

    class Spy:
        def __getattr__(self, attribute: str) -> Any:
            return getattr(client, attribute)

        def batch_get_item(self, **request: Any) -> Any:
            reads.append(bool(request["RequestItems"][name]["ConsistentRead"]))
            return client.batch_get_item(**request)

    ledger = DynamoDbLedger(name, client=Spy())
    envelope = ledger_contract.sample_envelope(tags={"spy": "1"})
    ledger.open(envelope, now=T0)

    # WHEN a page is listed (GET /questions, agent-wait questions) and the sweep reads what is due
    ledger.page(QuestionStatus.OPEN, limit=5, tag=("spy", "1"))
    listed = list(reads)
    ledger.due(T0.replace(year=2027), limit=5)

    # THEN the listing's rows cost half (an index lags the table anyway), the sweep's are read consistently
    assert listed == [False]
    assert reads[len(listed) :] == [True]
