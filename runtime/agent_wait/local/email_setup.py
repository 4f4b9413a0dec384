"""How `agent-wait dev` emails by itself: a sends table, a verified sender in the emulator's SES, the settings.

A stack whose template sets no `AGENT_WAIT_EMAIL_FROM` gets `LOCAL_SENDER` and `LOCAL_RECIPIENTS` (the refund
demo's answerer groups and tags, and `"*"` for any other graph's questions) and a sends table of its own. Either
way the sender's domain is verified in moto's SES (which refuses an unverified `From`), so every question is
emailed and `/dev/email` shows it. Settings given by the template or `extra_environment` are kept. The link keys
that sign each recipient's buttons (and what `agent-wait link` signs) are made here too when the template has none.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Mapping
from email.utils import parseaddr
from typing import Any

from agent_wait.contract.schema import Settings
from agent_wait.local.tables import question_keyed_table

__all__ = ("LOCAL_RECIPIENTS", "LOCAL_SENDER", "local_email_settings", "local_link_keys")

LOCAL_SENDER = "Approvals <approvals@example.com>"
"""The local `From`."""
LOCAL_RECIPIENTS = {
    "groups": {"finance": ["finance@example.com"], "finance-managers": ["finance-manager@example.com"]},
    "tags": {
        "approver_group:finance": ["finance@example.com"],
        "approver_group:finance-managers": ["finance-manager@example.com"],
        "*": ["approver@example.com"],
    },
}
"""Who is emailed locally: the refund demo's finance and its managers, and `approver@example.com` for the rest."""


def local_email_settings(
    environment: Mapping[str, str], client: Callable[[str], Any], stack_name: str
) -> dict[str, str]:
    """The `AGENT_WAIT_EMAIL_*` settings to add to `environment` (none when it has its own sender), after creating
    the sends table they name and verifying the sender's domain in the emulator's SES."""
    added: dict[str, str] = {}
    if not environment.get(Settings.EMAIL_FROM.value):
        added[Settings.EMAIL_FROM.value] = LOCAL_SENDER
        if not environment.get(Settings.EMAIL_RECIPIENTS.value):
            added[Settings.EMAIL_RECIPIENTS.value] = json.dumps(LOCAL_RECIPIENTS)
    if not environment.get(Settings.EMAIL_SENDS_TABLE.value):
        added[Settings.EMAIL_SENDS_TABLE.value] = question_keyed_table(client("dynamodb"), f"{stack_name}-email-sends")
    sender = added.get(Settings.EMAIL_FROM.value) or environment[Settings.EMAIL_FROM.value]
    domain = parseaddr(sender)[1].rpartition("@")[2]
    if domain:
        ses = client("sesv2")
        if domain not in {i["IdentityName"] for i in ses.list_email_identities().get("EmailIdentities", [])}:
            ses.create_email_identity(EmailIdentity=domain)
    return added


def local_link_keys(client: Callable[[str], Any], stack_name: str) -> str:
    """Create link keys for a stack in the emulator's Secrets Manager (one generated key); returns the ARN."""
    value = json.dumps({"active": "local", "local": secrets.token_urlsafe(36)})
    name = f"{stack_name}-local-link-keys"
    return client("secretsmanager").create_secret(Name=name, SecretString=value)["ARN"]
