"""What a push says: what is asked and by when, and the question's link; never an argument's value unless the policy
says so.

A push crosses a push service (Google's, Apple's, Mozilla's) and shows on a lock screen, so it carries less than the
other channels, which show the whole call to people already signed in to Slack, Teams or their mailbox. By default a
call is named with its parameters but not their values (`refund(order_id, amount)`), a batched review by its calls'
names, and any other question by the first line of its text; `WaitPolicy(push_arguments=True)` (the envelope's
`rules.push_arguments`) shows the values as the other channels' headline does (`refund(order_id="A-1",
amount=900)`). The deadline is said in UTC and as time left; tapping opens the question in the inbox (`url`).

The payload is JSON, encrypted for each device (RFC 8291) and read by the inbox's service worker (`inbox-sw.js`):
`{"title", "body", "url", "question_id", "tag", "step"}`; `tag` makes a reminder replace the notification the
question's first push showed.

Example:
    >>> from datetime import UTC, datetime
    >>> from agent_wait.contract.envelope import Question, WaitEnvelope, Transition
    >>> envelope = WaitEnvelope.create(Question("t-1", "q-1", {"function": "refund", "args": {"amount": 900}}))
    >>> push_payload(envelope, Transition.CREATED, inbox_url=None, now=datetime(2026, 1, 1, tzinfo=UTC))["body"]
    'refund(amount)'
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agent_wait.channels.reading import HEADLINE_CHARS, Kind, plain_text, read
from agent_wait.common.times import parse_rfc3339
from agent_wait.contract.envelope import Transition, WaitEnvelope

__all__ = ("PUSH_ARGUMENTS", "push_payload", "question_url", "shows_arguments")

PUSH_ARGUMENTS = "push_arguments"
"""The `rules` key (from `WaitPolicy(push_arguments=True)`) that lets a push show argument values."""
_TITLES = {
    Transition.CREATED: "Your answer is needed",
    Transition.REMINDER: "Reminder: your answer is needed",
    Transition.ESCALATED: "Escalated: your answer is needed",
}


def shows_arguments(envelope: WaitEnvelope) -> bool:
    """Whether the question's policy lets a push show its arguments' values."""
    return envelope.rules.get(PUSH_ARGUMENTS) is True


def question_url(inbox_url: str | None, question_id: str) -> str:
    """The question in the inbox (`<inbox>#/questions/<id>`), or the bare fragment without an inbox URL."""
    import urllib.parse

    return f"{inbox_url or ''}#/questions/{urllib.parse.quote(question_id, safe='')}"


def push_payload(
    envelope: WaitEnvelope, transition: Transition, *, inbox_url: str | None, now: datetime
) -> dict[str, Any]:
    """The push for `envelope`'s `transition` (`wait.created`, a reminder, an escalation step).

    Args:
        envelope: the question's envelope for this step.
        transition: which step.
        inbox_url: the inbox page (`https://.../inbox`); the push opens the question there.
        now: when it is sent, for the time left.
    """
    deadline = _deadline(envelope.expires_at, now)
    asked = _asked(envelope)
    return {
        "title": _TITLES.get(transition, "Your answer is needed"),
        "body": f"{asked}\n{deadline}" if deadline else asked,
        "url": question_url(inbox_url, envelope.question_id),
        "question_id": envelope.question_id,
        "tag": f"agent-wait:{envelope.question_id}",
        "step": transition.value,
    }


def _asked(envelope: WaitEnvelope) -> str:
    reading = read(envelope)
    if shows_arguments(envelope) or reading.kind in (Kind.PROMPT, Kind.SCHEMA):
        return reading.headline  # a prompt's own text, or the call with its values as the policy allows
    names = [f"{call.name}({', '.join(str(name) for name in call.args)})" for call in reading.calls]
    if reading.kind is Kind.REVIEW and len(names) > 1:
        text = f"Review {len(names)} tool calls: {', '.join(call.name for call in reading.calls)}"
    else:
        text = ("Review " if reading.kind is Kind.REVIEW else "") + (names[0] if names else "A call")
    return plain_text(text)[:HEADLINE_CHARS]


def _deadline(expires_at: str | None, now: datetime) -> str:
    if not expires_at or expires_at == "never":
        return ""
    moment = parse_rfc3339(expires_at)
    minutes = int((moment - now).total_seconds() // 60)
    when = f"{moment:%a} {moment.day} {moment:%b} {moment:%H:%M} UTC"
    if minutes <= 0:
        return f"The deadline passed ({when})"
    if minutes < 60:
        left = f"{max(minutes, 1)} min"
    elif minutes < 48 * 60:
        left = f"{round(minutes / 60)} h"
    else:
        left = f"{round(minutes / 1440)} days"
    return f"Answer by {when} (in about {left})"
