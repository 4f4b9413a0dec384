"""Extending a deadline (`ExtendService`): who may, how far, what moves with it, and every refusal, in process.

The questions are put straight into an `InMemoryLedger` (the executable spec of the ledger); the sweep that runs
after an extension is the real `Sweep`, with an in-memory entry queue and announcer and a clock the test moves.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_wait import InMemoryAnnounce, WaitPolicy
from agent_wait.common.times import format_rfc3339
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import Answerer, InMemoryEntryQueue, Metric, RecordingMetrics, Sweep
from agent_wait.engine.extend import ExtendRefusal, ExtendService
from agent_wait.errors import ArgumentError, PolicyError
from agent_wait.ledger import Decision, InMemoryLedger, QuestionRecord
from agent_wait.policy.extension import Extended, Extension
from agent_wait.policy.followup import Escalation, Reminder

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)
MANAGER = Answerer("maria@example.com", "api", sender="iss#maria", groups=("finance-managers",))
CLERK = Answerer("carl@example.com", "api", sender="iss#carl", groups=("finance",))
EXTENDABLE = WaitPolicy(
    timeout="P3D",
    default={"action": "reject"},
    reminders=["PT4H", Reminder(before_deadline="P1D")],
    escalation=[Escalation(after="P2D", answerer_groups=["finance-managers"], tags={"to": "managers"})],
    extend=Extension(groups=["finance-managers"], people=["olga@example.com"], max_total="P7D"),
)
_ids = itertools.count()


class World:
    def __init__(self) -> None:
        self.now = T0
        self.ledger = InMemoryLedger()
        self.announce = InMemoryAnnounce()
        self.queue = InMemoryEntryQueue()
        self.metrics = RecordingMetrics()
        self.service = ExtendService(self.ledger, metrics=self.metrics, clock=lambda: self.now)
        self.sweep = Sweep(self.ledger, self.queue, announce=self.announce, clock=lambda: self.now)

    def ask(self, policy: WaitPolicy = EXTENDABLE) -> str:
        n = next(_ids)
        question = Question(f"t-{n}", f"q-{n}", {"amount": 900}, policy, source={"function": "refund"}, asked_at=T0)
        self.ledger.open(WaitEnvelope.create(question, now=T0), now=T0, unannounced=False)
        return f"q-{n}"

    def row(self, question_id: str) -> QuestionRecord:
        record = self.ledger.find(question_id)
        assert record is not None
        return record


@pytest.fixture
def world() -> World:
    return World()


def test_an_allowed_person_moves_the_deadline_and_every_follow_up_not_yet_sent_moves_with_it(world: World) -> None:
    # GIVEN a P3D question whose first reminder (PT4H) went out
    question_id = world.ask()
    world.now = T0 + timedelta(hours=5)
    world.sweep.run()
    assert world.row(question_id).progress.reminders == 1
    # WHEN a finance manager extends it by two days
    result = world.service.extend(question_id, MANAGER, by=timedelta(days=2))
    # THEN the deadline, the unsent reminder (P1D before the deadline) and the escalation step (P2D) all move by P2D
    assert result.extended, result.detail
    row = world.row(question_id)
    assert row.expires_at == format_rfc3339(T0 + timedelta(days=5))
    assert row.reminder_times() == (T0 + timedelta(hours=4), T0 + timedelta(days=4))
    assert row.escalation_times() == (T0 + timedelta(days=4),)
    assert row.due_at == format_rfc3339(world.now), "due at once: it owes wait.extended"
    world.sweep.run()
    assert world.row(question_id).due_at == format_rfc3339(T0 + timedelta(days=4)), "then at its next follow-up, moved"
    assert [e.by for e in row.extensions] == ["maria@example.com"]
    assert world.metrics.counts[(Metric.DEADLINES_EXTENDED, None)] == 1
    # AND at the old escalation time nothing happens; at the moved one the step is applied
    world.now = T0 + timedelta(days=2, minutes=1)
    assert world.sweep.run().escalated == ()
    world.now = T0 + timedelta(days=4, minutes=1)
    assert world.sweep.run().escalated == (question_id,)
    # AND at the old deadline nothing expires; at the moved one the default is sent
    world.now = T0 + timedelta(days=3, minutes=1)
    assert world.sweep.run().expired_sent == ()
    world.now = T0 + timedelta(days=5, seconds=1)
    assert world.sweep.run().expired_sent == (question_id,)


def test_wait_extended_is_owed_and_the_sweep_announces_it_with_what_moved(world: World) -> None:
    question_id = world.ask()
    result = world.service.extend(question_id, MANAGER, until=T0 + timedelta(days=4))
    assert result.extended
    assert not result.announced, "a service without announcers owes it"
    assert world.row(question_id).notices == ("extended",)
    world.sweep.run()
    (envelope,) = world.announce.of("extended")
    assert envelope.expires_at == format_rfc3339(T0 + timedelta(days=4))
    assert dict(envelope.progress or {}) == {
        "extension": 1,
        "from": format_rfc3339(T0 + timedelta(days=3)),
        "to": format_rfc3339(T0 + timedelta(days=4)),
        "by": "maria@example.com",
    }
    assert envelope.dedupe_key == f"wait.extended:{question_id}:1"
    assert world.row(question_id).notices == ()
    assert world.row(question_id).due_at == format_rfc3339(T0 + timedelta(days=1, hours=4)), "due at its moved reminder"


def test_a_service_with_announcers_announces_at_once(world: World) -> None:
    question_id = world.ask()
    service = ExtendService(world.ledger, announce=world.announce, clock=lambda: world.now)
    assert service.extend(question_id, Answerer("olga@example.com", "api"), by=timedelta(hours=1)).announced
    assert len(world.announce.of("extended")) == 1
    assert world.row(question_id).notices == ()


def test_extensions_add_up_to_the_policy_maximum_and_no_further(world: World) -> None:
    question_id = world.ask()
    assert world.service.extend(question_id, MANAGER, by=timedelta(days=4)).extended
    refused = world.service.extend(question_id, MANAGER, by=timedelta(days=3, seconds=1))
    assert refused.refusal is ExtendRefusal.BEYOND_MAXIMUM
    assert refused.detail == (
        "the policy lets the deadline move at most P7D past 2026-09-14T09:00:00Z, to 2026-09-21T09:00:00Z; "
        "2026-09-21T09:00:01Z is later"
    )
    assert world.service.extend(question_id, MANAGER, by=timedelta(days=3)).extended
    assert world.row(question_id).expires_at == "2026-09-21T09:00:00Z"
    assert len(world.row(question_id).extensions) == 2


@pytest.mark.parametrize(
    ("who", "policy", "detail"),
    [
        (MANAGER, WaitPolicy(timeout="P3D"), "this question's policy lets nobody extend its deadline"),
        (CLERK, EXTENDABLE, "only members of finance-managers, olga@example.com may extend this question; carl@"),
    ],
    ids=["policy-allows-nobody", "not-in-the-policy"],
)
def test_nobody_extends_unless_the_policy_names_them(
    world: World, who: Answerer, policy: WaitPolicy, detail: str
) -> None:
    question_id = world.ask(policy)
    result = world.service.extend(question_id, who, by=timedelta(hours=1))
    assert result.refusal is ExtendRefusal.NOT_ALLOWED
    assert result.detail.startswith(detail)
    assert world.row(question_id).expires_at == format_rfc3339(T0 + timedelta(days=3)), "nothing moved"


def test_a_decided_question_an_overdue_one_and_an_earlier_deadline_are_refused(world: World) -> None:
    decided = world.ask()
    world.ledger.decide(
        f"t-{decided[2:]}", decided, Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a"), now=T0
    )
    refused = world.service.extend(decided, MANAGER, by=timedelta(hours=1))
    assert (refused.refusal, refused.detail) == (
        ExtendRefusal.ALREADY_DECIDED,
        "the question is answered; only an open question's deadline moves",
    )
    earlier = world.ask()
    not_later = world.service.extend(earlier, MANAGER, until=T0 + timedelta(days=2))
    assert not_later.refusal is ExtendRefusal.NOT_LATER
    world.now = T0 + timedelta(days=3)
    overdue = world.service.extend(earlier, MANAGER, by=timedelta(hours=1))
    assert overdue.refusal is ExtendRefusal.DEADLINE_PASSED
    assert world.service.extend("q-none", MANAGER, by=timedelta(hours=1)).refusal is ExtendRefusal.UNKNOWN_QUESTION


def test_a_caller_passes_exactly_one_of_by_and_until(world: World) -> None:
    question_id = world.ask()
    with pytest.raises(ArgumentError, match="extend takes exactly one of by= "):
        world.service.extend(question_id, MANAGER)
    with pytest.raises(ArgumentError, match="extend by= must be a positive duration"):
        world.service.extend(question_id, MANAGER, by=timedelta(0))


def test_a_race_lost_once_is_read_again_and_wins(world: World) -> None:
    question_id = world.ask()
    real = world.ledger.extend
    calls = []

    def first_loses(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:  # another extension lands between the read and the write
            row = world.row(question_id)
            real(row.thread_id, question_id, _moved(row), expected_version=row.progress.version, due_at=row.due_at)
        return real(*args, **kwargs)

    world.ledger.extend = first_loses  # type: ignore[method-assign]
    result = world.service.extend(question_id, MANAGER, by=timedelta(hours=2))
    assert result.extended
    assert len(calls) == 2
    assert world.row(question_id).expires_at == format_rfc3339(T0 + timedelta(days=3, hours=3))


def _moved(row: QuestionRecord) -> Extended:
    until = format_rfc3339(T0 + timedelta(days=3, hours=1))
    return Extended(format_rfc3339(T0), "x", str(row.expires_at), until, 0, 0)


def test_the_policy_checks_extend_where_it_is_written() -> None:
    with pytest.raises(PolicyError, match=r"extend moves the deadline, and this policy has none: set a timeout"):
        WaitPolicy(extend=Extension(groups=["ops"], max_total="P1D"))
    with pytest.raises(PolicyError, match=r"extend must name groups or people who may move the deadline"):
        Extension(max_total="P1D")
    with pytest.raises(PolicyError, match=r"extend max_total must be an ISO 8601 duration"):
        Extension(groups=["ops"], max_total="P1M")
    with pytest.raises(PolicyError, match=r"extend groups must hold group names without spaces"):
        Extension(groups=["finance managers"], max_total="P1D")
    policy = WaitPolicy.from_dict(EXTENDABLE.to_dict())
    assert policy.extend == EXTENDABLE.extend
    assert EXTENDABLE.rules()["extend"] == {
        "groups": ["finance-managers"],
        "people": ["olga@example.com"],
        "max_total": "P7D",
    }
