"""`WaitPolicy`'s reminders, escalation steps and quorum: checked where they are written, carried in `rules`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_wait import Escalation, PolicyError, Question, Quorum, Reminder, WaitEnvelope, WaitPolicy
from agent_wait.policy.followup import MAX_REMINDERS, FollowUps

T0 = datetime(2026, 9, 11, 9, 0, tzinfo=UTC)
MANAGERS = Escalation(after="P2D", tags={"approver_group": "finance-managers"}, answerer_groups=["finance-managers"])
FULL = WaitPolicy(
    timeout="P3D",
    default={"action": "reject"},
    tags={"approver_group": "finance"},
    answerer_groups=["finance"],
    reminders=["PT4H", Reminder(before_deadline="P1D")],
    escalation=[MANAGERS],
    quorum=Quorum(2, veto=["reject"]),
)


def test_follow_ups_round_trip_through_to_dict_the_envelope_rules_and_from_dict() -> None:
    assert WaitPolicy.from_dict(FULL.to_dict()) == FULL
    envelope = WaitEnvelope.create(Question("t", "q", {"function": "refund", "args": {}}, FULL, asked_at=T0))
    read_back = WaitEnvelope.from_json(envelope.to_json())
    followups = FollowUps.of(read_back.rules)
    assert followups.reminders == FULL.reminders
    assert followups.escalation == FULL.escalation
    assert followups.quorum == FULL.quorum


def test_a_policy_without_follow_ups_adds_nothing_to_rules() -> None:
    assert set(WaitPolicy(timeout="P1D").rules()) == {"answerers", "edits"}


def test_reminders_are_ordered_by_when_they_fall() -> None:
    policy = WaitPolicy(timeout="P3D", reminders=[Reminder(before_deadline="P1D"), "PT4H"])
    assert [r.to_dict() for r in policy.reminders] == [{"after": "PT4H"}, {"before_deadline": "P1D"}]
    times = policy.followups.reminder_times(T0, T0 + timedelta(days=3))
    assert times == (T0 + timedelta(hours=4), T0 + timedelta(days=2))


def test_a_quorum_of_one_is_the_default_where_the_first_answer_decides() -> None:
    assert WaitPolicy(quorum=1).quorum is None
    assert WaitPolicy(quorum=1, allow_edits=True).allow_edits is True


def test_edits_are_off_by_default_with_or_without_a_quorum() -> None:
    assert WaitPolicy().allow_edits is False
    assert WaitPolicy(quorum=2).allow_edits is False


def test_escalation_widens_a_restricted_audience_and_keeps_an_open_one_open() -> None:
    followups = FULL.followups
    assert followups.answerers_at({"groups": ["finance"], "principals": []}, 0) == {
        "groups": ["finance"],
        "principals": [],
    }
    assert followups.answerers_at({"groups": ["finance"], "principals": []}, 1) == {
        "groups": ["finance", "finance-managers"],
        "principals": [],
    }
    assert followups.answerers_at(None, 1) is None
    handover = FollowUps(escalation=(Escalation(after="P1D", answerer_groups=["ops"], replace_answerers=True),))
    assert handover.answerers_at(None, 1) == {"groups": ["ops"], "principals": []}
    assert followups.tags_at({"approver_group": "finance", "region": "eu"}, 1) == {
        "approver_group": "finance-managers",
        "region": "eu",
    }


def test_the_quorum_counts_approvals_and_a_veto_decides() -> None:
    quorum = Quorum(2)
    assert not quorum.decides(["approve"])
    assert quorum.decides(["approve", "approve"])
    assert quorum.decides(["approve", "reject"])
    assert not quorum.decides([])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"timeout": "P3D", "reminders": ["P3D"]}, "falls outside the question's life"),
        ({"timeout": "P3D", "reminders": [Reminder(before_deadline="P4D")]}, "falls outside the question's life"),
        ({"reminders": [Reminder(before_deadline="P1D")]}, "needs a timeout"),
        ({"timeout": "P3D", "reminders": ["P1D", Reminder(before_deadline="P2D")]}, "same time"),
        ({"reminders": "PT4H"}, "must be a list"),
        ({"reminders": [{"every": "PT1H"}]}, "each reminder must be"),
        ({"reminders": ["soon"]}, "ISO 8601"),
        ({"reminders": ["P3000000D"]}, "at most P3650D"),
        ({"reminders": [1e12]}, "at most P3650D"),
        ({"reminders": [f"PT{n + 1}H" for n in range(MAX_REMINDERS + 1)]}, f"at most {MAX_REMINDERS}"),
        ({"timeout": "P3D", "escalation": [Escalation(after="P3D", tags={"a": "b"})]}, "at or after the deadline"),
        (
            {"escalation": [Escalation(after="P2D", tags={"a": "b"}), Escalation(after="P1D", tags={"a": "c"})]},
            "must come in order",
        ),
        ({"escalation": [{"after": "P1D", "tags": {"a": "b"}, "notify": True}]}, "each escalation step must be"),
        ({"quorum": 0}, "at least 1"),
        ({"quorum": True}, "quorum must be"),
        ({"quorum": "two"}, "quorum must be"),
        ({"quorum": Quorum(2, veto=["block"])}, "not in allowed_actions"),
        ({"quorum": 2, "allow_edits": True}, "cannot allow edited arguments"),
        ({"quorum": 2, "response_schema": {"type": "object"}}, "one or the other"),
    ],
)
def test_a_bad_follow_up_is_refused_where_the_policy_is_written(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(PolicyError, match=match):
        WaitPolicy(**kwargs)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (Reminder, "exactly one of"),
        (lambda: Reminder(after="PT1H", before_deadline="PT1H"), "exactly one of"),
        (lambda: Escalation(after="P1D"), "neither"),
        (lambda: Escalation(after="P4000D", tags={"a": "b"}), "at most P3650D"),
        (lambda: Escalation(after="P1D", tags={"a": "b"}, replace_answerers=True), "must name answerer_groups"),
        (lambda: Escalation(after="P1D", tags={"a": 1}), "must map non-empty str keys"),  # type: ignore[dict-item]
        (lambda: Escalation(after="P1D", answerer_groups="finance"), "must be a list of strings"),
        (lambda: Quorum(2, approve=[]), "at least one action"),
        (lambda: Quorum(2, approve=["approve"], veto=["approve"]), "both approve and veto"),
    ],
)
def test_a_bad_follow_up_part_is_refused_with_what_to_do(build: Any, match: str) -> None:
    with pytest.raises(PolicyError, match=match):
        build()
