"""Sweep cost: the AWS calls one sweep run makes with 10,000 open questions, as what is due grows.

Run: uv run --frozen python bench/bench_sweep.py

The question table on an embedded moto server gets 10,000 open, announced questions with follow-ups
(a reminder after P1D, an escalation step after P2D, a P3D deadline), none of them due yet (written with
BatchWriteItem, 25 a call, cloned from a row the real ledger wrote, each with its own index shards). Then,
side by side in one run, 0, 10 and 100 more questions are made due (a third each: a reminder, an escalation
step, a deadline) and one `Sweep.run()` (built by `build_sweep`, as the sweep Lambda builds it) is counted
with botocore event hooks for each; each round's due rows are deleted before the next. The sweep's reads
should follow what is due, never what is open: it queries every shard of the keys-only due index once
(`shards queried`, the index's `AGENT_WAIT_INDEX_SHARDS` shards plus the unsharded partition of rows from
before the shards), and reads the due rows by key (`BatchGetItem`, consistent). Read units are estimated
from the sizes of the items each query or batch read returned (see bench_lifecycle_calls.py). Figures, not
a test: nothing is asserted.
"""

from __future__ import annotations

import copy
import math
import os
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _capacity import item_size
from _refund_stack import REGION, CallCounter, moto_stack
from _targets import Target, report_targets

OPEN = 10_000
DUE_ROUNDS = (0, 10, 100)
KINDS = ("reminder", "escalation", "deadline")


def main() -> int:
    with moto_stack(prefix="sweep") as stack:
        import boto3

        from agent_wait import Escalation, WaitPolicy
        from agent_wait.aws import DynamoDbLedger
        from agent_wait.common.times import format_rfc3339
        from agent_wait.contract.envelope import Question, WaitEnvelope
        from agent_wait.contract.schema import (
            QUESTION_TABLE,
            index_shards_from_env,
            question_key,
            shard_key,
            thread_key,
        )
        from agent_wait.host import HostSettings, build_sweep

        shards = index_shards_from_env()
        due_index = QUESTION_TABLE.indexes[1].name

        client = boto3.client("dynamodb", region_name=REGION, endpoint_url=stack.endpoint)
        now = datetime.now(UTC).replace(microsecond=0)
        policy = WaitPolicy(
            timeout="P3D",
            default={"action": "reject", "reason": "timeout"},
            tags={"approver_group": "finance"},
            reminders=["P1D"],
            escalation=[Escalation(after="P2D", tags={"approver_group": "finance-managers"})],
        )

        # One row written by the real ledger, announced, is the template for every other.
        template_question = Question(
            "order-template",
            "0" * 32,
            {"function": "issue_refund", "args": {"order_id": "o-template", "amount": 900}},
            policy,
            source={"function": "issue_refund"},
            asked_at=now,
        )
        ledger = DynamoDbLedger(stack.table, client=client)
        opened = ledger.open(WaitEnvelope.create(template_question, now=now), now=now).record
        ledger.mark_announced("order-template", "0" * 32, due_at=opened.next_due(announced=True))
        key = {"pk": {"S": thread_key("order-template")}, "sk": {"S": question_key("0" * 32)}}
        template = client.get_item(TableName=stack.table, Key=key, ConsistentRead=True)["Item"]
        client.delete_item(TableName=stack.table, Key=key)

        def row(name: str, asked: datetime, due_at: datetime, reminders: int = 0, escalations: int = 0) -> Any:
            thread_id, question_id = f"order-{name}", name.rjust(32, "0")
            item = copy.deepcopy(template)
            item.update(
                pk={"S": thread_key(thread_id)},
                sk={"S": question_key(question_id)},
                question_id={"S": question_id},
                asked_at={"S": format_rfc3339(asked)},
                expires_at={"S": format_rfc3339(asked + timedelta(days=3))},
                due_at={"S": format_rfc3339(due_at)},
                due={"S": shard_key("due", question_id, shards)},
                open_since={"S": shard_key("open", question_id, shards)},
                status_shard={"S": shard_key("open", question_id, shards)},
                reminders_sent={"N": str(reminders)},
                escalations={"N": str(escalations)},
                version={"N": str(reminders + escalations)},
            )
            return item  # a lean row: its thread id is its key's, its reply_with is rebuilt on reading

        def write(items: list[Any]) -> None:
            requests = [{"PutRequest": {"Item": item}} for item in items]
            for i in range(0, len(requests), 25):
                client.batch_write_item(RequestItems={stack.table: requests[i : i + 25]})

        def delete(items: list[Any]) -> None:
            requests = [{"DeleteRequest": {"Key": {"pk": item["pk"], "sk": item["sk"]}}} for item in items]
            for i in range(0, len(requests), 25):
                client.batch_write_item(RequestItems={stack.table: requests[i : i + 25]})

        started = time.perf_counter()
        # Asked within the last 23 hours: the next due time (the P1D reminder) is still ahead for all of them.
        waiting = []
        for n in range(OPEN):
            asked = now - timedelta(minutes=n % (23 * 60))
            waiting.append(row(f"w{n:05d}", asked, asked + timedelta(days=1)))
        write(waiting)
        seeded = time.perf_counter() - started
        count = sum(
            page["Count"] for page in client.get_paginator("scan").paginate(TableName=stack.table, Select="COUNT")
        )

        def due_rows(round_number: int, due: int) -> list[Any]:
            rows = []
            for n in range(due):
                name, kind = f"d{round_number}x{n:04d}", KINDS[n % 3]
                if kind == "reminder":  # the P1D reminder fell due a few minutes ago
                    asked = now - timedelta(days=1, minutes=n + 1)
                    rows.append(row(name, asked, asked + timedelta(days=1)))
                elif kind == "escalation":  # reminded; the P2D step fell due
                    asked = now - timedelta(days=2, minutes=n + 1)
                    rows.append(row(name, asked, asked + timedelta(days=2), reminders=1))
                else:  # reminded and escalated; the P3D deadline passed
                    asked = now - timedelta(days=3, minutes=n + 1)
                    rows.append(row(name, asked, asked + timedelta(days=3), reminders=1, escalations=1))
            return rows

        results = []
        for round_number, due in enumerate(DUE_ROUNDS):
            made_due = due_rows(round_number, due)
            write(made_due)
            session = boto3.Session(region_name=REGION)
            counter = CallCounter(client, tuple((i.partition_key, i.sort_key) for i in QUESTION_TABLE.indexes))
            counter.register(session)
            sweep = build_sweep(HostSettings.from_env("sweep"), session=session)
            sweep.clock = lambda: now
            started = time.perf_counter()
            report = sweep.run()
            elapsed = time.perf_counter() - started
            results.append((due, report, counter.calls, elapsed))
            delete(made_due)

    print(
        f"Sweep runs over {count:,} open questions (none due), plus 0, 10 and 100 due ones; "
        f"seeded in {seeded:.1f} s with BatchWriteItem"
    )
    print("Each due set is a third reminders, a third escalation steps, a third deadlines.")
    print(f"The due index has {shards} shards (AGENT_WAIT_INDEX_SHARDS), queried with the unsharded partition.\n")
    header = f"{'due':>5}{'shards queried':>16}{'due-index reads':>17}{'rows by key':>13}{'all reads':>11}{'RRU':>7}"
    header += f"{'writes':>8}{'WRU':>6}{'publishes':>11}{'SQS batches':>13}{'reminded':>10}{'escalated':>11}"
    header += f"{'expired':>9}{'ms':>7}"
    print(header)
    for due, report, calls, elapsed in results:
        queried = sum(1 for c in calls if c.index == due_index and c.operation == "Query")
        by_due = sum(c.items for c in calls if c.index == due_index)
        by_key = sum(c.items for c in calls if c.operation == "BatchGetItem")
        reads = sum(c.items for c in calls if c.service == "dynamodb")
        rru = sum(c.rru for c in calls)
        writes = sum(1 for c in calls if c.service == "dynamodb" and c.operation in ("UpdateItem", "PutItem"))
        wru = sum(c.wru for c in calls)
        publishes = sum(1 for c in calls if (c.service, c.operation) == ("sns", "Publish"))
        batches = sum(1 for c in calls if (c.service, c.operation) == ("sqs", "SendMessageBatch"))
        print(
            f"{due:>5}{queried:>16}{by_due:>17}{by_key:>13}{reads:>11}{rru:>7.1f}{writes:>8}{wru:>6}"
            f"{publishes:>11}{batches:>13}"
            f"{len(report.reminded):>10}{len(report.escalated):>11}{len(report.expired_sent):>9}{elapsed * 1000:>7.0f}"
        )
    print("\nCalls of the 100-due run, by operation and index:")
    _, _, calls, _ = results[-1]
    grouped: Counter[tuple[str, str]] = Counter()
    for call in calls:
        where = call.index or ("table" if call.service == "dynamodb" else call.resource.rsplit(":", 1)[-1])
        grouped[(f"{call.service}:{call.operation}", where)] += 1
    for (operation, where), n in sorted(grouped.items()):
        print(f"  {operation:<28}{where:<26}{n:>5}")
    (ten_due,) = [calls for due, _, calls, _ in results if due == 10]
    queries = sum(1 for c in ten_due if c.operation == "Query")
    sends = sum(1 for c in ten_due if c.service == "sqs" and c.operation in ("SendMessage", "SendMessageBatch"))
    partitions = shards + 1  # the unsharded key value of a table from before the shards is read too
    report_targets(
        [
            Target(f"sweep: SQS send calls, {count:,} open and 10 overdue", "10 SendMessage", sends, 1),
            Target(
                f"sweep: index queries, {count:,} open and 10 overdue (3 indexes x {partitions} key values)",
                "3",
                queries,
                3 * partitions,
            ),
            Target(
                "sweep: due-index items read, 10 overdue (only what is due)",
                "10",
                sum(c.items for c in ten_due if c.index == due_index),
                10,
            ),
        ]
    )
    scan_rru = math.ceil(count * item_size(template) / 4096) / 2
    print(
        f"\nFor scale: one eventually consistent Scan would read all {count:,} items, about {scan_rru:,.0f} RRU; "
        "the sweep's due-index reads above grow with what is due, and are 0 when nothing is (each shard is "
        "still queried once)."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
