"""What an emulated stack holds, read out through the AWS APIs and written back into a new emulator.

moto keeps everything in memory and has no disk persistence of its own, so `agent_wait.local.state` saves a stack's
contents as data: `export_snapshot` reads every DynamoDB item (scan), every message still on a queue (received and
deleted: it runs as the stack stops), every secret's value, every EventBridge Scheduler schedule and every S3
object; `import_snapshot` writes them into a freshly deployed stack of the same template (put item, send message,
put secret value, create schedule, put object).

A stack's own resources are matched by their logical id in the template, since moto names some of them at random
(`stack:<logical id>`); what the local stack makes beside the template (the emails-sent table, the local link keys)
by name (`name:<name>`, stable because the stack's name is). Something saved that the new stack does not have
(a resource the template no longer declares, a secret `dev` makes afresh as it serves) is skipped and reported.
Binary values (a DynamoDB `B`, a message's binary attribute, an object's body) are stored as base64.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_wait.local.schedules import ensure_schedule_group

__all__ = ("ImportReport", "export_snapshot", "import_snapshot")

Client = Callable[[str], Any]
"""Returns a boto3 client for a service, pointed at the emulator."""

_BYTES = "$base64"
"""The key of the one-key object that stands for bytes in a snapshot."""
_DATETIME = "$datetime"
"""The key of the one-key object that stands for a datetime (a schedule's start or end date)."""
_SCHEDULE_FIELDS = (
    "Name",
    "GroupName",
    "ScheduleExpression",
    "ScheduleExpressionTimezone",
    "FlexibleTimeWindow",
    "Target",
    "ActionAfterCompletion",
    "State",
    "Description",
    "StartDate",
    "EndDate",
    "KmsKeyArn",
)
"""What `create_schedule` takes back from `get_schedule`."""


@dataclass
class ImportReport:
    """What `import_snapshot` wrote, by kind, and what it skipped (with why)."""

    written: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def count(self, kind: str, n: int = 1) -> None:
        self.written[kind] = self.written.get(kind, 0) + n


# -- encoding ---------------------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    """`value` with bytes and datetimes as one-key objects, so the snapshot is JSON."""
    if isinstance(value, bytes | bytearray):
        return {_BYTES: base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, datetime):
        return {_DATETIME: value.isoformat()}
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(item) for item in value]
    return value


def _native(value: Any) -> Any:
    """The inverse of `_jsonable`."""
    if isinstance(value, dict):
        if len(value) == 1 and _BYTES in value:
            return base64.b64decode(value[_BYTES])
        if len(value) == 1 and _DATETIME in value:
            return datetime.fromisoformat(value[_DATETIME])
        return {key: _native(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_native(item) for item in value]
    return value


# -- which resource is which ------------------------------------------------------------------------


def _stack_resources(client: Client, stack_name: str) -> dict[str, str]:
    """The stack's resources as {physical id: logical id} (a queue's physical id is its URL)."""
    resources = client("cloudformation").describe_stack_resources(StackName=stack_name)["StackResources"]
    return {r["PhysicalResourceId"]: r["LogicalResourceId"] for r in resources if r.get("PhysicalResourceId")}


def _key(physical: str, name: str, logical_of: dict[str, str]) -> str:
    return f"stack:{logical_of[physical]}" if physical in logical_of else f"name:{name}"


def _resolve(key: str, physical_of: dict[str, str], by_name: Callable[[str], str | None]) -> str | None:
    """The new stack's physical id for a saved resource key, None when it has no such resource."""
    kind, _, ident = key.partition(":")
    return physical_of.get(ident) if kind == "stack" else by_name(ident)


def _pages(method: Callable[..., dict[str, Any]], key: str, token: str, next_key: str, **kwargs: Any) -> Iterator[Any]:
    """Every item under `key` of a paginated list call (`token` is the request's name, `next_key` the reply's)."""
    while True:
        page = method(**kwargs)
        yield from page.get(key, [])
        if not page.get(next_key):
            return
        kwargs[token] = page[next_key]


# -- export -----------------------------------------------------------------------------------------


def export_snapshot(client: Client, stack_name: str) -> dict[str, Any]:
    """Everything the emulator holds for the stack, as JSON-able data. Drains its queues (run it as the stack stops).

    Raises:
        botocore.exceptions.ClientError: the emulator refused a read.
    """
    logical_of = _stack_resources(client, stack_name)
    return _jsonable(
        {
            "tables": _export_tables(client, logical_of),
            "queues": _export_queues(client, logical_of),
            "secrets": _export_secrets(client),
            "schedules": _export_schedules(client),
            "buckets": _export_buckets(client, logical_of),
        }
    )


def _export_tables(client: Client, logical_of: dict[str, str]) -> dict[str, list[Any]]:
    dynamodb, tables = client("dynamodb"), {}
    for name in _pages(dynamodb.list_tables, "TableNames", "ExclusiveStartTableName", "LastEvaluatedTableName"):
        items: list[Any] = []
        kwargs: dict[str, Any] = {"TableName": name}
        while True:
            page = dynamodb.scan(**kwargs)
            items.extend(page.get("Items", []))
            if not page.get("LastEvaluatedKey"):
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        tables[_key(name, name, logical_of)] = items
    return tables


def _export_queues(client: Client, logical_of: dict[str, str]) -> dict[str, list[Any]]:
    """Each queue's messages, received and deleted in order (a FIFO group gives its next message only once the
    one before is deleted): body, attributes, group and deduplication ids."""
    sqs, queues = client("sqs"), {}
    for url in sqs.list_queues().get("QueueUrls", []):
        messages: list[Any] = []
        while True:
            received = sqs.receive_message(
                QueueUrl=url,
                MaxNumberOfMessages=10,
                WaitTimeSeconds=0,
                AttributeNames=["All"],
                MessageSystemAttributeNames=["All"],
                MessageAttributeNames=["All"],
            ).get("Messages", [])
            if not received:
                break
            for message in received:
                attributes = message.get("Attributes", {})
                messages.append(
                    {
                        "body": message["Body"],
                        "attributes": {
                            name: {k: v for k, v in value.items() if v not in ([], None)}
                            for name, value in message.get("MessageAttributes", {}).items()
                        },
                        "group": attributes.get("MessageGroupId"),
                        "dedup": attributes.get("MessageDeduplicationId"),
                    }
                )
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        name = url.rsplit("/", 1)[-1]
        queues[_key(url if url in logical_of else name, name, logical_of)] = messages  # moto's id: a URL or a name
    return queues


def _export_secrets(client: Client) -> dict[str, Any]:
    """Each secret's current value by name (string or binary)."""
    manager, secrets = client("secretsmanager"), {}
    for secret in _pages(manager.list_secrets, "SecretList", "NextToken", "NextToken"):
        if secret.get("DeletedDate"):
            continue
        value = manager.get_secret_value(SecretId=secret["ARN"])
        secrets[secret["Name"]] = {"string": value.get("SecretString"), "binary": value.get("SecretBinary")}
    return secrets


def _export_schedules(client: Client) -> list[dict[str, Any]]:
    scheduler, schedules = client("scheduler"), []
    for group in _pages(scheduler.list_schedule_groups, "ScheduleGroups", "NextToken", "NextToken"):
        listed = _pages(scheduler.list_schedules, "Schedules", "NextToken", "NextToken", GroupName=group["Name"])
        for summary in listed:
            found = scheduler.get_schedule(Name=summary["Name"], GroupName=group["Name"])
            schedules.append({k: found[k] for k in _SCHEDULE_FIELDS if found.get(k) not in (None, "")})
    return schedules


def _export_buckets(client: Client, logical_of: dict[str, str]) -> dict[str, list[Any]]:
    s3, buckets = client("s3"), {}
    for bucket in s3.list_buckets().get("Buckets", []):
        name, objects = bucket["Name"], []
        for listed in _pages(s3.list_objects_v2, "Contents", "ContinuationToken", "NextContinuationToken", Bucket=name):
            got = s3.get_object(Bucket=name, Key=listed["Key"])
            body = got["Body"].read()
            objects.append(
                {"key": listed["Key"], "body": body, "type": got.get("ContentType"), "metadata": got.get("Metadata")}
            )
        buckets[_key(name, name, logical_of)] = objects
    return buckets


# -- import -----------------------------------------------------------------------------------------


def import_snapshot(snapshot: dict[str, Any], client: Client, stack_name: str) -> ImportReport:
    """Write `snapshot` (from `export_snapshot`) into the freshly deployed stack `stack_name`.

    Raises:
        botocore.exceptions.ClientError: the emulator refused a write.
    """
    data, report = _native(snapshot), ImportReport()
    physical_of = {logical: physical for physical, logical in _stack_resources(client, stack_name).items()}
    _import_tables(data.get("tables", {}), client, physical_of, report)
    _import_secrets(data.get("secrets", {}), client, report)
    _import_schedules(data.get("schedules", []), client, report)
    _import_buckets(data.get("buckets", {}), client, physical_of, report)
    _import_queues(data.get("queues", {}), client, physical_of, report)  # last: a message may name any of the above
    return report


def _import_tables(tables: dict[str, Any], client: Client, physical_of: dict[str, str], report: ImportReport) -> None:
    dynamodb = client("dynamodb")
    existing = set(_pages(dynamodb.list_tables, "TableNames", "ExclusiveStartTableName", "LastEvaluatedTableName"))
    for key, items in tables.items():
        name = _resolve(key, physical_of, lambda n: n if n in existing else None)
        if name is None:
            report.skipped.append(f"table {key} ({len(items)} items): not in this stack")
            continue
        for item in items:
            dynamodb.put_item(TableName=name, Item=item)
        report.count("items", len(items))


def _import_queues(queues: dict[str, Any], client: Client, physical_of: dict[str, str], report: ImportReport) -> None:
    sqs = client("sqs")
    existing = {url.rsplit("/", 1)[-1]: url for url in sqs.list_queues().get("QueueUrls", [])}
    for key, messages in queues.items():
        found = _resolve(key, physical_of, existing.get)
        url = existing.get(found.rsplit("/", 1)[-1]) if found else None
        if url is None:
            if messages:
                report.skipped.append(f"queue {key} ({len(messages)} messages): not in this stack")
            continue
        for message in messages:
            kwargs: dict[str, Any] = {"QueueUrl": url, "MessageBody": message["body"]}
            if message.get("attributes"):
                kwargs["MessageAttributes"] = message["attributes"]
            if message.get("group"):
                kwargs["MessageGroupId"] = message["group"]
            if message.get("dedup"):
                kwargs["MessageDeduplicationId"] = message["dedup"]
            sqs.send_message(**kwargs)
        report.count("messages", len(messages))


def _import_secrets(secrets: dict[str, Any], client: Client, report: ImportReport) -> None:
    """Restore the values of the secrets the new stack made again (link keys, webhook secrets)."""
    manager = client("secretsmanager")
    existing = {s["Name"]: s["ARN"] for s in _pages(manager.list_secrets, "SecretList", "NextToken", "NextToken")}
    for name, value in secrets.items():
        if name not in existing:
            report.skipped.append(f"secret {name}: made afresh as the stack serves, or not in this stack")
            continue
        given = {"SecretString": value["string"]} if value.get("string") is not None else {}
        if not given and value.get("binary") is not None:
            given = {"SecretBinary": value["binary"]}
        if given:
            manager.put_secret_value(SecretId=existing[name], **given)
            report.count("secrets")


def _import_schedules(schedules: list[dict[str, Any]], client: Client, report: ImportReport) -> None:
    scheduler = client("scheduler")
    for schedule in schedules:
        ensure_schedule_group(scheduler, schedule.get("GroupName", "default"))
        try:
            scheduler.create_schedule(**schedule)
        except scheduler.exceptions.ConflictException:
            report.skipped.append(f"schedule {schedule['Name']}: already there")
            continue
        report.count("schedules")


def _import_buckets(buckets: dict[str, Any], client: Client, physical_of: dict[str, str], report: ImportReport) -> None:
    s3 = client("s3")
    existing = {b["Name"] for b in s3.list_buckets().get("Buckets", [])}
    for key, objects in buckets.items():
        name = _resolve(key, physical_of, lambda n: n if n in existing else None)
        if name is None:
            report.skipped.append(f"bucket {key} ({len(objects)} objects): not in this stack")
            continue
        for item in objects:
            extra = {"ContentType": item["type"]} if item.get("type") else {}
            s3.put_object(Bucket=name, Key=item["key"], Body=item["body"], Metadata=item.get("metadata") or {}, **extra)
        report.count("objects", len(objects))
