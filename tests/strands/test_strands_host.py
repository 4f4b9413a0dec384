"""The router hosts a Strands agent: the same scenarios as the LangGraph host, on real Strands code.

`StrandsAdapter` builds a fresh agent per message over the thread's session (the session manager is
the persistence) and checks the session's interrupt state before it invokes, so none of the cases
where Strands raises (a duplicate answer, an unknown id, a prompt to a parked agent) reaches the router.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import boto3
import pytest
from strands.session.repository_session_manager import RepositorySessionManager
from strands.types.exceptions import SessionException
from strands.types.session import Session, SessionAgent, SessionMessage, SessionType
from strands.types.tools import ToolContext
from strands_host_agents import HOSTED, NO_DEFAULT, RefundAgents, TurnModel, refund_agents, refund_call
from strands_script import scripted_agent
from tests.support.aws_stack import create_checkpoint_table

from agent_wait.asking.wait import EXPIRED_WITHOUT_DEFAULT
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import OutcomeKind, RefusalReason
from agent_wait.errors import ConfigurationError, ThreadStateConflictError
from agent_wait.host import adapter_for
from agent_wait.strands import (
    DynamoDbSessionRepository,
    InMemorySessionRepository,
    ItemSessionRepository,
    StrandsAdapter,
    hosted,
    interrupt_responses,
)
from hosted_router import APPROVE, REJECT, RouterRig, router_on_moto
from strands import Agent, Snapshot, tool

THREAD = "order-4471"


def qid(tool_use_id: str) -> str:
    """The interrupt id Strands gives `@wait`'s interrupt on a tool use (`v1:tool_call:<id>:<uuid5("agent_wait")>`)."""
    return f"v1:tool_call:{tool_use_id}:ad341030-33e7-5831-9159-93573281a0b9"


def rig_for(agents: RefundAgents, repository: Any = None) -> RouterRig:
    return RouterRig(agents.adapter(repository))


# -- start, answer, reject -------------------------------------------------------------------------------------


def test_a_start_records_and_announces_the_interrupt_and_the_session_keeps_it():
    agents = refund_agents([refund_call("tu-1")])
    rig = rig_for(agents)
    started = rig.start(THREAD, {"order_id": "o-1", "amount": 900})
    assert (started.kind, started.asked) == (OutcomeKind.STARTED, (qid("tu-1"),))
    record = rig.record(THREAD, qid("tu-1"))
    assert record.status is QuestionStatus.OPEN
    assert record.envelope.question == {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 900}}
    assert record.envelope.expires_at == "2026-09-14T09:00:00Z"
    assert rig.transitions(qid("tu-1")) == ["created"]
    assert agents.runs == []
    # AND a fresh agent restored from the session is parked on it: pending() reads it, running nothing
    requests = agents.model.requests
    assert [q.question_id for q in rig.adapter.pending(THREAD)] == [qid("tu-1")]
    assert rig.adapter.progress(THREAD) is not None
    assert agents.model.requests == requests


def test_an_approve_runs_the_tool_once_and_the_question_is_resumed():
    agents = refund_agents([refund_call("tu-1")])
    rig = rig_for(agents)
    rig.start(THREAD)
    applied = rig.answer(THREAD, qid("tu-1"), APPROVE)
    assert (applied.kind, applied.asked) == (OutcomeKind.APPLIED, ())
    assert agents.runs == [("o-1", 900)]
    assert agents.model.last_seen == {"tu-1": "refunded 900 on o-1"}
    assert rig.record(THREAD, qid("tu-1")).status is QuestionStatus.RESUMED
    assert rig.transitions(qid("tu-1")) == ["created", "answered", "resumed"]
    assert rig.adapter.pending(THREAD) == []


def test_a_reject_is_returned_in_place_of_the_body_and_the_tool_never_runs():
    agents = refund_agents([refund_call("tu-1")])
    rig = rig_for(agents)
    rig.start(THREAD)
    assert rig.answer(THREAD, qid("tu-1"), REJECT).kind is OutcomeKind.APPLIED
    assert agents.runs == []
    assert agents.model.last_seen == {"tu-1": REJECT}


# -- expiry ------------------------------------------------------------------------------------------------------


def test_an_overdue_question_gets_its_default_through_the_sweep_recorded_as_expired():
    agents = refund_agents([refund_call("tu-1")])
    rig = rig_for(agents)
    rig.start(THREAD)
    (applied,) = rig.sweep(after=timedelta(days=3, seconds=1))
    assert applied.kind is OutcomeKind.APPLIED
    record = rig.record(THREAD, qid("tu-1"))
    assert (record.outcome, record.status) == (QuestionStatus.EXPIRED, QuestionStatus.RESUMED)
    assert agents.runs == []
    assert agents.model.last_seen == {"tu-1": {"action": "reject", "reason": "no answer in time"}}
    late = rig.answer(THREAD, qid("tu-1"), APPROVE)
    assert (late.kind, late.reason) == (OutcomeKind.REFUSED, RefusalReason.EXPIRED)


def test_a_question_with_no_default_expires_instead_of_parking_again_forever():
    # Strands takes a null response as "no answer yet" and parks the tool again under the same id
    # (tests/strands/test_strands_facts.py); the adapter sends EXPIRED_WITHOUT_DEFAULT instead.
    agents = refund_agents([refund_call("tu-1")], policy=NO_DEFAULT)
    rig = rig_for(agents)
    rig.start(THREAD)
    (applied,) = rig.sweep(after=timedelta(hours=1, seconds=1))
    assert (applied.kind, applied.asked) == (OutcomeKind.APPLIED, ())
    assert rig.adapter.pending(THREAD) == []
    assert agents.runs == []
    assert agents.model.last_seen == {"tu-1": EXPIRED_WITHOUT_DEFAULT}
    assert EXPIRED_WITHOUT_DEFAULT == {"action": "expired", "answer": None}
    assert rig.record(THREAD, qid("tu-1")).status is QuestionStatus.RESUMED


# -- duplicates, races, redelivery -------------------------------------------------------------------------------


def test_a_duplicate_answer_is_refused_runs_nothing_and_is_not_dead_lettered():
    agents = refund_agents([refund_call("tu-1")])
    rig = rig_for(agents)
    rig.start(THREAD)
    rig.answer(THREAD, qid("tu-1"), APPROVE)
    requests, progress = agents.model.requests, rig.adapter.progress(THREAD)
    duplicate = rig.answer(THREAD, qid("tu-1"), APPROVE)
    assert (duplicate.kind, duplicate.reason) == (OutcomeKind.REFUSED, RefusalReason.DUPLICATE)
    assert agents.runs == [("o-1", 900)]
    assert (agents.model.requests, rig.adapter.progress(THREAD)) == (requests, progress)
    assert rig.dead_letter.records == []


def test_the_adapter_never_lets_strands_raise_for_an_answered_or_unknown_id():
    # Strands raises ValueError for a duplicate and KeyError for an unknown id; the adapter checks the
    # session's interrupt state first and runs nothing.
    agents = refund_agents([refund_call("tu-1")])
    adapter = agents.adapter()
    adapter.start(THREAD, "refund")
    adapter.resume(THREAD, qid("tu-1"), APPROVE)
    requests = agents.model.requests
    again = adapter.resume(THREAD, qid("tu-1"), APPROVE)
    unknown = adapter.resume(THREAD, "q-unknown", APPROVE)
    assert (again.result, again.questions, unknown.result, unknown.questions) == (None, (), None, ())
    assert (agents.runs, agents.model.requests) == ([("o-1", 900)], requests)


def test_two_different_answers_racing_one_wins_and_the_tool_runs_at_most_once():
    agents = refund_agents([refund_call("tu-1")])
    rig = rig_for(agents)
    rig.start(THREAD)
    outcomes = rig.race(THREAD, qid("tu-1"), [APPROVE, REJECT])
    assert sorted(outcome.kind for outcome in outcomes) == [OutcomeKind.APPLIED, OutcomeKind.REFUSED]
    (refused,) = [o for o in outcomes if o.kind is OutcomeKind.REFUSED]
    assert refused.reason is RefusalReason.ALREADY_DECIDED
    winner = rig.record(THREAD, qid("tu-1")).answer
    assert agents.runs == ([("o-1", 900)] if winner == APPROVE else [])
    assert rig.dead_letter.records == []


def test_a_redelivered_start_does_not_run_the_agent_again_and_republishes_the_question():
    agents = refund_agents([refund_call("tu-1")])
    rig = rig_for(agents)
    rig.start(THREAD, start_id="start-1")
    requests, progress = agents.model.requests, rig.adapter.progress(THREAD)
    replayed = rig.start(THREAD, start_id="start-1")
    assert (replayed.kind, replayed.asked) == (OutcomeKind.START_REPLAYED, (qid("tu-1"),))
    assert (agents.model.requests, rig.adapter.progress(THREAD)) == (requests, progress)
    assert rig.transitions(qid("tu-1")) == ["created", "created"]


def test_parallel_questions_are_answered_one_at_a_time():
    agents = refund_agents([refund_call("tu-1", 900), refund_call("tu-2", 700, "o-2")])
    rig = rig_for(agents)
    assert rig.start(THREAD).asked == (qid("tu-1"), qid("tu-2"))
    first = rig.answer(THREAD, qid("tu-2"), APPROVE)
    assert (first.kind, first.asked, agents.runs) == (OutcomeKind.APPLIED, (qid("tu-1"),), [("o-2", 700)])
    assert rig.record(THREAD, qid("tu-1")).status is QuestionStatus.OPEN
    second = rig.answer(THREAD, qid("tu-1"), REJECT)
    assert (second.asked, agents.runs) == ((), [("o-2", 700)])
    assert agents.model.last_seen == {"tu-1": REJECT, "tu-2": "refunded 700 on o-2"}


def test_a_new_start_on_a_parked_thread_moves_on_and_cancels_the_open_question():
    # Strands refuses a prompt to a parked agent (TypeError); as on LangGraph the new turn runs, the
    # parked call gets Strands' own "Tool was interrupted." result, and its question is cancelled.
    agents = refund_agents([refund_call("tu-1")])
    rig = rig_for(agents)
    rig.start(THREAD, start_id="start-1")
    turn = rig.start(THREAD, "never mind", start_id="start-2")
    assert (turn.kind, turn.asked) == (OutcomeKind.STARTED, ())
    assert agents.runs == []
    assert rig.record(THREAD, qid("tu-1")).status is QuestionStatus.CANCELLED
    assert rig.answer(THREAD, qid("tu-1"), APPROVE).reason is RefusalReason.CANCELLED
    restored = agents(RepositorySessionManager(session_id=THREAD, session_repository=_repository(rig)))
    closed = [b["toolResult"] for m in restored.messages for b in m["content"] if "toolResult" in b]
    assert [(r["toolUseId"], r["status"], r["content"]) for r in closed] == [
        ("tu-1", "error", [{"text": "Tool was interrupted."}])
    ]


def _repository(rig: RouterRig) -> Any:
    manager = rig.adapter.session_manager_factory("any")  # type: ignore[attr-defined]
    return manager.session_repository


# -- crashes: Lambda dies at any session write -------------------------------------------------------------------


class HostDiedError(BaseException):
    """The Lambda process died: this write and every later one never happen.

    A BaseException, as a process death is not an error the code could handle: the router must not
    take it for the agent failing (which dead-letters a start)."""


class CrashingRepository(InMemorySessionRepository):
    """Counts session writes; from write `crash_at` on, every write fails (a dead process writes nothing more)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0
        self.crash_at: int | None = None

    def _put(self, session_id: str, key: str, document: dict[str, Any], *, create: bool) -> None:
        self.writes += 1
        if self.crash_at is not None and self.writes >= self.crash_at:
            raise HostDiedError(f"died at session write {self.writes} ({key})")
        super()._put(session_id, key, document, create=create)

    def arm(self, crash_at: int | None) -> None:
        self.writes, self.crash_at = 0, crash_at

    def stored_keys(self, session_id: str) -> set[str]:
        return {key for sid, key in self._items if sid == session_id}


def crash_matrix(deliver: Callable[..., Any]) -> list[tuple[int, Any]]:
    """For each write of a clean delivery: a fresh thread where the delivery dies at that write, then is redelivered."""
    results = []
    for crash_at in range(1, 30):
        # The model makes the same call whenever it is asked again from the same prompt (as a
        # deterministic model would): a redelivery that calls it again gets the same question.
        agents = refund_agents([refund_call("tu-1")], [refund_call("tu-1")])
        repository = CrashingRepository()
        rig = rig_for(agents, repository)
        outcome = deliver(rig, repository, agents, crash_at)
        if outcome is None:  # the delivery finished before write `crash_at`: every point is covered
            return results
        results.append((crash_at, outcome))
    raise AssertionError("a clean delivery makes more than 30 session writes")


def test_a_start_that_dies_at_any_session_write_converges_on_redelivery():
    def deliver(rig: RouterRig, repository: CrashingRepository, agents: RefundAgents, crash_at: int) -> Any:
        repository.arm(crash_at)
        try:
            rig.start(THREAD, start_id="start-1")
        except (HostDiedError, Exception):  # Strands may wrap the crash in its own EventLoopException
            pass
        else:
            return None
        repository.arm(None)
        redelivered = rig.start(THREAD, start_id="start-1")
        # THEN the thread ends parked on the one question, announced, and nothing ran
        assert redelivered.asked == (qid("tu-1"),), f"crash at write {crash_at}: {redelivered}"
        assert [q.question_id for q in rig.adapter.pending(THREAD)] == [qid("tu-1")]
        assert rig.record(THREAD, qid("tu-1")).status is QuestionStatus.OPEN
        assert "created" in rig.transitions(qid("tu-1"))
        assert agents.runs == []
        assert rig.adapter.unfinished(THREAD) is False
        return redelivered.kind

    points = crash_matrix(deliver)
    assert len(points) >= 5, points


def test_an_answer_that_dies_at_any_session_write_converges_and_runs_the_tool_again_only_if_its_result_was_lost():
    # As on LangGraph, a tool whose result was not stored before the host died runs again on redelivery
    # (at least once); a tool whose result was stored never runs again.
    def deliver(rig: RouterRig, repository: CrashingRepository, agents: RefundAgents, crash_at: int) -> Any:
        rig.start(THREAD)
        repository.arm(crash_at)
        message = {"answer_id": "answer-1"}
        try:
            rig.answer(THREAD, qid("tu-1"), APPROVE, **message)
        except (HostDiedError, Exception):
            pass
        else:
            return None
        ran_before_crash = len(agents.runs)
        result_stored = any(
            _holds_tool_result(repository, key) for key in repository.stored_keys(THREAD) if key.startswith("MESSAGE#")
        )
        repository.arm(None)
        redelivered = rig.answer(THREAD, qid("tu-1"), APPROVE, **message)
        assert redelivered.kind is OutcomeKind.APPLIED, f"crash at write {crash_at}: {redelivered}"
        assert rig.record(THREAD, qid("tu-1")).status is QuestionStatus.RESUMED
        assert rig.adapter.pending(THREAD) == []
        assert rig.adapter.unfinished(THREAD) is False
        assert agents.model.last_seen == {"tu-1": "refunded 900 on o-1"}
        expected_runs = 1 + (1 if ran_before_crash and not result_stored else 0)
        assert len(agents.runs) == expected_runs, f"crash at write {crash_at}: runs {agents.runs}"
        return len(agents.runs)

    points = crash_matrix(deliver)
    assert {runs for _, runs in points} == {1, 2}, points


def _holds_tool_result(repository: CrashingRepository, key: str) -> bool:
    document = repository._get(THREAD, key)
    assert document is not None
    return any("toolResult" in block for block in document["message"]["content"])


# -- the Strands facts the adapter relies on ---------------------------------------------------------------------


def test_strands_fact_a_snapshot_shows_the_interrupt_state_without_running_anything():
    agents = refund_agents([refund_call("tu-1")])
    agent = agents(None)  # type: ignore[arg-type]
    agent("refund")
    state = agent.take_snapshot(include=["interrupt_state"]).data["interrupt_state"]
    assert state["activated"] is True
    assert [(i["id"], i["response"]) for i in state["interrupts"].values()] == [(qid("tu-1"), None)]


def test_strands_fact_a_cleared_interrupt_state_lets_a_prompt_run_and_closes_the_parked_calls():
    agents = refund_agents([refund_call("tu-1")])
    agent = agents(None)  # type: ignore[arg-type]
    agent("refund")
    cleared = {"interrupt_state": {"interrupts": {}, "context": {}, "activated": False}}
    agent.load_snapshot(Snapshot(scope="agent", schema_version="1.0", data=cleared, app_data={}))
    assert agent("never mind").stop_reason == "end_turn"
    assert agents.runs == []
    closed = [b["toolResult"]["content"] for m in agent.messages for b in m["content"] if "toolResult" in b]
    assert closed == [[{"text": "Tool was interrupted."}]]


def test_strands_fact_a_pending_tool_execution_runs_the_calls_again_without_calling_the_model():
    # What continue_run does after a crash that stored the model's tool calls but not the agent state.
    agents = refund_agents([refund_call("tu-1")])
    parked = agents(None)  # type: ignore[arg-type]
    parked("refund")
    messages = parked.messages[:2]
    fresh = Agent(model=agents.model, tools=[agents.tool], callback_handler=None, messages=messages)
    state = {
        "interrupts": {},
        "context": {},
        "activated": True,
        "pending_tool_execution": {"assistant_message": messages[-1], "completed_tool_results": []},
    }
    fresh.load_snapshot(Snapshot(scope="agent", schema_version="1.0", data={"interrupt_state": state}, app_data={}))
    requests = agents.model.requests
    result = fresh([])
    assert (result.stop_reason, [i.id for i in result.interrupts]) == ("interrupt", [qid("tu-1")])
    assert agents.model.requests == requests


# -- the adapter's own refusals and AGENT_WAIT_GRAPH -------------------------------------------------------------


def test_an_agent_factory_that_drops_the_session_manager_is_refused():
    agents = refund_agents([refund_call("tu-1")])
    adapter = StrandsAdapter(
        lambda session_manager: Agent(model=agents.model, tools=[agents.tool], callback_handler=None),
        session_manager_factory=lambda thread_id: RepositorySessionManager(
            session_id=thread_id, session_repository=InMemorySessionRepository()
        ),
    )
    with pytest.raises(ConfigurationError, match=r"must build its Agent with the session manager it is given"):
        adapter.start(THREAD, "refund")


def test_agent_wait_graph_names_a_hosted_strands_factory_and_refuses_an_agent_instance(moto_server: str, unique: str):
    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    create_checkpoint_table(client, f"checkpoints-{unique}")
    adapter = adapter_for(hosted(HOSTED), None, checkpoint_table=f"checkpoints-{unique}", client=client)
    assert isinstance(adapter, StrandsAdapter)
    manager = adapter.session_manager_factory("t-1")
    assert isinstance(manager, RepositorySessionManager)
    assert isinstance(manager.session_repository, DynamoDbSessionRepository)
    assert manager.session_repository.table_name == f"checkpoints-{unique}"
    agent, _ = scripted_agent([])
    with pytest.raises(ConfigurationError, match=r"names a Strands Agent instance.*agent_wait\.strands\.hosted"):
        adapter_for(agent, None, checkpoint_table="checkpoints", client=client)
    with pytest.raises(ConfigurationError, match="hosted\\(\\) takes a factory"):
        hosted(42)  # type: ignore[arg-type]


def test_the_router_built_from_its_settings_hosts_a_strands_agent_on_dynamodb(
    moto_server: str, unique: str, monkeypatch: pytest.MonkeyPatch
):
    router, dynamodb = router_on_moto(moto_server, unique, "strands_host_agents:hosted_refund", monkeypatch)
    assert isinstance(router.adapter, StrandsAdapter)
    thread, runs = f"order-{unique}", len(HOSTED.runs)
    started = router.handle(json.dumps({"thread_id": thread, "input": {"order_id": "o-1", "amount": 900}}))
    applied = router.handle(json.dumps({"thread_id": thread, "question_id": qid("tu-1"), "answer": APPROVE}))
    duplicate = router.handle(json.dumps({"thread_id": thread, "question_id": qid("tu-1"), "answer": APPROVE}))
    assert (started.asked, applied.kind) == ((qid("tu-1"),), OutcomeKind.APPLIED)
    assert duplicate.reason is RefusalReason.DUPLICATE
    assert len(HOSTED.runs) == runs + 1
    items = dynamodb.query(
        TableName=f"checkpoints-{unique}",
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": f"STRANDS#{thread}"}},
    )["Items"]
    assert {item["SK"]["S"].split("#")[0] for item in items} == {"SESSION", "AGENT", "MESSAGE"}


# -- the session repositories -------------------------------------------------------------------------------------


@pytest.fixture(params=["memory", "dynamodb"])
def repository(request: pytest.FixtureRequest, unique: str) -> ItemSessionRepository:
    if request.param == "memory":
        return InMemorySessionRepository()
    endpoint = request.getfixturevalue("moto_server")
    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=endpoint)
    create_checkpoint_table(client, f"checkpoints-{unique}")
    return DynamoDbSessionRepository(f"checkpoints-{unique}", client=client)


def _message(index: int, text: str = "hi") -> SessionMessage:
    return SessionMessage.from_message({"role": "user", "content": [{"text": f"{text} {index}"}]}, index)


def test_a_session_is_created_once(repository: ItemSessionRepository):
    session = Session(session_id=THREAD, session_type=SessionType.AGENT)
    assert repository.read_session(THREAD) is None
    repository.create_session(session)
    assert repository.read_session(THREAD) == session
    with pytest.raises(SessionException, match=f"Session {THREAD} already exists"):
        repository.create_session(Session(session_id=THREAD, session_type=SessionType.AGENT))


def test_an_agent_is_created_read_and_updated_keeping_its_created_at(repository: ItemSessionRepository):
    agent = SessionAgent(agent_id="default", state={"n": 1}, conversation_manager_state={})
    with pytest.raises(SessionException, match="does not exist"):
        repository.update_agent(THREAD, agent)
    repository.create_agent(THREAD, agent)
    assert repository.read_agent(THREAD, "default") == agent
    changed = SessionAgent(agent_id="default", state={"n": 2}, conversation_manager_state={}, created_at="later")
    repository.update_agent(THREAD, changed)
    read = repository.read_agent(THREAD, "default")
    assert read is not None
    assert (read.state, read.created_at) == ({"n": 2}, agent.created_at)
    assert repository.read_agent(THREAD, "other") is None


def test_messages_list_in_id_order_with_offset_and_limit(repository: ItemSessionRepository):
    for index in (0, 1, 2, 10, 11):  # 10 sorts before 2 as text: the keys are zero-padded
        repository.create_message(THREAD, "default", _message(index))
    ids = [m.message_id for m in repository.list_messages(THREAD, "default")]
    assert ids == [0, 1, 2, 10, 11]
    assert [m.message_id for m in repository.list_messages(THREAD, "default", limit=2, offset=1)] == [1, 2]
    assert repository.list_messages(THREAD, "another-agent") == []
    read = repository.read_message(THREAD, "default", 10)
    assert read is not None
    assert read.to_message() == {"role": "user", "content": [{"text": "hi 10"}]}


def test_two_writers_cannot_both_append_the_same_message(repository: ItemSessionRepository):
    repository.create_message(THREAD, "default", _message(3, "first"))
    with pytest.raises(ThreadStateConflictError, match="already written by another writer"):
        repository.create_message(THREAD, "default", _message(3, "second"))
    read = repository.read_message(THREAD, "default", 3)
    assert read is not None
    assert read.to_message()["content"] == [{"text": "first 3"}]


def test_a_message_is_updated_only_when_it_exists(repository: ItemSessionRepository):
    with pytest.raises(SessionException, match="Message 0 does not exist"):
        repository.update_message(THREAD, "default", _message(0))
    original = _message(0)
    repository.create_message(THREAD, "default", original)
    redacted = _message(0)
    redacted.redact_message = {"role": "user", "content": [{"text": "[redacted]"}]}
    redacted.created_at = "later"
    repository.update_message(THREAD, "default", redacted)
    read = repository.read_message(THREAD, "default", 0)
    assert read is not None
    assert (read.to_message()["content"], read.created_at) == ([{"text": "[redacted]"}], original.created_at)


def test_a_large_message_round_trips(repository: ItemSessionRepository):
    text = "refund line " * 20_000  # 240 KB: stored compressed in DynamoDB
    repository.create_message(
        THREAD, "default", SessionMessage.from_message({"role": "user", "content": [{"text": text}]}, 0)
    )
    read = repository.read_message(THREAD, "default", 0)
    assert read is not None
    assert read.to_message()["content"][0]["text"] == text


def test_an_agent_restored_from_the_dynamodb_repository_resumes_its_parked_tool(moto_server: str, unique: str):
    # GIVEN a Strands agent parked on a @wait question over the DynamoDB repository
    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    create_checkpoint_table(client, f"checkpoints-{unique}")
    repository = DynamoDbSessionRepository(f"checkpoints-{unique}", client=client)
    agents = refund_agents([refund_call("tu-1")])

    def fresh() -> Agent:
        return agents(RepositorySessionManager(session_id=THREAD, session_repository=repository))

    assert fresh()("refund").stop_reason == "interrupt"
    # WHEN another fresh agent answers it THEN the parked tool runs, once
    assert fresh()(interrupt_responses({qid("tu-1"): APPROVE})).stop_reason == "end_turn"
    assert agents.runs == [("o-1", 900)]
    # AND the next fresh agent is no longer parked
    assert fresh().take_snapshot(include=["interrupt_state"]).data["interrupt_state"]["activated"] is False


def test_a_bare_interrupt_is_hosted_with_the_default_policy():
    # A Strands tool that interrupts without @wait is hosted too: its reason is the question.
    model = TurnModel([[("ship", {"order_id": "o-1"}, "tu-ship")]])

    @tool(context=True)
    def ship(order_id: str, tool_context: ToolContext) -> str:
        answer = tool_context.interrupt("carrier", reason={"pick": "a carrier"})
        return f"shipped with {answer['carrier']}"

    repository = InMemorySessionRepository()
    adapter = StrandsAdapter(
        lambda manager: Agent(model=model, tools=[ship], callback_handler=None, session_manager=manager),
        session_manager_factory=lambda t: RepositorySessionManager(session_id=t, session_repository=repository),
    )
    rig = RouterRig(adapter)
    (question_id,) = rig.start(THREAD).asked
    assert rig.record(THREAD, question_id).envelope.question == {"pick": "a carrier"}
    rig.answer(THREAD, question_id, {"action": "approve", "carrier": "acme"})
    assert model.last_seen == {"tu-ship": "shipped with acme"}


def test_a_strands_question_is_answered_over_the_api_by_its_id_as_a_browser_or_the_cli_sends_it():
    # GIVEN a Strands agent parked on a question whose id holds ':' (`v1:tool_call:...`)
    import urllib.parse

    from tests.support.api_events import call

    from agent_wait.engine import AnswerService, InMemoryEntryQueue
    from agent_wait.host.api import ApiContext, create_app

    agents = refund_agents([refund_call("tu-1")])
    rig = rig_for(agents)
    rig.start(THREAD)
    queue = InMemoryEntryQueue()
    context = ApiContext(ledger=rig.ledger, service=AnswerService(rig.ledger, queue, clock=lambda: rig.now))
    app = create_app(lambda: context)
    path = f"/questions/{urllib.parse.quote(qid('tu-1'), safe='')}"  # encodeURIComponent, and the CLI's quote
    alice = {
        "iss": "https://issuer.example.com",
        "sub": "u-alice",
        "email": "alice@example.com",
        "email_verified": "true",
    }

    # WHEN a person reads it and approves it through the API
    read = call(app, "GET", path, claims=alice)
    approved = call(app, "POST", f"{path}/answer", {"answer": APPROVE}, claims=alice)

    # THEN both find the question, the approval wins, and the router's hand-over runs the tool once
    assert read.status == 200, read.body
    assert read.json()["question_id"] == qid("tu-1")
    assert approved.status == 200, approved.body
    for message, _, dedup in queue.messages:
        rig.router().handle(json.dumps(message), deduplication_id=dedup)
    assert agents.runs == [("o-1", 900)]
    assert rig.record(THREAD, qid("tu-1")).status is QuestionStatus.RESUMED
