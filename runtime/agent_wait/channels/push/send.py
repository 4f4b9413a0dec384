"""Sending one push with `pywebpush`: encrypted for the device (RFC 8291, `aes128gcm`), signed with the VAPID keys
(RFC 8292), POSTed to the device's push service (RFC 8030).

`WebPushSender` is what the announcer calls for each device: it returns the push service's id for the message (the
`Location` it answered with, RFC 8030 §5) or raises `PushRefused` with the status the service gave (404 and 410 mean
the subscription is gone), or with none when the service could not be reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agent_wait.channels.push.keys import VapidKeys
from agent_wait.channels.push.subscriptions import Subscription

__all__ = ("GONE", "TTL_SECONDS", "PushRefused", "Pusher", "WebPushSender")

GONE = frozenset({404, 410})
"""What a push service answers for a subscription that no longer exists (RFC 8030 §7.3): it is removed."""
TTL_SECONDS = 24 * 60 * 60
"""How long a push service keeps a push for a device that is offline (RFC 8030 §5.2): a day; a reminder follows."""


class PushRefused(Exception):  # noqa: N818 - a reason, caught by the announcer; never leaves it
    """The push service did not take the push: its status, or None when it could not be reached."""

    def __init__(self, status: int | None) -> None:
        super().__init__(f"push service answered {status}" if status else "push service unreachable")
        self.status = status

    @property
    def gone(self) -> bool:
        return self.status in GONE


class Pusher(Protocol):
    def __call__(self, subscription: Subscription, payload: str) -> str:
        """Send `payload` to `subscription`'s device; the push service's id for it.

        Raises:
            PushRefused: the push service refused it, or could not be reached.
        """
        ...


@dataclass(frozen=True, slots=True)
class WebPushSender:
    """`Pusher` with `pywebpush`.

    Args:
        keys: the VAPID key pair.
        subject: the VAPID `sub` claim (`mailto:` or `https://`).
        timeout: seconds to wait for the push service.
    """

    keys: VapidKeys
    subject: str
    timeout: float = 10.0

    def __call__(self, subscription: Subscription, payload: str) -> str:
        import requests
        from pywebpush import WebPushException, webpush

        try:
            response = webpush(
                subscription.info(),
                data=payload,
                vapid_private_key=self.keys.private_key,
                vapid_claims={"sub": self.subject},  # a fresh dict: pywebpush adds `aud` and `exp` to it
                content_encoding="aes128gcm",
                ttl=TTL_SECONDS,
                timeout=self.timeout,
                headers={"Urgency": "high"},  # RFC 8030 §5.3: someone is waiting on this answer
            )
        except WebPushException as exc:
            raise PushRefused(exc.status_code) from None  # its text quotes the service's body: not logged
        except requests.RequestException:
            raise PushRefused(None) from None
        location = getattr(response, "headers", {}).get("Location") or ""
        return location or f"status:{getattr(response, 'status_code', 201)}"
