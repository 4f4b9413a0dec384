"""Insights: for the last N days, how many questions were asked, answered, expired, cancelled and withdrawn (the one
vocabulary of outcomes, `agent_wait.ledger.outcome`); how long people
took to answer (p50, p90), overall and by a tag's value; the questions open longest; who answers most; and the share
of the questions decided by standing grants, grant by grant.

Read from what the ledger holds, through its status index only (`Ledger.page`, a page at a time, status by
status), never a scan, and never more than `per_status` rows of one status: past that the result says it is
capped (`Insights.capped`), and the figures are of the rows read. A resumed question is read under `resumed`
(its outcome kept on the row), so each question is counted once.

A question a grant decided (`via` `grant`) names its grant in its answer id, so the share by grant is counted from the
rows read; one query of the grants (`GrantLedger.grants`, only when a grant decided something) says what each grant
covers and who made it. Nobody answered those questions then, so their times and their granters are left out of the
time to answer and of who answers most.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from agent_wait.common.times import format_rfc3339, parse_rfc3339
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.grants import grant_id_of
from agent_wait.errors import ArgumentError
from agent_wait.ledger import Grant, GrantLedger, Ledger, QuestionRecord
from agent_wait.ledger.grants import GRANT_ID_SEPARATOR
from agent_wait.ledger.outcome import QuestionOutcome, question_outcome

__all__ = (
    "INSIGHT_DAYS",
    "MAX_GRANTS_READ",
    "MAX_PER_STATUS",
    "GrantShare",
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
MAX_GRANTS_READ = 1000
"""The most grants the one grants query reads, newest first (a grant lives 30 days at most)."""
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


@dataclass(frozen=True, slots=True)
class GrantShare:
    """The questions one standing grant decided in the window."""

    grant_id: str
    decided: int
    """How many questions it decided in the window."""
    granted_by: str | None
    """Who granted it (the decisions' `answered_by`)."""
    grant: Grant | None = None
    """The grant as kept; None when the grants query did not return it (removed after its retention, or past the
    query's limit)."""

    @property
    def function(self) -> str:
        """The function it covers: its id starts with it (`grant_id_for`)."""
        return self.grant.terms.function if self.grant else self.grant_id.split(GRANT_ID_SEPARATOR, 1)[0]


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
    granted: int = 0
    """Questions decided by a standing grant in the window (counted among `outcomes["answered"]`)."""
    by_grant: list[GrantShare] = field(default_factory=list)
    """Which grants decided them, most first."""
    rows_read: int = 0
    capped: list[str] = field(default_factory=list)
    """Statuses with more rows than `per_status`: the figures leave their later rows out."""
    per_status: int = MAX_PER_STATUS

    @property
    def decided(self) -> int:
        """Questions decided in the window, whatever decided them."""
        return sum(self.outcomes.values())

    @property
    def granted_share(self) -> float | None:
        """The share of the questions decided in the window that a grant decided; None when none was decided."""
        return self.granted / self.decided if self.decided else None

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
    _name_grants(found, ledger, now)
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
    granted: Counter[str] = Counter()
    granters: dict[str, str | None] = {}
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
        if outcome is not QuestionOutcome.ANSWERED:
            continue
        if (grant_id := grant_id_of(record)) is not None:
            granted[grant_id] += 1
            granters[grant_id] = record.answered_by
            continue
        found.answer_seconds.append(_seconds(record))
        if record.answered_by:
            decisions[record.answered_by] += 1
    found.granted = granted.total()
    found.by_grant = [
        GrantShare(grant_id, count, granters[grant_id])
        for grant_id, count in sorted(granted.items(), key=lambda item: (-item[1], item[0]))
    ]
    found.open_now = len(open_now)
    found.daily = [{"day": day, **counts} for day, counts in daily.items()]
    found.slowest_open = sorted(open_now, key=lambda r: (r.asked_at, r.question_id))[:SLOWEST]
    people = set(decisions) | set(votes)
    ranked = sorted(people, key=lambda who: (-decisions[who], -votes[who], who))[:TOP]
    found.answerers = [(who, decisions[who], votes[who]) for who in ranked]


def _name_grants(found: Insights, ledger: Ledger, now: datetime) -> None:
    """Attach to each grant share its grant as kept: one query of the grants, only when a grant decided something."""
    if not found.by_grant or not isinstance(ledger, GrantLedger):
        return
    kept = {grant.grant_id: grant for grant in ledger.grants(now=now, live_only=False, limit=MAX_GRANTS_READ)}
    found.by_grant = [
        GrantShare(share.grant_id, share.decided, share.granted_by, kept.get(share.grant_id))
        for share in found.by_grant
    ]


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
        if record.outcome is not QuestionStatus.ANSWERED or decided is None or grant_id_of(record) is not None:
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
