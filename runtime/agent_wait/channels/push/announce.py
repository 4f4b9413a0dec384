"""`PushAnnounce`: each question pushed to every device of the subscribed people who may answer it.

- who: the question's answerers (`rules.answerers`; an escalation's envelope, and the reminders after it, carry the
  widened audience): a subscription whose person or subject a principal names, or whose groups meet the policy's
  groups. A question that names no answerers may be answered by anyone signed in, so every subscription gets it;
- when: `wait.created`, each `wait.reminder` and each `wait.escalated` step; nothing else (an outcome needs no
  tap; the inbox shows it);
- what: `payload.push_payload` (what is asked, the deadline, the link; no argument values unless the policy allows).

Every push is claimed in the push sends record before it is sent (`agent_wait.channels.push.records`), under
`<step>:<device>`, and marked with the push service's id once it took it: a redelivered event pushes nothing twice,
except in the window between a claim and the push service's answer. A device whose push service answers 404 or 410 is
gone: its subscription is removed and nothing is retried. Any other refusal fails the delivery
(`PushDeliveryError`), so the next delivery of the same event (the sweep re-announces) tries those devices again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from agent_wait.channels.push.payload import push_payload
from agent_wait.channels.push.records import PushSends, Send
from agent_wait.channels.push.send import Pusher, PushRefused
from agent_wait.channels.push.subscriptions import PushSubscriptions, Subscription
from agent_wait.common.times import format_rfc3339, utc_now
from agent_wait.contract.announcer import BaseAnnounce
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.errors import PushDeliveryError
from agent_wait.people.keys import person_keys

__all__ = ("PUSHED", "PushAnnounce", "audience")

logger = logging.getLogger("agent_wait.channels.announce.push")

PUSHED = frozenset({Transition.CREATED, Transition.REMINDER, Transition.ESCALATED})
"""The steps that push: the question is asked, reminded, or escalated to more people."""


def audience(envelope: WaitEnvelope, subscriptions: Iterable[Subscription]) -> list[Subscription]:
    """The subscriptions of the people who may answer `envelope`'s question now, as the answer checks judge them
    (`agent_wait.engine.checks`): named by a principal (their person key or subject), or in one of its groups;
    everyone when it names no answerers."""
    answerers = envelope.rules.get("answerers")
    if not isinstance(answerers, Mapping):
        return list(subscriptions)
    groups = set(answerers.get("groups") or ())
    named = person_keys(answerers.get("principals") or ())
    return [s for s in subscriptions if groups.intersection(s.groups) or named & person_keys((s.person, s.subject))]


class PushAnnounce(BaseAnnounce):
    """Push each question to the devices of the people who may answer it.

    Args:
        subscriptions: the inbox's push subscriptions.
        sends: where each push is claimed and recorded (`DynamoDbPushSends` in the host).
        pusher: sends one push (`WebPushSender` with the VAPID keys).
        inbox_url: the inbox page (`https://.../inbox`): a tap opens the question there.
        clock: returns now (UTC).
        delivers: the transitions to deliver (all by default; only `PUSHED` push).
    """

    name = "push"

    def __init__(
        self,
        subscriptions: PushSubscriptions,
        sends: PushSends,
        pusher: Pusher,
        *,
        inbox_url: str | None = None,
        clock: Callable[[], datetime] = utc_now,
        delivers: Any = None,
    ) -> None:
        super().__init__(delivers=delivers)
        self.subscriptions = subscriptions
        self.sends = sends
        self.pusher = pusher
        self.inbox_url = inbox_url
        self.clock = clock

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        if transition not in PUSHED:
            return
        progress = envelope.progress or {}
        step = {
            Transition.REMINDER: f"reminder:{progress.get('reminder', 1)}",
            Transition.ESCALATED: f"escalated:{progress.get('escalation', 1)}",
        }.get(transition, "created")
        payload = json.dumps(push_payload(envelope, transition, inbox_url=self.inbox_url, now=self.clock()))
        failed = [
            problem
            for subscription in audience(envelope, self.subscriptions.every())
            if (problem := self._push(envelope.question_id, step, subscription, payload)) is not None
        ]
        if failed:
            raise PushDeliveryError(
                f"question {envelope.question_id}: {len(failed)} push(es) failed: {'; '.join(failed)}"
            )

    def _push(self, question_id: str, step: str, subscription: Subscription, payload: str) -> str | None:
        """Claim and send one push; the problem (device and status), or None when sent, sent before, or gone."""
        key = f"{step}:{subscription.device}"
        earlier = self.sends.claim(question_id, Send(key, subscription.person, format_rfc3339(self.clock())))
        if earlier is not None and earlier.message_id:
            return None  # pushed before: this event is a redelivery
        fields = {"question_id": question_id, "step": step, "device": subscription.device}
        try:
            message_id = self.pusher(subscription, payload)
        except PushRefused as refused:
            if refused.gone:
                self.subscriptions.remove(subscription.person, subscription.device)
                logger.info("push subscription gone: removed", extra={**fields, "status": refused.status})
                return None
            return f"device {subscription.device}: {refused.status or 'unreachable'}"
        self.sends.sent(question_id, key, message_id)
        logger.info("push sent", extra=fields)
        return None
