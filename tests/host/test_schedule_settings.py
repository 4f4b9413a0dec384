"""`AGENT_WAIT_SCHEDULE_*`: precise deadlines are on with all three set, off with none, and anything between, or a
value that is not what it must be, is named in the one `ConfigurationError` of a cold start."""

from __future__ import annotations

import re

import pytest

from agent_wait.errors import ConfigurationError
from agent_wait.host import HostSettings

BASE = {"AGENT_WAIT_TABLE": "questions", "AGENT_WAIT_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/1/entry.fifo"}
ON = {
    "AGENT_WAIT_SCHEDULE_GROUP": "orders-deadlines",
    "AGENT_WAIT_SCHEDULE_TARGET_ARN": "arn:aws:lambda:us-east-1:123456789012:function:orders-sweep",
    "AGENT_WAIT_SCHEDULE_ROLE_ARN": "arn:aws:iam::123456789012:role/orders-scheduler",
}


def test_all_three_turn_precise_deadlines_on_and_none_leaves_them_off() -> None:
    on = HostSettings.from_env("sweep", {**BASE, **ON}).schedules
    assert on is not None
    assert (on.group, on.target_arn, on.role_arn) == tuple(ON.values())
    assert HostSettings.from_env("api", BASE).schedules is None


def test_some_but_not_all_names_the_missing_ones() -> None:
    partial = {**BASE, "AGENT_WAIT_SCHEDULE_GROUP": "orders-deadlines"}
    with pytest.raises(ConfigurationError) as raised:
        HostSettings.from_env("sweep", partial)
    assert re.search(
        r"precise deadlines need AGENT_WAIT_SCHEDULE_GROUP, AGENT_WAIT_SCHEDULE_TARGET_ARN, "
        r"AGENT_WAIT_SCHEDULE_ROLE_ARN together; AGENT_WAIT_SCHEDULE_TARGET_ARN, AGENT_WAIT_SCHEDULE_ROLE_ARN not set",
        raised.value.message,
    )


def test_a_value_that_is_not_what_it_must_be_is_named_with_it() -> None:
    wrong = {
        **ON,
        "AGENT_WAIT_SCHEDULE_GROUP": "has spaces",
        "AGENT_WAIT_SCHEDULE_ROLE_ARN": ON["AGENT_WAIT_SCHEDULE_TARGET_ARN"],
    }
    with pytest.raises(ConfigurationError) as raised:
        HostSettings.from_env("sweep", {**BASE, **wrong})
    assert "AGENT_WAIT_SCHEDULE_GROUP must be a schedule group name (1-64 of A-Z a-z 0-9 _ . -); got 'has spaces'" in (
        raised.value.message
    )
    assert "AGENT_WAIT_SCHEDULE_ROLE_ARN must be an IAM role ARN" in raised.value.message
    assert "AGENT_WAIT_SCHEDULE_TARGET_ARN" not in raised.value.message


def test_the_early_wake_ups_wait_is_a_minute_unless_set_lower() -> None:
    on = HostSettings.from_env("sweep", {**BASE, **ON}).schedules
    assert on is not None
    assert on.early_wait == 60.0
    lower = HostSettings.from_env("sweep", {**BASE, **ON, "AGENT_WAIT_SCHEDULE_EARLY_WAIT_SECONDS": "10"}).schedules
    assert lower is not None
    assert lower.early_wait == 10.0


@pytest.mark.parametrize("text", ["-1", "61", "a minute", "nan"])
def test_an_early_wait_outside_zero_to_sixty_seconds_is_named(text: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        HostSettings.from_env("sweep", {**BASE, **ON, "AGENT_WAIT_SCHEDULE_EARLY_WAIT_SECONDS": text})
    assert f"AGENT_WAIT_SCHEDULE_EARLY_WAIT_SECONDS must be a number of seconds from 0 to 60; got {text!r}" in (
        raised.value.message
    )


def test_an_early_wait_without_precise_deadlines_is_a_mistake_said_so() -> None:
    with pytest.raises(ConfigurationError, match="AGENT_WAIT_SCHEDULE_EARLY_WAIT_SECONDS is set but precise deadlines"):
        HostSettings.from_env("sweep", {**BASE, "AGENT_WAIT_SCHEDULE_EARLY_WAIT_SECONDS": "10"})
