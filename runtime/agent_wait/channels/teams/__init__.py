"""Microsoft Teams as an answer channel: each question an Adaptive Card posted through a Teams Workflows webhook,
with buttons that open its signed confirmation pages (see docs/teams.md). Standard library only.

The channel's parts, declared in `channel.py` (`agent_wait.channels.contract`):

- `announce.py`, `TeamsAnnounce`: posts the question, its reminders and escalations, and its outcome; one card per
  person with links bound to them (`people`), or one card for a channel (`channel`).
- `cards.py`, `question_card`, `outcome_card`, `webhook_body`: the cards and the body the webhook takes.
- `records.py`: which cards a question has posted (`send_key`), so a redelivered event posts none twice.
- `preview.py`: a card as a person sees it, and the `/dev/teams` page that draws them.
"""

from agent_wait.channels.teams.announce import DEFAULT_TRANSITIONS, TeamsAnnounce, TeamsMode, TeamsRecipient
from agent_wait.channels.teams.cards import (
    CARD_CONTENT_TYPE,
    CARD_VERSION,
    Decided,
    outcome_card,
    question_card,
    webhook_body,
)

__all__ = (
    "CARD_CONTENT_TYPE",
    "CARD_VERSION",
    "DEFAULT_TRANSITIONS",
    "Decided",
    "TeamsAnnounce",
    "TeamsMode",
    "TeamsRecipient",
    "outcome_card",
    "question_card",
    "webhook_body",
)
