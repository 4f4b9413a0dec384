"""`TeamsAnnounce`: each question an Adaptive Card posted to a Microsoft Teams Workflows webhook.

A Workflows webhook ("When a Teams webhook request is received") takes a message with the card as its
attachment and answers `202 Accepted`; the flow behind it posts the card to a channel or, reading the
`agent_wait.recipient` the body carries, to that person's chat. A card cannot be edited through the webhook, so
each step is a card of its own:

- `wait.created`: the question, with `Action.OpenUrl` buttons to its signed confirmation pages;
- `wait.reminder` and `wait.escalated`: the question again under a reminder or escalation headline, with fresh
  links (an escalation goes to the new audience);
- `wait.extended`: the question again under a "Deadline extended" headline, with links made again to the new
  deadline (those of earlier cards stop at the old one), to whoever may answer now and, for a question anyone may
  answer, to everyone a card of it went to before; one card per extension. An extension told after the question
  was decided, or after a later extension, posts nothing;
- `wait.answered`, `wait.expired`, `wait.cancelled`, `wait.failed`: the outcome, without buttons.

Two modes (`TeamsMode`):

- `people`: one card per recipient (`recipients(envelope)`), each with links bound to that person
  (`links(envelope, recipient)`), so a quorum counts people and a forwarded card answers as the person it was
  made for. A question nobody is mapped for fails its delivery, named.
- `channel`: one card for everyone in the channel, with unbound links (`links(envelope, None)`). Unbound links
  exist only where anyone may answer: a question that names its answerers or needs a quorum gets a card that
  says who may answer and points at the inbox, where people sign in, and no buttons.

Delivery: a 429 (Teams throttles more than about four requests a second per webhook) or a 5xx is sent again
after `Retry-After` or a short backoff, up to `attempts` times in all; anything else that is not 2xx, or no
answer, is a `TeamsDeliveryError` (counted and logged by `BaseAnnounce`). A connection that broke after the
request was sent is not retried: the flow may have posted the card. The URL carries the flow's signature, so
only its origin is ever shown.

Once: every event may arrive more than once (the router and the sweep announce at least once, and a delivery
that failed for one person of several is owed again whole). With `sends` (`DynamoDbSends` on
`AGENT_WAIT_TEAMS_SENDS_TABLE`, which `AgentWait` creates), each card is claimed before it is posted, under the
event's `dedupe_key` and its recipient, and marked sent when the webhook accepts it: a card already accepted is
never posted again, so a retry posts only the cards that did not go out. A webhook cannot be asked what it
posted, so a card claimed by an attempt that died before the webhook answered is posted again: that window is the
only at-least-once part. Without `sends` every delivery posts every card.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC
from email.utils import parsedate_to_datetime
from enum import StrEnum
from typing import Any, Protocol

from agent_wait.channels.announce.base import BaseAnnounce
from agent_wait.channels.announce.webhook import origin_of
from agent_wait.channels.asked import Decided, decided_of
from agent_wait.channels.sends import Send, Sends, sent_to
from agent_wait.channels.teams import cards
from agent_wait.channels.teams.records import ACCEPTED, CHANNEL, address_of, send_key
from agent_wait.common.times import format_rfc3339, utc_now
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.errors import ArgumentError, TeamsDeliveryError
from agent_wait.people.recipients import Recipient

__all__ = (
    "ACCEPTED",
    "CHANNEL",
    "DEFAULT_TRANSITIONS",
    "MAX_BODY_BYTES",
    "TeamsAnnounce",
    "TeamsMode",
    "TeamsRecipient",
    "decided_from",
    "send_key",
)

logger = logging.getLogger("agent_wait.channels.announce.teams")

MAX_BODY_BYTES = 28_000
"""Teams refuses a message over about 28 KB; a card over this is not sent."""
MAX_RETRY_WAIT = 10.0
"""The longest one wait before sending again, in seconds, whatever `Retry-After` asks (the call runs inside the
router's or the sweep's invocation)."""
DEFAULT_TRANSITIONS = frozenset(
    {
        Transition.CREATED,
        Transition.REMINDER,
        Transition.ESCALATED,
        Transition.EXTENDED,
        Transition.ANSWERED,
        Transition.EXPIRED,
        Transition.CANCELLED,
        Transition.FAILED,
    }
)
"""What a Teams announcer posts unless told otherwise: not `wait.voted` nor `wait.resumed`, which would each be one
more card in every chat (a card cannot be edited through the webhook)."""
_OUTCOMES = {Transition.ANSWERED, Transition.EXPIRED, Transition.CANCELLED, Transition.FAILED, Transition.RESUMED}
_ASKING = frozenset(
    t.event_type for t in (Transition.CREATED, Transition.REMINDER, Transition.ESCALATED, Transition.EXTENDED)
)
"""The events whose cards carry answer links, as their send keys begin (`wait.created:...`)."""


class TeamsMode(StrEnum):
    """Who a question's cards go to."""

    PEOPLE = "people"
    """One card per recipient, with links bound to that person."""
    CHANNEL = "channel"
    """One card for the channel, with unbound links where anyone may answer, else none."""


class TeamsRecipient(Protocol):
    """A person a card is made for (`agent_wait.people.recipients.Recipient` is one)."""

    @property
    def address(self) -> str:
        """Where the flow posts the card: the person's Teams sign-in address (UPN), usually their email."""
        ...

    @property
    def principal(self) -> str:
        """Who they answer as (`answered_by`, and the answerer principal a policy names)."""
        ...


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A webhook that redirects is misconfigured: never resend the card (and the URL's signature) elsewhere."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class TeamsAnnounce(BaseAnnounce):
    """Post each question, its follow-ups and its outcome to Teams as Adaptive Cards through a Workflows webhook.

    Example:
        >>> teams = TeamsAnnounce("https://example.logic.azure.com/workflows/abc/triggers/manual/paths/invoke?sig=x",
        ...                       mode="channel")
        >>> teams
        TeamsAnnounce(name='teams', origin='https://example.logic.azure.com', mode='channel')

    Args:
        url: the webhook's URL (the flow's trigger URL, with its signature).
        mode: `people` (a card per recipient, links bound to each) or `channel` (one card, unbound links).
        recipients: who a question's cards go to in `people` mode.
        links: signed answer links for a question, by action, bound to a recipient or to nobody (None).
        records: reads a question's row (`ledger.find`), to say who answered; None says only how it ended.
        inbox_url: the inbox page (`https://.../inbox`), linked from every card; None links nothing.
        timeout: seconds to wait for the webhook on each attempt.
        attempts: how many times a card is sent in all when the webhook answers 429 or 5xx.
        sleep: waits between attempts (tests pass one that does not sleep).
        delivers: the transitions to post (`DEFAULT_TRANSITIONS` by default).
        sends: where each card is claimed and marked accepted, so a redelivered event never posts one twice
            (`DynamoDbSends` in the host); None posts every card on every delivery.

    Raises:
        ArgumentError: a URL that is not https (http only on this machine), an unknown mode, `people` mode without
            `recipients`, or attempts or a timeout out of range.
    """

    name = "teams"

    def __init__(
        self,
        url: str,
        *,
        mode: TeamsMode | str = TeamsMode.PEOPLE,
        recipients: Callable[[WaitEnvelope], Sequence[TeamsRecipient]] | None = None,
        links: Callable[[WaitEnvelope, TeamsRecipient | None], Mapping[str, str]] | None = None,
        records: Callable[[str], Any] | None = None,
        inbox_url: str | None = None,
        timeout: float = 10.0,
        attempts: int = 3,
        sleep: Callable[[float], None] = time.sleep,
        delivers: Iterable[Transition | str] | None = None,
        sends: Sends | None = None,
    ) -> None:
        super().__init__(delivers=DEFAULT_TRANSITIONS if delivers is None else delivers)
        parts = urllib.parse.urlsplit(url) if isinstance(url, str) else None
        local = parts is not None and parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost")
        if parts is None or not parts.hostname or not (parts.scheme == "https" or local):
            raise ArgumentError(
                "TeamsAnnounce url must be the flow's https:// trigger URL (http:// only on localhost); the URL is "
                "not shown: it carries the flow's signature",
                argument="url",
            )
        if mode not in set(TeamsMode):
            raise ArgumentError(f"TeamsAnnounce mode must be 'people' or 'channel'; got {mode!r}", argument="mode")
        if mode == TeamsMode.PEOPLE and recipients is None:
            raise ArgumentError(
                "TeamsAnnounce in 'people' mode needs recipients (who each question's cards go to); pass "
                "recipients=, or use mode='channel' for one card in a channel",
                argument="recipients",
            )
        if isinstance(attempts, bool) or not isinstance(attempts, int) or not 1 <= attempts <= 5:
            raise ArgumentError(f"TeamsAnnounce attempts must be a whole number from 1 to 5; got {attempts!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 60:
            raise ArgumentError(f"TeamsAnnounce timeout must be more than 0 and at most 60 seconds; got {timeout!r}")
        self.url = url
        self.mode = TeamsMode(mode)
        self.recipients = recipients
        self.links = links
        self.records = records
        self.inbox_url = inbox_url
        self.timeout = float(timeout)
        self.attempts = attempts
        self._sleep = sleep
        self.sends = sends
        self._opener = urllib.request.build_opener(_NoRedirects())

    @property
    def origin(self) -> str:
        """`scheme://host[:port]` of the URL: all that errors, log lines and `repr` show of it."""
        return origin_of(self.url)

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        if transition is Transition.EXTENDED and self._outdated(envelope):
            logger.info("extension of question %s no longer holds: no card posted", envelope.question_id)
            return
        targets: list[TeamsRecipient | None]
        if self.mode is TeamsMode.CHANNEL:
            targets = [None]
        else:
            targets = list(self.recipients(envelope) if self.recipients is not None else ())
            if transition is Transition.EXTENDED and not isinstance(envelope.rules.get("answerers"), Mapping):
                targets += self._carded_before(envelope.question_id, targets)
            if not targets:
                raise TeamsDeliveryError(
                    f"no Teams recipient for question {envelope.question_id}: map its answerers (or '*') to people "
                    "in the recipients setting, or post to a channel (mode 'channel')"
                )
        failed: list[str] = []
        for target in targets:
            key = send_key(envelope, transition, target)
            if not self._claim(envelope.question_id, key, target):
                continue  # accepted by an earlier delivery of this event
            body = self.body(envelope, transition, target)
            try:
                self._post(body)
            except TeamsDeliveryError as exc:
                if len(targets) == 1:
                    raise
                failed.append(exc.message)
                continue
            if self.sends is not None:
                self.sends.sent(envelope.question_id, key, ACCEPTED)
        if failed:
            raise TeamsDeliveryError(f"{len(failed)} of {len(targets)} Teams cards not delivered: {'; '.join(failed)}")

    def _outdated(self, envelope: WaitEnvelope) -> bool:
        from agent_wait.engine.extend import outdated

        return outdated(envelope, self.records(envelope.question_id) if self.records is not None else None)

    def _carded_before(self, question_id: str, known: Sequence[TeamsRecipient | None]) -> list[TeamsRecipient | None]:
        """Everyone a card with answer links went to, but those in `known`: on a question anyone may answer their
        links answer until the old deadline, so they are told the new one too (a step's tags may have moved it on).
        Without `sends` nobody is known."""
        if self.sends is None:
            return []
        told = {CHANNEL, *(target.address for target in known if target is not None)}
        asked = sent_to(self.sends, question_id, keys=lambda key: key.split(":", 1)[0] in _ASKING)
        return [Recipient.of(address) for address in asked if address not in told]

    def _claim(self, question_id: str, key: str, target: TeamsRecipient | None) -> bool:
        """Whether to post the card `key`: not yet accepted (claimed now, or claimed by an attempt that died)."""
        if self.sends is None:
            return True
        earlier = self.sends.claim(question_id, Send(key, address_of(target), format_rfc3339(utc_now())))
        if earlier is not None and earlier.message_id is not None:
            logger.info("teams card %s of question %s was accepted before; not posted again", key, question_id)
            return False
        return True

    # -- what is sent -----------------------------------------------------------------------------------------

    def card(self, envelope: WaitEnvelope, transition: Transition, recipient: TeamsRecipient | None) -> dict[str, Any]:
        """The card `deliver` sends for `transition` to `recipient` (None: the channel)."""
        inbox = self._inbox(envelope)
        if transition in _OUTCOMES:
            return cards.outcome_card(envelope, self._decided(envelope, transition), inbox_url=inbox)
        notice = {
            Transition.REMINDER: cards.reminder_notice,
            Transition.ESCALATED: cards.escalation_notice,
            Transition.EXTENDED: cards.extension_notice,
        }.get(transition)
        links = dict(self.links(envelope, recipient)) if self.links is not None else {}
        headline = notice(envelope) if notice is not None else None
        return cards.question_card(envelope, links, inbox_url=inbox, notice=headline, progress=envelope.progress)

    def body(self, envelope: WaitEnvelope, transition: Transition, recipient: TeamsRecipient | None) -> bytes:
        """The exact request body `deliver` POSTs for `transition` to `recipient` (public so flows can be tested)."""
        about = {
            "recipient": recipient.address if recipient is not None else None,
            "event": transition.event_type,
            "question_id": envelope.question_id,
            "thread_id": envelope.thread_id,
            "dedupe_key": envelope.dedupe_key,
        }
        payload = cards.webhook_body(self.card(envelope, transition, recipient), about=about)
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def _inbox(self, envelope: WaitEnvelope) -> str | None:
        if not self.inbox_url:
            return None
        return f"{self.inbox_url}#/questions/{urllib.parse.quote(envelope.question_id, safe='')}"

    def _decided(self, envelope: WaitEnvelope, transition: Transition) -> Decided:
        record = self.records(envelope.question_id) if self.records is not None else None
        return decided_of(envelope, transition, record)

    # -- sending ----------------------------------------------------------------------------------------------

    def _post(self, body: bytes) -> None:
        origin = self.origin
        if len(body) > MAX_BODY_BYTES:
            raise TeamsDeliveryError(
                f"the card for {origin} is {len(body)} bytes, over Teams' limit of about {MAX_BODY_BYTES}: shorten "
                "the question's arguments or description"
            )
        status: int | None = None
        attempt = 0
        for attempt in range(1, self.attempts + 1):
            status, retry_after = self._send(body, origin, attempt)
            if 200 <= status < 300:
                return
            if (status == 429 or 500 <= status < 600) and attempt < self.attempts:
                wait = retry_after if retry_after is not None else 0.5 * 2 ** (attempt - 1)
                logger.info("teams webhook %s answered %d; sending again in %.1fs", origin, status, wait)
                self._sleep(min(wait, MAX_RETRY_WAIT))
                continue
            break
        hint = {
            400: ": the flow refused the body (is its trigger 'When a Teams webhook request is received'?)",
            401: ": the URL's signature is not accepted (copy the trigger URL again)",
            403: ": the URL's signature is not accepted (copy the trigger URL again)",
            404: ": no such flow (deleted, or the URL is wrong)",
            413: ": the card is too large for Teams",
            429: f": Teams is throttling this webhook; gave up after {self.attempts} attempts",
        }.get(status or 0, f" after {self.attempts} attempts" if status and status >= 500 else "")
        raise TeamsDeliveryError(f"{origin} answered HTTP {status}{hint}", status=status, attempts=attempt)

    def _send(self, body: bytes, origin: str, attempt: int) -> tuple[int, float | None]:
        request = urllib.request.Request(
            self.url,
            data=body,
            headers={"Content-Type": "application/json; charset=utf-8", "User-Agent": "agent-wait"},
            method="POST",
        )
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                return int(response.status), None
        except urllib.error.HTTPError as exc:
            retry_after = _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
            exc.close()
            return int(exc.code), retry_after
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise TeamsDeliveryError(f"{origin} unreachable: {reason}", attempts=attempt) from None
        except Exception as exc:  # http.client may put the URL in a message: name the type only
            raise TeamsDeliveryError(f"{origin} could not be sent: {type(exc).__name__}", attempts=attempt) from None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, origin={self.origin!r}, mode={self.mode.value!r})"


def _retry_after(value: str | None) -> float | None:
    """`Retry-After` in seconds (a number of seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:  # `-0000`: UTC, said without a zone
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - utc_now()).total_seconds())


def decided_from(record: Any, *, failed: bool = False) -> Decided:
    """How a decided question's row says it ended, as its outcome card tells it."""
    return decided_of(record.envelope, Transition.FAILED if failed else Transition.ANSWERED, record)
