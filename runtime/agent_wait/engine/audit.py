"""The audit trail: every question asked or decided in a time window, with who decided it, through which door,
with which arguments, every vote, and what the agent did after; as JSON lines or CSV. Beside the questions, the
standing grants in force in the window, each with the questions it decided (`audit_grants`); a question a grant
decided names it (`grant_id`).

Read from the ledger's status index only (`Ledger.page`, one status at a time, a page at a time), never a scan:
a window is filtered from what the index returns, so a read costs in proportion to the rows the table keeps (see
`AGENT_WAIT_DECIDED_RETENTION`), and each call reads at most `limit` rows and hands back a cursor for the rest.
The same rows feed `agent-wait audit export` and the answer API's `GET /audit`. The grants are one query of the
grants' partition (`GrantLedger.grants`), never a read per question: a row's grant is read from its answer id.
"""

from __future__ import annotations

import base64
import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agent_wait.common.times import format_rfc3339
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.grant_book import grant_view
from agent_wait.engine.grants import grant_id_of
from agent_wait.errors import ArgumentError, LedgerCursorError
from agent_wait.ledger import Grant, GrantLedger, Ledger, QuestionRecord
from agent_wait.ledger.outcome import question_outcome
from agent_wait.people.keys import person_key

__all__ = (
    "AUDIT_COLUMNS",
    "AUDIT_FORMATS",
    "GRANT_COLUMNS",
    "MAX_AUDIT_GRANTS",
    "MAX_AUDIT_PAGE",
    "AuditGrants",
    "AuditPage",
    "AuditWindow",
    "audit_grants",
    "audit_page",
    "audit_row",
    "audit_rows",
    "audit_window",
    "parse_moment",
    "write_audit",
)

AUDIT_FORMATS = ("jsonl", "csv")
"""The file formats an export writes."""
MAX_AUDIT_PAGE = 500
"""The most rows one `audit_page` call reads from the ledger."""
STATUS_ORDER = tuple(QuestionStatus)
"""The order the statuses are read in; every question row is under exactly one of them."""
AUDIT_COLUMNS = (
    "question_id",
    "thread_id",
    "asked_at",
    "status",
    "question",
    "allowed_actions",
    "tags",
    "expires_at",
    "outcome",
    "decided_at",
    "answered_by",
    "person",
    "via",
    "sender",
    "claimed_by",
    "answer_id",
    "action",
    "args",
    "approved_args",
    "answer",
    "votes",
    "resumed_at",
    "failed",
    "failed_at",
    "retry_id",
    "reason",
    "grant_id",
    "passkey",
)
"""Every field of an audit row, in the order a CSV file has them (JSON lines hold the same keys)."""
MAX_AUDIT_GRANTS = 1000
"""The most grants one `audit_grants` call reads (one query, newest first): grants live 30 days at most."""
GRANT_COLUMNS = (
    "grant_id",
    "function",
    "pins",
    "exact",
    "parameters",
    "tags",
    "scope",
    "thread_id",
    "question_id",
    "granted_by",
    "via",
    "granted_at",
    "expires_at",
    "uses",
    "uses_left",
    "decided",
    "revoked_at",
    "revoked_by",
    "live",
)
"""Every field of a grant in the export (`grant_view`'s), in the order a CSV file has them."""
_JSON_COLUMNS = frozenset(
    {
        "question",
        "allowed_actions",
        "tags",
        "args",
        "approved_args",
        "answer",
        "votes",
        "pins",
        "parameters",
        "decided",
        "exact",
        "live",
        "passkey",
    }
)
"""The fields a CSV cell holds as JSON text."""
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")
"""The first characters that make a spreadsheet read a CSV cell as a formula (OWASP, "CSV Injection"): `=`, `+`, `-`,
`@`, tab, carriage return and line feed. A CSV cell that starts with one gets a single quote in front."""


@dataclass(frozen=True, slots=True)
class AuditWindow:
    """From `since` (included) to `until` (excluded), both RFC 3339 UTC."""

    since: str
    until: str

    def holds(self, moment: str | None) -> bool:
        return moment is not None and self.since <= moment < self.until

    def covers(self, record: QuestionRecord) -> bool:
        """A question is in the window when it was asked or decided in it."""
        return self.holds(record.asked_at) or self.holds(record.decided_at)


def parse_moment(text: str, name: str) -> datetime:
    """`text` as a UTC time: RFC 3339 (`2026-03-01T09:00:00Z`, an offset is converted) or a date (`2026-03-01`,
    its midnight UTC).

    Raises:
        ArgumentError: not one of those forms (the message names `name` and gives an example).
    """
    value = text.strip()
    try:
        moment = datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        raise ArgumentError(
            f"{name} must be an RFC 3339 time such as 2026-03-01T09:00:00Z, or a date such as 2026-03-01; got {text!r}",
            argument=name,
        ) from None
    if moment.tzinfo is None:
        if len(value) > 10:  # a time without a zone is ambiguous; a bare date means its midnight UTC
            raise ArgumentError(
                f"{name} must say its time zone (end it with Z for UTC, e.g. 2026-03-01T09:00:00Z); got {text!r}",
                argument=name,
            )
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def audit_window(since: str | None, until: str | None, *, now: datetime) -> AuditWindow:
    """The window `since` to `until` (default: now), checked.

    Raises:
        ArgumentError: `since` missing, either not a time or a date, or `since` not before `until`.
    """
    if not since:
        raise ArgumentError("since is required: the start of the window, e.g. 2026-03-01", argument="since")
    start = parse_moment(since, "since")
    end = parse_moment(until, "until") if until else now.astimezone(UTC)
    if start >= end:
        raise ArgumentError(
            f"since ({format_rfc3339(start)}) must be before until ({format_rfc3339(end)})", argument="since"
        )
    return AuditWindow(format_rfc3339(start), format_rfc3339(end, round_up=True))


def audit_row(record: QuestionRecord) -> dict[str, Any]:
    """One question as the audit trail holds it: who asked (its thread), what, every vote, the decision with who,
    through which door (`via`), when and with which arguments, and what the agent did after (`resumed_at`,
    `failed`). Votes keep their notes and edits in full: the trail is for the people who must prove a decision."""
    envelope = record.envelope
    answer = record.answer
    action = answer.get("action") if isinstance(answer, Mapping) else None
    args = answer.get("args") if isinstance(answer, Mapping) else None
    return {
        "question_id": record.question_id,
        "thread_id": record.thread_id,
        "asked_at": record.asked_at,
        "status": record.status.value,
        "question": envelope.question,
        "allowed_actions": list(envelope.allowed_actions),
        "tags": dict(envelope.tags),
        "expires_at": envelope.expires_at,
        "outcome": outcome.value if (outcome := question_outcome(record)) else None,
        "decided_at": record.decided_at,
        "answered_by": record.answered_by,
        # The one person key (agent_wait.people): rows recorded before it (`email:Ana@...`) compare equal to new ones.
        "person": person_key(record.answered_by),
        "via": record.via,
        "sender": record.sender,
        "claimed_by": record.claimed_by,
        "answer_id": record.answer_id,
        "action": action if isinstance(action, str) else None,
        "args": args,
        # The arguments an approval of a `@wait` call lets its body run with (as asked, or as edited).
        "approved_args": record.approved_args,
        "answer": answer,
        "votes": [
            {
                "by": vote.by,
                "person": person_key(vote.by) or person_key(vote.voter),
                "voter": vote.voter,
                "action": vote.action,
                "answer": vote.answer,
                "via": vote.via,
                "sender": vote.sender,
                "subject": vote.subject,
                "at": vote.at,
                "answer_id": vote.answer_id,
            }
            for vote in record.progress.votes
        ],
        "resumed_at": record.resumed_at,
        "failed": record.failure.error if record.failure else None,
        "failed_at": record.failure.failed_at if record.failure else None,
        "retry_id": record.retry_id,
        "reason": record.reason,  # why a person cancelled it
        # The standing grant that decided it (`via` grant), read from its answer id: no read of the grant.
        "grant_id": grant_id_of(record),
        # A decision confirmed with a passkey: the assertion, the public key and the digest's inputs, so
        # `scripts/verify_decision.py` proves it offline (docs/proving.md).
        "passkey": dict(record.passkey) if record.passkey else None,
    }


@dataclass(frozen=True, slots=True)
class AuditPage:
    """Audit rows from one bounded read, and where the next read goes on."""

    rows: list[dict[str, Any]]
    cursor: str | None
    """Pass it back for the next page; None once every status has been read. Opaque."""
    read: int
    """How many question rows the ledger returned for this page, before the window filtered them."""


def audit_page(
    ledger: Ledger, window: AuditWindow, *, limit: int = MAX_AUDIT_PAGE, cursor: str | None = None
) -> AuditPage:
    """The questions in `window`, reading at most `limit` ledger rows, status by status through the status index.

    Raises:
        ArgumentError: `limit` is not from 1 to `MAX_AUDIT_PAGE`.
        LedgerCursorError: `cursor` is not one this function made (a `ValueError`).
    """
    if not 1 <= limit <= MAX_AUDIT_PAGE:
        raise ArgumentError(f"limit must be from 1 to {MAX_AUDIT_PAGE}; got {limit}", argument="limit")
    position, inner = _decode(cursor) if cursor else (0, None)
    rows: list[dict[str, Any]] = []
    budget, returned = limit, 0
    # At most one ledger page per status per call: a page that stops short of its status's end ends the call too.
    while position < len(STATUS_ORDER) and budget > 0:
        page = ledger.page(STATUS_ORDER[position], limit=budget, cursor=inner)
        returned += len(page.records)
        rows += [audit_row(record) for record in page.records if window.covers(record)]
        inner = page.cursor
        if inner is None:
            budget -= len(page.records)
            position += 1
        else:
            budget = 0
    done = position >= len(STATUS_ORDER)
    return AuditPage(rows, None if done else _encode(position, inner), returned)


@dataclass(frozen=True, slots=True)
class AuditGrants:
    """The standing grants in force in a window, from one bounded read."""

    grants: list[dict[str, Any]]
    """`grant_view` of each, newest first: what it covers, who made it, when, and `decided`, the questions it
    decided, in order."""
    capped: bool
    """True when the read stopped at its limit: older grants may be left out."""


def audit_grants(
    ledger: Ledger | GrantLedger, window: AuditWindow, *, now: datetime, limit: int = MAX_AUDIT_GRANTS
) -> AuditGrants:
    """The grants in force at any moment of `window`: made before it ends, and neither expired nor revoked before it
    starts. That holds every grant that decided a question in the window (a grant decides only while it is in force)
    and every grant made in it. One query (`GrantLedger.grants`); a ledger that keeps no grants has none.

    Raises:
        ArgumentError: `limit` is not from 1 to `MAX_AUDIT_GRANTS`.
    """
    if not 1 <= limit <= MAX_AUDIT_GRANTS:
        raise ArgumentError(f"limit must be from 1 to {MAX_AUDIT_GRANTS}; got {limit}", argument="limit")
    if not isinstance(ledger, GrantLedger):
        return AuditGrants([], capped=False)
    kept = ledger.grants(now=now, live_only=False, limit=limit)
    in_force = [grant for grant in kept if grant.granted_at < window.until and _in_force_until(grant) > window.since]
    return AuditGrants([grant_view(grant, now=now) for grant in in_force], capped=len(kept) >= limit)


def _in_force_until(grant: Grant) -> str:
    """When `grant` stopped deciding, at the latest: its expiry, or its revoke when that came first."""
    return min(grant.expires_at, grant.revoked_at or grant.expires_at)


def audit_rows(ledger: Ledger, window: AuditWindow, *, page_size: int = MAX_AUDIT_PAGE) -> Iterator[dict[str, Any]]:
    """Every question in `window`, a bounded page at a time (`audit_page`), in the order the index gives them."""
    cursor: str | None = None
    while True:
        page = audit_page(ledger, window, limit=page_size, cursor=cursor)
        yield from page.rows
        cursor = page.cursor
        if cursor is None:
            return


def write_audit(
    rows: Iterable[Mapping[str, Any]],
    out: io.TextIOBase | Any,
    *,
    format: str,
    columns: tuple[str, ...] = AUDIT_COLUMNS,
) -> int:
    """Write `rows` to `out` as JSON lines (`jsonl`, every value exact) or CSV (`csv`, a header row of `columns`
    first: `AUDIT_COLUMNS` for questions, `GRANT_COLUMNS` for grants; structured cells as JSON text; every cell
    quoted, and one that starts with `=`, `+`, `-`, `@`, a tab, a carriage return or a line feed prefixed with a
    single quote, so that a spreadsheet shows it as text); returns how many rows were written.

    Raises:
        ArgumentError: `format` is not one of `AUDIT_FORMATS`.
    """
    if format not in AUDIT_FORMATS:
        raise ArgumentError(f"format must be one of {list(AUDIT_FORMATS)}; got {format!r}", argument="format")
    count = 0
    if format == "jsonl":
        for row in rows:
            out.write(json.dumps(row, sort_keys=True, separators=(",", ":")) + "\n")
            count += 1
        return count
    # Thread ids, reasons, names and claims come from agents and senders: as OWASP's "CSV Injection" asks, every
    # cell is wrapped in double quotes (its own double quotes doubled) and none may start a formula.
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writeheader()
    for row in rows:
        writer.writerow({key: _as_text(_cell(key, row.get(key))) for key in columns})
        count += 1
    return count


def _as_text(text: str) -> str:
    """`text` as a CSV cell a spreadsheet shows as text: a single quote in front when it starts with one of
    `_FORMULA_STARTS`, else unchanged."""
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _cell(key: str, value: Any) -> str:
    if value is None:
        return ""
    if key in _JSON_COLUMNS:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return str(value)


def _encode(position: int, inner: str | None) -> str:
    text = json.dumps({"s": position, "c": inner}, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode(cursor: str) -> tuple[int, str | None]:
    try:
        state = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        position, inner = state["s"], state["c"]
    except (ValueError, TypeError, KeyError, UnicodeDecodeError):
        raise LedgerCursorError("the cursor is not one this export made; start without one") from None
    if not (
        isinstance(position, int) and 0 <= position < len(STATUS_ORDER) and (inner is None or isinstance(inner, str))
    ):
        raise LedgerCursorError("the cursor is not one this export made; start without one")
    return position, inner
