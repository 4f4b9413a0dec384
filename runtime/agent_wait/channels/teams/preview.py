"""What a person sees in Teams: the channel's preview.

- `preview(announcer, envelope)`: the Adaptive Card `announcer` posts for `envelope`, to the first person it goes to
  (or the channel), with their links;
- the page `agent-wait dev` serves at `/dev/teams` (`page_file`, `PAGE_FILES`, `PAGE_POLICY`): it draws the cards
  its local webhook took with Microsoft's own renderer, the `adaptivecards` npm package's `dist/adaptivecards.min.js`,
  version `ADAPTIVECARDS_VERSION`, unchanged, with its licence beside it (`preview_page/adaptivecards.LICENSE.txt`;
  `tests/local/test_teams_preview.py` pins its hash). The page and its script hold no question content: the cards
  come from `/dev/teams/cards.json`.
"""

from __future__ import annotations

import json
from importlib import resources

from agent_wait.channels.contract import Rendered
from agent_wait.channels.teams.announce import TeamsAnnounce, TeamsMode, TeamsRecipient
from agent_wait.channels.teams.cards import CARD_CONTENT_TYPE
from agent_wait.contract.envelope import WaitEnvelope

__all__ = ("ADAPTIVECARDS_VERSION", "PAGE_FILES", "PAGE_POLICY", "page_file", "preview")

ADAPTIVECARDS_VERSION = "3.0.6"
"""The `adaptivecards` npm package whose renderer `/dev/teams` loads."""
PAGE_FILES = {
    "teams.html": "text/html; charset=utf-8",
    "adaptivecards.min.js": "text/javascript; charset=utf-8",
    "teams.js": "text/javascript; charset=utf-8",
    "teams.css": "text/css; charset=utf-8",
}
"""The page (`teams.html`) and the files it loads from beside it, with their content types."""
PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
"""The page's Content-Security-Policy: the renderer sets element styles from script; nothing loads from anywhere but
the server that serves it."""


def page_file(name: str) -> bytes:
    """One file of the page (a name of `PAGE_FILES`)."""
    return resources.files("agent_wait.channels.teams").joinpath("preview_page", name).read_bytes()


def preview(announcer: TeamsAnnounce, envelope: WaitEnvelope) -> Rendered:
    """The card `announcer` posts for `envelope`: to the first person it goes to in `people` mode, else the channel."""
    recipient: TeamsRecipient | None = None
    if announcer.mode is TeamsMode.PEOPLE and announcer.recipients is not None:
        recipient = next(iter(announcer.recipients(envelope)), None)
    card = announcer.card(envelope, envelope.transition, recipient)
    title = f"Teams · {envelope.type}" + (f" · {recipient.address}" if recipient is not None else "")
    return Rendered(f"{CARD_CONTENT_TYPE}+json", json.dumps(card, ensure_ascii=False), title=title)
