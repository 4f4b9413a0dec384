"""A webhook URL is a secret (Slack and Teams incoming webhooks are): the hosted router and sweep read it from the
Secrets Manager secret `AGENT_WAIT_WEBHOOK_URL_SECRET_ARN` names, once at cold start, as they read the signing
secret; a secret that is not a URL fails the cold start naming the variable, never the value. Runs on moto."""

from __future__ import annotations

import re
from typing import Any

import pytest
from tests.announce.conftest import Receiver
from tests.host import test_webhook_secret as signing
from tests.host.test_webhook_secret import CURRENT, count_reads, create_secret, make_envelope, webhook_in

from agent_wait import publish, verify_signature
from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError
from agent_wait.host import HostSettings, announcers_for

SWEEP = {
    Settings.TABLE.value: "questions",
    Settings.QUEUE_URL.value: "https://sqs.us-east-1.amazonaws.com/123456789012/entry.fifo",
}
ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:agent-wait-webhook-url-AbCdEf"
TOKEN = "T000CANARY/B000CANARY/CanaryCanaryCanary"

receiver = signing.receiver  # the fixtures: a webhook receiver, a boto3 Session on the moto server
session = signing.session


def test_the_webhook_url_is_read_from_its_secret_once_and_delivered_to(session: Any, receiver: Receiver) -> None:
    # GIVEN the webhook URL stored in Secrets Manager, and settings that name only the secret
    reads = count_reads(session)
    environ = {**SWEEP, Settings.WEBHOOK_URL_SECRET_ARN.value: create_secret(session, f" {receiver.url}\n")}
    settings = HostSettings.from_env("sweep", environ=environ)
    assert settings.webhook_url is None
    # WHEN the announcers are built (cold start) and two envelopes are published
    announcers = announcers_for(settings, session=session)
    assert publish(make_envelope(), announcers).ok
    assert publish(make_envelope(), announcers).ok
    # THEN the secret was read once and the webhook got both
    assert reads == ["read"]
    assert len(receiver.requests) == 2
    assert webhook_in(announcers)


def test_a_url_from_its_secret_is_signed_with_the_signing_secret(session: Any, receiver: Receiver) -> None:
    environ = {
        **SWEEP,
        Settings.WEBHOOK_URL_SECRET_ARN.value: create_secret(session, receiver.url),
        Settings.WEBHOOK_SECRET_ARN.value: create_secret(session, CURRENT),
    }
    envelope = make_envelope()
    assert publish(envelope, announcers_for(HostSettings.from_env("sweep", environ=environ), session=session)).ok
    request = receiver.requests[0]
    assert verify_signature(CURRENT, request.body, request.headers["x-agent-wait-signature"])


@pytest.mark.parametrize("value", [f"hooks.slack.com/services/{TOKEN}", "   ", f'{{"url": "https://x/{TOKEN}"}}'])
def test_a_secret_that_is_not_a_url_fails_the_cold_start_without_showing_it(session: Any, value: str) -> None:
    arn = create_secret(session, value)
    settings = HostSettings.from_env("sweep", environ={**SWEEP, Settings.WEBHOOK_URL_SECRET_ARN.value: arn})
    message = (
        f"AGENT_WAIT_WEBHOOK_URL_SECRET_ARN={arn!r}: the secret must be the webhook URL itself, starting with "
        "https:// or http:// (its value is not shown: a webhook URL carries a token)"
    )
    with pytest.raises(ConfigurationError, match=re.escape(message)) as raised:
        announcers_for(settings, session=session)
    assert raised.value.variables == ("AGENT_WAIT_WEBHOOK_URL_SECRET_ARN",)
    assert "CANARY" not in str(raised.value)


def test_a_url_secret_that_cannot_be_read_names_the_variable_and_the_aws_error_code(session: Any) -> None:
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:agent-wait-missing-AbCdEf"
    settings = HostSettings.from_env("sweep", environ={**SWEEP, Settings.WEBHOOK_URL_SECRET_ARN.value: arn})
    with pytest.raises(
        ConfigurationError,
        match=re.escape(f"AGENT_WAIT_WEBHOOK_URL_SECRET_ARN={arn!r}: cannot read the webhook URL (ResourceNotFound"),
    ):
        announcers_for(settings, session=session)


def test_the_url_secret_arn_is_checked_with_every_other_setting() -> None:
    # GIVEN a malformed ARN, the URL in plain text beside its secret, and a signing secret: every problem at once
    environ = {
        **SWEEP,
        Settings.WEBHOOK_URL_SECRET_ARN.value: "hooks-url",
        Settings.WEBHOOK_URL.value: "https://hooks.example.com/agent-wait",
        Settings.SWEEP_LIMIT.value: "0",
    }
    with pytest.raises(ConfigurationError) as raised:
        HostSettings.from_env("sweep", environ=environ)
    problems = str(raised.value)
    assert (
        "AGENT_WAIT_WEBHOOK_URL_SECRET_ARN must be a Secrets Manager secret ARN such as "
        "'arn:aws:secretsmanager:us-east-1:123456789012:secret:agent-wait-webhook-url-AbCdEf'; got 'hooks-url'"
    ) in problems
    assert (
        "AGENT_WAIT_WEBHOOK_URL and AGENT_WAIT_WEBHOOK_URL_SECRET_ARN are both set: the webhook URL comes from one "
        "place; keep the secret and unset AGENT_WAIT_WEBHOOK_URL"
    ) in problems
    assert "AGENT_WAIT_SWEEP_LIMIT" in problems


def test_a_signing_secret_beside_only_the_url_secret_is_accepted() -> None:
    environ = {**SWEEP, Settings.WEBHOOK_URL_SECRET_ARN.value: ARN, Settings.WEBHOOK_SECRET_ARN.value: ARN + "x"}
    settings = HostSettings.from_env("sweep", environ=environ)
    assert (settings.webhook_url_secret_arn, settings.webhook_secret_arn) == (ARN, ARN + "x")
