"""Clients the AWS announcers build for themselves: region lookup, and errors that say what to set."""

from __future__ import annotations

import re

import pytest

from agent_wait import ConfigurationError
from agent_wait.aws import SqsAnnounce
from agent_wait.aws._clients import CLIENT_CONFIG

QUEUE_URL = "https://sqs.eu-west-1.amazonaws.com/123456789012/questions"


@pytest.fixture
def no_region(monkeypatch: pytest.MonkeyPatch, tmp_path) -> pytest.MonkeyPatch:
    """No region in the environment or in any AWS config file."""
    for name in ("AWS_DEFAULT_REGION", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "missing-config"))
    return monkeypatch


def test_without_any_region_the_error_says_what_to_pass_or_set(no_region: pytest.MonkeyPatch) -> None:
    # GIVEN no region anywhere
    # WHEN an announcer builds its own client
    with pytest.raises(ConfigurationError, match=re.escape("pass region_name='us-east-1' (or your region)")) as err:
        SqsAnnounce(QUEUE_URL)

    # THEN the error names the variables that would fix it
    assert err.value.variables == ("AWS_DEFAULT_REGION", "AWS_REGION")


def test_aws_region_alone_is_enough_though_botocore_ignores_it(no_region: pytest.MonkeyPatch) -> None:
    # GIVEN only AWS_REGION, as some shells and runtimes set it
    no_region.setenv("AWS_REGION", "eu-west-1")

    # WHEN an announcer builds its own client
    announcer = SqsAnnounce(QUEUE_URL)

    # THEN the client is in that region
    assert announcer.client.meta.region_name == "eu-west-1"


def test_built_clients_have_short_timeouts_and_few_retries() -> None:
    # GIVEN / WHEN an announcer builds its own client for an explicit region
    announcer = SqsAnnounce(QUEUE_URL, region_name="eu-west-1")

    # THEN it uses the short-timeout config, not botocore's 60-second defaults
    config = announcer.client.meta.config
    assert announcer.client.meta.region_name == "eu-west-1"
    assert (config.connect_timeout, config.read_timeout) == (5, 10)
    assert config.retries == CLIENT_CONFIG.retries == {"mode": "standard", "total_max_attempts": 3}
