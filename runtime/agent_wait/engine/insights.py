"""Insights: for the last N days, how many questions were asked, answered, expired, cancelled and withdrawn (the one
vocabulary of outcomes, `agent_wait.ledger.outcome`); how long people
took to answer (p50, p90), overall and by a tag's value; the questions open longest; and who answers most.

Read from what the ledger holds, through its status index only (`Ledger.page`, a page at a time, status by
status), never a scan, and never more than `per_status` rows of one status: past that the result says it is
capped (`Insights.capped`), and the figures are of the rows read. A resumed question is read under `resumed`
(its outcome kept on the row), so each question is counted once.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from agent_wait.common.times import format_rfc3339, parse_rfc3339
from agent_wait.contract.schema import QuestionStatus
from agent_wait.errors import ArgumentError
from agent_wait.ledger import Ledger, QuestionRecord
from agent_wait.ledger.outcome import QuestionOutcome, question_outcome

__all__ = (
    "INSIGHT_DAYS",
    "MAX_PER_STATUS",
    "GroupTimes",
    "Insights",
    "percentile",
    "read_insights",
)

INSIGHT_DAYS = (7, 30)
"""The windows the insights offer, in days."""
MAX_PER_STATUS = 1000
"""The most rows of one status one insights read takes from the ledger (default and ceiling)."""
PAGE = 250
"""Rows per ledger page: a read of 1,000 rows of a status is four pages (each page queries every shard)."""
TOP = 8
"""How many groups and answerers are listed (the rest are left out, never summed into 'other')."""
SLOWEST = 5
"""How many of the longest-open questions are listed."""
OUTCOMES = tuple(QuestionOutcome)
"""What decided a question, as every view says it: answered, expired, cancelled (by a person), withdrawn."""


def percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile (`share` from 0 to 1) of `values`; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True, slots=True)
class GroupTimes:
    """Time to answer for the questions whose grouping tag has one value."""

    group: str
    count: int
    p50_seconds: float | None
    p90_seconds: float | None


@dataclass
class Insights:
    """What `read_insights` found (see the module's docstring)."""

    days: int
    since: str
    until: str
    asked: int = 0
    outcomes: dict[str, int] = field(default_factory=lambda: {outcome.value: 0 for outcome in OUTCOMES})
    """Questions decided in the window, by outcome."""
    open_now: int = 0
    failed_now: int = 0
    daily: list[dict[str, object]] = field(default_factory=list)
    """One entry per day of the window, oldest first: `day`, `asked` and each outcome's count."""
    answer_seconds: list[float] = field(default_factory=list)
    """Asked to decided, in seconds, for each question answered (by a person, not the deadline) in the window."""
    group_by: str | None = None
    tag_keys: list[str] = field(default_factory=list)
    """Tag keys seen on the questions read, most used first: what the times can be grouped by."""
    groups: list[GroupTimes] = field(default_factory=list)
    slowest_open: list[QuestionRecord] = field(default_factory=list)
    answerers: list[tuple[str, int, int]] = field(default_factory=list)
    """(who, decisions, votes), most first."""
    rows_read: int = 0
    capped: list[str] = field(default_factory=list)
    """Statuses with more rows than `per_status`: the figures leave their later rows out."""
    per_status: int = MAX_PER_STATUS

    @property
    def p50_seconds(self) -> float | None:
        return percentile(self.answer_seconds, 0.5)

    @property
    def p90_seconds(self) -> float | None:
        return percentile(self.answer_seconds, 0.9)


def read_insights(
    ledger: Ledger, *, now: datetime, days: int, group_by: str | None = None, per_status: int = MAX_PER_STATUS
) -> Insights:
    """The insights of the last `days` days, today (UTC) included, up to `now` (see the module's docstring).

    Args:
        ledger: the question ledger.
        now: the end of the window (UTC).
        days: the window's length: 7 or 30.
        group_by: the tag key the time to answer is grouped by (default: the tag key most questions have).
        per_status: the most rows read of each status, from 1 to `MAX_PER_STATUS`.

    Raises:
        ArgumentError: `days` not one of `INSIGHT_DAYS`, or `per_status` out of range.
    """
    if days not in INSIGHT_DAYS:
        raise ArgumentError(f"days must be one of {list(INSIGHT_DAYS)}; got {days!r}", argument="days")
    if not 1 <= per_status <= MAX_PER_STATUS:
        raise ArgumentError(f"per_status must be from 1 to {MAX_PER_STATUS}; got {per_status}", argument="per_status")
    start = (now - timedelta(days=days)).replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    found = Insights(days=days, since=format_rfc3339(start), until=format_rfc3339(now), per_status=per_status)
    records: list[QuestionRecord] = []
    for status in QuestionStatus:
        got, capped = _read(ledger, status, per_status)
        records += got
        if capped:
            found.capped.append(status.value)
    found.rows_read = len(records)
    _count(found, records, start, now)
    return _group(found, records, group_by)


def _read(ledger: Ledger, status: QuestionStatus, cap: int) -> tuple[list[QuestionRecord], bool]:
    """Up to `cap` rows of `status`, a page at a time; True when more were left unread."""
    records: list[QuestionRecord] = []
    cursor: str | None = None
    calls = 0
    while len(records) < cap:
        page = ledger.page(status, limit=min(PAGE, cap - len(records)), cursor=cursor)
        records += page.records
        cursor = page.cursor
        calls += 1
        # A page may come back short (decided rows resumed since are filtered): never more calls than a full read.
        if cursor is None or calls >= math.ceil(cap / PAGE) * 2:
            break
    return records[:cap], cursor is not None


def _count(found: Insights, records: list[QuestionRecord], start: datetime, now: datetime) -> None:
    since, until = found.since, found.until
    day_count = (now - start).days + 1
    daily = {
        format_rfc3339(start + timedelta(days=n))[:10]: {"asked": 0, **dict.fromkeys(found.outcomes, 0)}
        for n in range(day_count)
    }
    decisions: Counter[str] = Counter()
    votes: Counter[str] = Counter()
    open_now: list[QuestionRecord] = []
    for record in records:
        if record.status is QuestionStatus.OPEN:
            open_now.append(record)
        elif record.status is QuestionStatus.FAILED:
            found.failed_now += 1
        if since <= record.asked_at <= until:
            found.asked += 1
            if record.asked_at[:10] in daily:
                daily[record.asked_at[:10]]["asked"] += 1
        for vote in record.progress.votes:
            if vote.by and since <= vote.at <= until:
                votes[vote.by] += 1
        decided, outcome = record.decided_at, question_outcome(record)
        if outcome is None or decided is None or not since <= decided <= until:
            continue
        found.outcomes[outcome.value] += 1
        if decided[:10] in daily:
            daily[decided[:10]][outcome.value] += 1
        if outcome is QuestionOutcome.ANSWERED:
            found.answer_seconds.append(_seconds(record))
            if record.answered_by:
                decisions[record.answered_by] += 1
    found.open_now = len(open_now)
    found.daily = [{"day": day, **counts} for day, counts in daily.items()]
    found.slowest_open = sorted(open_now, key=lambda r: (r.asked_at, r.question_id))[:SLOWEST]
    people = set(decisions) | set(votes)
    ranked = sorted(people, key=lambda who: (-decisions[who], -votes[who], who))[:TOP]
    found.answerers = [(who, decisions[who], votes[who]) for who in ranked]


def _seconds(record: QuestionRecord) -> float:
    asked, decided = parse_rfc3339(record.asked_at), parse_rfc3339(record.decided_at or record.asked_at)
    return max(0.0, (decided - asked).total_seconds())


def _group(found: Insights, records: list[QuestionRecord], group_by: str | None) -> Insights:
    keys: Counter[str] = Counter(key for record in records for key in record.envelope.tags)
    found.tag_keys = [key for key, _ in sorted(keys.items(), key=lambda item: (-item[1], item[0]))]
    key = group_by or (found.tag_keys[0] if found.tag_keys else None)
    found.group_by = key
    if key is None:
        return found
    times: dict[str, list[float]] = {}
    for record in records:
        decided = record.decided_at
        if record.outcome is not QuestionStatus.ANSWERED or decided is None:
            continue
        if not found.since <= decided <= found.until:
            continue
        value = record.envelope.tags.get(key)
        times.setdefault(value if value is not None else "(none)", []).append(_seconds(record))
    ranked = sorted(times.items(), key=lambda item: (-len(item[1]), item[0]))[:TOP]
    found.groups = [
        GroupTimes(group, len(values), percentile(values, 0.5), percentile(values, 0.9)) for group, values in ranked
    ]
    return found
