"""`AGENT_WAIT_PASSKEY_ORIGIN`: the inbox's origin, checked with the other settings; set, the answer API's context
verifies passkeys in the one decision path and serves the passkey routes; unset, both are off."""

from __future__ import annotations

import re

import boto3
import pytest

from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError
from agent_wait.host import HostSettings
from agent_wait.host.api import ApiContext
from agent_wait.host.passkeys import WebAuthnPasskeys

NEEDED = {Settings.TABLE.value: "questions", Settings.QUEUE_URL.value: "https://sqs.example.com/1/entry.fifo"}


def _context(origin: str | None) -> ApiContext:
    environ = {**NEEDED, **({Settings.PASSKEY_ORIGIN.value: origin} if origin else {})}
    session = boto3.Session(region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing")
    return ApiContext.from_settings(HostSettings.from_env("api", environ=environ), session=session)


@pytest.mark.parametrize(
    ("given", "kept"),
    [("https://approvals.example.com/", "https://approvals.example.com"), ("http://localhost:8000", None)],
)
def test_an_origin_is_kept_without_its_trailing_slash(given: str, kept: str | None) -> None:
    settings = HostSettings.from_env("api", environ={**NEEDED, Settings.PASSKEY_ORIGIN.value: given})

    assert settings.passkey_origin == (kept or given)


@pytest.mark.parametrize("given", ["http://approvals.example.com", "https://approvals.example.com/inbox", "approvals"])
def test_an_origin_that_is_not_one_is_refused_with_the_other_settings(given: str) -> None:
    message = (
        "AGENT_WAIT_PASSKEY_ORIGIN must be the inbox's origin, https://<host>[:port] with no path (http only for "
        f"localhost); got {given!r}"
    )
    with pytest.raises(ConfigurationError, match=re.escape(message)) as refused:
        HostSettings.from_env("api", environ={**NEEDED, Settings.PASSKEY_ORIGIN.value: given})
    assert Settings.PASSKEY_ORIGIN.value in refused.value.variables


def test_with_an_origin_the_desk_verifies_passkeys_and_the_routes_serve_them() -> None:
    context = _context("https://approvals.example.com")

    assert isinstance(context.passkeys, WebAuthnPasskeys)
    assert (context.passkeys.rp_id, context.passkeys.origin) == (
        "approvals.example.com",
        "https://approvals.example.com",
    )
    assert context.service.desk.passkeys is context.passkeys


def test_without_one_passkeys_are_off() -> None:
    context = _context(None)

    assert context.passkeys is None
    assert context.service.desk.passkeys is None
