"""Rules of extending a deadline (`FollowUpLedger.extend`, part of the `follow-ups` capability)."""

from __future__ import annotations

from datetime import timedelta

from agent_wait.common.times import format_rfc3339
from agent_wait.contract.schema import QuestionStatus
from agent_wait.ledger import AdvanceResult
from agent_wait.policy.extension import Extended
from agent_wait.testing.ledger_contract._support import T0, LedgerFactory, make_decision, row_of, sample_envelope


def extend_moves_only_an_open_unchanged_deadline(make: LedgerFactory) -> None:
    """`extend` moves an open question's deadline in one conditional write: `expires_at`, the kept extension, the
    progress version and the due time together. It refuses (returning the row as it is) a question changed since it
    was read (another version, another deadline), a decided one, and reports an unknown one with no row."""
    ledger = make()
    envelope = sample_envelope(reminders=("PT10M",), asked_at=T0)
    thread, question = envelope.thread_id, envelope.question_id
    ledger.open(envelope, now=T0)
    deadline = str(envelope.expires_at)
    later = format_rfc3339(T0 + timedelta(hours=3))
    moved = Extended(
        at=format_rfc3339(T0), by="ops@example.com", previous=deadline, until=later, reminders=0, escalations=0
    )
    stale = ledger.extend(thread, question, moved, expected_version=5, due_at=later)
    assert not stale.won, f"another version must lose, got {stale!r}"
    assert stale.record is not None, "a loser gets the row as it is"
    assert row_of(ledger, thread, question).expires_at == deadline, "a losing extend changes nothing"

    won = ledger.extend(thread, question, moved, expected_version=0, due_at=format_rfc3339(T0 + timedelta(hours=2)))
    assert won.won, f"an open question at its version is extended, got {won!r}"
    row = row_of(ledger, thread, question)
    assert row.expires_at == later, f"the deadline moved to {later}, got {row.expires_at!r}"
    assert row.extensions == (moved,), f"the extension is kept on the row, got {row.extensions!r}"
    assert row.progress.version == 1, f"the version moved one on, got {row.progress.version}"
    assert row.due_at == format_rfc3339(T0 + timedelta(hours=2)), f"due when the caller said, got {row.due_at!r}"
    assert row.reminder_times() == (T0 + timedelta(hours=2, minutes=10),), "the unsent reminder moved with it"

    again = ledger.extend(thread, question, moved, expected_version=1, due_at=later)
    assert not again.won, "an extension from a deadline the row no longer has loses (a second, racing extend)"
    assert row_of(ledger, thread, question).extensions == (moved,), "and is not kept twice"

    ledger.decide(thread, question, make_decision(QuestionStatus.ANSWERED, {"action": "approve"}), now=T0)
    further = Extended(
        at=format_rfc3339(T0),
        by=None,
        previous=later,
        until=format_rfc3339(T0 + timedelta(hours=9)),
        reminders=0,
        escalations=0,
    )
    decided = ledger.extend(thread, question, further, expected_version=1, due_at=None)
    assert not decided.won, "a decided question is never extended"
    assert row_of(ledger, thread, question).expires_at == later, "its deadline stays as it was decided"
    unknown = sample_envelope(asked_at=T0)
    missing = ledger.extend(unknown.thread_id, unknown.question_id, moved, expected_version=0, due_at=None)
    assert missing == AdvanceResult(False, None), f"an unknown question has no row, got {missing!r}"
