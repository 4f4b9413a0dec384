"""Identifiers: ULIDs for events, derived question ids for async-mode questions."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping
from typing import Any

from agent_wait.common.canonical_json import canonical_json

__all__ = ("new_ulid", "question_id_for")

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_ulid(*, now_ms: int | None = None) -> str:
    """A fresh ULID: 48 bits of milliseconds then 80 random bits, 26 Crockford base32 characters."""
    millis = int(time.time() * 1000) if now_ms is None else now_ms
    value = (millis << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        value, digit = divmod(value, 32)
        chars.append(_CROCKFORD[digit])
    return "".join(reversed(chars))


def question_id_for(thread_id: str, function: str, args: Mapping[str, Any]) -> str:
    """The stable id of an async-mode question: sha256 over `thread_id|function|canonical JSON args`.

    The same call with the same arguments on the same thread always gets the same id, so a repeated
    call republishes one question instead of asking a second.

    Raises:
        EnvelopeError: `args` holds a value that is not JSON.
    """
    material = f"{thread_id}|{function}|{canonical_json(args, where='args')}"
    return hashlib.sha256(material.encode("utf-8")).hexdigest()
