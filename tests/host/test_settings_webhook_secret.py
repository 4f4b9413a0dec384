"""`AGENT_WAIT_WEBHOOK_SECRET_ARN` in `HostSettings`: a Secrets Manager ARN, only beside a webhook URL, its
problems reported with every other one; and a webhook URL's path and query never appear in a settings error."""

from __future__ import annotations

import re

import pytest

from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError
from agent_wait.host import HostSettings

ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:agent-wait-webhook-AbCdEf"
SWEEP = {
    Settings.TABLE.value: "questions",
    Settings.QUEUE_URL.value: "https://sqs.us-east-1.amazonaws.com/123456789012/entry.fifo",
}
HOOK = "https://hooks.example.com/agent-wait"


@pytest.mark.parametrize(
    "arn",
    [
        ARN,
        "arn:aws-cn:secretsmanager:cn-north-1:123456789012:secret:hooks/agent-wait-AbCdEf",
        "arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:agent_wait+hook=1.2@x-AbCdEf",
    ],
    ids=["aws", "aws-cn", "aws-us-gov"],
)
def test_a_secrets_manager_arn_beside_a_webhook_url_is_read(arn: str) -> None:
    # GIVEN a webhook URL and the ARN of the secret that signs it
    environ = {**SWEEP, Settings.WEBHOOK_URL.value: HOOK, Settings.WEBHOOK_SECRET_ARN.value: f"  {arn} "}
    # WHEN the settings are read / THEN the ARN is kept, trimmed
    assert HostSettings.from_env("sweep", environ=environ).webhook_secret_arn == arn


def test_without_the_variable_there_is_no_secret() -> None:
    settings = HostSettings.from_env("router", environ={**SWEEP, Settings.GRAPH.value: "a:b", **_router_rest()})
    assert settings.webhook_secret_arn is None


@pytest.mark.parametrize(
    "arn",
    [
        "agent-wait-webhook",
        "arn:aws:ssm:us-east-1:123456789012:parameter/agent-wait-webhook",
        "arn:aws:secretsmanager:us-east-1:1234:secret:agent-wait-webhook",
        "arn:aws:secretsmanager:us-east-1:123456789012:secret:",
    ],
    ids=["name", "ssm-parameter", "short-account", "no-name"],
)
def test_anything_but_a_secrets_manager_arn_is_refused_with_its_value(arn: str) -> None:
    environ = {**SWEEP, Settings.WEBHOOK_URL.value: HOOK, Settings.WEBHOOK_SECRET_ARN.value: arn}
    with pytest.raises(ConfigurationError) as raised:
        HostSettings.from_env("sweep", environ=environ)
    assert raised.value.variables == ("AGENT_WAIT_WEBHOOK_SECRET_ARN",)
    assert raised.value.problems == (
        "AGENT_WAIT_WEBHOOK_SECRET_ARN must be a Secrets Manager secret ARN such as "
        f"'arn:aws:secretsmanager:us-east-1:123456789012:secret:agent-wait-webhook-AbCdEf'; got {arn!r}",
    )


def test_a_secret_without_a_webhook_url_is_a_problem_listed_with_the_others() -> None:
    # GIVEN a sweep environment missing its queue, with a secret ARN but no webhook URL
    environ = {Settings.TABLE.value: "questions", Settings.WEBHOOK_SECRET_ARN.value: ARN}
    # WHEN the settings are read
    with pytest.raises(ConfigurationError) as raised:
        HostSettings.from_env("sweep", environ=environ)
    # THEN one error lists both problems and names both variables
    assert raised.value.variables == ("AGENT_WAIT_QUEUE_URL", "AGENT_WAIT_WEBHOOK_SECRET_ARN")
    assert raised.value.problems[-1] == (
        "AGENT_WAIT_WEBHOOK_SECRET_ARN is set but AGENT_WAIT_WEBHOOK_URL_SECRET_ARN (or AGENT_WAIT_WEBHOOK_URL) is "
        "not: the secret only signs webhook deliveries; set the webhook URL, or unset the secret"
    )


def test_a_malformed_arn_and_no_url_are_both_reported_naming_the_variable_once() -> None:
    environ = {**SWEEP, Settings.WEBHOOK_SECRET_ARN.value: "my-secret"}
    with pytest.raises(ConfigurationError) as raised:
        HostSettings.from_env("sweep", environ=environ)
    assert raised.value.variables == ("AGENT_WAIT_WEBHOOK_SECRET_ARN",)
    assert len(raised.value.problems) == 2


def test_a_malformed_webhook_url_is_refused_without_its_path_or_query() -> None:
    # GIVEN a webhook URL without a scheme, with a token in its query
    environ = {**SWEEP, Settings.WEBHOOK_URL.value: "hooks.example.com/agent-wait?token=tok-CANARY-5f1e"}
    # WHEN the settings are read / THEN the problem is named, and the token is not in it
    with pytest.raises(ConfigurationError, match=re.escape("AGENT_WAIT_WEBHOOK_URL must be a URL starting with")) as e:
        HostSettings.from_env("sweep", environ=environ)
    assert "CANARY" not in str(e.value)
    assert "the rest is not shown: it may carry a token" in str(e.value)


def _router_rest() -> dict[str, str]:
    return {
        Settings.CHECKPOINT_TABLE.value: "checkpoints",
        Settings.DLQ_URL.value: "https://sqs.us-east-1.amazonaws.com/123456789012/entry-dlq.fifo",
    }
