"""The emulator's expiry (`agent_wait.local.expiry.LocalExpiry`) deletes what AWS would by a given time, and nothing
else: table items whose TTL attribute is a number at or before it, and objects an enabled lifecycle rule's prefix and
tags match once their days, counted from when they were written to the next midnight UTC, have passed. Each test runs
on an isolated in-process moto (`mock_aws`), so nothing of another test's tables or buckets is touched."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_wait.local.expiry import LocalExpiry, lifecycle_rules_from_template

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


@pytest.fixture
def aws() -> Iterator[Any]:
    import boto3
    from moto import mock_aws

    with mock_aws():
        yield lambda service: boto3.client(service, region_name="us-east-1")


def _table(client: Any, name: str, *, ttl: bool) -> None:
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    if ttl:
        client.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"})


def test_items_whose_ttl_has_passed_are_deleted_and_no_other(aws: Any) -> None:
    # GIVEN a table with TTL on `ttl`: items due before, at and after now, one whose `ttl` is not a number, one without;
    # and a table without TTL holding a past `ttl`
    dynamodb = aws("dynamodb")
    _table(dynamodb, "kept", ttl=True)
    _table(dynamodb, "plain", ttl=False)
    moment = int(NOW.timestamp())
    for key, ttl in {
        "past": {"N": str(moment - 1)},
        "now": {"N": str(moment)},
        "later": {"N": str(moment + 1)},
    }.items():
        dynamodb.put_item(TableName="kept", Item={"pk": {"S": key}, "ttl": ttl})
    dynamodb.put_item(TableName="kept", Item={"pk": {"S": "text"}, "ttl": {"S": str(moment - 1)}})
    dynamodb.put_item(TableName="kept", Item={"pk": {"S": "none"}})
    dynamodb.put_item(TableName="plain", Item={"pk": {"S": "past"}, "ttl": {"N": str(moment - 1)}})
    # WHEN the emulator expires at NOW
    expired = LocalExpiry(aws).run(NOW)
    # THEN the two due are gone, and nothing else
    left = {i["pk"]["S"] for i in dynamodb.scan(TableName="kept")["Items"]}
    assert left == {"later", "text", "none"}
    assert dynamodb.scan(TableName="plain")["Count"] == 1
    assert (expired.items, expired.objects) == (2, 0)


def test_a_tagged_object_expires_its_days_after_it_was_written_counted_to_the_next_midnight(aws: Any) -> None:
    # GIVEN a bucket whose rule (as CloudFormation writes it) expires objects tagged ttl-days=31 after 31 days
    s3 = aws("s3")
    s3.create_bucket(Bucket="checkpoints")
    rules = lifecycle_rules_from_template(
        {
            "Rules": [
                {
                    "Id": "r",
                    "Status": "Enabled",
                    "ExpirationInDays": 31,
                    "TagFilters": [{"Key": "ttl-days", "Value": "31"}],
                }
            ]
        }
    )
    s3.put_bucket_lifecycle_configuration(Bucket="checkpoints", LifecycleConfiguration={"Rules": rules})
    s3.put_object(Bucket="checkpoints", Key="t/tagged", Body=b"x", Tagging="ttl-days=31")
    s3.put_object(Bucket="checkpoints", Key="t/other-tag", Body=b"x", Tagging="ttl-days=91")
    s3.put_object(Bucket="checkpoints", Key="t/untagged", Body=b"x")
    expiry = LocalExpiry(aws)
    for key in ("t/tagged", "t/other-tag", "t/untagged"):
        expiry.written("checkpoints", key, NOW)  # written at NOW by the emulator's clock
    due = datetime(2026, 4, 3, tzinfo=UTC)  # NOW + 31 days is 2 April, 09:30: S3 expires it at the next midnight
    # WHEN the emulator expires a second before that midnight, then at it
    before = expiry.run(due - timedelta(seconds=1))
    at = expiry.run(due)
    # THEN only the object the rule's tag matches goes, and only at midnight
    listed = {o["Key"] for o in s3.list_objects_v2(Bucket="checkpoints")["Contents"]}
    assert (before.objects, at.objects) == (0, 1)
    assert listed == {"t/other-tag", "t/untagged"}


def test_an_object_written_while_the_expiry_is_installed_is_as_old_as_the_callers_clock_says(aws: Any) -> None:
    from agent_wait.common.times import clock_scope

    # GIVEN the expiry installed, and an object written by a caller whose clock runs 40 days ahead of the wall clock
    # (moto stamps the object with the wall clock)
    s3 = aws("s3")
    s3.create_bucket(Bucket="checkpoints")
    rules = lifecycle_rules_from_template({"Rules": [{"Status": "Enabled", "ExpirationInDays": 31}]})
    s3.put_bucket_lifecycle_configuration(Bucket="checkpoints", LifecycleConfiguration={"Rules": rules})
    wall = datetime.now(UTC)
    expiry = LocalExpiry(aws)
    expiry.install()
    try:
        with clock_scope(lambda: wall + timedelta(days=40)):
            aws("s3").put_object(Bucket="checkpoints", Key="young", Body=b"x")
        s3.put_object(Bucket="checkpoints", Key="now", Body=b"x")  # written at the wall clock
        # WHEN the emulator expires 33 days after the wall clock: 33 days after moto's stamp, 7 before the writer's
        expired = expiry.run(wall + timedelta(days=33))
    finally:
        expiry.uninstall()
    # THEN each object counts its days from its writer's clock: the young one is kept, the other one goes
    assert expired.objects == 1
    assert [o["Key"] for o in s3.list_objects_v2(Bucket="checkpoints")["Contents"]] == ["young"]
