"""Questions of mixed outcomes written through a real ledger (`open`, `advance`, `decide`, `mark_resumed`,
`mark_failed`), for the insights and audit tests: what each question became is returned, so a test can say what
the ledger must hold without reading it back the same way.

Spread over the 30 days before `now`; by `n % 10`: answered (0 to 4, through the API, a link or the queue, some
with edited arguments, a third of them resumed), a quorum question decided by two votes (5), expired by the
deadline (6), cancelled (7: by a person with a reason, or every other one withdrawn, the agent having moved on),
open (8), answered then failed while the agent resumed (9).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.contract.schema import QuestionStatus
from agent_wait.ledger import Decision, Ledger
from agent_wait.ledger.outcome import MOVED_ON
from agent_wait.ledger.records import FailureKind, Progress, ThreadFailure, Vote

__all__ = ("PEOPLE", "Seeded", "seed_questions")

PEOPLE = ("alice@example.com", "bob@example.com", "carol@example.com", "dave@example.com")
DOORS = ("api", "link", "queue")
GROUPS = ("finance", "support", "ops")


@dataclass
class Seeded:
    """One question as the seeding left it."""

    thread_id: str
    question_id: str
    asked_at: datetime
    status: QuestionStatus
    outcome: QuestionStatus | None = None
    answered_by: str | None = None
    via: str | None = None
    decided_at: datetime | None = None
    answer: Any = None
    votes: list[str] = field(default_factory=list)
    resumed: bool = False
    failed: bool = False

    @property
    def said(self) -> str | None:
        """What decided it, as every view says it (`agent_wait.ledger.outcome`): a cancel by the router is
        `withdrawn`."""
        if self.outcome is QuestionStatus.CANCELLED and self.answered_by == MOVED_ON:
            return "withdrawn"
        return self.outcome.value if self.outcome else None


def seed_questions(ledger: Ledger, now: datetime, count: int = 200) -> list[Seeded]:
    """`count` questions of mixed outcomes in `ledger`, asked in the 30 days before `now` (see the module)."""
    from agent_wait.common.times import format_rfc3339

    seeded: list[Seeded] = []
    run = uuid.uuid4().hex[:6]
    for n in range(count):
        kind = n % 10
        asked = now - timedelta(days=(n * 7) % 29, minutes=30 + (n * 37) % 600)
        group = GROUPS[n % len(GROUPS)]
        policy = WaitPolicy(
            timeout="P40D",
            default={"action": "reject"},
            allowed_actions=("approve", "reject"),
            tags={"approver_group": group, "team": "refunds"},
            allow_edits=kind != 5,
            quorum=2 if kind == 5 else None,
        )
        thread = f"order-{run}-{n:03d}"
        question = Question(
            thread,
            f"q-{run}-{n:03d}",
            {"function": "issue_refund", "args": {"order_id": thread, "amount": 500 + n}},
            policy,
            source={"function": "issue_refund"},
            asked_at=asked,
        )
        envelope = WaitEnvelope.create(question)
        ledger.open(envelope, now=asked, unannounced=False)
        item = Seeded(thread, envelope.question_id, asked, QuestionStatus.OPEN)
        seeded.append(item)
        if kind == 8:
            continue
        # Answered within minutes to a day and a half, so the time to answer differs by group.
        decided = asked + timedelta(minutes=5 + (n * 53) % (36 * 60) * (1 + GROUPS.index(group)) // 3)
        decided = min(decided, now)
        person = PEOPLE[n % len(PEOPLE)]
        if kind == 6:
            decision = Decision(
                QuestionStatus.EXPIRED,
                {"action": "reject"},
                f"agent-wait:deadline:{envelope.question_id}",
                answered_by="agent-wait:deadline",
                via="deadline",
            )
        elif kind == 7:
            withdrawn = n % 20 == 17
            decision = Decision(
                QuestionStatus.CANCELLED,
                None if withdrawn else {"action": "cancelled", "reason": "duplicate", "by": person},
                f"cancel-{n}",
                answered_by=MOVED_ON if withdrawn else person,
                via=None if withdrawn else "api",
                reason=None if withdrawn else "duplicate",
            )
        elif kind == 5:
            second = PEOPLE[(n + 1) % len(PEOPLE)]
            first_vote = Vote(
                person,
                person,
                {"action": "approve", "note": "ok"},
                f"v1-{n}",
                format_rfc3339(decided - timedelta(minutes=3)),
                via="api",
                sender=person,
            )
            ledger.advance(
                thread,
                envelope.question_id,
                Progress(votes=(first_vote,), version=1),
                expected_version=0,
                due_at=None,
                now=decided - timedelta(minutes=3),
            )
            second_vote = Vote(
                second, second, {"action": "approve"}, f"v2-{n}", format_rfc3339(decided), via="link", sender=second
            )
            votes = [first_vote.summary(), second_vote.summary()]
            decision = Decision(
                QuestionStatus.ANSWERED,
                {"action": "approve", "votes": votes},
                f"v2-{n}",
                answered_by=second,
                sender=second,
                via="link",
            )
            ledger.advance(
                thread,
                envelope.question_id,
                Progress(votes=(first_vote, second_vote), version=2),
                expected_version=1,
                due_at=None,
                decision=decision,
                now=decided,
            )
            item.votes = [person, second]
        else:
            answer: dict[str, Any] = {"action": "approve" if n % 4 else "reject"}
            if n % 3 == 0:
                answer["args"] = {"amount": 400 + n}
            via = DOORS[n % len(DOORS)]
            decision = Decision(
                QuestionStatus.ANSWERED, answer, f"a-{run}-{n}", answered_by=person, sender=f"iss#{person}", via=via
            )
        if kind != 5:
            ledger.decide(thread, envelope.question_id, decision, now=decided)
        item.status = item.outcome = decision.status
        item.answered_by, item.via, item.decided_at, item.answer = (
            decision.answered_by,
            decision.via,
            decided,
            decision.answer,
        )
        if kind == 9:
            failure = ThreadFailure(
                thread,
                FailureKind.ANSWER,
                envelope.question_id,
                decision.answer_id,
                "RuntimeError",
                format_rfc3339(decided + timedelta(seconds=2)),
            )
            ledger.mark_failed(failure)
            item.status, item.failed = QuestionStatus.FAILED, True
        elif item.said != "withdrawn" and n % 3 == 0:  # nothing resumes a withdrawn question; a cancel resumes
            ledger.mark_resumed(thread, envelope.question_id, now=decided + timedelta(seconds=1))
            item.status, item.resumed = QuestionStatus.RESUMED, True
    return seeded
