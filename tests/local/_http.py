"""HTTP requests as curl would send them, for the tests that talk to the local answer API."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ("Reply", "call")


@dataclass
class Reply:
    status: int
    headers: Mapping[str, str]
    body: Any


def call(
    url: str,
    *,
    method: str = "GET",
    token: str | None = None,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """One HTTP request with urllib; the reply's JSON body (None when it is not JSON)."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode("utf-8"))
    request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    if body is not None and not isinstance(body, bytes):
        request.add_header("Content-Type", "application/json")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, raw, found = response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        status, raw, found = exc.code, exc.read(), dict(exc.headers)
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = None
    return Reply(status, {k.lower(): v for k, v in found.items()}, parsed)
