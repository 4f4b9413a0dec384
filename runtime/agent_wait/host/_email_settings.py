"""The email settings of the host (`AGENT_WAIT_EMAIL_*`), read and checked with the rest of `HostSettings`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from email.utils import parseaddr

from agent_wait.channels.recipients import RecipientRouting, email_address
from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError

__all__ = ("EmailSettings", "email_settings")

_CONFIGURATION_SET = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""An SES configuration set name: letters, digits, `_` and `-`, at most 64."""


@dataclass(frozen=True, slots=True)
class EmailSettings:
    """Email as an answer channel: who sends, who receives, and where sends are recorded."""

    sender: str
    """The `From` (`AGENT_WAIT_EMAIL_FROM`), a verified SES identity, with its display name if it has one."""
    routing: RecipientRouting
    """Who a question goes to (`AGENT_WAIT_EMAIL_RECIPIENTS`)."""
    sends_table: str | None
    """The table recording each question's emails (`AGENT_WAIT_EMAIL_SENDS_TABLE`)."""
    configuration_set: str | None = None
    """The SES configuration set (`AGENT_WAIT_EMAIL_CONFIGURATION_SET`)."""
    reply_to: tuple[str, ...] = field(default=())
    """`Reply-To` addresses (`AGENT_WAIT_EMAIL_REPLY_TO`)."""


_NAMES = (
    Settings.EMAIL_FROM,
    Settings.EMAIL_RECIPIENTS,
    Settings.EMAIL_CONFIGURATION_SET,
    Settings.EMAIL_REPLY_TO,
    Settings.EMAIL_SENDS_TABLE,
)


def email_settings(value: dict[Settings, str | None], problems: list[str], wrong: list[str]) -> EmailSettings | None:
    """The email settings when any is set, checked (every problem added to `problems`); None when none is set."""
    if all(value[name] is None for name in _NAMES):
        return None

    def refuse(name: Settings, problem: str) -> None:
        problems.append(f"{name.value} {problem}")
        wrong.append(name.value)

    sender = value[Settings.EMAIL_FROM]
    if sender is None:
        refuse(Settings.EMAIL_FROM, "is not set: the other AGENT_WAIT_EMAIL_* settings are, and email needs a sender")
    elif any(c in sender for c in "\r\n") or email_address(parseaddr(sender)[1]) is None:
        refuse(
            Settings.EMAIL_FROM, f"must be an address, or 'Name <address>', of a verified SES identity; got {sender!r}"
        )
    routing = RecipientRouting()
    text = value[Settings.EMAIL_RECIPIENTS]
    if text is not None:
        try:
            routing = RecipientRouting.parse(text, variable=Settings.EMAIL_RECIPIENTS.value)
        except ConfigurationError as exc:
            problems.extend(exc.problems)
            wrong.append(Settings.EMAIL_RECIPIENTS.value)
    configuration_set = value[Settings.EMAIL_CONFIGURATION_SET]
    if configuration_set is not None and not _CONFIGURATION_SET.fullmatch(configuration_set):
        refuse(Settings.EMAIL_CONFIGURATION_SET, f"must be an SES configuration set name; got {configuration_set!r}")
    reply_to = tuple(part.strip() for part in (value[Settings.EMAIL_REPLY_TO] or "").split(",") if part.strip())
    bad = [address for address in reply_to if email_address(address) is None]
    if bad:
        refuse(Settings.EMAIL_REPLY_TO, f"must list addresses, comma-separated; {bad[0]!r} is not one")
    if sender is not None and value[Settings.EMAIL_SENDS_TABLE] is None:
        refuse(Settings.EMAIL_SENDS_TABLE, "is not set: email records what it sent there, so nobody is emailed twice")
    return EmailSettings(
        sender=sender or "",
        routing=routing,
        sends_table=value[Settings.EMAIL_SENDS_TABLE],
        configuration_set=configuration_set,
        reply_to=reply_to,
    )
