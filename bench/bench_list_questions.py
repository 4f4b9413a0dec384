"""Read units of one page of `GET /questions` (the answer API's list, `agent-wait questions`): 50 open questions.

Run: uv run --frozen python bench/bench_list_questions.py

50 refund questions are opened on a question table on moto (in its own process), then one page of 50 is read
through `DynamoDbLedger.page`, as the API's `GET /questions?status=open&limit=50` does, with every DynamoDB call
counted by botocore hooks and its read units computed as DynamoDB bills them (`_capacity.read_units`: each
`Query` on the sum of what it returns, each row of a `BatchGetItem` on its own size, half for eventually
consistent reads). Figures, not a test: nothing is asserted.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from datetime import UTC, datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the refund example's policy
from _capacity import item_size
from _refund_stack import REGION, CallCounter, moto_stack

ROWS = 50


def main() -> int:
    with moto_stack("list") as stack:
        import boto3
        from examples.refund_agent.graph import FINANCE

        from agent_wait.aws import DynamoDbLedger
        from agent_wait.contract.envelope import Question, WaitEnvelope
        from agent_wait.contract.schema import QUESTION_TABLE, QuestionStatus

        client = boto3.client("dynamodb", region_name=REGION, endpoint_url=stack.endpoint)
        now = datetime(2026, 9, 11, 9, 0, tzinfo=UTC)
        writer = DynamoDbLedger(stack.table, client=client)
        for n in range(ROWS):
            question = {"function": "issue_refund", "args": {"order_id": f"o-{n}", "amount": 900 + n}}
            asked = Question(f"order-{n}", f"{n:032d}", question, FINANCE, source={"function": "issue_refund"})
            writer.open(WaitEnvelope.create(asked, reply_to={"queue_url": stack.queue_url}, now=now), now=now)
        session = boto3.Session(region_name=REGION)
        counter = CallCounter(client, tuple((i.partition_key, i.sort_key) for i in QUESTION_TABLE.indexes))
        counter.register(session)
        reader = DynamoDbLedger(stack.table, client=session.client("dynamodb"))
        page = reader.page(QuestionStatus.OPEN, limit=ROWS)
        row = client.scan(TableName=stack.table, Limit=1)["Items"][0]

    calls = counter.calls
    print(f"One page of GET /questions?status=open&limit={ROWS}: {len(page.records)} questions shown")
    print(f"(each row {item_size(row)} B; the index projects keys and tags)\n")
    rows: Counter[tuple[str, str]] = Counter()
    units: Counter[tuple[str, str]] = Counter()
    for call in calls:
        key = (call.operation, call.index or "table")
        rows[key] += 1
        units[key] += call.rru
    print(f"{'call':<22}{'on':<22}{'calls':>6}{'RRU':>8}")
    for key in sorted(rows):
        print(f"{key[0]:<22}{key[1]:<22}{rows[key]:>6}{units[key]:>8.1f}")
    print(f"{'all':<44}{len(calls):>6}{sum(c.rru for c in calls):>8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
