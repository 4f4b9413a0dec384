"""`ExtendService.extend` refuses a move past any time a deadline can hold as it refuses any move past the policy's
maximum (`beyond_maximum`, its detail naming the limit), never with Python's `OverflowError`: `by` of
999,999,999 days, the longest `timedelta`, and an `until` in the last second of year 9999. Nothing moves."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_wait import WaitPolicy
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.engine import Answerer, RecordingMetrics
from agent_wait.engine.extend import ExtendRefusal, ExtendService
from agent_wait.ledger import InMemoryLedger
from agent_wait.policy.extension import Extension

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)
MANAGER = Answerer("maria@example.com", "api", sender="iss#maria", groups=("finance-managers",))
POLICY = WaitPolicy(timeout="P3D", extend=Extension(groups=["finance-managers"], max_total="P7D"))
LIMIT = "the policy lets the deadline move at most P7D past 2026-09-14T09:00:00Z, to 2026-09-21T09:00:00Z; "


def _asked() -> tuple[ExtendService, InMemoryLedger, RecordingMetrics]:
    ledger, metrics = InMemoryLedger(), RecordingMetrics()
    question = Question("t-1", "q-1", {"amount": 900}, POLICY, source={"function": "refund"}, asked_at=T0)
    ledger.open(WaitEnvelope.create(question, now=T0), now=T0, unannounced=False)
    return ExtendService(ledger, metrics=metrics, clock=lambda: T0), ledger, metrics


@pytest.mark.parametrize(
    ("by", "detail"),
    [
        (timedelta(days=999_999_999), "P999999999D past 2026-09-14T09:00:00Z is later than any time a deadline holds"),
        (timedelta.max, "P999999999DT23H59M59.999999S past 2026-09-14T09:00:00Z is later than any time a deadline"),
        (timedelta(seconds=86_399_999_999_999), "P999999999DT23H59M59S past 2026-09-14T09:00:00Z is later than any"),
        (timedelta(days=3651), "2036-09-12T09:00:00Z is later"),
    ],
    ids=["P999999999D", "timedelta.max", "huge-seconds", "past-ten-years"],
)
def test_extending_by_more_than_any_deadline_holds_is_beyond_the_maximum(by: timedelta, detail: str) -> None:
    # GIVEN an open question whose policy lets a manager move its deadline by at most seven days
    service, ledger, metrics = _asked()

    # WHEN the manager asks to move it by more than any date can hold
    result = service.extend("q-1", MANAGER, by=by)

    # THEN it is refused as beyond the maximum, naming the limit, and nothing moved
    assert result.refusal is ExtendRefusal.BEYOND_MAXIMUM
    assert result.detail.startswith(LIMIT + detail), result.detail
    record = ledger.find("q-1")
    assert record is not None
    assert (record.expires_at, record.extensions) == ("2026-09-14T09:00:00Z", ())
    assert metrics.total("DeadlinesExtended") == 0


@pytest.mark.parametrize(
    "until",
    [
        datetime.max.replace(tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 500_000, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
    ],
    ids=["datetime.max", "half-a-second-before-the-end", "the-last-whole-second"],
)
def test_extending_until_the_end_of_time_is_beyond_the_maximum(until: datetime) -> None:
    # GIVEN the same question
    service, ledger, _ = _asked()

    # WHEN the manager asks to move it to the last moment a datetime holds
    result = service.extend("q-1", MANAGER, until=until)

    # THEN it is refused as beyond the maximum, naming the limit
    assert result.refusal is ExtendRefusal.BEYOND_MAXIMUM
    assert result.detail == LIMIT + "9999-12-31T23:59:59Z is later"
    record = ledger.find("q-1")
    assert record is not None
    assert record.expires_at == "2026-09-14T09:00:00Z"
