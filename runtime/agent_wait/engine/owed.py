"""Envelopes a question owes: their names on its row, their lifecycle order, and each as it would have gone out.

An envelope whose publishing failed, or that waits for one owed before it, is owed on the question's row by name
(`QuestionRecord.notices`, `FollowUpLedger.owe_notices`) until the sweep tells it (`Sweep`), in the order the
question lived it (docs/guarantees.md "Envelopes owed during an outage"). A name is the transition, and for a
step that repeats the count its `dedupe_key` carries, so each step is owed and told under its own key:

    created
    reminder:<n>   escalated:<n>   voted:<n>   extended
    answered | expired | cancelled
    failed
    resumed

A bare `voted` (owed before counts were kept) is the latest vote; `extended` is the latest extension.
A question that still owes its `wait.created` by its unannounced mark (`QuestionRecord.announced` false) owes it
first; `owes_earlier` says whether a new envelope must wait its turn.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from agent_wait.common.times import format_rfc3339
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.engine.extend import extended_envelope
from agent_wait.engine.votes import decision_progress, vote_progress
from agent_wait.ledger import CREATED_NOTICE, Notice, Progress, QuestionRecord

__all__ = (
    "CREATED",
    "follow_up_envelope",
    "follow_up_name",
    "in_lifecycle_order",
    "notice_name",
    "owed_envelope",
    "owes_earlier",
)

CREATED = CREATED_NOTICE
"""The name of an owed `wait.created`."""

_DECISIONS = frozenset({Transition.ANSWERED, Transition.EXPIRED, Transition.CANCELLED})
_PHASE = {Transition.FAILED: 3, Transition.RESUMED: 4} | dict.fromkeys(_DECISIONS, 2)
"""Where each closing step falls: after every step of the open question (phase 1), the decision, then its
failure, then the resume (after a retry)."""


def notice_name(transition: Transition, progress: Mapping[str, Any] | None = None) -> str:
    """The name `transition`'s envelope is owed under: a repeating step adds its count (`voted:2`)."""
    facts = progress or {}
    count = {
        Transition.REMINDER: facts.get("reminder"),
        Transition.ESCALATED: facts.get("escalation"),
        Transition.VOTED: len(facts["votes"]) if isinstance(facts.get("votes"), list) else None,
    }.get(transition)
    return f"{transition.value}:{count}" if isinstance(count, int) else transition.value


def follow_up_name(notice: Notice, progress: Progress) -> str:
    """The name a claimed reminder or escalation step is owed under: the latest of its kind in `progress`."""
    if notice is Notice.ESCALATED:
        return f"{Transition.ESCALATED.value}:{progress.escalations}"
    return f"{Transition.REMINDER.value}:{progress.reminders}"


def owes_earlier(record: QuestionRecord) -> bool:
    """Whether `record`'s row owes an envelope already (its `wait.created`, or any by name): a later one must be
    owed after it, never published before it."""
    return not record.announced or bool(record.notices)


def in_lifecycle_order(record: QuestionRecord, names: Iterable[str]) -> list[str]:
    """`names` in the order the question lived them: `wait.created`; then the open question's steps by when they
    happened (escalation steps and reminders by when they fell due, votes and extensions by when they were made);
    then the decision, its failure and the resume."""
    return sorted(dict.fromkeys(names), key=lambda name: _place(record, name))


def _place(record: QuestionRecord, name: str) -> tuple[int, str, int, float]:
    kind, _, count = name.partition(":")
    number = int(count) if count.isdigit() else math.inf
    try:
        transition = Transition(kind)
    except ValueError:
        return (9, "", 0, 0)  # not a transition: last (it is told as nothing)
    if transition is Transition.CREATED:
        return (0, "", 0, 0)
    if transition in _PHASE:
        return (_PHASE[transition], "", 0, 0)
    at = {
        Transition.ESCALATED: lambda: _nth(record.escalation_times(), number),
        Transition.REMINDER: lambda: _nth(record.reminder_times(), number),
        Transition.VOTED: lambda: _nth([v.at for v in record.progress.votes], number),
        Transition.EXTENDED: lambda: _nth([e.at for e in record.extensions], number),
    }[transition]()
    # At one time, an escalation step before a reminder (the reminder goes to the new audience), then votes.
    tie = (Transition.ESCALATED, Transition.REMINDER, Transition.VOTED, Transition.EXTENDED).index(transition)
    return (1, at, tie, number)


def _nth(times: Iterable[Any], number: float) -> str:
    """The `number`th (from 1) of `times` as RFC 3339 text; the last for a name without a count; "" if none."""
    listed = [t if isinstance(t, str) else format_rfc3339(t) for t in times]
    if not listed:
        return ""
    index = len(listed) - 1 if number == math.inf else min(int(number), len(listed)) - 1
    return listed[max(index, 0)]


def owed_envelope(record: QuestionRecord, name: str) -> WaitEnvelope | None:
    """The envelope `name` stands for, as it would have gone out when its step happened (None: nothing to tell).

    `wait.created` is not built here: it goes out through `CreatedAnnouncement`, with the signed links the first
    announcement would have carried.
    """
    kind, _, count = name.partition(":")
    try:
        transition = Transition(kind)
    except ValueError:
        return None
    number = int(count) if count.isdigit() else None
    if transition is Transition.VOTED:
        return record.envelope.for_transition(transition, progress=_votes_through(record, number))
    if transition is Transition.REMINDER:
        number = number or record.progress.reminders
        return follow_up_envelope(record, Notice.REMINDER, number, level=_level_at_reminder(record, number))
    if transition is Transition.ESCALATED:
        number = number or record.progress.escalations
        steps = len(record.followups.escalation)
        return follow_up_envelope(record, Notice.ESCALATED, number, level=number) if 1 <= number <= steps else None
    if transition is Transition.EXTENDED:
        return extended_envelope(record) if record.extensions else None
    if transition is Transition.CREATED:
        return None
    progress = decision_progress(record) if transition is Transition.ANSWERED else None
    return record.envelope.for_transition(transition, progress=progress)


def _votes_through(record: QuestionRecord, number: int | None) -> dict[str, Any]:
    """The `wait.voted` progress as it stood at the `number`th vote; the deciding one as the decision tells it."""
    votes = record.progress.votes
    if number is None or number >= len(votes) or number < 1:
        return decision_progress(record) or vote_progress(record)
    return vote_progress(record, through=votes[number - 1])


def _level_at_reminder(record: QuestionRecord, number: int) -> int:
    """How many escalation steps were in effect when the `number`th reminder fell due (at most those applied)."""
    times = record.reminder_times()
    if not 1 <= number <= len(times):
        return record.progress.escalations
    return min(record.steps_due(times[number - 1]), record.progress.escalations)


def follow_up_envelope(record: QuestionRecord, notice: Notice, number: int, *, level: int) -> WaitEnvelope:
    """A reminder or escalation step as its envelope, addressed to the audience the question had at `level`
    escalation steps: its `tags` carry each step's tags over the question's own (so an SNS filter policy or an
    EventBridge rule routes it to that audience) and `rules.answerers` says who may answer."""
    followups = record.followups
    envelope = replace(
        record.envelope,
        tags=MappingProxyType(followups.tags_at(record.envelope.tags, level)),
        rules=MappingProxyType({**record.envelope.rules, "answerers": record.answerers_for(level)}),
    )
    if notice is Notice.ESCALATED:
        step = followups.escalation[number - 1]
        progress = {"escalation": number, "of": len(followups.escalation), "after": step.after_iso}
        return envelope.for_transition(Transition.ESCALATED, progress=progress)
    progress = {"reminder": number, "of": len(followups.reminders)}
    return envelope.for_transition(Transition.REMINDER, progress=progress)
