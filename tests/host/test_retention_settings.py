"""Retention by default: unset, the host keeps checkpoints 30 days after a thread's last write, decided rows 400 days
after their decision and channel records 90 days after their last send; `never` keeps them for ever, and a value that
cannot be a retention is refused at cold start with the variable named."""

from __future__ import annotations

from datetime import timedelta

import pytest

from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError
from agent_wait.host import HostSettings

ROUTER = {
    Settings.GRAPH.value: "m:g",
    Settings.TABLE.value: "questions",
    Settings.CHECKPOINT_TABLE.value: "checkpoints",
    Settings.DLQ_URL.value: "https://sqs.us-east-1.amazonaws.com/123456789012/dlq.fifo",
}


def test_unset_the_host_keeps_checkpoints_30_days_decisions_400_and_channel_records_90() -> None:
    # GIVEN a router environment that says nothing about retention
    # WHEN its settings are read
    settings = HostSettings.from_env("router", ROUTER)
    # THEN nothing is kept for ever: each store has its documented default
    assert settings.checkpoint_retention == timedelta(days=30)
    assert settings.decided_retention == timedelta(days=400)
    assert settings.channel_record_retention == timedelta(days=90)


@pytest.mark.parametrize(
    "variable", [Settings.CHECKPOINT_RETENTION, Settings.DECIDED_RETENTION, Settings.CHANNEL_RECORD_RETENTION]
)
def test_never_keeps_that_store_for_ever(variable: Settings) -> None:
    # GIVEN one retention set to `never` (any case)
    settings = HostSettings.from_env("router", {**ROUTER, variable.value: "Never"})
    # THEN that store has no retention, and the others keep their defaults
    kept = {
        Settings.CHECKPOINT_RETENTION: settings.checkpoint_retention,
        Settings.DECIDED_RETENTION: settings.decided_retention,
        Settings.CHANNEL_RECORD_RETENTION: settings.channel_record_retention,
    }
    assert kept.pop(variable) is None
    assert None not in kept.values()


def test_a_retention_given_is_read_in_whole_days() -> None:
    env = {
        **ROUTER,
        Settings.CHECKPOINT_RETENTION.value: "P90D",
        Settings.DECIDED_RETENTION.value: "P52W",
        Settings.CHANNEL_RECORD_RETENTION.value: "P7D",
    }
    settings = HostSettings.from_env("router", env)
    assert settings.checkpoint_retention == timedelta(days=90)
    assert settings.decided_retention == timedelta(weeks=52)
    assert settings.channel_record_retention == timedelta(days=7)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("P13D", "from 14 days ('P14D') to 3650 days ('P3650D')"),
        ("P3651D", "from 14 days ('P14D') to 3650 days ('P3650D')"),
        ("P30DT12H", "a whole number of days"),
        ("P1M", "ISO 8601 duration"),
        ("forever", "ISO 8601 duration"),
    ],
)
def test_a_checkpoint_retention_that_could_lose_a_redelivered_message_or_is_not_whole_days_is_refused(
    value: str, says: str
) -> None:
    # GIVEN a checkpoint retention shorter than SQS's longest message retention, past ten years, or not whole days
    # WHEN the router's settings are read
    with pytest.raises(ConfigurationError, match=f"AGENT_WAIT_CHECKPOINT_RETENTION must be .*{_escaped(says)}") as bad:
        HostSettings.from_env("router", {**ROUTER, Settings.CHECKPOINT_RETENTION.value: value})
    # THEN the one error names the variable and the value
    assert bad.value.variables == (Settings.CHECKPOINT_RETENTION.value,)
    assert repr(value) in bad.value.message


@pytest.mark.parametrize("value", ["PT1H", "P0D", "soon"])
def test_a_channel_record_retention_under_a_day_or_unreadable_is_refused(value: str) -> None:
    with pytest.raises(ConfigurationError) as bad:
        HostSettings.from_env("router", {**ROUTER, Settings.CHANNEL_RECORD_RETENTION.value: value})
    assert bad.value.variables == (Settings.CHANNEL_RECORD_RETENTION.value,)


def _escaped(text: str) -> str:
    import re

    return re.escape(text)
