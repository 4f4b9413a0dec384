"""A person's cancel of a hosted Pydantic AI agent's `@wait` call, under a policy whose default approves and that
declares no `on_cancel`: the call is denied (`ToolDenied`), the tool's body never runs, and the model reads the
cancellation as the denial message; a quorum question's cancel too (issue 40)."""

from __future__ import annotations

import json

import pytest
from pydantic_ai_host_agents import refund_agent, refund_call

from agent_wait import WaitPolicy
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryEntryQueue, OutcomeKind, VerdictKind
from agent_wait.engine.checks import Answerer
from agent_wait.pydantic_ai import InMemoryHistoryStore, PydanticAiAdapter
from hosted_router import T0, RouterRig

THREAD = "order-cancel"
FIN = Answerer(answered_by="fin@example.com", via="api", sender="https://issuer#u-fin")
CANCELLATION = {"action": "cancelled", "reason": "the customer withdrew", "by": "fin@example.com"}


@pytest.mark.parametrize("quorum", [None, 2], ids=["plain", "quorum"])
def test_a_cancel_denies_the_call_and_the_model_reads_the_cancellation(quorum: int | None) -> None:
    # GIVEN a hosted agent parked on a @wait refund whose policy's default approves
    policy = WaitPolicy(timeout="P3D", default={"action": "approve"}, quorum=quorum)
    built = refund_agent(refund_call("call-1"), policy=policy)
    rig = RouterRig(PydanticAiAdapter(built.agent, history=InMemoryHistoryStore()))
    rig.start(THREAD)

    # WHEN one person cancels it through the answer service, and the router applies the hand-over
    queue = InMemoryEntryQueue()
    result = AnswerService(rig.ledger, queue, clock=lambda: T0).cancel(
        "call-1", "the customer withdrew", FIN, answer_id="api:c1"
    )
    outcomes = [rig.router().handle(json.dumps(m), deduplication_id=d) for m, _, d in queue.messages]

    # THEN the tool never ran; the model read the cancellation; the question is cancelled and resumed
    assert result.verdict.kind is VerdictKind.DECIDED
    assert [o.kind for o in outcomes] == [OutcomeKind.APPLIED]
    assert built.runs == []
    assert json.loads(built.script.last_seen["call-1"]) == CANCELLATION
    record = rig.record(THREAD, "call-1")
    assert (record.outcome, record.status) == (QuestionStatus.CANCELLED, QuestionStatus.RESUMED)
