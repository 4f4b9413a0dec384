"""RFC 3339 UTC timestamps in one fixed-width form, so string order is time order (the ledger GSI relies on it)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta

from agent_wait.errors import ArgumentError

NEVER = "never"
"""What the ledger stores as `expires_at` for a question with no deadline; sorts after every timestamp."""


_clock_override: ContextVar[Callable[[], datetime] | None] = ContextVar("agent_wait_clock", default=None)


def utc_now() -> datetime:
    """Now, in UTC; inside `clock_scope(clock)` it is `clock()` (hosts and tests move time without sleeping)."""
    override = _clock_override.get()
    if override is None:
        return datetime.now(UTC)
    # A clock may itself build on utc_now() (real time plus an offset): inside it, time is real.
    token = _clock_override.set(None)
    try:
        return override()
    finally:
        _clock_override.reset(token)


@contextmanager
def clock_scope(clock: Callable[[], datetime]) -> Iterator[None]:
    """Make `utc_now()` return `clock()` in this context, so a question asked inside a run is timed by the
    same clock as the host that runs it."""
    if clock is utc_now:
        yield
        return
    token = _clock_override.set(clock)
    try:
        yield
    finally:
        _clock_override.reset(token)


def require_aware(value: datetime, name: str) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ArgumentError(f"{name} must be timezone-aware (e.g. datetime.now(UTC)); got naive {value.isoformat()}")
    return value.astimezone(UTC)


def format_rfc3339(moment: datetime, *, round_up: bool = False) -> str:
    """`YYYY-MM-DDTHH:MM:SSZ` in UTC; `round_up` moves a fractional second to the next whole one."""
    moment = require_aware(moment, "timestamp")
    if round_up and moment.microsecond:
        moment = moment.replace(microsecond=0) + timedelta(seconds=1)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: str) -> datetime:
    """Parse an RFC 3339 timestamp (any offset, `Z` accepted) into an aware UTC datetime.

    Raises:
        ValueError: not a timestamp, or one without an offset.
    """
    if not isinstance(text, str):
        raise ArgumentError(f"expected an RFC 3339 timestamp string, got a {type(text).__name__}")
    parsed = datetime.fromisoformat(text.replace("z", "Z"))
    return require_aware(parsed, "timestamp")


def deadline(asked_at: datetime, timeout: timedelta | None) -> str | None:
    """`asked_at + timeout` as RFC 3339, rounded up to the second so a deadline is never early."""
    if timeout is None:
        return None
    return format_rfc3339(asked_at + timeout, round_up=True)


def seconds_between(start: datetime, end: datetime) -> float:
    seconds = (end - start).total_seconds()
    return seconds if math.isfinite(seconds) else 0.0
