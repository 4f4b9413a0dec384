"""Never `resumed` for what did not run: a new turn on a parked thread dies at any AWS call, a person answers the
old question through the answer API once the dead delivery's lease has run out, then the turn is delivered again.

The rig is `test_crash_convergence`'s: every AWS call of the router goes through one hooked boto3 Session, and
the hook kills the invocation at call N. For every N over the new turn's clean run, on a fresh thread parked on
finance's question (Q1):

1. the new turn (another order, which asks finance again) dies at call N; its lease is never released;
2. the clock moves past that lease (SQS redelivers only after its visibility timeout);
3. a person approves Q1 through the answer API (`POST /questions/{id}/answer`);
4. SQS delivers the turn again, then whatever the API put on the entry queue; the sweep hands over what is
   left, and the router takes that too;
5. the person tries again, as a refusal's `Retry-After` tells them to.

At every crash point the person was told the truth: told their approval won, the agent received it (the refund
ran once) and the row says `resumed`; refused, nothing ran and the row is not `resumed`. No row says `resumed`
for an answer the agent never received, and the thread ends parked on the new turn's question alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.agents.graphs import body_runs, refunds_paid
from tests.engine.test_crash_convergence import Rig
from tests.support.api_events import Response, call
from tests.support.aws_stack import HostStack

from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, SqsEntryQueue
from agent_wait.engine.outcomes import OutcomeKind
from agent_wait.host.api import ApiContext, create_app

ALICE = {"iss": "https://issuer.example.com", "sub": "u-alice", "email": "alice@example.com", "email_verified": "true"}

TRUTHFUL_REFUSALS = frozenset({"thread_busy", "not_parked", "cancelled"})
"""What a person may be told instead of "won" here: the agent is busy on the thread (try again), or it moved past
the question."""


@pytest.fixture
def rig(host: HostStack) -> Iterator[Rig]:
    made = Rig(host)
    # Real time plus the rig's offset, read from the system clock: the rig's own builds on utc_now(), which inside
    # the router's clock_scope is that clock again, so the offset would count twice where the lease is taken.
    made.router.clock = lambda: datetime.now(UTC) + made.offset
    try:
        yield made
    finally:
        made.close()


@dataclass
class Case:
    """One thread of the matrix: parked on Q1 (order `first`), then a new turn for order `second`."""

    thread_id: str
    first: str
    second: str
    question_id: str


class Door:
    """The answer API as deployed: its own clients (never the router's hooked ones), on the router's clock."""

    def __init__(self, rig: Rig) -> None:
        self.rig = rig
        ledger = rig.host.ledger()
        queue = SqsEntryQueue(rig.host.queue_url, client=rig.host.sqs)
        # No waiting for a busy thread: the refusal is what is under test, and a test never sleeps.
        service = AnswerService(ledger, queue, clock=self.now, lease_wait=0)
        self.app = create_app(lambda: ApiContext(ledger=ledger, service=service, clock=self.now))

    def now(self) -> Any:
        return self.rig.router.clock()

    def approve(self, question_id: str) -> Response:
        body = {"answer": {"action": "approve"}}
        return call(self.app, "POST", f"/questions/{question_id}/answer", body, claims=ALICE)


def _start(thread_id: str, order_id: str) -> dict[str, Any]:
    return {"thread_id": thread_id, "input": {"order_id": order_id, "amount": 900}, "start_id": f"s-{order_id}"}


def _parked(rig: Rig, name: str) -> Case:
    """A fresh thread parked on finance's question for its first order."""
    thread_id, first = f"t-{name}", f"o-{name}-1"
    rig.hook.arm(None)
    outcome = rig.router.handle(json.dumps(_start(thread_id, first)))
    assert outcome.kind is OutcomeKind.STARTED, outcome
    assert len(outcome.asked) == 1, outcome
    return Case(thread_id, first, f"o-{name}-2", outcome.asked[0])


def _deliver_queued(rig: Rig) -> None:
    """Hand the router what the API (or the sweep) put on the entry queue, in order."""
    for message in rig.host.entry_messages():
        dedup = message["Attributes"]["MessageDeduplicationId"]
        assert not rig.deliver(json.loads(message["Body"]), dedup=dedup)


def _sweep(rig: Rig) -> None:
    """A sweep a few minutes after the router's now: hands over door decisions, announces what never was."""
    rig.hook.arm(None)
    later = rig.router.clock() + timedelta(minutes=5)
    rig.sweep.clock = lambda: later
    rig.sweep.run()


def _told(reply: Response) -> str:
    """What the API told the person: `won`, or the refusal's reason."""
    if reply.status == 200:
        return str(reply.json()["result"])
    return str(reply.json()["reason"])


def _lies(rig: Rig, case: Case, reply: Response) -> list[str]:
    """Every way the thread's end contradicts what the person was told, or a row claims what did not run."""
    ledger = rig.host.ledger()
    row = ledger.get(case.thread_id, case.question_id)
    assert row is not None
    told, received = _told(reply), body_runs(case.first)
    problems = []
    if told == "won" and (received != 1 or refunds_paid(case.first) != 1 or row.status is not QuestionStatus.RESUMED):
        problems.append(f"told won, but the refund ran {received}x and the row says {row.status.value}")
    if told != "won" and (told not in TRUTHFUL_REFUSALS or received or row.status is QuestionStatus.RESUMED):
        problems.append(f"told {told!r} ({reply.status}), yet the refund ran {received}x, row {row.status.value}")
    if row.status is QuestionStatus.RESUMED and not received:
        problems.append(f"the row says resumed (via {row.via}) but the agent never received the approval")
    others = [r for r in ledger.questions(case.thread_id) if r.question_id != case.question_id]
    if [r.status for r in others] != [QuestionStatus.OPEN]:
        problems.append(f"the new turn's questions ended {[r.status.value for r in others]}, not one open")
    if row.status is QuestionStatus.OPEN:
        problems.append("the approved question is still open, though the agent moved past it")
    return problems


def _new_turn_with_an_api_answer(
    rig: Rig, door: Door, case: Case, *, crash_at: int | None
) -> tuple[Response, bool, list[str]]:
    """Steps 1 to 4 of the module docstring: the API's reply, whether the turn's first delivery crashed, and the AWS
    calls that delivery made."""
    turn = _start(case.thread_id, case.second)
    crashed = rig.deliver(turn, crash_at=crash_at, dedup=f"d-{case.second}")
    calls = list(rig.hook.calls)
    reply = door.approve(case.question_id)
    if crashed:
        assert not rig.deliver(turn, dedup=f"d-{case.second}"), f"the turn's redelivery after call {crash_at} failed"
    _deliver_queued(rig)
    _sweep(rig)
    _deliver_queued(rig)
    return reply, crashed, calls


def test_a_new_turn_that_dies_at_any_aws_call_never_leaves_an_api_answer_recorded_resumed_unrun(
    rig: Rig, unique: str
) -> None:
    door = Door(rig)
    # GIVEN the clean run of a new turn on a parked thread: the API's approval of the old question comes after it
    clean = _parked(rig, f"{unique}-clean")
    reply, crashed, clean_calls = _new_turn_with_an_api_answer(rig, door, clean, crash_at=None)
    assert not crashed
    assert _told(reply) in TRUTHFUL_REFUSALS, reply.body
    assert _lies(rig, clean, reply) == []
    assert len(clean_calls) >= 10, clean_calls
    told: dict[int, str] = {}
    lies: dict[int, list[str]] = {}

    # WHEN, on a fresh parked thread per AWS call N of that run, the turn dies at call N, its lease runs out,
    # the person approves the old question through the API, and SQS delivers the turn again
    for n in range(1, len(clean_calls) + 1):
        case = _parked(rig, f"{unique}-{n}")
        reply, crashed, _ = _new_turn_with_an_api_answer(rig, door, case, crash_at=n)
        told[n] = f"{_told(reply)}{'' if crashed else ' (no crash: announcer call)'}"
        if found := _lies(rig, case, reply):
            lies[n] = found
        # AND the person tries again, as a refusal's Retry-After says: the agent has moved past the question
        again = door.approve(case.question_id)
        if _told(reply) != "won" and _told(again) not in ("cancelled", "not_parked"):
            lies.setdefault(n, []).append(f"tried again after the turn, told {_told(again)!r}")

    # THEN at every crash point what the API told the person is what happened, and no row says resumed unrun
    assert lies == {}, "\n".join(
        [f"call {n} ({clean_calls[n - 1]}): told {told[n]}: {'; '.join(found)}" for n, found in lies.items()]
        + [f"all: {told}"]
    )
