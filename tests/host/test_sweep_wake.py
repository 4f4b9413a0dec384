"""The sweep handler's precise-deadline wake-up: Scheduler's documented 60-second precision can wake it before the
question's time, so it waits that out (at most a minute, never past its own timeout) and never sleeps in a test."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from agent_wait.common.times import format_rfc3339, utc_now
from agent_wait.host.sweep import WAKE_MARGIN_SECONDS, wait_until_due


class Context:
    def __init__(self, seconds_left: float) -> None:
        self.seconds_left = seconds_left

    def get_remaining_time_in_millis(self) -> int:
        return int(self.seconds_left * 1000)


@pytest.mark.parametrize(
    ("early", "seconds_left", "waits"),
    [
        (20.0, 60.0, True),  # woken 20 s early with a minute to run: waits
        (-5.0, 60.0, False),  # woken after its time: nothing to wait for
        (55.0, 60.0, False),  # 55 s of waiting would leave less than the margin for the work: the sweep catches it
        (90.0, 900.0, False),  # more than a minute early: not Scheduler's jitter (a moved time): nothing
    ],
)
def test_an_early_wake_up_waits_until_its_time_within_its_limits(
    early: float, seconds_left: float, waits: bool
) -> None:
    slept: list[float] = []
    at = format_rfc3339(utc_now() + timedelta(seconds=early), round_up=True)
    waited = wait_until_due(at, Context(seconds_left), sleep=slept.append)
    assert bool(slept) is waits
    if waits:
        assert early - 1 < waited <= early + 1
        assert slept == [waited]
    assert seconds_left - waited >= WAKE_MARGIN_SECONDS or not waits


@pytest.mark.parametrize("at", [None, 17, "not a time"])
def test_a_wake_up_without_a_readable_time_runs_at_once(at: Any) -> None:
    slept: list[float] = []
    assert wait_until_due(at, Context(60), sleep=slept.append) == 0.0
    assert slept == []


@pytest.mark.parametrize(("limit", "waits"), [(60.0, True), (30.0, True), (10.0, False), (0.0, False)])
def test_the_wait_stops_at_the_limit_the_setting_gives(limit: float, waits: bool) -> None:
    # AGENT_WAIT_SCHEDULE_EARLY_WAIT_SECONDS: waiting less costs less Lambda time; the minute sweep does the rest
    slept: list[float] = []
    at = format_rfc3339(utc_now() + timedelta(seconds=20), round_up=True)
    wait_until_due(at, Context(900), sleep=slept.append, limit=limit)
    assert bool(slept) is waits
