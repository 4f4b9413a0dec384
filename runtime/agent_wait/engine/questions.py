"""What the agent waits on, kept true in the ledger and announced: record, announce, cancel what it moved past."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from agent_wait.asking.adapter import RunOutcome
from agent_wait.asking.delivery import UNTIL_MOVED_ON, current_delivery
from agent_wait.common.times import parse_rfc3339, seconds_between
from agent_wait.contract.announcer import BaseAnnounce
from agent_wait.contract.envelope import Question, Transition, WaitEnvelope
from agent_wait.contract.messages import internal_id
from agent_wait.contract.publish import Announcers, PublishReport, as_announcers, publish
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import tracing
from agent_wait.engine.cancelling import awaits_resume
from agent_wait.engine.grants import GRANT_VIA, GrantDesk
from agent_wait.engine.metrics import DecisionOutcome, HostMetrics, Metric, MetricTags, time_to_decision
from agent_wait.engine.owed import CREATED, notice_name, owes_earlier
from agent_wait.engine.schedules import DeadlineSchedules
from agent_wait.ledger import Decision, FollowUpLedger, Ledger, QuestionRecord, marks_unannounced
from agent_wait.ledger.due import announce_created
from agent_wait.ledger.outcome import MOVED_ON
from agent_wait.policy import Extension

__all__ = ("DEADLINE_GRACE", "AskedQuestions", "CreatedAnnouncement", "needed_until")

DEADLINE_GRACE = timedelta(days=14)
"""How long past its deadline a question's state may still be needed: its default answer can wait on the entry queue,
then on the dead-letter queue, as long as SQS keeps a message (14 days at most) before the router applies it."""


def needed_until(records: Iterable[QuestionRecord]) -> datetime | None:
    """Until when the thread's state may be resumed to decide these questions: the latest deadline any of the open
    ones can reach (an extension's allowance included) plus `DEADLINE_GRACE`; `UNTIL_MOVED_ON` when one has no
    deadline; None when none is open."""
    latest: datetime | None = None
    for record in records:
        if record.status is not QuestionStatus.OPEN:
            continue
        asked = record.asked_deadline
        if asked is None:
            return UNTIL_MOVED_ON
        rule = record.envelope.rules.get("extend")
        allowance = Extension.parse(rule).max_total if rule else timedelta()
        moment = max(parse_rfc3339(asked) + allowance, parse_rfc3339(str(record.expires_at))) + DEADLINE_GRACE
        latest = moment if latest is None else max(latest, moment)
    return latest


class CreatedAnnouncement:
    """Announces `wait.created`: the link-carrying announcers get the envelope with its signed answer links in
    `reply_to.links`, every other announcer (never the log: a link is a bearer capability) gets it without.

    The router's first announcement and the sweep's re-announcement of one that failed both go through here, so a
    person who answers from an email or a chat message gets working links whichever of them announced it.

    Args:
        metrics: counts announcements that failed, by announcer.
        link_maker: makes a question's signed answer links (`{action: url}`); None: no links.
        link_announcers: names of the announcers whose envelopes carry the links.
    """

    def __init__(
        self,
        *,
        metrics: HostMetrics,
        link_maker: Callable[[WaitEnvelope], dict[str, str]] | None = None,
        link_announcers: frozenset[str] = frozenset(),
    ) -> None:
        self.metrics = metrics
        self.link_maker = link_maker if link_announcers else None
        self.link_announcers = link_announcers

    def publish(self, envelope: WaitEnvelope, announcers: tuple[BaseAnnounce, ...]) -> PublishReport:
        """Announce `envelope`'s `wait.created` to `announcers`; the report covers every one of them."""
        carriers = tuple(a for a in announcers if a.name in self.link_announcers) if self.link_maker else ()
        others = tuple(a for a in announcers if a not in carriers)
        report = publish(envelope.for_transition(Transition.CREATED), others)
        if self.link_maker is not None and carriers:
            links = self.link_maker(envelope)
            reply_to = dict(envelope.reply_to) if isinstance(envelope.reply_to, Mapping) else {}
            linked = replace(envelope, reply_to={**reply_to, "links": links}) if links else envelope
            carried = publish(linked.for_transition(Transition.CREATED), carriers)
            report = PublishReport(report.envelope, report.deliveries + carried.deliveries)
        for failure in report.failed:
            self.metrics.count(Metric.ANNOUNCE_FAILED, reason=failure.announcer)
        return report


_DECIDED = frozenset({Transition.ANSWERED, Transition.EXPIRED, Transition.CANCELLED})
"""The announcements after which a question's schedules go: it is decided."""
_OWED_MEMO = "agent_wait.owed_notices"
"""`Delivery.memo` key: the question ids this delivery owed an envelope of."""


class AskedQuestions:
    """After each run: record every question the agent waits on, announce it, cancel what it moved past.

    Args:
        ledger: where questions are recorded.
        metrics: counts of questions asked, cancelled and announcements that failed.
        log: a stdlib-compatible logger.
        announce: announcers for every lifecycle envelope.
        reply_to: published on envelopes as where answers go.
        clock: returns now (UTC).
        link_maker: makes a question's signed answer links (`{action: url}`); None: no links.
        link_announcers: names of the announcers whose `wait.created` envelopes carry the links, in
            `reply_to.links`; a link is a bearer capability, so no other announcer (never the log) sees one.
        metric_tags: the tags a cancelled question's time to answer is also drawn by (`AGENT_WAIT_METRIC_TAGS`).
    """

    def __init__(
        self,
        ledger: Ledger,
        *,
        metrics: HostMetrics,
        log: logging.Logger | Any,
        announce: Announcers,
        reply_to: Any,
        clock: Callable[[], datetime],
        link_maker: Callable[[WaitEnvelope], dict[str, str]] | None = None,
        link_announcers: frozenset[str] = frozenset(),
        metric_tags: MetricTags | None = None,
    ) -> None:
        self.ledger = ledger
        self.metrics = metrics
        self.metric_tags = metric_tags or MetricTags()
        self.log = log
        self.announcers = as_announcers(announce)
        self.reply_to = reply_to
        self.clock = clock
        self.created = CreatedAnnouncement(metrics=metrics, link_maker=link_maker, link_announcers=link_announcers)
        self.schedules: DeadlineSchedules | None = None
        """Precise-deadline schedules, put for each question recorded and cleared at its decision; None: the sweep's
        minute only (the host sets it when `AGENT_WAIT_SCHEDULE_GROUP` is set)."""
        self.grants: GrantDesk | None = None
        """Decides a new question by a standing grant that covers it, instead of asking anyone; None: every question is
        asked (the router sets it when its ledger keeps grants)."""
        self.watchers: list[Callable[[str, RunOutcome], None]] = []
        """Called with each run's thread and outcome once what it asks is recorded, before the thread is let go (the
        A2A tasks keep a finished run's result: `agent_wait.host.a2a.follow`); none by default. A watcher may raise only
        a store's failure (`LedgerUnavailableError`): the message is then retried, and converges."""

    def after_run(self, thread_id: str, run: RunOutcome) -> tuple[str, ...]:
        """Record and announce what the agent now waits on; cancel what it moved past unanswered. Then tell the
        checkpointer until when the state it waits in may be needed (`Delivery.keep_state`)."""
        recorded = [self.record(question) for question in run.questions]
        waiting = tuple(q.question_id for q in run.questions)
        for record in self._known_records(thread_id):
            if record.question_id in waiting:
                continue
            if record.status is QuestionStatus.OPEN:
                self.cancel(record)
            elif record.status is QuestionStatus.CANCELLED and record.answered_by == MOVED_ON:
                # Open when the lease was last released, and cancelled since by a delivery that never released it:
                # one that died, maybe before it told anyone. Tell again (consumers drop repeats by dedupe_key).
                self.announce(record.envelope, Transition.CANCELLED, record=record)
        held = current_delivery(thread_id)
        if held is not None:
            held.open_questions = waiting  # the lease's release records them for the next delivery
            if held.keep_state is not None:  # before the release: a failure to keep it retries the message
                held.keep_state(needed_until(recorded))
        for watch in self.watchers:
            watch(thread_id, run)
        return waiting

    def open_records(self, thread_id: str) -> list[QuestionRecord]:
        """The thread's open questions: none on a new thread; by the ids its lease carries (one read each, however
        long its history), else by a query of every question it ever had (a thread from before the ids were
        recorded)."""
        return [row for row in self._known_records(thread_id) if row.status is QuestionStatus.OPEN]

    def _known_records(self, thread_id: str) -> list[QuestionRecord]:
        """The rows of the questions open when the thread's lease was last released, whatever their status now;
        without ids on the lease, the thread's open questions."""
        held = current_delivery(thread_id)
        if held is not None and held.new_thread:
            return []
        if held is None or held.lease.open_questions is None:
            return self.ledger.questions(thread_id, status=QuestionStatus.OPEN)
        known = (q for q in held.lease.open_questions if q not in held.decided)
        rows = (self.ledger.get(thread_id, question_id) for question_id in known)
        return [row for row in rows if row is not None]

    def record(self, question: Question) -> QuestionRecord:
        """Record `question` (once: a republish finds its row) and announce it when it is new; its row as it is."""
        now = self.clock()
        envelope = WaitEnvelope.create(question, reply_to=self.reply_to, now=now)
        # Put announced where the ledger can mark it back (no write when the announcement succeeds, the common case);
        # a crash before the announcement leaves the message on the queue, and its redelivery announces it.
        put_announced = marks_unannounced(self.ledger)
        options: dict[str, Any] = {"unannounced": False} if put_announced else {}
        with tracing.ask_span(question.thread_id, question.question_id) as asked:
            if asked.context:  # what the answer's spans link to; only when traced, so any Ledger still takes the call
                options["trace"] = asked.context
            opened = self.ledger.open(envelope, now=now, **options)
            asked.set("agent_wait.republished", not opened.created)  # a republish keeps the first ask's context
        granted = self._decided_by_a_grant(self.grants, opened.record, created=opened.created) if self.grants else None
        if granted is not None:
            return granted  # nobody is asked: the router resumes the agent with it (`Delivery.granted`)
        if self.schedules is not None and opened.record.status is QuestionStatus.OPEN:
            self.schedules.arrange(opened.record)  # a redelivered record puts the same names again, never a second
        if opened.created:
            self.metrics.count(Metric.ASKED)
            self.log.debug(
                "question asked", extra={"thread_id": question.thread_id, "question_id": question.question_id}
            )
        if opened.created or (opened.record.status is QuestionStatus.OPEN and not opened.record.announced):
            # A decided question that never announced owes its wait.created with the rest (`announce(record=...)`).
            self.announce_created(opened.record, owed=put_announced)
        elif put_announced and self._put_by_a_delivery_that_died(opened.record):
            self.announce_created(opened.record, owed=True)
        return opened.record

    def _decided_by_a_grant(self, grants: GrantDesk, record: QuestionRecord, *, created: bool) -> QuestionRecord | None:
        """`record` as a standing grant decided it (just put, or put by an attempt that died before the agent got the
        grant's decision), kept on the delivery for the router to resume; None when no grant decides it."""
        decided: QuestionRecord | None = None
        if created and record.status is QuestionStatus.OPEN:
            decided = grants.decide_as_asked(record)
            if decided is not None:
                self.metrics.count(Metric.ASKED)
        elif record.via == GRANT_VIA and awaits_resume(record):
            decided = record
        held = current_delivery(record.thread_id)
        if decided is None or held is None:
            return None
        if all(kept.question_id != decided.question_id for kept in held.granted):
            held.granted.append(decided)
        return decided

    def announce_created(self, record: QuestionRecord, *, owed: bool = False) -> PublishReport:
        """Announce `wait.created`, and record on the row what became of it (`agent_wait.ledger.due`): a row put
        announced is marked unannounced when its announcement fails and `owed` (it is the announcement, not a
        republish); one put unannounced is marked announced, or made due at once for the sweep."""
        return announce_created(
            self.ledger,
            record,
            lambda: self.created.publish(record.envelope, self.announcers),
            ok=lambda report: report.ok,
            owed=owed,
            now=self.clock(),
        )

    @staticmethod
    def _put_by_a_delivery_that_died(record: QuestionRecord) -> bool:
        """Whether `record`, open and put announced, may never have been announced: it is not among the questions
        open when the thread's lease was last released, so the delivery that put it died before its release (and
        maybe before the announcement). Announced again then: consumers drop repeats by `dedupe_key`."""
        held = current_delivery(record.thread_id)
        known = held.lease.open_questions if held is not None else None
        return record.status is QuestionStatus.OPEN and (known is None or record.question_id not in known)

    def cancel(self, record: QuestionRecord) -> None:
        decision = Decision(QuestionStatus.CANCELLED, None, internal_id("cancelled", record.question_id), MOVED_ON)
        now = self.clock()
        decided = self.ledger.decide(record.thread_id, record.question_id, decision, now=now)
        if decided.won:
            self.metrics.count(Metric.CANCELLED)
            waited = seconds_between(parse_rfc3339(record.asked_at), now)
            time_to_decision(self.metrics, DecisionOutcome.CANCELLED, waited, record.envelope.tags, self.metric_tags)
            self.announce(record.envelope, Transition.CANCELLED, record=decided.record)

    def announce(
        self,
        envelope: WaitEnvelope,
        transition: Transition,
        *,
        progress: Mapping[str, Any] | None = None,
        record: QuestionRecord | None = None,
    ) -> PublishReport:
        """Publish one lifecycle step of the question; what cannot go out now is owed on its row for the sweep.

        In order: a step of a question that already owes one (`record`'s row owes its `wait.created` or anything by
        name, or this delivery owed one of it) is owed after it, not published, so no consumer sees a question's
        decision before its `wait.created` nor an open step after its decision (docs/guarantees.md "Envelopes owed
        during an outage"). `record` is the question's row as the caller last wrote or read it (no read here).
        """
        if transition is Transition.CREATED:
            return self.created.publish(envelope, self.announcers)
        if self.schedules is not None and transition in _DECIDED:
            self.schedules.clear(envelope)
        step = envelope.for_transition(transition, progress=progress)
        name = notice_name(transition, progress)
        if self._waits_its_turn(envelope, record):
            earlier = [CREATED] if record is not None and not record.announced else []
            self._owe(envelope, [*earlier, name])
            return PublishReport(step, ())
        report = publish(step, self.announcers)
        for failure in report.failed:
            self.metrics.count(Metric.ANNOUNCE_FAILED, reason=failure.announcer)
        if report.failed:
            self._owe(envelope, [name])
        return report

    def _waits_its_turn(self, envelope: WaitEnvelope, record: QuestionRecord | None) -> bool:
        if not isinstance(self.ledger, FollowUpLedger):
            return False  # nothing is owed on a ledger without follow-ups: publish what can be published
        return (record is not None and owes_earlier(record)) or envelope.question_id in self._owed_now(envelope)

    def _owe(self, envelope: WaitEnvelope, names: Sequence[str]) -> None:
        """Owe `names` on the row, in one write (the sweep tells them, in order, until they go out); owing
        `wait.created` by name takes its unannounced mark off. Later steps in this delivery wait behind them."""
        if not isinstance(self.ledger, FollowUpLedger):
            return
        self.ledger.owe_notices(envelope.thread_id, envelope.question_id, names, now=self.clock())
        self._owed_now(envelope).add(envelope.question_id)

    @staticmethod
    def _owed_now(envelope: WaitEnvelope) -> set[str]:
        """The question ids this delivery owed an envelope of (remembered while it holds the lease); outside a
        delivery, none is remembered."""
        held = current_delivery(envelope.thread_id)
        return held.memo.setdefault(_OWED_MEMO, set()) if held is not None else set()

    def republish_open(self, thread_id: str) -> Sequence[PublishReport]:
        return [self.announce_created(record) for record in self.open_records(thread_id)]
