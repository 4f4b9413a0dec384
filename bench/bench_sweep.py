"""Sweep cost: the AWS calls one sweep run makes with 10,000 open questions of which 10 are overdue.

Run: uv run --frozen python bench/bench_sweep.py

The question table on an embedded moto server gets 10,000 open, announced questions (written with
BatchWriteItem, 25 a call, cloned from a row the real ledger wrote), 10 of them past their deadline.
One `Sweep.run()` (built by `build_sweep`, as the sweep Lambda builds it) is then counted with botocore
event hooks: its cost should follow what is overdue or unannounced, not what is open. The deadline answers
go out with `SendMessageBatch` (ten a call); the last line compares that with one `SendMessage` each. Read units are
estimated from the sizes of the items each query returned (see bench_lifecycle_calls.py). Figures,
not a test: nothing is asserted.
"""

from __future__ import annotations

import copy
import math
import os
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_lifecycle_calls import REGION, CallCounter, item_size, moto_stack

OPEN = 10_000
OVERDUE = 10


def main() -> int:
    with moto_stack(prefix="sweep") as stack:
        import boto3

        from agent_wait._time import format_rfc3339
        from agent_wait.envelope import Question, WaitEnvelope
        from agent_wait.host import DynamoDbLedger, HostSettings
        from agent_wait.host._wiring import build_sweep
        from agent_wait.policy import WaitPolicy
        from agent_wait.schema import QUESTION_TABLE, question_key, thread_key

        client = boto3.client("dynamodb", region_name=REGION, endpoint_url=stack.endpoint)
        now = datetime.now(UTC).replace(microsecond=0)

        # One row written by the real ledger, announced, is the template for every other.
        template_question = Question(
            "order-template",
            "0" * 32,
            {"function": "issue_refund", "args": {"order_id": "o-template", "amount": 900}},
            WaitPolicy(timeout="P3D", default={"action": "reject", "reason": "timeout"}),
            source={"function": "issue_refund"},
            asked_at=now,
        )
        ledger = DynamoDbLedger(stack.table, client=client)
        ledger.open(WaitEnvelope.create(template_question, now=now), now=now)
        ledger.mark_announced("order-template", "0" * 32)
        key = {"pk": {"S": thread_key("order-template")}, "sk": {"S": question_key("0" * 32)}}
        template = client.get_item(TableName=stack.table, Key=key, ConsistentRead=True)["Item"]
        client.delete_item(TableName=stack.table, Key=key)

        started = time.perf_counter()
        rows = []
        for n in range(OPEN):
            thread_id, question_id = f"order-{n:05d}", f"{n:032x}"
            overdue = n < OVERDUE
            asked = now - timedelta(days=3, minutes=n + 1) if overdue else now - timedelta(minutes=n % 1440)
            expires = asked + timedelta(days=3)
            item = copy.deepcopy(template)
            item.update(
                pk={"S": thread_key(thread_id)},
                sk={"S": question_key(question_id)},
                thread_id={"S": thread_id},
                question_id={"S": question_id},
                asked_at={"S": format_rfc3339(asked)},
                expires_at={"S": format_rfc3339(expires)},
            )
            item["reply_with"]["M"].update(thread_id={"S": thread_id}, question_id={"S": question_id})
            rows.append({"PutRequest": {"Item": item}})
        for i in range(0, len(rows), 25):
            client.batch_write_item(RequestItems={stack.table: rows[i : i + 25]})
        seeded = time.perf_counter() - started
        count = sum(
            page["Count"] for page in client.get_paginator("scan").paginate(TableName=stack.table, Select="COUNT")
        )

        session = boto3.Session(region_name=REGION)
        counter = CallCounter(client, tuple((i.partition_key, i.sort_key) for i in QUESTION_TABLE.indexes))
        counter.register(session)
        sweep = build_sweep(HostSettings.from_env("sweep"), session=session)
        sweep.clock = lambda: now
        started = time.perf_counter()
        report = sweep.run()
        elapsed = time.perf_counter() - started

    print(f"Sweep run over {count:,} open questions ({OVERDUE} overdue), seeded in {seeded:.1f} s with BatchWriteItem")
    print(f"deadline answers sent: {len(report.expired_sent)}; re-announced: {len(report.reannounced)}")
    print(f"sweep run wall time against moto: {elapsed * 1000:.0f} ms\n")
    print(f"{'call':<28}{'where':<22}{'calls':>6}{'items read':>12}{'RRU':>7}")
    rows_out: Counter[tuple[str, str]] = Counter()
    items: Counter[tuple[str, str]] = Counter()
    units: Counter[tuple[str, str]] = Counter()
    for call in counter.calls:
        key = (
            f"{call.service}:{call.operation}",
            call.index or ("table" if call.service == "dynamodb" else "entry queue"),
        )
        rows_out[key] += 1
        items[key] += call.items
        units[key] += call.rru  # type: ignore[assignment]
    for key, calls in sorted(rows_out.items()):
        print(f"{key[0]:<28}{key[1]:<22}{calls:>6}{items[key]:>12}{units[key]:>7.1f}")
    total_rru = sum(c.rru for c in counter.calls)
    print(f"{'all calls':<50}{len(counter.calls):>6}{sum(items.values()):>12}{total_rru:>7.1f}")
    sent = len(report.expired_sent)
    batches = sum(1 for c in counter.calls if (c.service, c.operation) == ("sqs", "SendMessageBatch"))
    singles = sum(1 for c in counter.calls if (c.service, c.operation) == ("sqs", "SendMessage"))
    unbatched = len(counter.calls) - batches - singles + sent
    print(
        f"\nWith batching: {len(counter.calls)} calls in all; the {sent} deadline answers took {batches} "
        f"SendMessageBatch and {singles} SendMessage call(s). One SendMessage per answer would make it {unbatched}."
    )
    scan_rru = math.ceil(count * item_size(template) / 4096) / 2
    print(f"\nFor scale: one eventually consistent Scan would read all {count:,} items, about {scan_rru:,.0f} RRU.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
