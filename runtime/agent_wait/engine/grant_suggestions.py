"""Suggest, never assume: when people keep approving the same call, the inbox suggests a standing grant for it, and a
dry run shows which past questions a proposed grant would have decided, before anyone makes it.

- `identical_approvals(record, rows, now=)`: the past approvals of exactly `record`'s call — the same function, the
  same arguments, the same tags — by a person (never by a grant, never the deadline's default), without edits,
  decided within `WINDOW` before `now`.
- `suggestion_for(record, rows, now=)`: a `Suggestion` when `record` is an open question a grant may cover and there
  are at least `SUGGEST_AFTER` such approvals; None otherwise. Nothing is granted: a person still fills in the form.
- `dry_run(terms, record, rows, now=)`: which past decided questions of the function, within `WINDOW`, the grant
  `terms` (`agent_wait.engine.granting.grant_for`, the one check every answer goes through) covers, by
  `GrantTerms.covers`, the one rule the router uses at ask time; and which it does not.

These are pure functions over ledger rows. `read_decided(ledger, record)` reads the rows: decided questions through
the status index only (`Ledger.page`, status by status, filtered by one of the question's tags when it has any), never
a scan, and never more than `MAX_PAGES` pages of `PAGE` rows (`MAX_ROWS`, 1,000 rows); past that the result says it
is capped. Pages come oldest deadline first, so a capped read may miss the newest rows. Standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from agent_wait.common.times import format_rfc3339, parse_rfc3339
from agent_wait.contract.bound_call import APPROVE, wait_call
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.grants import GRANT_VIA
from agent_wait.ledger import Ledger, QuestionRecord
from agent_wait.ledger.outcome import QuestionOutcome, question_outcome
from agent_wait.policy.grants import Call, GrantTerms

__all__ = (
    "MAX_PAGES",
    "MAX_ROWS",
    "PAGE",
    "SUGGEST_AFTER",
    "WINDOW",
    "DecidedRows",
    "DryRun",
    "Suggestion",
    "dry_run",
    "identical_approvals",
    "read_decided",
    "row_summary",
    "suggestion_for",
    "window_start",
)

SUGGEST_AFTER = 3
"""How many identical approvals within `WINDOW` make the inbox suggest a grant."""
WINDOW = timedelta(days=7)
"""How far back approvals count, and how far back the dry run looks."""
PAGE = 100
"""Rows per ledger page."""
MAX_PAGES = 10
"""The most ledger pages one read takes (the suggestion and the dry run each read once)."""
MAX_ROWS = MAX_PAGES * PAGE
"""The most decided question rows one read takes from the ledger: 1,000."""
DECIDED_STATUSES = (
    QuestionStatus.RESUMED,
    QuestionStatus.ANSWERED,
    QuestionStatus.EXPIRED,
    QuestionStatus.CANCELLED,
    QuestionStatus.FAILED,
)
"""Where decided questions are, most first: once the agent has a decision, its row is `resumed`."""


@dataclass(frozen=True, slots=True)
class DecidedRows:
    """What `read_decided` read: the rows, and whether `MAX_ROWS` left some unread."""

    records: list[QuestionRecord]
    capped: bool


@dataclass(frozen=True, slots=True)
class Suggestion:
    """Why the inbox suggests a grant on a question: the approvals of exactly its call, newest first."""

    function: str
    approvals: list[QuestionRecord]


@dataclass(frozen=True, slots=True)
class DryRun:
    """What a proposed grant would have done over the past `WINDOW`: the decided questions of its function it covers
    (it would have decided them, approving, with nobody asked) and those it does not, newest first."""

    covered: list[QuestionRecord]
    not_covered: list[QuestionRecord]


def read_decided(
    ledger: Ledger, record: QuestionRecord, *, max_pages: int = MAX_PAGES, page_size: int = PAGE
) -> DecidedRows:
    """Decided question rows, status by status (`DECIDED_STATUSES`), at most `max_pages` pages of at most `page_size`
    rows each (so at most `MAX_ROWS` rows read), filtered by one of `record`'s tags when it has any (a grant covers
    only questions with the same tags). `capped` when the pages ran out before the rows did."""
    tags = record.envelope.tags or {}
    tag = min(tags.items()) if tags else None
    found: list[QuestionRecord] = []
    pages = 0
    for status in DECIDED_STATUSES:
        cursor: str | None = None
        while True:
            if pages == max_pages:
                return DecidedRows(found, capped=True)
            page = ledger.page(status, limit=page_size, cursor=cursor, tag=tag)
            pages += 1
            found += page.records
            cursor = page.cursor
            if cursor is None:
                break
    return DecidedRows(found, capped=False)


def identical_approvals(
    record: QuestionRecord, rows: Iterable[QuestionRecord], *, now: datetime
) -> list[QuestionRecord]:
    """The rows that approved exactly `record`'s call (see the module's docstring), newest first."""
    call = _call_of(record)
    if call is None:
        return []
    same = [
        row
        for row in _in_window(rows, now)
        if row.question_id != record.question_id
        and _by_a_person(row)
        and _approved_as_asked(row)
        and _call_of(row) == call
        and dict(row.envelope.tags or {}) == dict(record.envelope.tags or {})
    ]
    return _newest_first(same)


def suggestion_for(record: QuestionRecord, rows: Iterable[QuestionRecord], *, now: datetime) -> Suggestion | None:
    """A grant to suggest on `record`, or None: it must be open, its policy must allow grants on a `@wait` call, and
    at least `SUGGEST_AFTER` identical approvals must be within `WINDOW`."""
    call = wait_call(record.envelope.question, record.envelope.source)
    rules = record.envelope.rules if isinstance(record.envelope.rules, Mapping) else {}
    if record.status is not QuestionStatus.OPEN or call is None or rules.get("grants") is None:
        return None
    approvals = identical_approvals(record, rows, now=now)
    if len(approvals) < SUGGEST_AFTER:
        return None
    return Suggestion(function=call[0], approvals=approvals)


def dry_run(terms: GrantTerms, record: QuestionRecord, rows: Iterable[QuestionRecord], *, now: datetime) -> DryRun:
    """Which decided questions of `terms.function` within `WINDOW` (but `record` itself) the grant covers.

    Coverage is `GrantTerms.covers` on each question's call, tags and thread, as the router decides at ask time; a
    grant's time to live and uses are not replayed (it says how far the pins reach, not when it would run out).
    """
    covered: list[QuestionRecord] = []
    not_covered: list[QuestionRecord] = []
    for row in _newest_first(_in_window(rows, now)):
        call: Call | None = wait_call(row.envelope.question, row.envelope.source)
        if row.question_id == record.question_id or call is None or call[0] != terms.function:
            continue
        if terms.covers(call, tags=row.envelope.tags or {}, thread_id=row.thread_id):
            covered.append(row)
        else:
            not_covered.append(row)
    return DryRun(covered=covered, not_covered=not_covered)


def window_start(now: datetime) -> str:
    """The RFC 3339 time `WINDOW` before `now`: where the suggestion and the dry run start looking."""
    return format_rfc3339(now - WINDOW)


def _call_of(row: QuestionRecord) -> tuple[str, dict[str, Any]] | None:
    """The row's `@wait` call as plain values (a stored row's arguments may be a read-only mapping)."""
    call = wait_call(row.envelope.question, row.envelope.source)
    return None if call is None else (call[0], dict(call[1]))


def _in_window(rows: Iterable[QuestionRecord], now: datetime) -> list[QuestionRecord]:
    since = now - WINDOW
    return [row for row in rows if row.decided_at is not None and since <= parse_rfc3339(row.decided_at) <= now]


def _by_a_person(row: QuestionRecord) -> bool:
    return question_outcome(row) is QuestionOutcome.ANSWERED and row.via != GRANT_VIA


def _approved_as_asked(row: QuestionRecord) -> bool:
    answer = row.answer
    return isinstance(answer, Mapping) and answer.get("action") == APPROVE and not answer.get("args")


def _newest_first(rows: Iterable[QuestionRecord]) -> list[QuestionRecord]:
    return sorted(rows, key=lambda row: (row.decided_at or "", row.question_id), reverse=True)


def row_summary(row: QuestionRecord) -> dict[str, Any]:
    """One past question as the suggestion and the dry run show it: its call, how it ended, who decided, when."""
    call = wait_call(row.envelope.question, row.envelope.source)
    answer = row.answer if isinstance(row.answer, Mapping) else {}
    outcome = question_outcome(row)
    return {
        "question_id": row.question_id,
        "thread_id": row.thread_id,
        "args": dict(call[1]) if call is not None else None,
        "outcome": outcome.value if outcome is not None else None,
        "action": answer.get("action"),
        "answered_by": row.answered_by,
        "via": row.via,
        "decided_at": row.decided_at,
    }
