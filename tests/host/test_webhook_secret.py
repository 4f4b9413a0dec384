"""The hosted router and sweep sign their webhook with the Secrets Manager secret `AGENT_WAIT_WEBHOOK_SECRET_ARN`
names: read once at cold start, one secret or a JSON array while rotating, and a secret that cannot be read
fails the cold start naming the variable and AWS's error code, never the value. Runs on the moto server."""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from tests.announce.conftest import Receiver, start_receiver
from tests.support.aws_stack import HostStack

from agent_wait import Question, WaitEnvelope, WaitPolicy, WebhookAnnounce, publish, verify_signature
from agent_wait.channels.announce import verify_standard_webhook
from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError
from agent_wait.host import HostSettings, announcers_for, build_sweep

REGION = "us-east-1"
CURRENT = "whsec_ylEhkp/tHLafArlgCb7iYwUEVFBwzfRieHFneZAsb9Q="
PREVIOUS = "whsec_BZZkfvJjJfjX/6rKCOGtuejvK8Mu83oC5boWkz4we1M="
CANARY = "whsec_Q0FOQVJZLWRvLW5vdC1sb2c="


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = start_receiver()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def session(moto_server: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A boto3 Session whose clients reach the moto server, as the handlers' own Session would on AWS."""
    import boto3

    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    return boto3.Session(region_name=REGION)


def create_secret(session: Any, value: str | bytes) -> str:
    client = session.client("secretsmanager")
    name = f"agent-wait-webhook-{uuid.uuid4().hex[:12]}"
    kind = {"SecretString": value} if isinstance(value, str) else {"SecretBinary": value}
    return client.create_secret(Name=name, **kind)["ARN"]


def settings_for(url: str, secret_arn: str, **extra: str) -> HostSettings:
    environ = {
        Settings.TABLE.value: "questions",
        Settings.QUEUE_URL.value: "https://sqs.us-east-1.amazonaws.com/123456789012/entry.fifo",
        Settings.WEBHOOK_URL.value: url,
        Settings.WEBHOOK_SECRET_ARN.value: secret_arn,
        **extra,
    }
    return HostSettings.from_env("sweep", environ=environ)


def webhook_in(announcers: list[Any]) -> WebhookAnnounce:
    (webhook,) = [announcer for announcer in announcers if isinstance(announcer, WebhookAnnounce)]
    return webhook


def make_envelope() -> WaitEnvelope:
    return WaitEnvelope.create(
        Question(f"order-{uuid.uuid4().hex[:8]}", f"q-{uuid.uuid4().hex}", {"function": "refund"}, WaitPolicy())
    )


def count_reads(session: Any) -> list[str]:
    reads: list[str] = []
    session.events.register("before-call.secrets-manager.GetSecretValue", lambda **_: reads.append("read"))
    return reads


# --- signing --------------------------------------------------------------------------------------


def test_a_single_secret_signs_both_schemes_and_is_read_once(session: Any, receiver: Receiver):
    # GIVEN a Secrets Manager secret holding one whsec_ secret, and the settings that name it
    reads = count_reads(session)
    settings = settings_for(receiver.url, create_secret(session, f"{CURRENT}\n"))
    # WHEN the announcers are built (cold start) and three envelopes are published
    announcers = announcers_for(settings, session=session)
    envelopes = [make_envelope() for _ in range(3)]
    for envelope in envelopes:
        assert publish(envelope, announcers).ok
    # THEN the secret was read once, and every delivery verifies under it, both ways
    assert reads == ["read"]
    assert len(receiver.requests) == 3
    for envelope, request in zip(envelopes, receiver.requests, strict=True):
        assert verify_standard_webhook(CURRENT, request.body, request.headers) == envelope.event_id
        assert verify_signature(CURRENT, request.body, request.headers["x-agent-wait-signature"])


def test_a_json_array_rotates_newest_first(session: Any, receiver: Receiver):
    # GIVEN a secret holding the new and the previous secret, newest first
    settings = settings_for(receiver.url, create_secret(session, json.dumps([CURRENT, PREVIOUS])))
    # WHEN an envelope is published by the hosted announcers
    envelope = make_envelope()
    assert publish(envelope, announcers_for(settings, session=session)).ok
    # THEN receivers holding either secret accept it, and the legacy header is the newest secret's
    request = receiver.requests[0]
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    assert verify_standard_webhook(CURRENT, request.body, request.headers) == envelope.event_id
    assert verify_standard_webhook(PREVIOUS, request.body, request.headers) == envelope.event_id
    assert verify_signature(CURRENT, request.body, request.headers["x-agent-wait-signature"])


def test_without_the_setting_no_secret_is_read_and_nothing_is_signed(session: Any, receiver: Receiver):
    reads = count_reads(session)
    settings = HostSettings.from_env(
        "sweep",
        environ={
            Settings.TABLE.value: "questions",
            Settings.QUEUE_URL.value: "https://sqs.us-east-1.amazonaws.com/123456789012/entry.fifo",
            Settings.WEBHOOK_URL.value: receiver.url,
        },
    )
    assert publish(make_envelope(), announcers_for(settings, session=session)).ok
    assert reads == []
    assert "webhook-signature" not in receiver.requests[0].headers


def test_the_hosted_sweep_signs_its_webhook(
    host: HostStack, session: Any, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
):
    # GIVEN the sweep's environment with a webhook and its secret
    monkeypatch.setenv(Settings.WEBHOOK_URL.value, receiver.url)
    monkeypatch.setenv(Settings.WEBHOOK_SECRET_ARN.value, create_secret(session, CURRENT))
    # WHEN the sweep is built as its handler builds it, and its announcers publish
    sweep = build_sweep(HostSettings.from_env("sweep"), session=session)
    envelope = make_envelope()
    assert publish(envelope, sweep.announcers).ok
    # THEN the delivery is signed with the stored secret
    request = receiver.requests[0]
    assert verify_standard_webhook(CURRENT, request.body, request.headers) == envelope.event_id


# --- a secret that cannot be used fails the cold start --------------------------------------------


def test_a_missing_secret_names_the_variable_and_the_aws_error_code(session: Any, receiver: Receiver):
    # GIVEN an ARN for a secret that does not exist
    arn = f"arn:aws:secretsmanager:{REGION}:123456789012:secret:agent-wait-missing-{uuid.uuid4().hex[:6]}"
    settings = settings_for(receiver.url, arn)
    # WHEN the announcers are built / THEN the cold start fails, naming the variable, the ARN and the code
    with pytest.raises(
        ConfigurationError,
        match=re.escape(f"AGENT_WAIT_WEBHOOK_SECRET_ARN={arn!r}: cannot read the webhook secret (ResourceNotFound"),
    ) as raised:
        announcers_for(settings, session=session)
    assert raised.value.variables == ("AGENT_WAIT_WEBHOOK_SECRET_ARN",)
    assert "secretsmanager:GetSecretValue" in str(raised.value)


def test_an_unreachable_secrets_manager_names_the_error_type(monkeypatch: pytest.MonkeyPatch, receiver: Receiver):
    import boto3

    # GIVEN an endpoint where nothing listens, so botocore cannot connect
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    arn = f"arn:aws:secretsmanager:{REGION}:123456789012:secret:agent-wait-webhook-AbCdEf"
    with pytest.raises(ConfigurationError, match=re.escape("cannot read the webhook secret (EndpointConnectionError)")):
        announcers_for(settings_for(receiver.url, arn), session=boto3.Session(region_name=REGION))


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (json.dumps({"secret": CANARY}), "it looks like JSON but is neither (a key/value secret is not read)"),
        (json.dumps([CANARY, ""]), "it looks like JSON but is neither"),
        (json.dumps([]), "it looks like JSON but is neither"),
        ("[" + CANARY, "it looks like JSON but is neither"),
        ("   ", "the secret is empty"),
        (CANARY.encode(), "the secret is binary; store the webhook secret as text (SecretString)"),
    ],
    ids=["key-value", "empty-entry", "empty-array", "broken-json", "blank", "binary"],
)
def test_a_secret_in_an_unusable_form_is_refused_without_showing_it(
    session: Any, receiver: Receiver, caplog: pytest.LogCaptureFixture, value: str | bytes, problem: str
):
    # GIVEN a stored secret the host cannot sign with
    caplog.set_level(logging.DEBUG, logger="agent_wait")
    settings = settings_for(receiver.url, create_secret(session, value))
    # WHEN the announcers are built / THEN the cold start fails, saying what form to use, never the value
    with pytest.raises(ConfigurationError, match=re.escape(problem)) as raised:
        announcers_for(settings, session=session)
    assert raised.value.variables == ("AGENT_WAIT_WEBHOOK_SECRET_ARN",)
    assert "Q0FOQVJZ" not in str(raised.value)
    assert all("Q0FOQVJZ" not in r.getMessage() for r in caplog.records if r.name.startswith("agent_wait"))
