"""Extend: move an open question's deadline later, for someone its policy allows, within the policy's maximum.

`ExtendService.extend` is the one way every door (the answer API's `POST /questions/{id}/extend`, its inbox
button, `agent-wait extend`) moves a deadline. It reads the row, checks who asks (`WaitPolicy(extend=...)`: nobody
unless the policy names them) and how far (past the deadline the question was asked with, all extensions together,
at most the policy's `max_total`), and writes the move with one conditional write that only an open question whose
deadline and follow-ups are unchanged since the read accepts (`FollowUpLedger.extend`); a lost race is read again
once. The reminders and escalation steps not yet sent move by the same amount (`agent_wait.policy.extension.shifted`).

Then `wait.extended` is announced (progress: which extension, from, to, by whom), addressed like a reminder to the
audience the question has now (`extended_envelope`), so the channels that carry links re-arm whoever may answer
with links to the new deadline: at once when the service has announcers, else owed on the row so the sweep
announces it on its next run (the answer API does this: it has no announcers of its own). A precise-deadline
schedule moves with it (`DeadlineSchedules.arrange`). An extension decides nothing and runs nothing: the agent
keeps waiting.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from agent_wait.common.durations import format_duration
from agent_wait.common.times import format_rfc3339, parse_rfc3339, utc_now
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.contract.publish import Announcers, as_announcers, publish
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.checks import Answerer
from agent_wait.engine.metrics import HostMetrics, Metric, RecordingMetrics
from agent_wait.engine.schedules import DeadlineSchedules
from agent_wait.errors import ArgumentError
from agent_wait.ledger import Capability, FullLedger, Ledger, QuestionRecord, require_capabilities
from agent_wait.policy.extension import Extended, Extension

__all__ = ("ExtendRefusal", "ExtendResult", "ExtendService", "extended_envelope", "extended_progress", "outdated")

_ATTEMPTS = 2
"""A lost race (a reminder claimed, another extension) is read again once; a second loss is a 409 `changed`."""


class ExtendRefusal(StrEnum):
    """Why a deadline was not moved; the answer API's problem `reason` (its status in brackets)."""

    UNKNOWN_QUESTION = "unknown_question"
    """No question has this id (404)."""
    NOT_ALLOWED = "extend_not_allowed"
    """The policy lets nobody extend, or not this person (403)."""
    ALREADY_DECIDED = "already_decided"
    """The question is no longer open (409)."""
    DEADLINE_PASSED = "deadline_passed"
    """Its deadline has passed: the default applies, and nothing moves it back (409)."""
    CHANGED = "changed"
    """The question changed twice while this extension was written (409: try again)."""
    NOT_LATER = "not_later"
    """The new deadline is not later than the current one (422)."""
    BEYOND_MAXIMUM = "beyond_maximum"
    """The new deadline is further past the deadline it was asked with than the policy's `max_total`, or past any
    time a deadline can hold (a `by` of 999,999,999 days) (422)."""


@dataclass(frozen=True, slots=True)
class ExtendResult:
    """What `ExtendService.extend` did."""

    record: QuestionRecord | None
    """The row after the call (None: no such question)."""
    refusal: ExtendRefusal | None = None
    """Why nothing moved; None when the deadline moved."""
    detail: str = ""
    """One sentence for a person: what was wrong and what to do (ids and times only)."""
    announced: bool = False
    """True when `wait.extended` went out at once; False when it is owed and the sweep announces it."""

    @property
    def extended(self) -> bool:
        return self.refusal is None


def extended_progress(record: QuestionRecord) -> dict[str, Any]:
    """`wait.extended`'s `progress`: which extension this is, the deadline before and after, and who moved it."""
    last = record.extensions[-1]
    return {"extension": len(record.extensions), "from": last.previous, "to": last.until, "by": last.by}


class ExtendService:
    """Move deadlines later for the people a question's policy allows (see the module docstring).

    Args:
        ledger: the question ledger (with follow-ups).
        announce: announcers for `wait.extended`; None: the announcement is owed on the row, the sweep sends it.
        schedules: precise-deadline schedules to move with the deadline; None: only the sweep's minute.
        metrics: `DeadlinesExtended`; in memory when omitted.
        clock: now (UTC).
        log: a stdlib-compatible logger.
    """

    def __init__(
        self,
        ledger: Ledger,
        *,
        announce: Announcers = None,
        schedules: DeadlineSchedules | None = None,
        metrics: HostMetrics | None = None,
        clock: Callable[[], datetime] = utc_now,
        log: logging.Logger | Any = None,
    ) -> None:
        self.ledger: FullLedger = require_capabilities(ledger, Capability.FOLLOW_UPS, user="ExtendService")
        self.announcers = as_announcers(announce)
        self.schedules = schedules
        self.metrics: HostMetrics = metrics if metrics is not None else RecordingMetrics()
        self.clock = clock
        self.log = log or logging.getLogger("agent_wait.host")

    def extend(
        self, question_id: str, who: Answerer, *, by: timedelta | None = None, until: datetime | None = None
    ) -> ExtendResult:
        """Move `question_id`'s deadline later: by `by`, or to `until` (exactly one).

        Raises:
            ArgumentError: neither or both of `by` and `until`, or `by` not positive (a caller's bug; the API checks
                its body before it calls).
        """
        if (by is None) == (until is None):
            raise ArgumentError("extend takes exactly one of by= (a duration) or until= (a time)", argument="by")
        if by is not None and by <= timedelta(0):
            raise ArgumentError(f"extend by= must be a positive duration; got {by}", argument="by")
        for _ in range(_ATTEMPTS):
            record = self.ledger.find(question_id)
            if record is None:
                return ExtendResult(None, ExtendRefusal.UNKNOWN_QUESTION, f"no question {question_id}")
            refused = self._refusal(record, who)
            if refused is not None:
                return refused
            previous = parse_rfc3339(str(record.expires_at))  # `_refusal` refused a question without one
            target = until if until is not None else _later(previous, by or timedelta(0))
            checked = self._new_deadline(record, target, by=by)
            if isinstance(checked, ExtendResult):
                return checked
            result = self._write(record, who, checked)
            if result is not None:
                return result
        latest = self.ledger.find(question_id)
        return ExtendResult(latest, ExtendRefusal.CHANGED, "the question changed while it was extended; try again")

    def _refusal(self, record: QuestionRecord, who: Answerer) -> ExtendResult | None:
        policy = record.envelope.rules.get("extend")
        extension = Extension.parse(policy) if policy else None
        if extension is None:
            detail = "this question's policy lets nobody extend its deadline (WaitPolicy(extend=Extension(...)))"
            return ExtendResult(record, ExtendRefusal.NOT_ALLOWED, detail)
        if not extension.allows(groups=who.groups, names=who.keys):
            who_may = ", ".join([*(f"members of {g}" for g in extension.groups), *extension.people])
            detail = f"only {who_may} may extend this question; {who.answered_by or 'the caller'} is not one"
            return ExtendResult(record, ExtendRefusal.NOT_ALLOWED, detail)
        if record.status is not QuestionStatus.OPEN:
            detail = f"the question is {record.status.value}; only an open question's deadline moves"
            return ExtendResult(record, ExtendRefusal.ALREADY_DECIDED, detail)
        if record.expires_at is None or record.is_overdue(self.clock()):
            detail = f"its deadline passed at {record.expires_at}; the default applies and nothing moves it back"
            return ExtendResult(record, ExtendRefusal.DEADLINE_PASSED, detail)
        return None

    def _new_deadline(
        self, record: QuestionRecord, target: datetime | None, *, by: timedelta | None
    ) -> ExtendResult | str:
        """`target` (None: later than any datetime) as the RFC 3339 deadline `record` may move to, or the refusal.

        The policy's maximum is checked first: a target within it is a time every store can write, so rounding it
        up to the second (a deadline is never early) cannot overflow.
        """
        extension = Extension.parse(record.envelope.rules["extend"])
        current, asked = str(record.expires_at), str(record.asked_deadline)
        latest = parse_rfc3339(asked) + extension.max_total
        if target is None or target > latest:
            too_late = (
                f"{format_rfc3339(target)} is later"
                if target is not None
                else f"{format_duration(by or timedelta.max)} past {current} is later than any time a deadline holds"
            )
            detail = (
                f"the policy lets the deadline move at most {extension.max_total_iso} past {asked}, to "
                f"{format_rfc3339(latest)}; {too_late}"
            )
            return ExtendResult(record, ExtendRefusal.BEYOND_MAXIMUM, detail)
        deadline = format_rfc3339(target, round_up=True)
        if deadline <= current:
            detail = f"the new deadline {format_rfc3339(target)} is not later than the current one, {current}"
            return ExtendResult(record, ExtendRefusal.NOT_LATER, detail)
        return deadline

    def _write(self, record: QuestionRecord, who: Answerer, until: str) -> ExtendResult | None:
        now = self.clock()
        moved = Extended(
            at=format_rfc3339(now),
            by=who.answered_by,
            previous=str(record.expires_at),
            until=until,
            reminders=record.progress.reminders,
            escalations=record.progress.escalations,
        )
        after = replace(
            record,
            envelope=replace(record.envelope, expires_at=until),
            extensions=(*record.extensions, moved),
            progress=replace(record.progress, version=record.progress.version + 1),
        )
        # A row that owes notices stays due now, for the sweep to tell them; else due at its moved next time.
        due_at = record.due_at if record.notices else after.next_due()
        result = self.ledger.extend(
            record.thread_id, record.question_id, moved, expected_version=record.progress.version, due_at=due_at
        )
        if not result.won or result.record is None:
            return None  # changed since it was read: read it again
        extended = result.record
        self.metrics.count(Metric.DEADLINES_EXTENDED)
        self.log.info(
            "deadline extended",
            extra={"thread_id": extended.thread_id, "question_id": extended.question_id, "until": until},
        )
        announced = self._announce(extended, now)
        if self.schedules is not None:
            self.schedules.arrange(extended)
        return ExtendResult(extended, announced=announced)

    def _announce(self, record: QuestionRecord, now: datetime) -> bool:
        """`wait.extended` now when there are announcers and every one delivered; else owed for the sweep."""
        if self.announcers:
            envelope = extended_envelope(record)
            if publish(envelope, self.announcers).ok:
                return True
        self.ledger.owe_notices(record.thread_id, record.question_id, (Transition.EXTENDED.value,), now=now)
        return False


def _later(moment: datetime, by: timedelta) -> datetime | None:
    """`moment + by`, or None when that is past the last datetime (year 9999): a `by` of 999,999,999 days is a
    duration Python holds but no deadline can reach."""
    try:
        return moment + by
    except OverflowError:
        return None


def extended_envelope(record: QuestionRecord) -> WaitEnvelope:
    """The `wait.extended` envelope of `record`'s last extension: its `expires_at` is the new deadline.

    Like a reminder's, it is addressed to the audience the question has now: with escalation steps taken, its `tags`
    carry each step's tags over the question's own and its `rules.answerers` says who may answer, so a channel tells
    whoever may answer now (and not an audience a step replaced).
    """
    envelope, level = record.envelope, record.progress.escalations
    if level:
        envelope = replace(
            envelope,
            tags=MappingProxyType(record.followups.tags_at(envelope.tags, level)),
            rules=MappingProxyType({**envelope.rules, "answerers": record.answerers_for(level)}),
        )
    return envelope.for_transition(Transition.EXTENDED, progress=extended_progress(record))


def outdated(extended: WaitEnvelope, record: QuestionRecord | None) -> bool:
    """Whether a `wait.extended` envelope tells a deadline that no longer holds: its question is decided, or a later
    extension moved the deadline again (whose own `wait.extended` tells the newest one). A channel that tells people
    skips an outdated one, so an envelope told late never hands out buttons for a decided question or an old
    deadline. Without the row (None) nothing says so."""
    if record is None:
        return False
    return record.status is not QuestionStatus.OPEN or record.expires_at != extended.expires_at
