"""Every channel for the host, built the same way: through its declaration (`agent_wait.channels.CHANNELS`).

A channel whose settings are set (`ChannelEntry.settings`, a `HostSettings` attribute; always, for one without) is
loaded, and its declaration builds its announcer (`Channel.build`) and, for the answer API, its door
(`Channel.door`), from what `HostChannels` gives it: the settings, AWS clients, Secrets Manager reads and signed
answer links. A channel that is not set up is never imported, nor its library. Each secret is read once, here (at
cold start, since the handlers build their router, sweep or API once).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any

from agent_wait.channels import CHANNELS
from agent_wait.channels.announce.base import BaseAnnounce
from agent_wait.channels.contract import Absent, Channel, DoorHandler, LinkSigner
from agent_wait.common.times import utc_now
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.host._clients import client, secret_string
from agent_wait.host.settings import HostSettings

__all__ = ("HostChannels", "channel_announcers", "channel_doors")


class HostChannels:
    """`ChannelHost` for the deployed functions: one per build, its clients and its link keys made once and shared by
    every channel.

    Args:
        settings: the function's settings.
        session: a boto3 session (a default one when None).
        clock: returns now (UTC), for the links' lifetime.
    """

    def __init__(self, settings: HostSettings, *, session: Any = None, clock: Callable[[], datetime] = utc_now) -> None:
        self.settings = settings
        self.session = session
        self.clock = clock
        self._made: dict[str, Any] = {}

    @property
    def inbox_url(self) -> str | None:
        return f"{self.settings.api_url.rstrip('/')}/inbox" if self.settings.api_url else None

    @property
    def records(self) -> Callable[[str], Any] | None:
        """Reads a question's row, to say who answered: one ledger for every channel that asks."""
        return self._once("records", self._find)

    @property
    def links(self) -> LinkSigner | None:
        """Signs answer links with the link keys (read once, and again when they may have rotated); None without the
        keys or the answer API's URL."""
        return self._once("links", self._signer)

    def client(self, service: str) -> Any:
        return self._once(f"client:{service}", lambda: client(self.session, service))

    def secret(self, secret_arn: str, variable: str, what: str) -> str | None:
        return secret_string(secret_arn, variable, what, self.session)

    def _once(self, name: str, make: Callable[[], Any]) -> Any:
        """What `make` makes, made on first use and shared by every channel after."""
        if name not in self._made:
            self._made[name] = make()
        return self._made[name]

    def _find(self) -> Callable[[str], Any] | None:
        if not self.settings.table:
            return None
        from agent_wait.aws import DynamoDbLedger

        return DynamoDbLedger(self.settings.table, client=self.client("dynamodb")).find

    def _signer(self) -> LinkSigner | None:
        settings = self.settings
        if not settings.link_keys_arn or not settings.api_url:
            return None
        from agent_wait.host.links import answer_links, link_keyring

        ring = link_keyring(settings.link_keys_arn, client=self.client("secretsmanager"))
        api_url, clock = settings.api_url, self.clock

        def sign(
            envelope: WaitEnvelope,
            *,
            approver: str | None = None,
            groups: Sequence[str] = (),
            issued_at: datetime | None = None,
        ) -> dict[str, str]:
            now = clock()
            issued = min(issued_at, now) if issued_at is not None else None
            return answer_links(
                ring.keys(), api_url, envelope, now=now, approver=approver, groups=groups, issued_at=issued
            )

        return sign


def channel_announcers(settings: HostSettings, *, session: Any = None) -> list[BaseAnnounce]:
    """The announcer of every channel the settings turn on, in `CHANNELS` order."""
    host = HostChannels(settings, session=session)
    built = (channel.build(host) for channel in _set_up(settings) if not isinstance(channel.build, Absent))
    return [announcer for announcer in built if announcer is not None]


def channel_doors(
    settings: HostSettings,
    *,
    session: Any = None,
    service: Any,
    find: Callable[[str], Any],
    clock: Callable[[], datetime],
) -> dict[str, DoorHandler]:
    """The door of every channel the settings turn on that has one, by channel name, deciding through `service`."""
    host = HostChannels(settings, session=session, clock=clock)
    doors: dict[str, DoorHandler] = {}
    for channel in _set_up(settings):
        if isinstance(channel.door, Absent):
            continue
        handler = channel.door.build(host, service=service, find=find, clock=clock)
        if handler is not None:
            doors[channel.name] = handler
    return doors


def _set_up(settings: HostSettings) -> Iterator[Channel]:
    """The declarations of the channels whose settings are set, loaded one by one (a channel's library only then)."""
    for entry in CHANNELS:
        if entry.settings is None or getattr(settings, entry.settings) is not None:
            yield entry.load()
