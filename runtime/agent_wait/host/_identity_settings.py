"""The identity settings, checked: who may send what (`AGENT_WAIT_TRUSTED_SENDERS`, `AGENT_WAIT_START_SENDERS`,
`AGENT_WAIT_ANSWER_SENDERS`), the answer API (`AGENT_WAIT_API_URL`, `AGENT_WAIT_GROUPS_CLAIM`) and its signed links
(`AGENT_WAIT_LINK_KEYS_ARN`, `AGENT_WAIT_LINK_ANNOUNCERS`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent_wait.contract.schema import Settings
from agent_wait.host._patterns import SECRET_ARN

__all__ = ("identity_settings",)

_PRINCIPAL_ID = re.compile(r"[A-Z0-9]{8,128}|\*")
"""An IAM unique id (`AROA...`, `AIDA...`, or an account id for a root sender) as SQS puts it in `SenderId`."""
_ANNOUNCER_NAMES = frozenset({"sns", "eventbridge", "webhook", "sqs", "dynamodb", "shaped"})


def identity_settings(value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]) -> dict[str, Any]:
    """The identity fields of `HostSettings`, with every problem added to `problems`."""
    principals: dict[Settings, frozenset[str] | None] = {}
    for name in (Settings.TRUSTED_SENDERS, Settings.START_SENDERS, Settings.ANSWER_SENDERS):
        ids = _names(value[name])
        bad = [i for i in ids or () if not _PRINCIPAL_ID.fullmatch(i)]
        if bad:
            problems.append(
                f"{name.value} must list IAM unique ids (AROA... for a role, AIDA... for a user), comma-separated; "
                f"{bad[0]!r} is not one"
            )
            wrong.append(name.value)
        principals[name] = ids
    api_url = value[Settings.API_URL]
    if api_url is not None and not api_url.startswith(("https://", "http://")):
        problems.append(f"{Settings.API_URL.value} must be the answer API's URL, starting with https://")
        wrong.append(Settings.API_URL.value)
    link_keys_arn = value[Settings.LINK_KEYS_ARN]
    if link_keys_arn is not None and not SECRET_ARN.fullmatch(link_keys_arn):
        problems.append(f"{Settings.LINK_KEYS_ARN.value} must be a Secrets Manager secret ARN; got {link_keys_arn!r}")
        wrong.append(Settings.LINK_KEYS_ARN.value)
    link_announcers = _names(value[Settings.LINK_ANNOUNCERS]) or frozenset()
    unknown = sorted(link_announcers - _ANNOUNCER_NAMES)
    if unknown:
        problems.append(
            f"{Settings.LINK_ANNOUNCERS.value} names announcers {unknown}; links may go to "
            f"{sorted(_ANNOUNCER_NAMES)} (never the log)"
        )
        wrong.append(Settings.LINK_ANNOUNCERS.value)
    if link_announcers and not (link_keys_arn and api_url):
        problems.append(
            f"{Settings.LINK_ANNOUNCERS.value} needs {Settings.LINK_KEYS_ARN.value} and {Settings.API_URL.value}: "
            "links are signed with those keys and point at that API"
        )
        wrong.append(Settings.LINK_ANNOUNCERS.value)
    return {
        "trusted_senders": principals[Settings.TRUSTED_SENDERS],
        "start_senders": principals[Settings.START_SENDERS],
        "answer_senders": principals[Settings.ANSWER_SENDERS],
        "api_url": api_url.rstrip("/") if api_url else None,
        "link_keys_arn": link_keys_arn,
        "link_announcers": link_announcers,
        "groups_claim": value[Settings.GROUPS_CLAIM],
    }


def _names(text: str | None) -> frozenset[str] | None:
    """A comma-separated list as a set; None when unset."""
    if text is None:
        return None
    return frozenset(part.strip() for part in text.split(",") if part.strip())
