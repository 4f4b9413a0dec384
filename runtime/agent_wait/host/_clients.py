"""The AWS clients and secrets the host's builders share: one place, so the channels' builder (`_channels`) and
`_wiring` take them from here instead of from each other."""

from __future__ import annotations

from typing import Any

from agent_wait.errors import ConfigurationError

__all__ = ("client", "secret_string")


def client(session: Any, service: str) -> Any:
    """A boto3 client of `service` from `session` (a default session when None)."""
    import boto3

    return (session or boto3.Session()).client(service)


def secret_string(secret_arn: str, variable: str, what: str, session: Any) -> str | None:
    """The `SecretString` of `secret_arn` (None for a binary secret). The error names the variable, the ARN and
    AWS's error code, never the value."""
    try:
        response = client(session, "secretsmanager").get_secret_value(SecretId=secret_arn)
    except Exception as exc:  # AWS refused or never answered (no credentials, no endpoint), or a broken client
        from agent_wait.aws.errors import error_code

        code = error_code(exc)
        raise ConfigurationError(
            [
                f"{variable}={secret_arn!r}: cannot read {what} ({code}); check the ARN, and give the function "
                "secretsmanager:GetSecretValue on it (and kms:Decrypt on its key if it has its own)"
            ],
            variables=[variable],
        ) from None
    text = response.get("SecretString")
    return text if isinstance(text, str) else None
