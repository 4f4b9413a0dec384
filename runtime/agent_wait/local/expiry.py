"""What AWS deletes by itself, deleted on the emulator by its clock: DynamoDB's TTL and S3's lifecycle expiration.

moto keeps an item whose TTL has passed and an object a lifecycle rule expires for ever, and its CloudFormation
sets neither a table's TTL nor a bucket's lifecycle rules (`agent_wait.local.deploy` sets them after the stack).
`LocalExpiry.run(now)` does what AWS would have done by `now`: it deletes every item of a table with TTL on whose
TTL attribute is at or before `now`, and every object an enabled lifecycle rule expires by `now` (its prefix and
tags match, and its days since it was written, counted to the next midnight UTC as S3 counts them, have passed).
`EmulatedStack.expire()` runs it at the stack's clock; `agent-wait dev` runs it beside each sweep; a test moves the
clock and calls it, never sleeping.

An object's age counts from when it was written by the emulator's clock: while a `LocalExpiry` is installed, every
`PutObject` and `CopyObject` that succeeds is remembered at `utc_now()` in the caller's context (the stack runs each
function in its clock's scope), so an object written after the clock moved is as young as the clock says. One
written otherwise (before the install, or restored from a state folder) counts from moto's `LastModified`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any

from agent_wait.aws.errors import ServiceError, error_code
from agent_wait.common.times import utc_now

__all__ = ("Expired", "LocalExpiry", "lifecycle_rules_from_template")

_WRITES = frozenset({"PutObject", "CopyObject", "CompleteMultipartUpload"})
"""The S3 calls that create an object (a copy onto itself too: S3 counts its days from then)."""
_WRITTEN = "agent_wait_local_written"
"""Where a write's bucket and key wait in botocore's request context between its parameters and its answer."""
_ACTIVE: list[LocalExpiry] = []
"""The expiry of the running `EmulatedStack` (one per process)."""
_HOOKS_REGISTERED: list[bool] = []


@dataclass(frozen=True)
class Expired:
    """What one run deleted."""

    items: int
    """Table items whose TTL had passed."""
    objects: int
    """Objects a lifecycle rule expired."""


class LocalExpiry:
    """Deletes what DynamoDB's TTL and S3's lifecycle rules would have deleted by a given time.

    Args:
        client: returns a boto3 client for a service, pointed at the emulator (its calls are the operator's).
    """

    def __init__(self, client: Callable[[str], Any]) -> None:
        self._client = client
        self._written: dict[tuple[str, str], datetime] = {}
        self._lock = threading.Lock()

    def install(self) -> None:
        """Remember when each object is written, by the caller's clock, from now on (until `uninstall`)."""
        _register_hooks()
        _ACTIVE[:] = [self]

    def uninstall(self) -> None:
        if _ACTIVE and _ACTIVE[0] is self:
            _ACTIVE.clear()

    def written(self, bucket: str, key: str, at: datetime) -> None:
        with self._lock:
            self._written[(bucket, key)] = at

    def run(self, now: datetime) -> Expired:
        """Delete what AWS would have deleted by `now`."""
        return Expired(items=self._expire_items(now), objects=self._expire_objects(now))

    # -- DynamoDB's TTL ----------------------------------------------------------------------------------------------

    def _expire_items(self, now: datetime) -> int:
        dynamodb = self._client("dynamodb")
        deleted = 0
        for table in _pages(dynamodb.list_tables, "TableNames", "ExclusiveStartTableName", "LastEvaluatedTableName"):
            described = dynamodb.describe_time_to_live(TableName=table)["TimeToLiveDescription"]
            if described.get("TimeToLiveStatus") != "ENABLED":
                continue
            keys = [k["AttributeName"] for k in dynamodb.describe_table(TableName=table)["Table"]["KeySchema"]]
            names = {f"#k{i}": name for i, name in enumerate(keys)} | {"#ttl": described["AttributeName"]}
            request = {
                "TableName": table,
                # DynamoDB deletes an item whose TTL is a number of seconds at or before now; any other value, never.
                "FilterExpression": "attribute_type(#ttl, :number) AND #ttl <= :now",
                "ProjectionExpression": ", ".join(f"#k{i}" for i in range(len(keys))),
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": {":number": {"S": "N"}, ":now": {"N": str(int(now.timestamp()))}},
            }
            for item in _pages(dynamodb.scan, "Items", "ExclusiveStartKey", "LastEvaluatedKey", **request):
                dynamodb.delete_item(TableName=table, Key=item)
                deleted += 1
        return deleted

    # -- S3's lifecycle expiration -----------------------------------------------------------------------------------

    def _expire_objects(self, now: datetime) -> int:
        s3 = self._client("s3")
        deleted = 0
        for bucket in (b["Name"] for b in s3.list_buckets().get("Buckets", [])):
            for rule in _expiring_rules(s3, bucket):
                prefix, tags, days = rule
                for listed in _pages(
                    s3.list_objects_v2,
                    "Contents",
                    "ContinuationToken",
                    "NextContinuationToken",
                    Bucket=bucket,
                    Prefix=prefix,
                ):
                    key = listed["Key"]
                    if tags and not tags.items() <= _tags(s3, bucket, key).items():
                        continue
                    if _expires_at(self._created(bucket, key, listed["LastModified"]), days) <= now:
                        s3.delete_object(Bucket=bucket, Key=key)
                        with self._lock:
                            self._written.pop((bucket, key), None)
                        deleted += 1
        return deleted

    def _created(self, bucket: str, key: str, last_modified: datetime) -> datetime:
        with self._lock:
            return self._written.get((bucket, key), last_modified)


def _expires_at(created: datetime, days: int) -> datetime:
    """When S3 expires an object `days` after `created`: that moment rounded up to the next midnight UTC."""
    due = created.astimezone(UTC) + timedelta(days=days)
    return datetime.combine(due.date() + timedelta(days=1), time(), tzinfo=UTC)


def _expiring_rules(s3: Any, bucket: str) -> list[tuple[str, dict[str, str], int]]:
    """The bucket's enabled rules that expire current objects after a number of days: (prefix, tags, days)."""
    try:
        rules = s3.get_bucket_lifecycle_configuration(Bucket=bucket).get("Rules", [])
    except ServiceError as exc:
        if error_code(exc) == "NoSuchLifecycleConfiguration":
            return []  # no rule: nothing expires
        raise
    found = []
    for rule in rules:
        days = (rule.get("Expiration") or {}).get("Days")
        if rule.get("Status") != "Enabled" or not days:
            continue
        shape = rule.get("Filter") or {}
        both = shape.get("And") or {}
        prefix = shape.get("Prefix", both.get("Prefix", rule.get("Prefix", ""))) or ""
        tags = [shape["Tag"]] if "Tag" in shape else both.get("Tags", [])
        found.append((prefix, {t["Key"]: t["Value"] for t in tags}, int(days)))
    return found


def _tags(s3: Any, bucket: str, key: str) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in s3.get_object_tagging(Bucket=bucket, Key=key).get("TagSet", [])}


def _pages(call: Callable[..., Any], items: str, start: str, next_key: str, **request: Any) -> Iterator[Any]:
    while True:
        page = call(**request)
        yield from page.get(items, [])
        if not page.get(next_key):
            return
        request[start] = page[next_key]


def lifecycle_rules_from_template(configuration: dict[str, Any]) -> list[dict[str, Any]]:
    """A bucket's `LifecycleConfiguration` as CloudFormation writes it, as S3's API takes it: the expiration rules
    (`Id`, `Status`, `ExpirationInDays`, `Prefix`, `TagFilters`); what the emulator does not expire is left out."""
    rules = []
    for rule in configuration.get("Rules", []):
        if not rule.get("ExpirationInDays"):
            continue
        tags = [{"Key": t["Key"], "Value": t["Value"]} for t in rule.get("TagFilters", [])]
        prefix = rule.get("Prefix", "")
        if tags and (prefix or len(tags) > 1):
            shape: dict[str, Any] = {"And": {"Prefix": prefix, "Tags": tags}}
        elif tags:
            shape = {"Tag": tags[0]}
        else:
            shape = {"Prefix": prefix}
        rules.append(
            {
                "ID": rule.get("Id", f"rule-{len(rules)}"),
                "Status": rule.get("Status", "Enabled"),
                "Filter": shape,
                "Expiration": {"Days": int(rule["ExpirationInDays"])},
            }
        )
    return rules


# -- botocore hooks: when each object was written, by the caller's clock ---------------------------------------------


def _register_hooks() -> None:
    """Add the two hooks to every botocore session made from now on, and to boto3's default session if there is one
    (as `agent_wait.local.iam` adds its own). They do nothing while no `LocalExpiry` is installed."""
    import boto3
    import botocore.handlers

    hooks = [("before-parameter-build.s3", _remember_write), ("after-call.s3", _record_write)]
    if not _HOOKS_REGISTERED:
        botocore.handlers.BUILTIN_HANDLERS.extend(hooks)
        _HOOKS_REGISTERED.append(True)
    default = boto3.DEFAULT_SESSION
    if default is not None:
        for event, hook in hooks:
            default._session.register(event, hook, unique_id=f"agent-wait-local-expiry-{event}")


def _remember_write(params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
    if _ACTIVE and model.name in _WRITES:
        context[_WRITTEN] = (str(params.get("Bucket")), str(params.get("Key")))


def _record_write(http_response: Any, model: Any, context: dict[str, Any], **_: Any) -> None:
    written = context.get(_WRITTEN)
    if _ACTIVE and written is not None and model.name in _WRITES and http_response.status_code < 300:
        _ACTIVE[0].written(*written, at=utc_now())
