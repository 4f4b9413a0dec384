"""`EmailAnnounce`: each question emailed to each person who may answer it, with their own signed links.

- `wait.created` sends one email per recipient (`RecipientRouting`): what is asked, the deadline, and one button
  per allowed action, each that recipient's own signed link (made by the host: the channel holds no keys);
- `wait.reminder` and `wait.escalated` send their own email to each recipient of that step (an escalation's
  envelope carries the widened audience), with fresh links;
- `wait.extended` sends each person who may answer now an email saying the deadline moved, with their links made
  again to the new deadline (those in earlier emails stop at the old one): the recipients of the audience the
  question has now, and, for a question anyone may answer, everyone it was emailed to before. Once per extension;
  an extension told after the question was decided, or after a later extension, sends nothing;
- `wait.answered`, `wait.expired` and `wait.cancelled` send a short outcome email to everyone this question was
  emailed to (else its recipients now). `wait.resumed`, `wait.failed` and `wait.voted` send nothing: the outcome
  already went, a failure is an operator's, and a vote waits for the outcome.

Every email is claimed in `EmailSends` before it is sent (see `agent_wait.channels.email.records`), so a redelivered
event never emails a person twice, except for the one window between a claim and SES's answer. A recipient whose email
failed is tried again by the next delivery of the same event (the sweep re-announces a question whose
`wait.created` failed, and keeps a reminder claimed until it went); the others are not emailed again.
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from agent_wait.channels.announce.base import BaseAnnounce
from agent_wait.channels.asked import Decided, decided_of
from agent_wait.channels.email.records import EmailSends, Send
from agent_wait.channels.email.render import EmailContent, mime_message, outcome_email, question_email
from agent_wait.channels.sends import sent_to
from agent_wait.common.times import format_rfc3339, utc_now
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.errors import EmailDeliveryError, RecipientError
from agent_wait.people.recipients import Recipient, RecipientRouting

__all__ = ("ASKING", "OUTCOMES", "EmailAnnounce", "LinkMaker")

logger = logging.getLogger("agent_wait.channels.announce.email")

ASKING = frozenset({Transition.CREATED, Transition.REMINDER, Transition.ESCALATED, Transition.EXTENDED})
"""The steps that ask: an email with the recipient's buttons (an extension's made to its new deadline)."""
OUTCOMES = frozenset({Transition.ANSWERED, Transition.EXPIRED, Transition.CANCELLED})
"""The steps that end a question: a short outcome email."""

LinkMaker = Callable[[WaitEnvelope, Recipient, datetime], Mapping[str, str]]
"""`(envelope, recipient, issued_at) -> {action: url}`: the recipient's own signed links, their lifetime counted
from `issued_at` (the same arguments give the same links)."""


class EmailAnnounce(BaseAnnounce):
    """Email each question's recipients through Amazon SES (v2 `SendEmail`), and tell them how it ended.

    Args:
        client: a boto3 `sesv2` client.
        routing: who a question goes to.
        sends: where each question's emails are claimed and recorded (`DynamoDbEmailSends` in the host).
        sender: the `From` address (a verified SES identity), optionally with a display name.
        links: makes a recipient's signed links; None sends no buttons (the email points at the inbox).
        records: reads a question's row (`ledger.find`), to say who answered; None says only how it ended.
        configuration_set: the SES configuration set (bounce and complaint events); None uses the identity's.
        reply_to: `Reply-To` addresses; none: replies go to `sender`.
        inbox_url: the inbox page (`https://.../inbox`), linked from every email; None links nothing.
        clock: returns now (UTC).
        delivers: the transitions to deliver (all by default).
    """

    name = "email"

    def __init__(
        self,
        client: Any,
        routing: RecipientRouting,
        sends: EmailSends,
        *,
        sender: str,
        links: LinkMaker | None = None,
        records: Callable[[str], Any] | None = None,
        configuration_set: str | None = None,
        reply_to: Sequence[str] = (),
        inbox_url: str | None = None,
        clock: Callable[[], datetime] = utc_now,
        delivers: Any = None,
    ) -> None:
        super().__init__(delivers=delivers)
        self.client = client
        self.routing = routing
        self.sends = sends
        self.sender = sender
        self.links = links
        self.records = records
        self.configuration_set = configuration_set
        self.reply_to = tuple(reply_to)
        self.inbox_url = inbox_url
        self.clock = clock

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        if transition is Transition.EXTENDED and self._outdated(envelope):
            logger.info("extension no longer holds: nothing sent", extra={"question_id": envelope.question_id})
        elif transition in ASKING:
            self._ask(envelope, transition)
        elif transition in OUTCOMES:
            self._tell_outcome(envelope, transition)

    def _inbox(self, envelope: WaitEnvelope) -> str | None:
        if not self.inbox_url:
            return None
        return f"{self.inbox_url}#/questions/{urllib.parse.quote(envelope.question_id, safe='')}"

    def _outdated(self, envelope: WaitEnvelope) -> bool:
        from agent_wait.engine.extend import outdated

        return outdated(envelope, self.records(envelope.question_id) if self.records is not None else None)

    def _ask(self, envelope: WaitEnvelope, transition: Transition) -> None:
        problem = None
        try:
            recipients = self.routing.recipients_for(envelope)
        except RecipientError as exc:
            recipients, problem = tuple(exc.recipients), exc.message
        if transition is Transition.EXTENDED and not _restricted(envelope):
            recipients = (*recipients, *self._emailed_before(envelope.question_id, recipients))
        if not recipients and problem is None:
            raise EmailDeliveryError(
                f"no email recipient for question {envelope.question_id}: name answerer principals "
                "'email:<address>', or map its answerer groups, a tag 'key:value' or '*' to addresses in "
                "AGENT_WAIT_EMAIL_RECIPIENTS"
            )
        progress = envelope.progress or {}
        step = {
            Transition.REMINDER: f"reminder:{progress.get('reminder', 1)}",
            Transition.ESCALATED: f"escalated:{progress.get('escalation', 1)}",
            Transition.EXTENDED: f"extended:{progress.get('extension', 1)}",
        }.get(transition, "created")

        def content(recipient: Recipient, issued_at: datetime) -> EmailContent:
            return self.question_content(envelope, recipient, issued_at=issued_at)

        failed = self._send_each(envelope.question_id, step, recipients, content)
        if problem is not None:
            failed.append(problem)
        if failed:
            raise EmailDeliveryError(f"question {envelope.question_id}: {len(failed)} problem(s): {'; '.join(failed)}")

    def _emailed_before(self, question_id: str, known: Sequence[Recipient]) -> list[Recipient]:
        """Everyone the question was emailed to, but those in `known`: on a question anyone may answer, their links
        answer until the old deadline, so they are told the new one too (a step's tags may have moved it on)."""
        told = {recipient.address for recipient in known}
        emailed = sent_to(self.sends, question_id, keys=_asking)
        return [Recipient.of(address) for address in emailed if address not in told]

    def _tell_outcome(self, envelope: WaitEnvelope, transition: Transition) -> None:
        addresses = sent_to(self.sends, envelope.question_id, keys=_asking)
        if addresses:
            recipients: Sequence[Recipient] = [Recipient.of(address) for address in addresses]
        else:
            try:
                recipients = self.routing.recipients_for(envelope)
            except RecipientError as exc:
                recipients = exc.recipients
        decided = self.decided(envelope, transition)

        def content(recipient: Recipient, issued_at: datetime) -> EmailContent:
            return self.outcome_content(envelope, decided, recipient)

        failed = self._send_each(envelope.question_id, "outcome", recipients, content)
        if failed:
            raise EmailDeliveryError(f"question {envelope.question_id}: {len(failed)} problem(s): {'; '.join(failed)}")

    def question_content(self, envelope: WaitEnvelope, recipient: Recipient, *, issued_at: datetime) -> EmailContent:
        """The email that asks `recipient` (`wait.created`, a reminder, an escalation step, an extension), with their
        own links counted from `issued_at`."""
        links = self.links(envelope, recipient, issued_at) if self.links is not None else {}
        return question_email(
            envelope, links=links, recipient=recipient.address, now=self.clock(), inbox_url=self._inbox(envelope)
        )

    def outcome_content(self, envelope: WaitEnvelope, decided: Decided, recipient: Recipient) -> EmailContent:
        """The short email that tells `recipient` how the question ended."""
        return outcome_email(envelope, decided, recipient=recipient.address, inbox_url=self._inbox(envelope))

    def decided(self, envelope: WaitEnvelope, transition: Transition) -> Decided:
        """How the question ended, as its row says (who answered), else as the envelope says."""
        record = self.records(envelope.question_id) if self.records is not None else None
        return decided_of(envelope, transition, record)

    def _send_each(
        self,
        question_id: str,
        step: str,
        recipients: Sequence[Recipient],
        content: Callable[[Recipient, datetime], EmailContent],
    ) -> list[str]:
        """Claim and send one email per recipient; the problems (recipient and error code), never the content."""
        failed: list[str] = []
        for recipient in recipients:
            now = self.clock()
            key = f"{step}:{recipient.address}"
            earlier = self.sends.claim(question_id, Send(key, recipient.address, format_rfc3339(now)))
            if earlier is not None and earlier.message_id:
                continue  # sent before: this event is a redelivery
            issued_at = earlier.claimed if earlier is not None else now  # a resend carries the same links
            try:
                email = content(recipient, issued_at)
                raw = mime_message(
                    email, sender=self.sender, to=recipient.address, reply_to=self.reply_to, question_id=question_id
                )
                message_id = self._send(recipient.address, raw)
            except Exception as exc:  # one recipient's failure must not keep the others from their email
                failed.append(f"{recipient.address}: {_code(exc)}")
                continue
            self.sends.sent(question_id, key, message_id)
            logger.info("email sent", extra={"question_id": question_id, "step": step, "message_id": message_id})
        return failed

    def _send(self, address: str, raw: bytes) -> str:
        request: dict[str, Any] = {
            "FromEmailAddress": self.sender,
            "Destination": {"ToAddresses": [address]},
            "Content": {"Raw": {"Data": raw}},
        }
        if self.configuration_set:
            request["ConfigurationSetName"] = self.configuration_set
        return str(self.client.send_email(**request)["MessageId"])


def _asking(key: str) -> bool:
    """Whether a send key is an email that asked (with buttons), not an outcome."""
    return not key.startswith("outcome:")


def _restricted(envelope: WaitEnvelope) -> bool:
    """Whether the question names who may answer (else anyone who has its links may)."""
    return isinstance(envelope.rules.get("answerers"), Mapping)


def _code(exc: Exception) -> str:
    from agent_wait.aws.errors import error_code

    return error_code(exc) if not isinstance(exc, EmailDeliveryError) else exc.message
