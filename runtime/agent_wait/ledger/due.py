"""What every writer of a question row does after it is put: announce `wait.created`, and make the row due again.

The router's asking (`agent_wait.engine.questions.AskedQuestions`), a durable function's `ask`
(`agent_wait.durable.record_question`) and the sweep's repairs share these, so the rules are written once:

- `announce_created`: a row put announced (the ledger can mark it back) costs no write when the announcement goes
  out, the common case; one whose announcement fails is marked unannounced, so the sweep announces it. A row put
  unannounced (an older ledger) is marked announced once it went out, else made due at once.
- `make_due`: the row's due time written anew from its progress (`QuestionRecord.next_due`) by the compare-and-set
  every follow-up uses (`FollowUpLedger.advance`): only an open row unchanged since it was read takes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import TypeVar

from agent_wait.contract.schema import QuestionStatus
from agent_wait.ledger.base import FollowUpLedger, Ledger
from agent_wait.ledger.records import QuestionRecord

__all__ = ("announce_created", "make_due")

Report = TypeVar("Report")


def announce_created(
    ledger: Ledger,
    record: QuestionRecord,
    send: Callable[[], Report],
    *,
    ok: Callable[[Report], bool],
    owed: bool,
    now: datetime,
) -> Report:
    """Send `record`'s `wait.created` (`send()`), then record on its row what became of it.

    Args:
        ledger: the ledger the row is in.
        record: the row as put (or found) just now.
        send: publishes the envelope and returns its report.
        ok: whether a report says it went out to every announcer.
        owed: the row was put announced and this is its announcement, not a republish: a failure marks it
            unannounced. (A republish that fails loses nothing: the row says it went out already.)
        now: the time written.
    """
    report = send()
    if record.announced:
        if owed and not ok(report) and isinstance(ledger, FollowUpLedger):
            ledger.mark_unannounced(record.thread_id, record.question_id, now=now)
        return report
    if ok(report):
        ledger.mark_announced(record.thread_id, record.question_id, due_at=record.next_due(announced=True))
    elif isinstance(ledger, FollowUpLedger):
        make_due(ledger, record, now=now, attempts=3, still=lambda row: not row.announced)
    return report


def make_due(
    ledger: FollowUpLedger,
    record: QuestionRecord,
    *,
    now: datetime,
    attempts: int = 1,
    still: Callable[[QuestionRecord], bool] = lambda row: True,
) -> QuestionRecord | None:
    """Write `record`'s due time anew from its progress, if the row is open and unchanged since it was read.

    A lost race (a vote or a follow-up moved the row's version) reads the row back and tries again, `attempts` in
    all, while it is open and `still(row)` holds. Returns the row written, or None (gone, decided, no longer
    `still`, or changing under every attempt).
    """
    current: QuestionRecord | None = record
    for _ in range(attempts):
        if current is None or current.status is not QuestionStatus.OPEN or not still(current):
            return None
        progress = replace(current.progress, version=current.progress.version + 1)
        result = ledger.advance(
            current.thread_id,
            current.question_id,
            progress,
            expected_version=current.progress.version,
            due_at=current.next_due(progress),
            now=now,
        )
        if result.won:
            return result.record
        current = result.record
    return None
