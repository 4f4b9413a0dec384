"""Nothing lost, nothing twice, through the answer API: its Lambda may die at any AWS call of an answer, before the
call reaches AWS or after AWS applied it, and the answer converges.

The API decides without a lease (issue 46): the question and its thread read together, then the decision and its
hand-over in one `TransactWriteItems`, then the resume on the entry queue. For every call N of a clean answer, on a
fresh thread parked on finance's question, the API dies at call N (before it is sent, or after it landed), then the
person sends the same answer again with the same `Idempotency-Key`, as a client does when its request failed; the
router takes what the queue holds and the sweep hands over what never reached it. At every crash point the person is
told the approval won (or repeated, when the first attempt's decision had landed), the agent receives it once, the
row says `resumed`, and no lease is left on the thread.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from tests.agents.graphs import body_runs, refunds_paid
from tests.engine.test_crash_convergence import InjectedCrashError, Rig
from tests.support.api_events import Response, call
from tests.support.aws_stack import REGION, HostStack

from agent_wait.aws import DynamoDbLedger
from agent_wait.common.times import utc_now
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, SqsEntryQueue
from agent_wait.host.api import ApiContext, create_app

FINANCE = {"iss": "https://issuer.example.com", "sub": "u-fin", "email": "fin@example.com", "email_verified": "true"}


class ApiCrash:
    """Counts the API's AWS calls; dies at call `at`, before it is sent or after AWS answered it."""

    def __init__(self, session: Any) -> None:
        self.calls: list[str] = []
        self.at: int | None = None
        self.after = False
        session.events.register("before-call.*.*", self._before)
        session.events.register("after-call.*.*", self._after)

    def arm(self, at: int | None, *, after: bool = False) -> None:
        self.calls, self.at, self.after = [], at, after

    def _before(self, model: Any, **_: Any) -> None:
        self.calls.append(f"{model.service_model.service_name}.{model.name}")
        if self.at == len(self.calls) and not self.after:
            raise InjectedCrashError(f"the API died before call {self.at} ({self.calls[-1]})")

    def _after(self, model: Any, **_: Any) -> None:
        if self.at == len(self.calls) and self.after:
            raise InjectedCrashError(f"the API died after call {self.at} ({self.calls[-1]}) landed")


class Door:
    """The answer API as deployed, its own clients on a session that may die."""

    def __init__(self, host: HostStack) -> None:
        session = boto3.Session(region_name=REGION)
        self.crash = ApiCrash(session)
        ledger = DynamoDbLedger(host.table, client=session.client("dynamodb"))
        queue = SqsEntryQueue(host.queue_url, client=session.client("sqs"))
        service = AnswerService(ledger, queue, lease_wait=0)
        self.app = create_app(lambda: ApiContext(ledger=ledger, service=service))

    def approve(self, question_id: str, *, key: str) -> Response:
        body = {"answer": {"action": "approve"}}
        headers = {"Idempotency-Key": key}
        return call(self.app, "POST", f"/questions/{question_id}/answer", body, claims=FINANCE, headers=headers)


@pytest.fixture
def rig(host: HostStack) -> Iterator[Rig]:
    made = Rig(host)
    try:
        yield made
    finally:
        made.close()


def _parked(rig: Rig, name: str) -> tuple[str, str, str]:
    """A fresh thread parked on finance's question: (thread, order, question)."""
    thread_id, order = f"t-{name}", f"o-{name}"
    rig.hook.arm(None)
    outcome = rig.router.handle(json.dumps({"thread_id": thread_id, "input": {"order_id": order, "amount": 900}}))
    (question_id,) = outcome.asked
    return thread_id, order, question_id


def _carry_on(rig: Rig) -> None:
    """The router takes what the queue holds; the sweep, minutes later, hands over what never reached it."""
    for _ in range(2):
        for message in rig.host.entry_messages():
            assert not rig.deliver(json.loads(message["Body"]), dedup=message["Attributes"]["MessageDeduplicationId"])
        rig.hook.arm(None)
        rig.sweep.clock = lambda: utc_now() + timedelta(minutes=5)
        rig.sweep.run()


def _lies(rig: Rig, thread_id: str, order: str, question_id: str, retry: Response) -> list[str]:
    problems = []
    if retry.status != 200 or retry.json().get("result") not in ("won", "repeated"):
        problems.append(f"the retry was told {retry.status} {retry.body[:200]}")
    if (body_runs(order), refunds_paid(order)) != (1, 1):
        problems.append(f"the refund ran {body_runs(order)}x and paid {refunds_paid(order)}x")
    row = rig.host.ledger().get(thread_id, question_id)
    if row is None or (row.status, row.answered_by) != (QuestionStatus.RESUMED, "fin@example.com"):
        problems.append(f"the row ended {row.status.value if row else None} by {row.answered_by if row else None}")
    probe = rig.host.ledger().acquire_lease(thread_id, "probe", now=utc_now(), seconds=1)
    if probe is None:
        problems.append("a lease was left on the thread")
    else:
        rig.host.ledger().release_lease(thread_id, "probe")
    return problems


def test_an_api_answer_that_dies_at_any_aws_call_converges_when_the_person_sends_it_again(
    rig: Rig, host: HostStack, unique: str
) -> None:
    door = Door(host)
    # GIVEN the clean run of an approval through the API
    thread_id, order, question_id = _parked(rig, f"{unique}-clean")
    door.crash.arm(None)
    clean = door.approve(question_id, key="k-clean")
    clean_calls = list(door.crash.calls)
    _carry_on(rig)
    assert _lies(rig, thread_id, order, question_id, clean) == []
    lies: dict[str, list[str]] = {}

    # WHEN, on a fresh parked thread per AWS call N of that run, the API dies before call N is sent or after it
    # landed, and the person sends the same approval again with the same Idempotency-Key
    for n in range(1, len(clean_calls) + 1):
        for after in (False, True):
            point = f"{'after' if after else 'before'} call {n} ({clean_calls[n - 1]})"
            thread_id, order, question_id = _parked(rig, f"{unique}-{n}-{int(after)}")
            door.crash.arm(n, after=after)
            with pytest.raises(InjectedCrashError):
                door.approve(question_id, key=f"k-{n}")
            door.crash.arm(None)
            retry = door.approve(question_id, key=f"k-{n}")
            _carry_on(rig)
            if found := _lies(rig, thread_id, order, question_id, retry):
                lies[point] = found

    # THEN at every crash point the retry was told the truth, the agent received the approval once, and no lease
    # or half-made decision was left
    assert clean_calls == ["dynamodb.Query", "dynamodb.BatchGetItem", "dynamodb.TransactWriteItems", "sqs.SendMessage"]
    assert lies == {}, "\n".join(f"{point}: {'; '.join(found)}" for point, found in lies.items())
