"""The web push settings of the host (`AGENT_WAIT_PUSH_*`), read and checked with the rest of `HostSettings`.

Every function reads them: the answer API gives the inbox the VAPID public key and keeps the subscriptions; the
router and the sweep push (and need the sends table besides)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agent_wait.contract.schema import Settings
from agent_wait.host._patterns import SECRET_ARN

__all__ = ("PushSettings", "push_settings")

_NAMES = (Settings.PUSH_KEYS_ARN, Settings.PUSH_SUBSCRIPTIONS_TABLE, Settings.PUSH_SENDS_TABLE, Settings.PUSH_SUBJECT)


@dataclass(frozen=True, slots=True)
class PushSettings:
    """Web push to the inbox: the VAPID keys' secret, the subscriptions, and where pushes are recorded."""

    keys_arn: str
    """The secret holding the VAPID key pair (`AGENT_WAIT_PUSH_KEYS_ARN`)."""
    subscriptions_table: str
    """The table of push subscriptions (`AGENT_WAIT_PUSH_SUBSCRIPTIONS_TABLE`)."""
    sends_table: str | None = None
    """Where each push is claimed and marked sent (`AGENT_WAIT_PUSH_SENDS_TABLE`); the API has none."""
    subject: str | None = None
    """The VAPID `sub` (`AGENT_WAIT_PUSH_SUBJECT`); None: the answer API's URL."""


def push_settings(
    value: Mapping[Settings, str | None], problems: list[str], wrong: list[str], *, sends: bool
) -> PushSettings | None:
    """The push settings when any is set, checked (every problem added to `problems`); None when none is set.

    Args:
        sends: whether this function pushes (the router and the sweep), and so needs the sends table.
    """
    if all(value[name] is None for name in _NAMES):
        return None

    def refuse(name: Settings, problem: str) -> None:
        problems.append(f"{name.value} {problem}")
        wrong.append(name.value)

    keys_arn, table = value[Settings.PUSH_KEYS_ARN], value[Settings.PUSH_SUBSCRIPTIONS_TABLE]
    if keys_arn is None:
        refuse(Settings.PUSH_KEYS_ARN, "is not set: web push needs its VAPID keys (`agent-wait push keys` makes them)")
    elif not SECRET_ARN.fullmatch(keys_arn):
        refuse(Settings.PUSH_KEYS_ARN, f"must be a Secrets Manager secret ARN; got {keys_arn!r}")
    if table is None:
        refuse(Settings.PUSH_SUBSCRIPTIONS_TABLE, "is not set: web push keeps the inbox's subscriptions there")
    sends_table = value[Settings.PUSH_SENDS_TABLE]
    if sends and sends_table is None:
        refuse(Settings.PUSH_SENDS_TABLE, "is not set: web push records what it sent there, so nobody is pushed twice")
    subject = value[Settings.PUSH_SUBJECT]
    if subject is not None and not (subject.startswith("mailto:") or subject.startswith("https://")):
        refuse(Settings.PUSH_SUBJECT, f"must be 'mailto:<address>' or an https:// URL (RFC 8292); got {subject!r}")
    return PushSettings(
        keys_arn=keys_arn or "", subscriptions_table=table or "", sends_table=sends_table, subject=subject
    )
