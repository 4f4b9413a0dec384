"""How large a checkpoint payload (a checkpoint, or one task's packed writes) may be, and where it goes.

DynamoDB keeps a payload of up to `PAYLOAD_LIMIT` bytes (its item limit, less room for the keys). With a bucket
(`s3_offload_config`, `AGENT_WAIT_CHECKPOINT_BUCKET`), any payload over `offload_over` bytes goes to S3 instead
(`AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES`; `OFFLOAD_OVER`, 12 KB, by default). A payload neither store holds is refused
before anything of it is written (`SizeCheckedStorage`), and `TaskAtomicDynamoDBSaver` tells it as
`ThreadStateTooLargeError` naming the thread, the size and the fix (`too_large`).
"""

from __future__ import annotations

from typing import Any

from langgraph_checkpoint_aws.checkpoint.dynamodb.storage_strategy import StorageStrategy

from agent_wait.errors import ThreadStateTooLargeError

__all__ = (
    "ITEM_LIMIT",
    "OFFLOAD_OVER",
    "PAYLOAD_LIMIT",
    "S3_OBJECT_LIMIT",
    "PayloadTooLargeError",
    "SizeCheckedStorage",
    "too_large",
)

ITEM_LIMIT = 400 * 1024
"""DynamoDB's item size limit, in bytes (names and values of every attribute)."""
PAYLOAD_LIMIT = ITEM_LIMIT - 1024
"""The largest payload stored in DynamoDB: its item's keys (`CHUNK_<thread>#<ns>#<checkpoint>[#<task>#<idx>]`, a
thread id of at most 128 characters) and attribute names fit in the rest."""
S3_OBJECT_LIMIT = 5 * 1024**3
"""S3's limit for one `PutObject`, which the saver uses for a payload over `offload_over` when it has a bucket."""
OFFLOAD_OVER = 12 * 1024
"""The default offload threshold, in bytes: 12 KB, where a lifecycle's checkpoints cost the same in the table (3 WRU
a KB) as in the bucket (4 PUTs and 6 WRU), measured (docs/scaling.md, "Checkpoint offload threshold"). The library's
own is 350 KB (`S3_OFFLOAD_THRESHOLD`), where a lifecycle costs 27 times the bucket's."""


class PayloadTooLargeError(Exception):
    """A payload over what its store holds; `TaskAtomicDynamoDBSaver` names its thread (`ThreadStateTooLargeError`)."""

    def __init__(self, size: int, limit: int, store: str) -> None:
        super().__init__(f"{size} bytes over {store}'s {limit}")
        self.size, self.limit, self.store = size, limit, store


class SizeCheckedStorage(StorageStrategy):
    """`StorageStrategy` that offloads over `offload_over` bytes (the library's threshold is a constant) and refuses a
    payload its store cannot hold before anything of it is written.

    The saver asks `should_offload_to_s3` once per payload, before it writes the payload's reference item.
    """

    def __init__(self, *args: Any, offload_over: int = OFFLOAD_OVER, inline: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.offload_over = offload_over
        self.inline = inline
        """`InlinePayloads`: where the payloads the library's reads found in their heads wait (`ref_loc` `INLINE`)."""

    def retrieve_data(self, ref_key: str, ref_location: Any) -> bytes | None:
        if ref_location == "INLINE":
            return self.inline.take(ref_key) if self.inline is not None else None
        return super().retrieve_data(ref_key, ref_location)

    def batch_delete_data(self, items: list[tuple[str, Any]]) -> dict[str, list[str]]:
        # An inline payload goes with its head: nothing of it is left to delete (the library would warn of it).
        return super().batch_delete_data([(key, where) for key, where in items if where != "INLINE"])

    def should_offload_to_s3(self, serialized_data: bytes) -> bool:
        size = len(serialized_data)
        if self.s3_enabled and size > self.offload_over:
            if size > S3_OBJECT_LIMIT:
                raise PayloadTooLargeError(size, S3_OBJECT_LIMIT, "an S3 object")
            return True
        if size > PAYLOAD_LIMIT:
            raise PayloadTooLargeError(size, PAYLOAD_LIMIT, "a DynamoDB item")
        return False


def too_large(exc: BaseException, *, what: str, config: Any, table: str, offload: bool) -> ThreadStateTooLargeError:
    """`exc` (a payload refused here, or DynamoDB's refusal for size) told as the thread's error, with the fix."""
    thread_id = str(config["configurable"].get("thread_id"))
    size, limit = (exc.size, exc.limit) if isinstance(exc, PayloadTooLargeError) else (0, PAYLOAD_LIMIT)
    measured = f"is {size} bytes" if size else "is too large"
    if offload:
        fix = "It is too large even with the checkpoint bucket: keep large values out of the state (by reference)"
    else:
        fix = (
            "Turn on the checkpoint bucket (AGENT_WAIT_CHECKPOINT_BUCKET; the AgentWait construct creates it unless "
            "checkpoint_bucket=False), which stores larger checkpoints in S3"
        )
    return ThreadStateTooLargeError(
        f"the {what} of thread {thread_id!r} {measured}; a DynamoDB item holds at most {ITEM_LIMIT} bytes. {fix}",
        thread_id=thread_id,
        table=table,
        size=size,
        limit=limit,
    )
