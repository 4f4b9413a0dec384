"""ISO 8601 durations with a fixed length: weeks, days, hours, minutes and seconds."""

from __future__ import annotations

import math
import re
from datetime import timedelta

_NUMBER = r"(\d+(?:[.,]\d+)?)"
_DURATION = re.compile(rf"^P(?:{_NUMBER}W)?(?:{_NUMBER}D)?(?:T(?:{_NUMBER}H)?(?:{_NUMBER}M)?(?:{_NUMBER}S)?)?$")
_UNIT_SECONDS = (7 * 86400, 86400, 3600, 60, 1)
_CALENDAR = re.compile(r"^P(?:[^T]*[YM])")

ACCEPTED_FORMS = (
    "an ISO 8601 duration such as 'PT4H', 'P3D', 'P1W' or 'PT1.5S' (weeks, days, hours, minutes, seconds), "
    "or a positive number of seconds"
)


MAX_DURATION = timedelta(days=3650)
"""The longest duration a policy takes (about ten years), so every time it yields is a date every store can hold."""


class DurationSyntaxError(ValueError):
    """A duration that is not one of the accepted forms; the text says why."""


class DurationTooLongError(DurationSyntaxError):
    """A well-formed duration longer than a `timedelta` holds (999,999,999 days): a caller that bounds durations
    (`MAX_DURATION`) can refuse it as too long rather than as malformed."""


def parse_duration(value: object) -> timedelta:
    """Parse an ISO 8601 duration string or a number of seconds into a positive `timedelta`.

    Raises:
        DurationSyntaxError: empty, zero, negative, calendar-based (years, months) or malformed;
            `DurationTooLongError` when longer than a `timedelta` holds.
    """
    if isinstance(value, bool):
        raise DurationSyntaxError(f"got {value!r} (a bool is not a duration)")
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value <= 0:
            raise DurationSyntaxError(f"got {value!r} (must be more than zero seconds)")
        return _positive_delta(value, value)
    if not isinstance(value, str):
        raise DurationSyntaxError(f"got a {type(value).__name__}")
    text = value.strip().upper()
    if not text:
        raise DurationSyntaxError("got an empty string")
    if _CALENDAR.match(text):
        raise DurationSyntaxError(f"got {value!r} (years and months have no fixed length)")
    match = _DURATION.match(text)
    if match is None or text in ("P", "PT") or text.endswith("T"):
        raise DurationSyntaxError(f"got {value!r}")
    seconds = sum(
        float(part.replace(",", ".")) * unit
        for part, unit in zip(match.groups(), _UNIT_SECONDS, strict=True)
        if part is not None
    )
    return _positive_delta(seconds, value)


def _positive_delta(seconds: float, value: object) -> timedelta:
    # timedelta keeps microseconds: a shorter positive value would become zero, a huge one overflows.
    try:
        delta = timedelta(seconds=seconds)
    except OverflowError:
        raise DurationTooLongError(f"got {value!r} (too long to represent)") from None
    if delta <= timedelta(0):
        raise DurationSyntaxError(f"got {value!r} (must be more than zero seconds)")
    return delta


def format_duration(delta: timedelta) -> str:
    """The shortest exact ISO 8601 spelling of `delta` in days, hours, minutes and seconds."""
    days, rest = delta.days, delta.seconds
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    text = "P" + (f"{days}D" if days else "")
    clock = (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    if seconds or delta.microseconds:
        fraction = f".{delta.microseconds:06d}".rstrip("0") if delta.microseconds else ""
        clock += f"{seconds}{fraction}S"
    return text + ("T" + clock if clock else "")
