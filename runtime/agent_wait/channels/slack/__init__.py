"""Slack as an answer channel: each question a Block Kit message people answer with its buttons, kept true as the
question goes (see docs/slack.md). Needs `slack_sdk` (the `host` extra).

The channel's parts, declared in `channel.py` (`agent_wait.channels.contract`):

- `announce.py`, `SlackAnnounce`: posts each question to the channel its tags route to, and redraws it as it is
  voted on, reminded, escalated and decided, whichever door decided it.
- `interactions.py`, `SlackInteractions`: the door, the answer API's `POST /slack/interactions`: verifies Slack's
  signature, names the person, and decides through the one decision path every door uses.
- `records.py`, `DynamoDbSlackMessages` / `InMemorySlackMessages`: where each question's messages are.
- `preview.py`, `preview_page`: the messages as they would look in Slack, as a static page (`agent-wait dev`,
  tests).
"""

from agent_wait.channels.slack.announce import METADATA_EVENT, SlackAnnounce, SlackRouting
from agent_wait.channels.slack.interactions import MAX_SKEW_SECONDS, SlackInteractions, SlackReply
from agent_wait.channels.slack.preview import PreviewMessage, preview_modal, preview_page
from agent_wait.channels.slack.records import DynamoDbSlackMessages, InMemorySlackMessages, Post, SlackMessages

__all__ = (
    "MAX_SKEW_SECONDS",
    "METADATA_EVENT",
    "DynamoDbSlackMessages",
    "InMemorySlackMessages",
    "Post",
    "PreviewMessage",
    "SlackAnnounce",
    "SlackInteractions",
    "SlackMessages",
    "SlackReply",
    "SlackRouting",
    "preview_modal",
    "preview_page",
)
