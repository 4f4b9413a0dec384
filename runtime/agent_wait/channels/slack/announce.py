"""`SlackAnnounce`: each question a Block Kit message in the channel its tags route to, kept true as it goes.

- `wait.created` posts the question (`chat.postMessage`) with one button per allowed action.
- `wait.voted` redraws it with the votes so far; `wait.reminder` replies in its thread; `wait.escalated` replies
  there too, mentioning the new audience, and posts the question to the channel the escalated tags route to;
  `wait.extended` redraws it once with the new deadline.
- `wait.answered`, `wait.expired`, `wait.cancelled`, `wait.failed` and `wait.resumed` redraw every message of the
  question (`chat.update`): the buttons go, and it says who answered what, when and how (read from the question's
  row), or that the deadline applied the default.

Every event may arrive more than once (the router and the sweep announce at least once): a post is claimed in
`SlackMessages` before it is sent, carries `metadata` naming the question and the post, and a claimed post with
no `ts` is looked for in the channel before it is posted again, so a redelivered event never posts twice; an
update redraws the same message. A message that is gone, or a channel the bot was removed from, fails the
delivery (counted and logged by `BaseAnnounce`) and nothing else.
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from agent_wait.channels.announce.base import BaseAnnounce
from agent_wait.channels.asked import Decided, decided_of
from agent_wait.channels.slack import _blocks
from agent_wait.channels.slack.records import Post, SlackMessages
from agent_wait.common.times import format_rfc3339, utc_now
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.errors import SlackDeliveryError

__all__ = ("DECIDED", "METADATA_EVENT", "SlackAnnounce", "SlackRouting", "decided_from", "message_blocks")

logger = logging.getLogger("agent_wait.channels.announce.slack")

METADATA_EVENT = "agent_wait_post"
"""The `metadata.event_type` of every post; its `event_payload` is `{"question_id", "key"}`."""
DECIDED = frozenset(
    {Transition.ANSWERED, Transition.EXPIRED, Transition.CANCELLED, Transition.FAILED, Transition.RESUMED}
)
"""The transitions that redraw every message of the question as decided."""
_LOOK_BACK = timedelta(minutes=2)
"""How far before a claim the channel is searched for the post the claim may have sent."""


@dataclass(frozen=True)
class SlackRouting:
    """Which channel a question goes to, and how Slack mentions an answerer group.

    Args:
        channels: `"key:value"` of a policy tag → a channel id (`C0123…`); `"*"` for every other question. The
            first of the question's tags that is mapped wins.
        mentions: an answerer group → its Slack user group id (`S0123…`): the group is mentioned in messages, and
            its members answer as members of the group.
    """

    channels: Mapping[str, str] = field(default_factory=dict)
    mentions: Mapping[str, str] = field(default_factory=dict)

    def channel_for(self, tags: Mapping[str, str]) -> str | None:
        for key, value in tags.items():
            found = self.channels.get(f"{key}:{value}")
            if found:
                return found
        return self.channels.get("*")

    def mention_texts(self) -> dict[str, str]:
        # The group's name after `|` is what a client that cannot resolve the group shows instead.
        return {group: f"<!subteam^{usergroup}|@{group}>" for group, usergroup in self.mentions.items()}


class SlackAnnounce(BaseAnnounce):
    """Post each question to Slack and keep its message true as the question goes.

    Args:
        client: a `slack_sdk.WebClient` with the bot token (scopes `chat:write`, `channels:history`,
            `groups:history` to find a post after a crash).
        routing: the channels and group mentions.
        messages: where each question's posts are remembered (`DynamoDbSlackMessages` in the host).
        records: reads a question's row (`ledger.find`), to say who answered; None says only how it ended.
        inbox_url: the inbox page (`https://.../inbox`), linked from every message; None links nothing.
        clock: returns now (UTC).
        delivers: the transitions to deliver (all by default).
    """

    name = "slack"

    def __init__(
        self,
        client: Any,
        routing: SlackRouting,
        messages: SlackMessages,
        *,
        records: Callable[[str], Any] | None = None,
        inbox_url: str | None = None,
        clock: Callable[[], datetime] = utc_now,
        delivers: Any = None,
    ) -> None:
        super().__init__(delivers=delivers)
        self.client = client
        self.routing = routing
        self.messages = messages
        self.records = records
        self.inbox_url = inbox_url
        self.clock = clock

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        if transition is Transition.CREATED:
            self._post_question(envelope, envelope.tags)
        elif transition is Transition.VOTED:
            self._redraw(envelope, self.open_blocks(envelope, progress=envelope.progress))
        elif transition is Transition.REMINDER:
            self._reply(envelope, f"reminder:{(envelope.progress or {}).get('reminder', 1)}", _blocks.reminder_text)
        elif transition is Transition.ESCALATED:
            self._reply(
                envelope, f"escalated:{(envelope.progress or {}).get('escalation', 1)}", _blocks.escalation_text
            )
            self._post_question(envelope, envelope.tags)  # the new audience's channel, when it routes to another
            self._redraw(envelope, self.open_blocks(envelope))
        elif transition is Transition.EXTENDED:
            self._redraw_extended(envelope)
        elif transition in DECIDED:
            blocks, text = self.decided_message(envelope, transition)
            self._redraw(envelope, blocks, text=text)

    # -- what a message says ----------------------------------------------------------------------------------

    def inbox_link(self, envelope: WaitEnvelope) -> str | None:
        """The question in the inbox page; None without `inbox_url`."""
        if not self.inbox_url:
            return None
        return f"{self.inbox_url}#/questions/{urllib.parse.quote(envelope.question_id, safe='')}"

    def open_blocks(self, envelope: WaitEnvelope, *, progress: Any = None) -> list[dict[str, Any]]:
        """The blocks of the question's message while it waits: the question, its buttons, the votes in `progress`."""
        blocks = _blocks.open_blocks(
            envelope, inbox_url=self.inbox_link(envelope), mentions=self.routing.mention_texts(), progress=progress
        )
        return _blocks.to_dicts(blocks)

    def decided_message(self, envelope: WaitEnvelope, transition: Transition) -> tuple[list[dict[str, Any]], str]:
        """The blocks and the notification text every message of a decided question is redrawn to."""
        decided = self.decided(envelope, transition)
        blocks = _blocks.decided_blocks(envelope, decided, inbox_url=self.inbox_link(envelope))
        return _blocks.to_dicts(blocks), _blocks.decided_text(envelope, decided)

    def decided(self, envelope: WaitEnvelope, transition: Transition) -> Decided:
        """How the question ended, as its row says (who answered, the votes), else as the envelope says."""
        record = self.records(envelope.question_id) if self.records is not None else None
        if record is None:
            return decided_of(envelope, transition)
        from agent_wait.engine.votes import decision_progress

        return decided_of(envelope, transition, record, progress=decision_progress(record))

    # -- posting once -----------------------------------------------------------------------------------------

    def _post_question(self, envelope: WaitEnvelope, tags: Mapping[str, str]) -> None:
        """Post to the channel the tags route to; with none, to each Slack user the policy names as an answerer."""
        channel = self.routing.channel_for(tags)
        destinations = [channel] if channel else _slack_users(envelope)
        if not destinations:
            raise SlackDeliveryError(
                f"no Slack channel for tags {dict(tags)}: map one of them, or '*', in the Slack channels setting "
                f"(or name Slack users as answerer principals, 'slack:U0123ABCD', for a direct message)"
            )
        for destination in destinations:
            self._post_once(
                envelope.question_id,
                Post(f"message:{destination}", destination, format_rfc3339(self.clock())),
                text=_blocks.plain_text(envelope),
                blocks=self.open_blocks(envelope),
            )

    def _reply(self, envelope: WaitEnvelope, key: str, say: Callable[..., str]) -> None:
        text = say(envelope, self.routing.mention_texts())
        for post in self._messages_of(envelope.question_id):
            reply = Post(f"{key}@{post.channel}", post.channel, format_rfc3339(self.clock()), thread_ts=post.ts)
            self._post_once(envelope.question_id, reply, text=text, blocks=None)

    def _redraw_extended(self, envelope: WaitEnvelope) -> None:
        """Redraw the question's messages with the new deadline (its buttons are not links: they answer until the
        deadline the row says), once per extension (`extended:<n>` claimed), and not for an extension that no
        longer holds (the question decided, or extended again since)."""
        from agent_wait.engine.extend import outdated
        from agent_wait.engine.votes import vote_progress

        record = self.records(envelope.question_id) if self.records is not None else None
        messages = self._messages_of(envelope.question_id)
        if outdated(envelope, record) or not messages:
            return
        key, first = f"extended:{(envelope.progress or {}).get('extension', 1)}", messages[0]
        earlier = self.messages.claim(envelope.question_id, Post(key, first.channel, format_rfc3339(self.clock())))
        if earlier is not None and earlier.ts:
            return  # redrawn before: this event is a redelivery
        votes = vote_progress(record) if record is not None and record.followups.voting else None
        self._redraw(envelope, self.open_blocks(envelope, progress=votes))
        self.messages.sent(envelope.question_id, key, str(first.ts), first.channel)

    def _post_once(self, question_id: str, post: Post, *, text: str, blocks: list[dict[str, Any]] | None) -> None:
        earlier = self.messages.claim(question_id, post)
        if earlier is not None and earlier.ts:
            return  # sent before: this event is a redelivery
        if earlier is not None:
            found = self._find(question_id, earlier)
            if found is not None:
                self.messages.sent(question_id, earlier.key, found, earlier.channel)
                return
        response = self.client.chat_postMessage(
            channel=post.channel,
            text=text,
            blocks=blocks,
            thread_ts=post.thread_ts,
            unfurl_links=False,
            unfurl_media=False,
            metadata={"event_type": METADATA_EVENT, "event_payload": {"question_id": question_id, "key": post.key}},
        )
        self.messages.sent(question_id, post.key, str(response["ts"]), str(response.get("channel") or post.channel))

    def _find(self, question_id: str, post: Post) -> str | None:
        """The `ts` of a post that a claim sent before its process died, found by its metadata; None if never sent."""
        oldest = f"{(post.claimed - _LOOK_BACK).timestamp():.6f}"
        if post.thread_ts:
            response = self.client.conversations_replies(
                channel=post.channel, ts=post.thread_ts, oldest=oldest, include_all_metadata=True, limit=200
            )
        else:
            response = self.client.conversations_history(
                channel=post.channel, oldest=oldest, include_all_metadata=True, limit=200
            )
        for message in response.get("messages") or ():
            metadata = message.get("metadata") or {}
            payload = metadata.get("event_payload") or {}
            if metadata.get("event_type") == METADATA_EVENT and payload == {
                "question_id": question_id,
                "key": post.key,
            }:
                return str(message["ts"])
        return None

    # -- keeping messages true ----------------------------------------------------------------------------------

    def _messages_of(self, question_id: str) -> list[Post]:
        posts = self.messages.posts(question_id).values()
        return [post for post in posts if post.key.startswith("message:") and post.ts]

    def _redraw(self, envelope: WaitEnvelope, blocks: list[dict[str, Any]], *, text: str | None = None) -> None:
        """Update every message of the question to `blocks`, with `text` as its notification (default: it waits)."""
        messages = self._messages_of(envelope.question_id)
        if not messages:
            logger.info("no Slack message to update: question_id=%s", envelope.question_id)
            return
        text = text if text is not None else _blocks.plain_text(envelope)
        failed: list[str] = []
        for post in messages:
            try:
                self.client.chat_update(channel=post.channel, ts=post.ts, text=text, blocks=blocks)
            except Exception as exc:  # one channel gone must not keep the others stale
                failed.append(f"{post.channel}: {exc}")
        if failed:
            raise SlackDeliveryError(f"{len(failed)} Slack message(s) not updated: {'; '.join(failed)}")


def decided_from(record: Any, *, failed: bool = False) -> Decided:
    """How a decided question's row says it ended, as its message tells it (a quorum's votes included)."""
    from agent_wait.engine.votes import decision_progress

    transition = Transition.FAILED if failed else Transition.ANSWERED
    return decided_of(record.envelope, transition, record, progress=decision_progress(record))


def message_blocks(
    record: Any, *, inbox_url: str | None = None, routing: SlackRouting | None = None
) -> list[dict[str, Any]]:
    """The blocks of a question's message as its row stands: open with its buttons (and votes), or decided."""
    from agent_wait.engine.votes import vote_progress

    mentions = (routing or SlackRouting()).mention_texts()
    if record.status.value == "open":
        progress = vote_progress(record) if record.followups.voting else None
        blocks = _blocks.open_blocks(record.envelope, inbox_url=inbox_url, mentions=mentions, progress=progress)
    else:
        blocks = _blocks.decided_blocks(record.envelope, decided_from(record), inbox_url=inbox_url)
    return _blocks.to_dicts(blocks)


SLACK_PRINCIPAL = "slack:"
"""An answerer principal `slack:<user id>` is that Slack user: asked by direct message when no channel routes the
question, and allowed to answer it from Slack."""


def _slack_users(envelope: WaitEnvelope) -> list[str]:
    answerers = envelope.rules.get("answerers") if isinstance(envelope.rules, Mapping) else None
    principals = (answerers or {}).get("principals") or ()
    return [p.removeprefix(SLACK_PRINCIPAL) for p in principals if isinstance(p, str) and p.startswith(SLACK_PRINCIPAL)]
