"""The webhook's secrets, checked: the secret that signs its deliveries (`AGENT_WAIT_WEBHOOK_SECRET_ARN`) and the
secret holding its URL (`AGENT_WAIT_WEBHOOK_URL_SECRET_ARN`, never beside `AGENT_WAIT_WEBHOOK_URL`)."""

from __future__ import annotations

from collections.abc import Mapping

from agent_wait.contract.schema import Settings
from agent_wait.host._patterns import SECRET_ARN

__all__ = ("webhook_secrets",)


def webhook_secrets(
    value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]
) -> tuple[str | None, str | None]:
    """The signing secret's ARN and the URL secret's ARN, checked, with every problem added to `problems`."""
    secret_arn = value[Settings.WEBHOOK_SECRET_ARN]
    url_secret_arn = value[Settings.WEBHOOK_URL_SECRET_ARN]
    secret_problems = _webhook_secret_problems(secret_arn, webhook_url=value[Settings.WEBHOOK_URL] or url_secret_arn)
    if secret_problems:
        problems.extend(secret_problems)
        wrong.append(Settings.WEBHOOK_SECRET_ARN.value)
    url_secret_problems = _webhook_url_secret_problems(url_secret_arn, webhook_url=value[Settings.WEBHOOK_URL])
    if url_secret_problems:
        problems.extend(url_secret_problems)
        wrong.append(Settings.WEBHOOK_URL_SECRET_ARN.value)
    return secret_arn, url_secret_arn


def _webhook_secret_problems(secret_arn: str | None, *, webhook_url: str | None) -> list[str]:
    if secret_arn is None:
        return []
    problems = []
    if not SECRET_ARN.fullmatch(secret_arn):
        problems.append(
            f"{Settings.WEBHOOK_SECRET_ARN.value} must be a Secrets Manager secret ARN such as "
            f"'arn:aws:secretsmanager:us-east-1:123456789012:secret:agent-wait-webhook-AbCdEf'; got {secret_arn!r}"
        )
    if webhook_url is None:
        problems.append(
            f"{Settings.WEBHOOK_SECRET_ARN.value} is set but {Settings.WEBHOOK_URL_SECRET_ARN.value} (or "
            f"{Settings.WEBHOOK_URL.value}) is not: the secret only signs webhook deliveries; set the webhook URL, "
            "or unset the secret"
        )
    return problems


def _webhook_url_secret_problems(secret_arn: str | None, *, webhook_url: str | None) -> list[str]:
    if secret_arn is None:
        return []
    problems = []
    if not SECRET_ARN.fullmatch(secret_arn):
        problems.append(
            f"{Settings.WEBHOOK_URL_SECRET_ARN.value} must be a Secrets Manager secret ARN such as "
            "'arn:aws:secretsmanager:us-east-1:123456789012:secret:agent-wait-webhook-url-AbCdEf'; "
            f"got {secret_arn!r}"
        )
    if webhook_url is not None:
        problems.append(
            f"{Settings.WEBHOOK_URL.value} and {Settings.WEBHOOK_URL_SECRET_ARN.value} are both set: the webhook URL "
            f"comes from one place; keep the secret and unset {Settings.WEBHOOK_URL.value}"
        )
    return problems
