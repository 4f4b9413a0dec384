"""A2A tasks on the question table: one item per task, beside its thread's questions.

A task is a thread of the hosted agent: task `T` runs on thread `a2a-T` (`thread_for`), so every read of a task is
one `GetItem` by key, with no index. Its item, `pk = THREAD#a2a-T`, `sk = ~a2a#task`, holds what the ledger and the
agent's checkpoint do not: the task's context id, who sent its first message, the state the task ended in when
nothing else says so (`completed` with the run's result, `canceled`), its push-notification configs, and the state
changes its configs were already told of (`notified`, claimed one conditional write each, so a redelivered message
never tells one twice). Its state otherwise comes from the thread's questions and failure (`agent_wait.host.a2a.
states`).

The sort key sorts after the thread's lease item (`~THREAD`), so `Ledger.thread_exists` (keys below it) never takes
a task for a started thread. Only `GetItem` and `UpdateItem` are used: what the answer API's role already may do
(never `PutItem`, which could replace a row).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_wait.common.times import format_rfc3339
from agent_wait.contract.schema import QUESTION_TABLE, thread_key
from agent_wait.errors import LedgerUnavailableError

__all__ = (
    "MAX_RESULT_BYTES",
    "TASK_ITEM",
    "THREAD_PREFIX",
    "DynamoDbTaskStore",
    "PushTarget",
    "TaskItem",
    "task_for",
    "task_id_for",
    "thread_for",
)

THREAD_PREFIX = "a2a-"
"""Every A2A task's thread id starts with this; the router looks for a task only on such a thread."""
TASK_ITEM = "~a2a#task"
"""The task item's sort key: after `~THREAD` (`~` then a lower-case letter), so no thread query counts it."""
MAX_RESULT_BYTES = 64 * 1024
"""The most of a run's result (as JSON) a completed task keeps as its artifact; a larger one is cut and says so."""
_NAMESPACE = uuid.UUID("5b1f3c9e-3d6a-4c8e-9a51-0a2a0a2a0a2a")
"""The namespace of task ids made from a caller and a message id (UUID version 5)."""


def task_id_for(caller: str, message_id: str) -> str:
    """The task a caller's first message starts: the same caller and message id give the same task, always."""
    return str(uuid.uuid5(_NAMESPACE, f"{caller}\0{message_id}"))


def thread_for(task_id: str) -> str:
    """The hosted agent's thread a task runs on."""
    return f"{THREAD_PREFIX}{task_id}"


def task_for(thread_id: str) -> str | None:
    """The task a thread runs, or None for a thread no A2A message started."""
    return thread_id[len(THREAD_PREFIX) :] if thread_id.startswith(THREAD_PREFIX) else None


@dataclass(frozen=True, slots=True)
class PushTarget:
    """One push-notification config of a task, as kept (A2A `TaskPushNotificationConfig`)."""

    id: str
    """The config's id, unique on its task."""
    url: str
    """Where each state change is posted."""
    token: str = ""
    """Sent back as `X-A2A-Notification-Token`, so the receiver knows the post is for it."""
    scheme: str = ""
    """With `credentials`: the `Authorization` header's scheme (`Bearer`)."""
    credentials: str = ""
    """With `scheme`: the `Authorization` header's credentials."""
    owner: str = ""
    """The person key of who made it: only they may read it back (it holds their token)."""

    def to_item(self) -> dict[str, Any]:
        fields = {"url": self.url, "token": self.token, "scheme": self.scheme, "credentials": self.credentials}
        return {"M": {"owner": {"S": self.owner}, **{k: {"S": v} for k, v in fields.items()}}}

    @classmethod
    def from_item(cls, config_id: str, item: Mapping[str, Any]) -> PushTarget:
        values = {key: value.get("S", "") for key, value in item.get("M", {}).items()}
        return cls(config_id, **{k: values.get(k, "") for k in ("url", "token", "scheme", "credentials", "owner")})


@dataclass(frozen=True, slots=True)
class TaskItem:
    """What the task item holds (the repr leaves out the result: it may hold personal data)."""

    task_id: str
    context_id: str
    created_at: str
    created_by: str
    """The person key of who sent the task's first message."""
    ended: str | None = None
    """`completed` or `canceled` once the task ended so; None while the thread and its questions say."""
    result: Any = field(default=None, repr=False)
    """The run's result (`completed`), as JSON allows."""
    push: tuple[PushTarget, ...] = ()
    notified: frozenset[str] = frozenset()
    """The state changes already told to the push configs (`working:start`, `input-required:<question id>`, ...)."""

    @property
    def thread_id(self) -> str:
        return thread_for(self.task_id)


class DynamoDbTaskStore:
    """A2A tasks on the question table.

    Args:
        table: the question table's name.
        client: a boto3 DynamoDB client.
    """

    def __init__(self, table: str, *, client: Any) -> None:
        self.table = table
        self._client = client

    def _key(self, task_id: str) -> dict[str, Any]:
        return {
            QUESTION_TABLE.partition_key: {"S": thread_key(thread_for(task_id))},
            QUESTION_TABLE.sort_key: {"S": TASK_ITEM},
        }

    def _call(self, operation: str, **kwargs: Any) -> dict[str, Any] | None:
        """One DynamoDB call; None when its condition did not hold; an outage as `LedgerUnavailableError`."""
        from agent_wait.aws.errors import AWS_ERRORS, error_code, is_condition_failed

        try:
            return getattr(self._client, operation)(TableName=self.table, **kwargs)
        except AWS_ERRORS as exc:
            if is_condition_failed(exc):
                return None
            code = error_code(exc)
            raise LedgerUnavailableError(
                f"A2A task {operation} failed with {code}; try again", table=self.table, code=code
            ) from exc

    def get(self, task_id: str) -> TaskItem | None:
        """The task, or None when no message started it."""
        response = self._call("get_item", Key=self._key(task_id), ConsistentRead=True) or {}
        item = response.get("Item")
        return _task(task_id, item) if item else None

    def create(self, task_id: str, *, context_id: str, created_by: str, now: datetime) -> tuple[TaskItem, bool]:
        """The task, made now unless it exists; (task, whether this call made it)."""
        made = self._call(
            "update_item",
            Key=self._key(task_id),
            UpdateExpression="SET task_id = :task, context_id = :context, created_at = :at, created_by = :by",
            ConditionExpression="attribute_not_exists(pk)",
            ExpressionAttributeValues={
                ":task": {"S": task_id},
                ":context": {"S": context_id},
                ":at": {"S": format_rfc3339(now)},
                ":by": {"S": created_by},
            },
            ReturnValues="ALL_NEW",
        )
        if made is not None:
            return _task(task_id, made["Attributes"]), True
        found = self.get(task_id)
        if found is None:  # pragma: no cover - the condition failed, so the item exists
            raise LedgerUnavailableError(f"A2A task {task_id} vanished while it was made; try again", table=self.table)
        return found, False

    def end(self, task_id: str, state: str, *, result: Any = None) -> bool:
        """Record that the task ended `state` (`completed` with `result`, or `canceled`), unless it ended already;
        True when this call ended it."""
        values: dict[str, Any] = {":state": {"S": state}}
        options: dict[str, Any] = {}
        update = "SET ended = :state"
        if result is not None:
            update += ", #result = :result"
            values[":result"] = {"S": _result_text(result)}
            options["ExpressionAttributeNames"] = {"#result": "result"}
        done = self._call(
            "update_item",
            Key=self._key(task_id),
            UpdateExpression=update,
            ConditionExpression="attribute_exists(pk) AND attribute_not_exists(ended)",
            ExpressionAttributeValues=values,
            **options,
        )
        return done is not None

    def claim_notice(self, task_id: str, change: str) -> bool:
        """Claim telling the push configs of `change`; True once per change, False for every later claim."""
        claimed = self._call(
            "update_item",
            Key=self._key(task_id),
            UpdateExpression="ADD notified :change",
            ConditionExpression="attribute_exists(pk) AND NOT contains(notified, :one)",
            ExpressionAttributeValues={":change": {"SS": [change]}, ":one": {"S": change}},
        )
        return claimed is not None

    def put_push(self, task_id: str, target: PushTarget) -> bool:
        """Keep `target` on the task (replacing one with its id); False when there is no such task."""
        done = self._call(
            "update_item",
            Key=self._key(task_id),
            UpdateExpression="SET push = if_not_exists(push, :empty)",
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeValues={":empty": {"M": {}}},
        )
        if done is None:
            return False
        return (
            self._call(
                "update_item",
                Key=self._key(task_id),
                UpdateExpression="SET push.#id = :target",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames={"#id": target.id},
                ExpressionAttributeValues={":target": target.to_item()},
            )
            is not None
        )

    def delete_push(self, task_id: str, config_id: str) -> None:
        """Forget one push config of the task (nothing when it has none by that id)."""
        self._call(
            "update_item",
            Key=self._key(task_id),
            UpdateExpression="REMOVE push.#id",
            ConditionExpression="attribute_exists(push.#id)",
            ExpressionAttributeNames={"#id": config_id},
        )


def _task(task_id: str, item: Mapping[str, Any]) -> TaskItem:
    def text(name: str) -> str | None:
        value = item.get(name)
        return value.get("S") if isinstance(value, Mapping) else None

    result_text = text("result")
    push = item.get("push", {}).get("M", {})
    return TaskItem(
        task_id=task_id,
        context_id=text("context_id") or task_id,
        created_at=text("created_at") or "",
        created_by=text("created_by") or "",
        ended=text("ended"),
        result=json.loads(result_text) if result_text else None,
        push=tuple(PushTarget.from_item(config_id, config) for config_id, config in sorted(push.items())),
        notified=frozenset(item.get("notified", {}).get("SS", [])),
    )


def _result_text(result: Any) -> str:
    """The run's result as JSON text for the item; one over `MAX_RESULT_BYTES` is replaced by a note saying so, with
    its size and digest (an agent's whole state may be far larger than a task's artifact needs)."""
    text = json.dumps(result, default=str, ensure_ascii=False, separators=(",", ":"))
    size = len(text.encode("utf-8"))
    if size <= MAX_RESULT_BYTES:
        return text
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    note = {"truncated": True, "bytes": size, "sha256": digest, "limit": MAX_RESULT_BYTES}
    return json.dumps(note)
