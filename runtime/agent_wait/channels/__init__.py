"""Where questions reach people and systems: every channel, one folder each, with one contract.

- `contract.py`: what a channel provides (`Channel`: its announcer and how the host builds it, its preview, its door
  where it has one, its per-question record), each folder declaring itself once in its `channel.py`;
- the channels: `announce/` (the plain announcers: log, signed webhook, in memory; and `BaseAnnounce`, which every
  announcer derives from), `slack/`, `email/`, `teams/`, `shaped/`, `push/`; each has `announce.py` (the announcer),
  `preview.py` (what a person sees), `channel.py` (the declaration), `records.py` where it keeps a record and
  `interactions.py` where it has a door;
- what they share: the envelope's fan-out (`publish`), what a question asks and how it ended (`asked`), the one
  per-question record (`records`) and its sends (`sends`, email's and Teams').

`CHANNELS` lists every channel, in the order the host builds them. The channel packages need their extras (Slack:
`slack_sdk`; email and shaped webhooks: `jinja2`); importing this package imports none of them: a channel is loaded
from its entry (`ChannelEntry.load`) when it is used.
"""

from agent_wait.channels.contract import ChannelEntry

__all__ = ("CHANNELS",)

CHANNELS: tuple[ChannelEntry, ...] = (
    ChannelEntry("log", "agent_wait.channels.announce.channel:LOG"),
    ChannelEntry("webhook", "agent_wait.channels.announce.channel:WEBHOOK"),
    ChannelEntry("slack", "agent_wait.channels.slack.channel:CHANNEL", settings="slack"),
    ChannelEntry("teams", "agent_wait.channels.teams.channel:CHANNEL", settings="teams"),
    ChannelEntry("shaped", "agent_wait.channels.shaped.channel:CHANNEL", settings="shaped_webhook"),
    ChannelEntry("email", "agent_wait.channels.email.channel:CHANNEL", settings="email"),
    ChannelEntry("push", "agent_wait.channels.push.channel:CHANNEL", settings="push"),
    ChannelEntry("memory", "agent_wait.channels.announce.channel:MEMORY"),
)
"""Every channel, where it is declared, and the settings that turn it on; the host builds them in this order."""
