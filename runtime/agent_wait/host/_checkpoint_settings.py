"""The checkpoint settings of the host (`AGENT_WAIT_CHECKPOINT_BUCKET`, `AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES`), read and
checked with the rest of `HostSettings`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent_wait.contract.schema import Settings

__all__ = ("PAYLOAD_LIMIT", "checkpoint_settings")

PAYLOAD_LIMIT = 399 * 1024
"""The largest payload the checkpoint saver keeps in DynamoDB (`agent_wait.langgraph.checkpoint.sizes.PAYLOAD_LIMIT`,
restated: settings import no framework), so the highest offload threshold that means anything."""

_BUCKET_NAME = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
"""An S3 bucket name, as S3's naming rules allow it (length and characters)."""


def checkpoint_settings(value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]) -> dict[str, Any]:
    """`checkpoint_bucket` and `checkpoint_offload_bytes` for `HostSettings`, checked; problems added to `problems`."""
    bucket = value[Settings.CHECKPOINT_BUCKET]
    if bucket is not None and not _BUCKET_NAME.fullmatch(bucket):
        problems.append(
            f"{Settings.CHECKPOINT_BUCKET.value} must be an S3 bucket name (3 to 63 lowercase letters, digits, "
            f"dots and hyphens; not an ARN or a URL); got {bucket!r}"
        )
        wrong.append(Settings.CHECKPOINT_BUCKET.value)
    return {"checkpoint_bucket": bucket, "checkpoint_offload_bytes": _offload_bytes(value, problems, wrong)}


def _offload_bytes(value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]) -> int | None:
    """`AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES`, checked: a number of bytes in range, and only with the bucket."""
    text = value[Settings.CHECKPOINT_OFFLOAD_BYTES]
    if text is None:
        return None
    number = int(text) if text.isdigit() and 1 <= int(text) <= PAYLOAD_LIMIT else None
    if number is None:
        problems.append(
            f"{Settings.CHECKPOINT_OFFLOAD_BYTES.value} must be a whole number of bytes from 1 to {PAYLOAD_LIMIT} (the "
            f"largest payload the checkpoint table keeps); got {text!r}"
        )
    elif value[Settings.CHECKPOINT_BUCKET] is None:
        problems.append(
            f"{Settings.CHECKPOINT_OFFLOAD_BYTES.value} needs {Settings.CHECKPOINT_BUCKET.value}: without a bucket "
            "nothing is offloaded; set the bucket too, or unset the threshold"
        )
    else:
        return number
    wrong.append(Settings.CHECKPOINT_OFFLOAD_BYTES.value)
    return None
