"""The passkey setting, checked: the inbox's origin, whose host is the WebAuthn relying party
(`AGENT_WAIT_PASSKEY_ORIGIN`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from agent_wait.contract.schema import Settings

__all__ = ("passkey_settings",)


def passkey_settings(value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]) -> dict[str, Any]:
    """`passkey_origin` for `HostSettings`, with every problem added to `problems`; None when unset (passkeys off)."""
    text = value[Settings.PASSKEY_ORIGIN]
    if text is None:
        return {"passkey_origin": None}
    parts = urlsplit(text)
    local = parts.hostname in ("localhost", "127.0.0.1")
    if (parts.scheme == "https" or (parts.scheme == "http" and local)) and parts.hostname and parts.path in ("", "/"):
        return {"passkey_origin": f"{parts.scheme}://{parts.netloc}"}
    problems.append(
        f"{Settings.PASSKEY_ORIGIN.value} must be the inbox's origin, https://<host>[:port] with no path (http only "
        f"for localhost); got {text!r}"
    )
    wrong.append(Settings.PASSKEY_ORIGIN.value)
    return {"passkey_origin": None}
