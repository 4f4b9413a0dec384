"""What a lifecycle leaves at rest, how long the default retention keeps it, and what that storage costs (issue 46:
"plus storage: checkpoints and decided rows kept for ever, offloaded checkpoints never deleted: +$3.3 a month per
million ever run").

Run: uv run --frozen python bench/bench_retention.py [--lifecycles 3]

The refund lifecycle (start → ask → answer → resume) runs through the real router on moto (a server in its own
process), each message sent, received and deleted as Lambda's event source does (`_refund_stack.deliver`), under the
host's default retention (nothing set: checkpoints 30 days, decided rows 400 days), twice: at the refund's own state
(`_refund_stack.build_graph`, every checkpoint in the table) and with a 300 KB case file in the state
(`bench_checkpoint_size.build_graph`, the checkpoints that carry it offloaded to the checkpoint bucket over 12 KB).

Then what each lifecycle left is read back and sized as AWS bills storage: a DynamoDB item is its attribute names and
values (`_capacity.item_size`) plus 100 bytes, and each index entry it has is the index's keys, the table's keys and
the projected attributes plus 100 bytes; an S3 object is its bytes. Each byte is priced for as long as it is kept:
a checkpoint item for the checkpoint retention after the lifecycle ends, an offloaded object a day longer (and half a
day more on average: S3 counts to the next midnight), a decided row for the decided retention, and a row with no
retention (the thread's lease item and its start record) for ever, as a cost that grows every month. The lifecycle's
own length (the answer comes within days) is left out: it is short beside the retention.

Printed per state: the bytes at rest by store and how long each is kept, what a million lifecycles cost over their
whole retention (which is also what a steady million lifecycles a month pays every month), and what is still kept
for ever. The row `bench_targets.py` collects is the refund state's monthly storage at a steady million lifecycles a
month, against what keeping everything (the old default, measured the same way) costs once 400 days of lifecycles
have piled up.
Figures, not a test: it exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _capacity import item_size  # noqa: E402
from _targets import Target, report_targets  # noqa: E402

STORAGE_PRICE = {
    "dynamodb_gb_month": 0.25,  # DynamoDB Standard table class, us-east-1, per GB-month (first 25 GB free: ignored)
    "s3_gb_month": 0.023,  # S3 Standard, us-east-1, first 50 TB, per GB-month
}
GB = 1024**3
DAYS_A_MONTH = 365.25 / 12
ITEM_OVERHEAD = 100
"""Bytes DynamoDB adds to every item, and to every index entry, when it bills storage."""
CHECKPOINT_DAYS, DECIDED_DAYS = 30, 400
"""The host's default retention (`AGENT_WAIT_CHECKPOINT_RETENTION`, `AGENT_WAIT_DECIDED_RETENTION`)."""
OBJECT_DAYS = CHECKPOINT_DAYS + 1 + 0.5
"""An offloaded object: the bucket's rule expires it a day after its checkpoint, counted to the next midnight."""
OLD_GROWTH = 3.3
"""Issue 46's figure for keeping everything, in dollars a month per million lifecycles ever run (quoted beside the
figure measured here the same way as the new one)."""
CASE_FILE_KB = 300


@dataclass
class AtRest:
    """Bytes one lifecycle left, by how long they are kept."""

    checkpoint_items: float = 0
    objects: float = 0
    decided_rows: float = 0
    kept_for_ever: float = 0
    counted: dict[str, int] = field(default_factory=dict)

    def over_retention(self) -> float:
        """Dollars a million such lifecycles cost over their whole retention (= every month, at a steady million a
        month), what is kept for ever aside."""
        table = self.checkpoint_items * CHECKPOINT_DAYS + self.decided_rows * DECIDED_DAYS
        return (
            1e6
            / GB
            / DAYS_A_MONTH
            * (table * STORAGE_PRICE["dynamodb_gb_month"] + self.objects * OBJECT_DAYS * STORAGE_PRICE["s3_gb_month"])
        )

    def for_ever(self) -> float:
        """Dollars a month a million lifecycles ever run still cost, for what has no retention."""
        return self.kept_for_ever * 1e6 / GB * STORAGE_PRICE["dynamodb_gb_month"]

    def everything(self) -> float:
        """Dollars a month a million lifecycles ever run cost when nothing expires (the old default)."""
        table = self.checkpoint_items + self.decided_rows + self.kept_for_ever
        return 1e6 / GB * (table * STORAGE_PRICE["dynamodb_gb_month"] + self.objects * STORAGE_PRICE["s3_gb_month"])


def _index_entries(item: dict[str, Any]) -> int:
    """What the question table's indexes hold for `item`: for each index whose key it has, the keys and projection."""
    from agent_wait.contract.schema import QUESTION_TABLE

    total = 0
    for index in QUESTION_TABLE.indexes:
        if index.partition_key not in item:
            continue
        kept = {index.partition_key, index.sort_key, QUESTION_TABLE.partition_key, QUESTION_TABLE.sort_key}
        kept |= set(index.include)
        total += item_size({k: v for k, v in item.items() if k in kept}) + ITEM_OVERHEAD
    return total


def measure(stack: Any, s3: Any, bucket: str | None, threads: list[str]) -> AtRest:
    """What `threads` left in the question table, the checkpoint table and the bucket, per lifecycle."""
    import boto3

    from _refund_stack import REGION

    dynamodb = boto3.client("dynamodb", region_name=REGION, endpoint_url=stack.endpoint)
    rest = AtRest()
    for item in _scan(dynamodb, stack.table):
        thread = item["pk"]["S"].removeprefix("THREAD#")
        if thread not in threads:
            continue
        size = item_size(item) + ITEM_OVERHEAD + _index_entries(item)
        if item["sk"]["S"].startswith("WAIT#") and "ttl" in item:
            rest.decided_rows += size
        else:
            rest.kept_for_ever += size  # the thread's lease item and its start record: no retention
        rest.counted[item["sk"]["S"].split("#")[0]] = rest.counted.get(item["sk"]["S"].split("#")[0], 0) + 1
    for item in _scan(dynamodb, stack.checkpoint_table):
        if not any(item["PK"]["S"] == f"CHECKPOINT_{t}" or f"_{t}#" in item["PK"]["S"] for t in threads):
            continue
        if "ttl" in item:
            rest.checkpoint_items += item_size(item) + ITEM_OVERHEAD
        else:
            rest.kept_for_ever += item_size(item) + ITEM_OVERHEAD  # a held checkpoint: none once the thread finished
        rest.counted["checkpoint items"] = rest.counted.get("checkpoint items", 0) + 1
    if bucket is not None:
        for thread in threads:
            for listed in s3.list_objects_v2(Bucket=bucket, Prefix=f"{thread}/").get("Contents", []):
                rest.objects += listed["Size"]
                rest.counted["objects"] = rest.counted.get("objects", 0) + 1
    n = len(threads)
    rest.checkpoint_items, rest.objects = rest.checkpoint_items / n, rest.objects / n
    rest.decided_rows, rest.kept_for_ever = rest.decided_rows / n, rest.kept_for_ever / n
    rest.counted = {name: round(count / n) for name, count in rest.counted.items()}
    return rest


def _scan(client: Any, table: str) -> list[dict[str, Any]]:
    items, request = [], {"TableName": table}
    while True:
        page = client.scan(**request)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return items
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--lifecycles", type=int, default=3, help="lifecycles per state")
    args = parser.parse_args()
    from _refund_stack import REGION, asked_question, deliver, moto_stack

    results: dict[str, AtRest] = {}
    with moto_stack("keep") as stack:
        import boto3

        from agent_wait.contract.schema import Settings
        from agent_wait.host import HostSettings, build_router

        bucket = "keep-checkpoints"
        s3 = boto3.client("s3", region_name=REGION, endpoint_url=stack.endpoint)
        s3.create_bucket(Bucket=bucket)
        reader = boto3.client("dynamodb", region_name=REGION, endpoint_url=stack.endpoint)
        session = boto3.Session(region_name=REGION)
        sqs = session.client("sqs")
        os.environ[Settings.CHECKPOINT_BUCKET.value] = bucket
        for name, graph, size in (
            ("refund state", "_refund_stack:build_graph", 0),
            (f"{CASE_FILE_KB} KB state", "bench_checkpoint_size:build_graph", CASE_FILE_KB * 1024),
        ):
            os.environ[Settings.GRAPH.value] = graph
            settings = HostSettings.from_env("router")
            if settings.checkpoint_retention is None:
                raise SystemExit("the default checkpoint retention is off: this bench measures it on")
            router = build_router(settings, session=session)
            threads = [f"{name.split()[0]}-{i}" for i in range(args.lifecycles)]
            for thread in threads:
                value = {"order_id": thread, "amount": 900, "size": size}
                deliver(sqs, stack, router, {"thread_id": thread, "input": value}, thread)
                question_id = asked_question(reader, stack, thread)
                answer = {"thread_id": thread, "question_id": question_id, "answer": {"action": "approve"}}
                deliver(sqs, stack, router, answer, thread)
            results[name] = measure(stack, s3, bucket, threads)
    report(results, args.lifecycles)
    return 0


def report(results: dict[str, AtRest], lifecycles: int) -> None:
    print(
        f"What one refund lifecycle leaves at rest under the default retention (mean of {lifecycles} per state), "
        "sized as AWS bills storage"
    )
    print(
        f"{'state':<14}{'checkpoint items':>18}{'objects':>10}{'decided row':>13}{'kept for ever':>15}"
        f"{'$/M, whole retention':>22}{'$/M a month, for ever':>23}{'$/M a month, nothing expires':>30}"
    )
    for name, rest in results.items():
        print(
            f"{name:<14}{rest.checkpoint_items:>16,.0f} B{rest.objects:>8,.0f} B{rest.decided_rows:>11,.0f} B"
            f"{rest.kept_for_ever:>13,.0f} B{rest.over_retention():>22.2f}{rest.for_ever():>23.3f}"
            f"{rest.everything():>30.2f}"
        )
    for name, rest in results.items():
        print(f"  {name}: items and objects per lifecycle {rest.counted}")
    print(
        f"\nKept: checkpoint items {CHECKPOINT_DAYS} days after the lifecycle, objects {OBJECT_DAYS:g} days (the "
        f"bucket's extra day and S3's count to midnight), decided rows {DECIDED_DAYS} days; the thread's lease item "
        "and its start record have no retention. DynamoDB Standard $0.25 and S3 Standard $0.023 per GB-month "
        "(us-east-1; free tiers ignored); 100 bytes per DynamoDB item and index entry."
    )
    print(
        "$/M, whole retention: a million lifecycles over the time each byte is kept, which is also what a steady "
        "million lifecycles a month pays every month. $/M a month, for ever: what still grows, per million ever run. "
        "$/M a month, nothing expires: the old default's growth, per million ever run, measured the same way."
    )
    refund = results["refund state"]
    horizon = DECIDED_DAYS / DAYS_A_MONTH
    report_targets(
        [
            Target(
                "storage a month at a steady 1M lifecycles a month (refund, default retention)",
                f"+${refund.everything():.2f}/mo per 1M ever run, kept for ever (issue: +${OLD_GROWTH})",
                refund.over_retention() + refund.for_ever() * horizon,
                refund.everything() * horizon,
                unit="$",
                decimals=2,
            ),
        ]
    )
    print(
        f"(target: what keeping everything costs a month once {horizon:.1f} months of a million lifecycles a month "
        "have piled up, the decided retention's horizon; the figure adds what still grows over the same horizon)"
    )


if __name__ == "__main__":
    raise SystemExit(main())
