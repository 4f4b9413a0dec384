"""A person's cancel of a hosted Strands agent's `@wait` tool, under a policy whose default approves and that
declares no `on_cancel`: the cancellation is returned in place of the body, which never runs, and the model reads
it; a quorum question's cancel too (issue 40)."""

from __future__ import annotations

import json

import pytest
from strands_host_agents import refund_agents, refund_call

from agent_wait import WaitPolicy
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryEntryQueue, OutcomeKind, VerdictKind
from agent_wait.engine.checks import Answerer
from hosted_router import T0, RouterRig

THREAD = "order-cancel"
FIN = Answerer(answered_by="fin@example.com", via="api", sender="https://issuer#u-fin")
CANCELLATION = {"action": "cancelled", "reason": "the customer withdrew", "by": "fin@example.com"}
QUESTION = "v1:tool_call:tu-1:ad341030-33e7-5831-9159-93573281a0b9"
"""The interrupt id Strands gives `@wait`'s interrupt on tool use `tu-1` (tests/strands/test_strands_host.py)."""


@pytest.mark.parametrize("quorum", [None, 2], ids=["plain", "quorum"])
def test_a_cancel_is_returned_in_place_of_the_body_and_the_tool_never_runs(quorum: int | None) -> None:
    # GIVEN a hosted agent parked on a @wait refund whose policy's default approves
    agents = refund_agents(
        [refund_call("tu-1")], policy=WaitPolicy(timeout="P3D", default={"action": "approve"}, quorum=quorum)
    )
    rig = RouterRig(agents.adapter())
    rig.start(THREAD)

    # WHEN one person cancels it through the answer service, and the router applies the hand-over
    queue = InMemoryEntryQueue()
    result = AnswerService(rig.ledger, queue, clock=lambda: T0).cancel(
        QUESTION, "the customer withdrew", FIN, answer_id="api:c1"
    )
    outcomes = [rig.router().handle(json.dumps(m), deduplication_id=d) for m, _, d in queue.messages]

    # THEN the body never ran and the model read the cancellation as the tool's result
    assert result.verdict.kind is VerdictKind.DECIDED
    assert [o.kind for o in outcomes] == [OutcomeKind.APPLIED]
    assert agents.runs == []
    assert agents.model.last_seen == {"tu-1": CANCELLATION}
    record = rig.record(THREAD, QUESTION)
    assert (record.outcome, record.status) == (QuestionStatus.CANCELLED, QuestionStatus.RESUMED)
