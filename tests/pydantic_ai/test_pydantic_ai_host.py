"""The router hosts a Pydantic AI agent: the same scenarios as the LangGraph host, on real Pydantic AI code.

`PydanticAiAdapter` keeps each thread's history in a `HistoryStore` and collects one answer per
deferred call before it resumes (Pydantic AI takes every answer of a run at once). The router is
unchanged: the ledger decides each question once and the agent resumes only for an id `pending()`
lists, so a duplicate never reaches Pydantic AI, which would run the tool again.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import boto3
import pytest
from pydantic_ai.exceptions import CallDeferred
from pydantic_ai_host_agents import BARE, HOSTED, NO_DEFAULT, Deps, refund_agent, refund_call
from tests.support.aws_stack import create_checkpoint_table

from agent_wait.asking.wait import EXPIRED_WITHOUT_DEFAULT
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import OutcomeKind, RefusalReason
from agent_wait.errors import ConfigurationError, ThreadStateConflictError
from agent_wait.host import adapter_for
from agent_wait.ledger import Decision
from agent_wait.pydantic_ai import (
    MOVED_ON,
    DynamoDbHistoryStore,
    HistoryStore,
    InMemoryHistoryStore,
    PydanticAiAdapter,
    StoredHistory,
    hosted,
)
from hosted_router import APPROVE, REJECT, T0, RouterRig, router_on_moto
from pydantic_ai import RunContext

THREAD = "order-4471"


def rig_for(built: Any, history: HistoryStore | None = None) -> RouterRig:
    return RouterRig(PydanticAiAdapter(built.agent, history=history or InMemoryHistoryStore()))


# -- start, answer, reject -------------------------------------------------------------------------------------


def test_a_start_records_and_announces_the_deferred_call_and_stores_the_history_before_returning():
    # GIVEN an agent whose model calls the @wait refund
    built = refund_agent(refund_call("call-1"))
    rig = rig_for(built)
    # WHEN the router applies a start
    started = rig.start(THREAD, {"order_id": "o-1", "amount": 900})
    # THEN the question (its id is the tool_call_id) is open in the ledger and announced; nothing ran
    assert (started.kind, started.asked) == (OutcomeKind.STARTED, ("call-1",))
    record = rig.record(THREAD, "call-1")
    assert record.status is QuestionStatus.OPEN
    assert record.envelope.question == {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 900}}
    assert record.envelope.expires_at == "2026-09-14T09:00:00Z"  # asked at the router's clock, + P3D
    assert rig.transitions("call-1") == ["created"]
    assert built.runs == []
    # AND the history was stored by the time the router returned, with the deferred call as an approval
    assert rig.adapter.progress(THREAD) == "1"
    assert [q.question_id for q in rig.adapter.pending(THREAD)] == ["call-1"]


def test_an_approve_runs_the_tool_once_and_the_question_is_resumed():
    built = refund_agent(refund_call("call-1"))
    rig = rig_for(built)
    rig.start(THREAD)
    applied = rig.answer(THREAD, "call-1", APPROVE)
    assert (applied.kind, applied.asked) == (OutcomeKind.APPLIED, ())
    assert built.runs == [("o-1", 900)]
    assert built.script.last_seen == {"call-1": "refunded 900 on o-1"}
    assert rig.record(THREAD, "call-1").status is QuestionStatus.RESUMED
    assert rig.transitions("call-1") == ["created", "answered", "resumed"]
    assert rig.adapter.pending(THREAD) == []


def test_the_router_runs_the_agent_from_a_thread_that_runs_an_event_loop():
    # GIVEN a host that drives the router from async code (an async web app, a notebook, a browser test)
    import asyncio

    built = refund_agent(refund_call("call-1"))
    rig = rig_for(built)

    async def host() -> tuple[Any, Any]:
        return rig.start(THREAD), rig.answer(THREAD, "call-1", APPROVE)

    # WHEN it starts and answers inside the running loop (run_sync alone raises "event loop is already running")
    started, applied = asyncio.run(host())
    # THEN both ran: the question was asked, and the approval ran the tool once
    assert (started.kind, started.asked) == (OutcomeKind.STARTED, ("call-1",))
    assert applied.kind is OutcomeKind.APPLIED
    assert built.runs == [("o-1", 900)]


def test_a_reject_never_runs_the_tool_and_the_model_reads_the_answer():
    # Pydantic AI: a denied call never runs; the model reads the answer as the denial message.
    built = refund_agent(refund_call("call-1"))
    rig = rig_for(built)
    rig.start(THREAD)
    applied = rig.answer(THREAD, "call-1", REJECT)
    assert applied.kind is OutcomeKind.APPLIED
    assert built.runs == []
    assert json.loads(built.script.last_seen["call-1"]) == REJECT
    assert rig.record(THREAD, "call-1").outcome is QuestionStatus.ANSWERED


# -- expiry ------------------------------------------------------------------------------------------------------


def test_an_overdue_question_gets_its_default_through_the_sweep_recorded_as_expired():
    built = refund_agent(refund_call("call-1"))
    rig = rig_for(built)
    rig.start(THREAD)
    # WHEN the sweep runs after the deadline and its deadline answer is delivered
    (applied,) = rig.sweep(after=timedelta(days=3, seconds=1))
    # THEN the policy default applied, recorded as expired; the default rejects, so the tool never ran
    assert applied.kind is OutcomeKind.APPLIED
    record = rig.record(THREAD, "call-1")
    assert (record.outcome, record.status, record.answer) == (
        QuestionStatus.EXPIRED,
        QuestionStatus.RESUMED,
        {"action": "reject", "reason": "no answer in time"},
    )
    assert built.runs == []
    assert json.loads(built.script.last_seen["call-1"]) == {"action": "reject", "reason": "no answer in time"}
    # AND a person's answer after that is refused and runs nothing
    late = rig.answer(THREAD, "call-1", APPROVE)
    assert (late.kind, late.reason) == (OutcomeKind.REFUSED, RefusalReason.EXPIRED)
    assert built.runs == []


def test_a_question_with_no_default_expires_and_the_model_reads_expired_without_default():
    # A null answer is sent as EXPIRED_WITHOUT_DEFAULT: a denial that says why, not the text "null".
    built = refund_agent(refund_call("call-1"), policy=NO_DEFAULT)
    rig = rig_for(built)
    rig.start(THREAD)
    (applied,) = rig.sweep(after=timedelta(hours=1, seconds=1))
    assert applied.kind is OutcomeKind.APPLIED
    assert built.runs == []
    assert EXPIRED_WITHOUT_DEFAULT == {"action": "expired", "answer": None}
    assert json.loads(built.script.last_seen["call-1"]) == EXPIRED_WITHOUT_DEFAULT


# -- duplicates, races, redelivery -------------------------------------------------------------------------------


def test_a_duplicate_answer_is_refused_runs_nothing_and_is_not_dead_lettered():
    built = refund_agent(refund_call("call-1"))
    rig = rig_for(built)
    rig.start(THREAD)
    rig.answer(THREAD, "call-1", APPROVE)
    requests, version = built.script.requests, rig.adapter.progress(THREAD)
    # WHEN the same answer arrives again (a resend), then again as a different message
    duplicate = rig.answer(THREAD, "call-1", APPROVE)
    # THEN it is refused: the tool did not run again, the model was not called, the history did not move
    assert (duplicate.kind, duplicate.reason) == (OutcomeKind.REFUSED, RefusalReason.DUPLICATE)
    assert built.runs == [("o-1", 900)]
    assert (built.script.requests, rig.adapter.progress(THREAD)) == (requests, version)
    assert rig.dead_letter.records == []


def test_an_adapter_resume_for_an_id_it_is_not_parked_on_runs_nothing():
    # The router only resumes ids pending() lists; the adapter refuses the rest on its own as well,
    # because Pydantic AI would run the tool again from a pre-resume history.
    built = refund_agent(refund_call("call-1"))
    adapter = PydanticAiAdapter(built.agent, history=InMemoryHistoryStore())
    adapter.start(THREAD, "refund")
    adapter.resume(THREAD, "call-1", APPROVE)
    requests = built.script.requests
    again = adapter.resume(THREAD, "call-1", APPROVE)
    unknown = adapter.resume(THREAD, "call-unknown", APPROVE)
    assert (again.result, again.questions, unknown.result, unknown.questions) == (None, (), None, ())
    assert (built.runs, built.script.requests) == ([("o-1", 900)], requests)


def test_two_different_answers_racing_one_wins_and_the_tool_runs_at_most_once():
    built = refund_agent(refund_call("call-1"))
    rig = rig_for(built)
    rig.start(THREAD)
    # WHEN an approve and a reject arrive at once on two routers (two Lambda instances)
    outcomes = rig.race(THREAD, "call-1", [APPROVE, REJECT])
    # THEN exactly one applied and the other was refused as already decided
    kinds = sorted(outcome.kind for outcome in outcomes)
    assert kinds == [OutcomeKind.APPLIED, OutcomeKind.REFUSED]
    (refused,) = [o for o in outcomes if o.kind is OutcomeKind.REFUSED]
    assert refused.reason is RefusalReason.ALREADY_DECIDED
    # AND the tool ran exactly as the winner said
    winner = rig.record(THREAD, "call-1").answer
    assert built.runs == ([("o-1", 900)] if winner == APPROVE else [])
    assert rig.record(THREAD, "call-1").status is QuestionStatus.RESUMED
    assert rig.dead_letter.records == []


def test_a_redelivered_start_does_not_run_the_agent_again_and_republishes_the_question():
    built = refund_agent(refund_call("call-1"))
    rig = rig_for(built)
    rig.start(THREAD, start_id="start-1")
    requests = built.script.requests
    replayed = rig.start(THREAD, start_id="start-1")
    assert (replayed.kind, replayed.asked) == (OutcomeKind.START_REPLAYED, ("call-1",))
    assert (built.script.requests, rig.adapter.progress(THREAD)) == (requests, "1")
    assert rig.transitions("call-1") == ["created", "created"]


def test_a_redelivered_start_after_the_run_finished_does_not_run_it_again():
    # GIVEN a run that finishes without asking (the model calls no tool)
    built = refund_agent()
    rig = rig_for(built)
    assert rig.start(THREAD, start_id="start-1").asked == ()
    # WHEN the same start arrives again THEN the agent is not run again
    assert rig.start(THREAD, start_id="start-1").kind is OutcomeKind.START_REPLAYED
    assert built.script.requests == 1


# -- Pydantic AI's all-at-once resume ---------------------------------------------------------------------------


def test_parallel_deferred_calls_run_only_once_every_answer_is_in():
    # GIVEN one run that deferred two refunds
    built = refund_agent(refund_call("call-1", 900), refund_call("call-2", 700, "o-2"))
    rig = rig_for(built)
    assert rig.start(THREAD).asked == ("call-1", "call-2")
    # WHEN the first is approved
    first = rig.answer(THREAD, "call-1", APPROVE)
    # THEN the answer is kept but nothing runs: the other call is still open, and stays announced as open
    assert (first.kind, first.asked) == (OutcomeKind.APPLIED, ("call-2",))
    assert (built.runs, built.script.requests) == ([], 1)
    assert rig.record(THREAD, "call-2").status is QuestionStatus.OPEN
    assert [q.question_id for q in rig.adapter.pending(THREAD)] == ["call-2"]
    # AND a duplicate of the first answer is refused and still runs nothing
    assert rig.answer(THREAD, "call-1", APPROVE).reason is RefusalReason.DUPLICATE
    # WHEN the second expires (its default rejects)
    (second,) = rig.sweep(after=timedelta(days=3, seconds=1))
    # THEN one run applies both answers: the approved refund ran once, the expired one never
    assert (second.kind, second.asked) == (OutcomeKind.APPLIED, ())
    assert built.runs == [("o-1", 900)]
    assert built.script.requests == 2
    seen = built.script.last_seen
    assert seen["call-1"] == "refunded 900 on o-1"
    assert json.loads(seen["call-2"]) == {"action": "reject", "reason": "no answer in time"}
    assert rig.record(THREAD, "call-2").outcome is QuestionStatus.EXPIRED


def test_a_call_deferred_question_is_answered_with_the_calls_result():
    # GIVEN a tool that hands its call to an outside system (CallDeferred) and the @wait refund
    built = refund_agent(("ship", {"order_id": "o-1"}, "call-ship"), refund_call("call-1"))

    @built.agent.tool
    def ship(ctx: RunContext[Any], order_id: str) -> str:
        raise CallDeferred(metadata={"carrier": "acme"})

    rig = rig_for(built)
    assert set(rig.start(THREAD).asked) == {"call-1", "call-ship"}
    assert rig.record(THREAD, "call-ship").envelope.question == {
        "function": "ship",
        "args": {"order_id": "o-1"},
        "metadata": {"carrier": "acme"},
    }
    # WHEN both are answered
    rig.answer(THREAD, "call-ship", {"action": "approve", "tracking": "T-9"})
    rig.answer(THREAD, "call-1", APPROVE)
    # THEN the external call's answer is its result (calls=...), the approval ran the refund (approvals=...)
    assert built.script.last_seen == {
        "call-ship": {"action": "approve", "tracking": "T-9"},
        "call-1": "refunded 900 on o-1",
    }


def test_a_new_start_on_a_parked_thread_moves_on_and_cancels_the_open_question():
    # As on LangGraph, a new input on a parked thread is a new turn: the parked call is denied with
    # MOVED_ON (Pydantic AI refuses a new prompt while calls are deferred) and its question is cancelled.
    built = refund_agent(refund_call("call-1"))
    rig = rig_for(built)
    rig.start(THREAD, start_id="start-1")
    turn = rig.start(THREAD, "never mind", start_id="start-2")
    assert (turn.kind, turn.asked) == (OutcomeKind.STARTED, ())
    assert built.runs == []
    assert json.loads(built.script.last_seen["call-1"]) == MOVED_ON
    assert rig.record(THREAD, "call-1").status is QuestionStatus.CANCELLED
    assert rig.transitions("call-1") == ["created", "cancelled"]
    # AND an answer that comes after is refused
    assert rig.answer(THREAD, "call-1", APPROVE).reason is RefusalReason.CANCELLED


# -- crashes and concurrent writers ------------------------------------------------------------------------------


class CrashOnSave(InMemoryHistoryStore):
    """A store whose next `save` fails: the host died after the run and before the history was written."""

    crash_next = False

    def save(self, thread_id: str, history: StoredHistory, *, expected_version: int) -> StoredHistory:
        if self.crash_next:
            self.crash_next = False
            raise ConnectionError("the host died before the history was written")
        return super().save(thread_id, history, expected_version=expected_version)


def test_a_crash_before_the_history_is_written_re_runs_the_run_from_the_stored_history():
    # A Pydantic AI run is atomic here: the history is written after the run returns. A crash before
    # that write leaves the thread as it was, so SQS's redelivery runs the resume again: a tool that
    # ran before the crash runs a second time (at least once), and the thread converges.
    built = refund_agent(refund_call("call-1"))
    store = CrashOnSave()
    rig = rig_for(built, store)
    rig.start(THREAD)
    store.crash_next = True
    with pytest.raises(ConnectionError):
        rig.answer(THREAD, "call-1", APPROVE, answer_id="answer-1")
    assert rig.adapter.progress(THREAD) == "1"
    assert [q.question_id for q in rig.adapter.pending(THREAD)] == ["call-1"]
    # WHEN SQS redelivers the same message
    redelivered = rig.answer(THREAD, "call-1", APPROVE, answer_id="answer-1")
    # THEN it applies; the tool ran once per attempt; the thread finished and the row is resumed
    assert redelivered.kind is OutcomeKind.APPLIED
    assert built.runs == [("o-1", 900), ("o-1", 900)]
    assert rig.adapter.pending(THREAD) == []
    assert rig.record(THREAD, "call-1").status is QuestionStatus.RESUMED


def test_a_crash_after_the_history_is_written_converges_without_running_again():
    # GIVEN an answer decided and its run stored, but the router died before marking the question resumed
    built = refund_agent(refund_call("call-1"))
    rig = rig_for(built)
    rig.start(THREAD)
    decision = Decision(QuestionStatus.ANSWERED, APPROVE, "answer-1", "sqs:tester", via="queue")
    assert rig.ledger.decide(THREAD, "call-1", decision, now=T0).won  # what the first attempt got done: the decision,
    rig.adapter.resume(THREAD, "call-1", APPROVE)  # and the run
    assert rig.record(THREAD, "call-1").status is QuestionStatus.ANSWERED
    # WHEN the message arrives again THEN the router does not resume: the id is no longer pending
    redelivered = rig.answer(THREAD, "call-1", APPROVE, answer_id="answer-1")
    assert redelivered.kind is OutcomeKind.APPLIED
    assert built.runs == [("o-1", 900)]
    assert rig.record(THREAD, "call-1").status is QuestionStatus.RESUMED


def test_two_writers_of_one_thread_cannot_both_win():
    # GIVEN two hosts that loaded the same parked thread
    built = refund_agent(refund_call("call-1", 900), refund_call("call-2", 700, "o-2"))
    store = InMemoryHistoryStore()
    adapter = PydanticAiAdapter(built.agent, history=store)
    adapter.start(THREAD, "refund both")
    stale = store.load(THREAD)
    # WHEN one records an answer and the other writes from what it read
    adapter.resume(THREAD, "call-1", APPROVE)
    # THEN the second write is refused and nothing it wrote is kept
    with pytest.raises(ThreadStateConflictError, match="expected history version 1, found 2"):
        store.save(THREAD, stale, expected_version=stale.version)
    assert store.load(THREAD).answers == {"call-1": APPROVE}


# -- the history stores ------------------------------------------------------------------------------------------


@pytest.fixture(params=["memory", "dynamodb"])
def history_store(request: pytest.FixtureRequest, unique: str) -> HistoryStore:
    if request.param == "memory":
        return InMemoryHistoryStore()
    endpoint = request.getfixturevalue("moto_server")
    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=endpoint)
    create_checkpoint_table(client, f"checkpoints-{unique}")
    return DynamoDbHistoryStore(f"checkpoints-{unique}", client=client)


def test_a_history_store_keeps_what_it_was_given_under_a_new_version(history_store: HistoryStore):
    assert history_store.load(THREAD) == StoredHistory()
    history = StoredHistory(messages=[{"kind": "request", "parts": []}], deferred={"calls": []}, answers={"a": 1})
    saved = history_store.save(THREAD, history, expected_version=0)
    assert saved.version == 1
    assert history_store.load(THREAD) == saved
    assert history_store.load("another-thread") == StoredHistory()


def test_a_history_store_refuses_a_write_from_a_stale_version(history_store: HistoryStore):
    history_store.save(THREAD, StoredHistory(answers={"first": 1}), expected_version=0)
    history_store.save(THREAD, StoredHistory(answers={"second": 2}), expected_version=1)
    for stale in (0, 1, 5):
        with pytest.raises(ThreadStateConflictError):
            history_store.save(THREAD, StoredHistory(answers={"stale": stale}), expected_version=stale)
    assert history_store.load(THREAD).answers == {"second": 2}
    assert history_store.load(THREAD).version == 2


def test_a_history_store_keeps_a_long_history(history_store: HistoryStore):
    # Over 32 KB the DynamoDB store compresses; a realistic history compresses far under the 400 KB limit.
    messages = [{"kind": "request", "parts": [{"content": f"{i} " * 99}]} for i in range(400)]
    history_store.save(THREAD, StoredHistory(messages=messages), expected_version=0)
    assert list(history_store.load(THREAD).messages) == messages


def test_the_dynamodb_history_store_puts_its_item_under_its_own_prefix_in_the_checkpoint_table(
    moto_server: str, unique: str
):
    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    table = f"checkpoints-{unique}"
    create_checkpoint_table(client, table)
    DynamoDbHistoryStore(table, client=client).save(THREAD, StoredHistory(answers={"a": 1}), expected_version=0)
    (item,) = client.scan(TableName=table)["Items"]
    assert (item["PK"], item["SK"], item["version"]) == ({"S": f"PYDANTIC_AI#{THREAD}"}, {"S": "HISTORY"}, {"N": "1"})
    assert json.loads(item["body"]["S"]) == {"messages": [], "deferred": None, "answers": {"a": 1}}
    # AND a history over 32 KB is stored compressed, in binary `body_z`
    store = DynamoDbHistoryStore(table, client=client)
    store.save("long", StoredHistory(messages=["x" * 40_000]), expected_version=0)
    key = {"PK": {"S": "PYDANTIC_AI#long"}, "SK": {"S": "HISTORY"}}
    long_item = client.get_item(TableName=table, Key=key)["Item"]
    assert "body" not in long_item
    assert len(long_item["body_z"]["B"]) < 1_000


def test_the_dynamodb_history_store_refuses_a_history_over_the_item_limit_even_compressed(
    moto_server: str, unique: str
):
    import os

    from agent_wait.errors import ThreadStateTooLargeError

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    create_checkpoint_table(client, f"checkpoints-{unique}")
    store = DynamoDbHistoryStore(f"checkpoints-{unique}", client=client)
    noise = os.urandom(500_000).hex()  # random hex: compresses to about half, still over the limit
    with pytest.raises(ThreadStateTooLargeError, match="history processor or conversation manager") as caught:
        store.save(THREAD, StoredHistory(messages=[noise]), expected_version=0)
    assert (caught.value.thread_id, caught.value.limit) == (THREAD, 400 * 1024 - 8 * 1024)
    assert store.load(THREAD) == StoredHistory()


def test_the_dynamodb_history_store_reports_a_failing_table_as_unavailable(moto_server: str, unique: str):
    from agent_wait.errors import ThreadStateUnavailableError

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    store = DynamoDbHistoryStore(f"missing-{unique}", client=client)
    with pytest.raises(ThreadStateUnavailableError, match=r"GetItem failed .*ResourceNotFoundException.*SQS will"):
        store.load(THREAD)


# -- AGENT_WAIT_GRAPH ---------------------------------------------------------------------------------------------


def test_agent_wait_graph_may_name_a_pydantic_ai_agent_or_a_hosted_one():
    client = boto3.client("dynamodb", region_name="us-east-1")
    bare = adapter_for(BARE.agent, None, checkpoint_table="checkpoints", client=client)
    wrapped = adapter_for(hosted(BARE.agent, deps=Deps), None, checkpoint_table="checkpoints", client=client)
    for adapter in (bare, wrapped):
        assert isinstance(adapter, PydanticAiAdapter)
        assert isinstance(adapter.history, DynamoDbHistoryStore)
        assert adapter.history.table_name == "checkpoints"
    assert (bare.deps, wrapped.deps) == (None, Deps)


def test_a_pydantic_ai_agent_needs_the_checkpoint_table():
    with pytest.raises(ConfigurationError, match="AGENT_WAIT_CHECKPOINT_TABLE is not set"):
        adapter_for(BARE.agent, None, checkpoint_table=None, client=None)


def test_the_router_built_from_its_settings_hosts_a_pydantic_ai_agent_on_dynamodb(
    moto_server: str, unique: str, monkeypatch: pytest.MonkeyPatch
):
    # GIVEN the router's resources on moto and AGENT_WAIT_GRAPH naming a hosted agent
    router, _ = router_on_moto(moto_server, unique, "pydantic_ai_host_agents:hosted_refund", monkeypatch)
    assert isinstance(router.adapter, PydanticAiAdapter)
    thread, runs = f"order-{unique}", len(HOSTED.runs)
    # WHEN a start, an approve and the same approve again arrive
    started = router.handle(json.dumps({"thread_id": thread, "input": {"order_id": "o-1", "amount": 900}}))
    applied = router.handle(json.dumps({"thread_id": thread, "question_id": "call-1", "answer": APPROVE}))
    duplicate = router.handle(json.dumps({"thread_id": thread, "question_id": "call-1", "answer": APPROVE}))
    # THEN the refund ran once and the history is in the checkpoint table
    assert (started.asked, applied.kind) == (("call-1",), OutcomeKind.APPLIED)
    assert duplicate.reason is RefusalReason.DUPLICATE
    assert len(HOSTED.runs) == runs + 1
    assert router.adapter.progress(thread) == "2"
    assert router.ledger.get(thread, "call-1").status is QuestionStatus.RESUMED
