"""The channel contract: what a channel provides, declared once.

A channel is where a question reaches people or the systems that nudge them: a Slack message, an email, a Teams
card, a shaped or signed webhook, a log line. Each channel folder under `agent_wait/channels/` declares itself once,
as a `Channel` in its `channel.py`:

- `name`: what its announcer calls itself (`BaseAnnounce.name`, as `AGENT_WAIT_LINK_ANNOUNCERS` names it);
- `announcer`: its `BaseAnnounce` subclass, and `build`: how the host makes one from its settings (`ChannelHost`);
- `preview`: what a person (or the receiving system) gets for one envelope, as a given announcer would send it; the
  `/dev/<channel>` pages of `agent-wait dev` are drawn by the same module (the channel's `preview.py`);
- `door`: where the channel takes answers itself (Slack's buttons), deciding only through the answer service;
- `record`: how its entries sit in the one per-question record of what it sent (`agent_wait.channels.records`).

A part a channel does not have is `Absent(reason)`, never a hole. The host builds every channel through its
declaration (`agent_wait.channels.CHANNELS` lists them), and `agent_wait.testing.channel_contract` checks each one.
Standard library only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from importlib import import_module
from typing import Any, Generic, Protocol, TypeVar, cast

from agent_wait.channels.announce.base import BaseAnnounce
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.errors import ConfigurationError

__all__ = (
    "Absent",
    "Builder",
    "Channel",
    "ChannelEntry",
    "ChannelHost",
    "ChannelRecord",
    "Door",
    "DoorBuilder",
    "DoorHandler",
    "DoorReply",
    "Entry",
    "LinkSigner",
    "Preview",
    "RecordKind",
    "Rendered",
    "text_secret",
    "url_secret",
)


@dataclass(frozen=True, slots=True)
class Absent:
    """A part a channel does not have, and why (a log line has no door; a signed webhook keeps no record)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Rendered:
    """What one envelope shows: a page, a card, a body, a line."""

    media_type: str
    """`text/html` (an email, a Slack message drawn as a page), `application/json` (a webhook's body), an Adaptive
    Card's `application/vnd.microsoft.card.adaptive+json`, or `text/plain` (a log line)."""
    body: str
    title: str = ""
    """What it is called where it is shown (an email's subject); empty when it has no title of its own."""


Preview = Callable[[Any, WaitEnvelope], "Rendered | None"]
"""`(announcer, envelope) -> Rendered`: what `announcer` sends for `envelope` (its transition), as the person or the
receiving system gets it; None when that transition sends nothing although the announcer delivers it (an email's
`wait.resumed`)."""


# -- the record ----------------------------------------------------------------------------------------------------


class Entry(Protocol):
    """One thing a channel sent for a question: a frozen dataclass of text fields, `key` and `claimed_at` among them."""

    @property
    def key(self) -> str: ...


E = TypeVar("E", bound=Entry)


@dataclass(frozen=True, slots=True)
class RecordKind(Generic[E]):
    """How a channel's entries sit in the per-question record: which dataclass, under which attribute names."""

    entry: type[E]
    """The entry's dataclass; every field is text, and a field left None is not stored."""
    prefix: str
    """An entry is the question's map attribute `<prefix><key>` (`post:message:C0123`, `send:created:ana@...`)."""
    marks: tuple[str, ...]
    """The fields written once the service took it (Slack's `ts` and `channel`, a send's `message_id`)."""

    def attribute(self, key: str) -> str:
        return f"{self.prefix}{key}"

    def fields_of(self, entry: E) -> dict[str, str]:
        """The entry's stored fields: every field that is set."""
        values = dataclasses.asdict(cast(Any, entry))
        return {name: str(value) for name, value in values.items() if value is not None}

    def entry_of(self, fields: Mapping[str, str]) -> E:
        """The entry these stored fields make; a field not stored is None (its default)."""
        known = {field.name for field in dataclasses.fields(cast(Any, self.entry))}
        return self.entry(**{name: value for name, value in fields.items() if name in known})


class ChannelRecord(Protocol[E]):
    """A channel's record of what it sent for each question: claim an entry before sending, mark it once the service
    took it, read a question's entries back. A second claim of a key returns the first (sent or not)."""

    kind: RecordKind[E]

    def claim(self, question_id: str, entry: E) -> E | None:
        """Claim `entry.key` for `question_id`: the entry already there, or None if this call claimed it."""
        ...

    def mark(self, question_id: str, key: str, **marks: str) -> None:
        """Write the claimed entry's marks (what the service gave back for it)."""
        ...

    def read(self, question_id: str) -> dict[str, E]:
        """Every entry of `question_id`, by key."""
        ...


# -- the door --------------------------------------------------------------------------------------------------------


class DoorReply(Protocol):
    @property
    def status(self) -> int: ...


class DoorHandler(Protocol):
    """Takes the requests a channel's service sends when a person answers in it (verified before anything else)."""

    def handle(self, body: str, headers: Mapping[str, str]) -> DoorReply: ...


class DoorBuilder(Protocol):
    def __call__(
        self, host: ChannelHost, *, service: Any, find: Callable[[str], Any], clock: Callable[[], datetime]
    ) -> DoorHandler | None:
        """The door, deciding through `service` (the answer service every door uses), reading rows with `find`;
        None when its settings turn it off."""
        ...


@dataclass(frozen=True, slots=True)
class Door:
    """A channel's own door for answers: its handler, and how the answer API builds it."""

    handler: type
    build: DoorBuilder


# -- building --------------------------------------------------------------------------------------------------------


class LinkSigner(Protocol):
    def __call__(
        self,
        envelope: WaitEnvelope,
        *,
        approver: str | None = None,
        groups: Sequence[str] = (),
        issued_at: datetime | None = None,
    ) -> dict[str, str]:
        """Signed answer links for `envelope`'s question, by action: bound to `approver` (and the `groups` vouched
        for them) or to nobody, their lifetime counted from `issued_at` (default now)."""
        ...


class ChannelHost(Protocol):
    """What the host gives a channel's builder: its settings, and the host's means to read secrets, make AWS clients
    and sign links. A channel imports nothing of the host."""

    @property
    def settings(self) -> Any:
        """The host's settings (`agent_wait.host.HostSettings`)."""
        ...

    @property
    def inbox_url(self) -> str | None:
        """The inbox page (`https://.../inbox`), or None without the answer API."""
        ...

    @property
    def records(self) -> Callable[[str], Any] | None:
        """Reads a question's row by id (`ledger.find`), to say who answered; None without a question table."""
        ...

    @property
    def links(self) -> LinkSigner | None:
        """Signs answer links; None without link keys or the answer API."""
        ...

    def client(self, service: str) -> Any:
        """A boto3 client of `service`."""
        ...

    def secret(self, secret_arn: str, variable: str, what: str) -> str | None:
        """The text of the Secrets Manager secret `secret_arn` (None for a binary secret), read now.

        Raises:
            ConfigurationError: the secret cannot be read (names `variable`, the ARN and AWS's code, never a value).
        """
        ...


Builder = Callable[[ChannelHost], "BaseAnnounce | None"]
"""`(host) -> announcer`: the channel's announcer from the host's settings; None when they ask for none."""


def text_secret(host: ChannelHost, secret_arn: str, variable: str, what: str) -> str:
    """The secret's text, surrounding whitespace ignored; refused when empty or binary (the value is never shown)."""
    text = (host.secret(secret_arn, variable, what) or "").strip()
    if not text:
        raise ConfigurationError(
            [f"{variable}={secret_arn!r}: the secret is empty or binary; store {what} as its text"],
            variables=[variable],
        )
    return text


def url_secret(host: ChannelHost, secret_arn: str, variable: str, what: str) -> str:
    """The URL stored as the secret's text, surrounding whitespace ignored; errors never show it (it carries a token
    or a signature).

    Raises:
        ConfigurationError: the secret cannot be read, or is not one http(s) URL.
    """
    from agent_wait.channels.announce.webhook import is_url

    url = (host.secret(secret_arn, variable, what) or "").strip()
    if not is_url(url):
        raise ConfigurationError(
            [
                f"{variable}={secret_arn!r}: the secret must be {what} itself, starting with https:// (its value is "
                "not shown: it carries a token)"
            ],
            variables=[variable],
        )
    return url


# -- the declaration -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Channel:
    """Everything a channel provides (the module docstring says what each part is for)."""

    name: str
    announcer: type[BaseAnnounce]
    build: Builder | Absent
    preview: Preview
    door: Door | Absent
    record: RecordKind[Any] | Absent


@dataclass(frozen=True, slots=True)
class ChannelEntry:
    """Where a channel is declared, so the host loads a channel (and its library) only when its settings are set."""

    name: str
    declared_in: str
    """`module:attribute` of its `Channel` (`agent_wait.channels.slack.channel:CHANNEL`)."""
    settings: str | None = None
    """The `HostSettings` attribute holding its settings: the host loads the channel only when it is set. None: the
    channel's builder reads the host's own settings and says itself whether it is on."""

    def load(self) -> Channel:
        module, _, attribute = self.declared_in.partition(":")
        return cast(Channel, getattr(import_module(module), attribute))
