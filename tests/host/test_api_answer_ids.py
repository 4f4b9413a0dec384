"""An `Idempotency-Key` names one answer to one question: reused on two questions of a thread, both are handed over.

The answer API hands each decision to the router on the entry queue, in the thread's message group,
deduplicated on the answer id. Were the answer id only the person and the key, a client reusing its key
on a second question of the same thread would send a hand-over SQS drops as a copy of the first.
"""

from __future__ import annotations

from tests.host.test_quorum_routes import ALICE, REFUND, T0, Api

from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.ledger import InMemoryLedger
from agent_wait.policy import WaitPolicy


def test_one_key_on_two_questions_of_one_thread_hands_over_both() -> None:
    # GIVEN a thread waiting on two questions
    api = Api(InMemoryLedger())
    for question_id in ("q-first", "q-second"):
        question = Question("order-1", question_id, REFUND, policy=WaitPolicy(timeout="P3D"), asked_at=T0)
        api.ledger.open(WaitEnvelope.create(question), now=T0)

    # WHEN alice answers both with the same Idempotency-Key
    first = api.answer("q-first", "approve", ALICE, key="k-1")
    second = api.answer("q-second", "approve", ALICE, key="k-1")

    # THEN both won, and their hand-overs carry distinct deduplication ids in the thread's group
    assert (first.status, second.status) == (200, 200)
    dedup_ids = [dedup for _, _, dedup in api.queue.messages]
    assert len(dedup_ids) == 2
    assert len(set(dedup_ids)) == 2

    # AND the same key resent on the first question still repeats, never decides twice
    again = api.answer("q-first", "approve", ALICE, key="k-1")
    assert (again.status, again.json()["result"]) == (200, "repeated")


def test_one_key_resent_with_another_answer_is_422_and_changes_nothing() -> None:
    # GIVEN alice approved with a key (issue 25: on main the same key with a reject answered 200 repeated)
    api = Api(InMemoryLedger())
    question = Question("order-2", "q-key", REFUND, policy=WaitPolicy(timeout="P3D"), asked_at=T0)
    api.ledger.open(WaitEnvelope.create(question), now=T0)
    assert api.answer("q-key", "approve", ALICE, key="k-2").status == 200

    # WHEN her client resends that key with another answer, and then the same one
    other = api.answer("q-key", "reject", ALICE, key="k-2")
    same = api.answer("q-key", "approve", ALICE, key="k-2")

    # THEN the other answer is refused as a reused key, and the first stands; the same answer repeats
    assert (other.status, other.json()["reason"]) == (422, "idempotency_key_reused")
    assert other.json()["question"]["outcome"]["answer"] == {"action": "approve"}
    assert (same.status, same.json()["result"]) == (200, "repeated")


def test_a_vote_resent_under_its_key_with_another_answer_is_422_too() -> None:
    api = Api(InMemoryLedger())
    question_id = api.ask(timeout="P3D", allowed_actions=("approve", "reject"), quorum=2)
    assert api.answer(question_id, "approve", ALICE, key="k-3").status == 202
    assert api.answer(question_id, "reject", ALICE, key="k-3").json()["reason"] == "idempotency_key_reused"
    assert api.answer(question_id, "approve", ALICE, key="k-3").status == 200
