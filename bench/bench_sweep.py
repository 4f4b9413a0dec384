"""Sweep cost: the items one sweep run reads as what is open grows (nothing due), and its AWS calls as what is due
grows.

Run: uv run --frozen python bench/bench_sweep.py [--open 10000,100000]

The question table on an embedded moto server gets open, announced questions with follow-ups (a reminder after P1D,
an escalation step after P2D, a P3D deadline), none of them due yet (written with BatchWriteItem, 25 a call, cloned
from a row the real ledger wrote, each with its own index shards): 10,000, then 100,000 by default. At
each size two runs of `Sweep.run()` (built by `build_sweep`, as the sweep Lambda builds it) are counted with botocore
event hooks, with nothing due: the run that counts the open questions for `OpenQuestions` (at most once per
`COUNT_OPEN_EVERY`, 2 hours; a `Select=COUNT` query reads every open question's index key) and a run between two
counts (it reads the kept count back, one item). Their average over the 120 runs of one count's interval, at the
default rate of a run a minute, is the sweep's reads per run. Target (issue 46): at most 1 % of what is open.

Then, at 10,000 open, side by side in one run, 0, 10 and 100 more questions are made due (a third each: a reminder,
an escalation step, a deadline) and one run is counted for each (between counts); each round's due rows are deleted
before the next. The sweep's reads should follow what is due, never what is open: it queries every shard of the
keys-only due index once (`shards queried`, the index's `AGENT_WAIT_INDEX_SHARDS` shards plus the unsharded
partition of rows from before the shards), and reads the due rows by key (`BatchGetItem`, consistent).

Items read are what DynamoDB reads and bills: each item a `GetItem` or `BatchGetItem` returned, each item a query
returned, and each key a `Select=COUNT` query counted (it returns none). Read units are estimated from the sizes of
those items (see bench_lifecycle_calls.py); a counted key is sized as the open index holds it (keys only). A count
is paged at 1 MB: moto sizes a page by its whole rows (so 100,000 open take 65 calls here), DynamoDB by the index's
keys, about 10,000 a page (so about two calls a shard). moto's index queries read its whole table: the whole bench
took 12.5 minutes on the loaded 2-core machine (287 s of it seeding); `--open 10000` measures the first step only.
Figures, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _capacity import READ_UNIT_BYTES, item_size
from _refund_stack import REGION, Call, CallCounter, moto_stack
from _targets import Target, report_targets

OPEN_SIZES = (10_000, 100_000)
DUE_AT = 10_000
"""The due rounds run with this many open."""
DUE_ROUNDS = (0, 10, 100)
KINDS = ("reminder", "escalation", "deadline")
RUNS_A_MINUTE = 1
"""The sweep's default rate (`SweepProps(rate=...)`, one minute)."""
BEFORE = {10_000: "10,009 items, 106.5 RRU", 100_000: "100,009 items, 974.5 RRU"}
"""What a run read with nothing due before the count was kept (issue 46): every open key, every run."""


@dataclass
class SweepCalls(CallCounter):
    """`CallCounter`, and what a `Select=COUNT` query reads: no items come back, but every key it counts is read (and
    billed), `ScannedCount` keys of `index_item_bytes` each."""

    index_item_bytes: int = 0

    def after(self, event_name: str, parsed: dict[str, Any], context: dict[str, Any], **kwargs: Any) -> None:
        super().after(event_name, parsed, context, **kwargs)
        params = context.get("bench_params", {})
        if self.counting and event_name.endswith("dynamodb.Query") and params.get("Select") == "COUNT":
            call = self.calls[-1]
            call.items = int(parsed.get("ScannedCount", 0))
            call.rru = max(1, math.ceil(call.items * self.index_item_bytes / READ_UNIT_BYTES)) / 2


@dataclass(frozen=True)
class Reads:
    """What one run read from the question table."""

    calls: float
    items: float
    rru: float

    @classmethod
    def of(cls, calls: list[Call]) -> Reads:
        reads = [c for c in calls if c.service == "dynamodb" and c.operation in ("Query", "GetItem", "BatchGetItem")]
        return cls(len(reads), sum(c.items for c in reads), sum(c.rru for c in reads))

    def averaged(self, counting: Reads, runs: int) -> Reads:
        """This run's reads (between counts) averaged with one counting run over `runs` runs."""
        return Reads(
            (counting.calls + (runs - 1) * self.calls) / runs,
            (counting.items + (runs - 1) * self.items) / runs,
            (counting.rru + (runs - 1) * self.rru) / runs,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--open",
        default=",".join(str(n) for n in OPEN_SIZES),
        help="comma-separated open question counts to measure, ascending (default %(default)s)",
    )
    sizes = sorted(int(n) for n in parser.parse_args().open.split(","))
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
        from agent_wait.engine.sweep import COUNT_OPEN_EVERY
        from agent_wait.host import HostSettings, build_sweep

        shards = index_shards_from_env()
        due_index, open_index = QUESTION_TABLE.indexes[1], QUESTION_TABLE.indexes[2]
        interval_runs = int(COUNT_OPEN_EVERY / timedelta(minutes=1)) * RUNS_A_MINUTE

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

        def waiting(first: int, last: int) -> list[Any]:
            # Asked within the last 23 hours: the next due time (the P1D reminder) is still ahead for all of them.
            rows = []
            for n in range(first, last):
                asked = now - timedelta(minutes=n % (23 * 60))
                rows.append(row(f"w{n:06d}", asked, asked + timedelta(days=1)))
            return rows

        keys_only = {open_index.partition_key, open_index.sort_key, "pk", "sk"}
        index_item_bytes = item_size({k: v for k, v in waiting(0, 1)[0].items() if k in keys_only})

        def run(*, count: bool) -> tuple[Any, list[Call], float]:
            """One sweep run at `now`, counted; `count` makes it the run that counts the open questions."""
            session = boto3.Session(region_name=REGION)
            indexes = tuple((i.partition_key, i.sort_key) for i in QUESTION_TABLE.indexes)
            counter = SweepCalls(client, indexes, index_item_bytes=index_item_bytes)
            counter.register(session)
            sweep = build_sweep(HostSettings.from_env("sweep"), session=session)
            sweep.clock = lambda: now
            if count:  # the kept count is two hours old: this run claims the next one and counts
                sweep.count_open_every = timedelta(0)
            started = time.perf_counter()
            report = sweep.run()
            return report, counter.calls, time.perf_counter() - started

        by_size: list[tuple[int, Reads, Reads, Any, float]] = []
        due_results = []
        seeded, seed_seconds = 0, 0.0
        for size in sizes:
            started = time.perf_counter()
            write(waiting(seeded, size))
            seed_seconds += time.perf_counter() - started
            seeded = size
            counted_report, counting_calls, _ = run(count=True)
            between_report, between_calls, elapsed = run(count=False)
            if not counted_report.counted_open or between_report.counted_open:
                raise RuntimeError("the counting run did not count, or a run between counts did")
            by_size.append((size, Reads.of(counting_calls), Reads.of(between_calls), between_report, elapsed))
            if size == DUE_AT:
                for round_number, due in enumerate(DUE_ROUNDS):
                    made_due = due_rows(row, now, round_number, due)
                    write(made_due)
                    report, calls, elapsed = run(count=False)
                    due_results.append((due, report, calls, elapsed))
                    delete(made_due)

    print(
        f"Sweep runs with {', '.join(f'{n:,}' for n in sizes)} open questions, none due; seeded in "
        f"{seed_seconds:.1f} s with BatchWriteItem. The open questions are counted (OpenQuestions) at most once per "
        f"{COUNT_OPEN_EVERY} ({interval_runs} runs at one a minute); the runs between read the kept count back.\n"
    )
    print_open_table(by_size, interval_runs)
    if due_results:
        print_due_table(due_results, shards, due_index.name)
    report_targets(targets(by_size, due_results, interval_runs, shards, due_index.name))
    if due_results:
        scan_rru = math.ceil(DUE_AT * item_size(template) / 4096) / 2
        print(
            f"\nFor scale: one eventually consistent Scan would read all {DUE_AT:,} items, about {scan_rru:,.0f} "
            "RRU; the sweep's due-index reads above grow with what is due, and are 0 when nothing is (each shard is "
            "still queried once)."
        )
    return 0


def due_rows(row: Any, now: datetime, round_number: int, due: int) -> list[Any]:
    """`due` questions due now: a third each past their reminder, their escalation step, their deadline."""
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


def print_open_table(by_size: list[tuple[int, Reads, Reads, Any, float]], interval_runs: int) -> None:
    print("Reads per run with nothing due (question table: calls, items read, RRU), and as a share of what is open:")
    header = f"{'open':>9}  {'the counting run':>24}  {'a run between counts':>24}  "
    header += f"{f'average over {interval_runs} runs':>28}  {'share of open':>13}  {'OpenQuestions':>13}"
    print(header)
    for size, counting, between, report, _ in by_size:
        average = between.averaged(counting, interval_runs)
        print(
            f"{size:>9,}  {_cells(counting):>24}  {_cells(between):>24}  {_cells(average):>28}  "
            f"{average.items / size:>12.2%}  {report.open_questions:>13,}"
        )
    print(
        "(calls / items / RRU; the counting run's Select=COUNT reads every open key, the runs between read one key a "
        "shard of the open index for the oldest question, its row, and the kept count)\n"
    )


def _cells(reads: Reads) -> str:
    return f"{reads.calls:.0f} / {reads.items:,.0f} / {reads.rru:,.1f}"


def print_due_table(due_results: list[Any], shards: int, due_index: str) -> None:
    print(f"With {DUE_AT:,} open, 0, 10 and 100 more due (a third reminders, escalation steps, deadlines each).")
    print(f"The due index has {shards} shards (AGENT_WAIT_INDEX_SHARDS), queried with the unsharded partition.\n")
    header = f"{'due':>5}{'shards queried':>16}{'due-index reads':>17}{'rows by key':>13}{'all reads':>11}{'RRU':>7}"
    header += f"{'writes':>8}{'WRU':>6}{'publishes':>11}{'SQS batches':>13}{'reminded':>10}{'escalated':>11}"
    header += f"{'expired':>9}{'ms':>7}"
    print(header)
    for due, report, calls, elapsed in due_results:
        queried = sum(1 for c in calls if c.index == due_index and c.operation == "Query")
        by_due = sum(c.items for c in calls if c.index == due_index)
        by_key = sum(c.items for c in calls if c.operation in ("BatchGetItem", "GetItem"))
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
    _, _, calls, _ = due_results[-1]
    grouped: Counter[tuple[str, str]] = Counter()
    for call in calls:
        where = call.index or ("table" if call.service == "dynamodb" else call.resource.rsplit(":", 1)[-1])
        grouped[(f"{call.service}:{call.operation}", where)] += 1
    for (operation, where), n in sorted(grouped.items()):
        print(f"  {operation:<28}{where:<26}{n:>5}")


def targets(
    by_size: list[tuple[int, Reads, Reads, Any, float]],
    due_results: list[Any],
    interval_runs: int,
    shards: int,
    due_index: str,
) -> list[Target]:
    rows = []
    for size, counting, between, _, _ in by_size:
        if size not in BEFORE:
            continue
        average = between.averaged(counting, interval_runs)
        rows.append(
            Target(
                f"sweep: items read per run, {size:,} open, nothing due (average of {interval_runs}: "
                f"{average.calls:.1f} calls, {average.rru:.1f} RRU)",
                BEFORE[size],
                average.items,
                size / 100,
                decimals=1,
            )
        )
        rows.append(
            Target(
                f"sweep: items read by a run between counts, {size:,} open, nothing due ({between.calls:.0f} calls, "
                f"{between.rru:.1f} RRU)",
                BEFORE[size],
                between.items,
                size / 100,
            )
        )
    if due_results:
        (ten_due,) = [calls for due, _, calls, _ in due_results if due == 10]
        queries = sum(1 for c in ten_due if c.operation == "Query")
        sends = sum(1 for c in ten_due if c.service == "sqs" and c.operation in ("SendMessage", "SendMessageBatch"))
        partitions = shards + 1  # the unsharded key value of a table from before the shards is read too
        rows += [
            Target(f"sweep: SQS send calls, {DUE_AT:,} open and 10 overdue", "10 SendMessage", sends, 1),
            Target(
                f"sweep: index queries, {DUE_AT:,} open and 10 overdue (2 indexes x {partitions} key values)",
                "3",
                queries,
                2 * partitions,
            ),
            Target(
                "sweep: due-index items read, 10 overdue (only what is due)",
                "10",
                sum(c.items for c in ten_due if c.index == due_index),
                10,
            ),
        ]
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
