"""The A2A parts on their own: the agent card setting, the routes while A2A is off, the task item's one-time claims,
the push URL policy, and the card's JSON-RPC answers for what is not served.

The whole flow (the `a2a-sdk` client, the router, the inbox, push receivers) is `tests/local/test_a2a.py`.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from tests.support.api_events import call

from agent_wait.contract.schema import Settings
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.errors import ConfigurationError
from agent_wait.host import HostSettings
from agent_wait.host.a2a.agent import A2aAgent
from agent_wait.host.a2a.handler import A2aService
from agent_wait.host.a2a.push import TaskNotifier, push_url_check, run_sync
from agent_wait.host.a2a.tasks import MAX_RESULT_BYTES, DynamoDbTaskStore, task_id_for, thread_for
from agent_wait.host.api import ApiContext, create_app
from agent_wait.ledger import InMemoryLedger

T0 = datetime(2026, 12, 8, 9, 0, tzinfo=UTC)
ALICE = {"iss": "https://issuer.example.com", "sub": "u-alice", "email": "alice@example.com", "email_verified": "true"}
BASE = {Settings.TABLE.value: "questions", Settings.QUEUE_URL.value: "https://sqs.us-east-1.amazonaws.com/1/q.fifo"}


# -- the setting ------------------------------------------------------------------------------------------------


def test_the_agent_card_setting_reads_name_description_and_skills() -> None:
    skill = {"id": "r", "name": "R", "description": "d"}
    card = {"name": "Refunds", "description": "Refunds orders", "skills": [skill]}
    settings = HostSettings.from_env("api", environ={**BASE, Settings.AGENT_CARD.value: json.dumps(card)})
    assert settings.a2a == A2aAgent.from_json(card)
    assert settings.a2a.skills[0].id == "r"
    assert HostSettings.from_env("api", environ=BASE).a2a is None


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("not json", "Expecting value"),
        ("[1]", "got a list, not an object"),
        ('{"name": "R"}', "description must be non-empty text"),
        ('{"name": "R", "description": "d", "colour": "red"}', "unknown field(s) ['colour']"),
        ('{"name": "R", "description": "d", "skills": [{"id": 1}]}', "skills[0] must be an object with text id"),
        ('{"name": "R", "description": "d", "private_push": "yes"}', "private_push must be true or false"),
    ],
)
def test_a_bad_agent_card_setting_is_named_with_what_is_wrong(value: str, says: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(says)) as refused:
        HostSettings.from_env("api", environ={**BASE, Settings.AGENT_CARD.value: value})
    assert Settings.AGENT_CARD.value in refused.value.variables
    assert "must be a JSON object such as" in str(refused.value)


# -- the routes while A2A is off --------------------------------------------------------------------------------


def test_the_routes_answer_404_a2a_off_until_the_setting_is_set() -> None:
    ledger = InMemoryLedger()
    service = AnswerService(ledger, InMemoryEntryQueue(), clock=lambda: T0)
    app = create_app(lambda: ApiContext(ledger=ledger, service=service, clock=lambda: T0))
    card = call(app, "GET", "/.well-known/agent-card.json")
    rpc = call(app, "POST", "/a2a", {"jsonrpc": "2.0", "id": 1, "method": "GetTask"}, claims=ALICE)
    for reply in (card, rpc):
        assert reply.status == 404, reply
        assert reply.json()["reason"] == "a2a_off"
        assert Settings.AGENT_CARD.value in reply.json()["detail"]


# -- the task item ----------------------------------------------------------------------------------------------


def test_a_task_is_made_once_and_each_state_change_is_claimed_once(question_table: tuple[str, Any]) -> None:
    name, client = question_table
    store = DynamoDbTaskStore(name, client=client)
    task_id = task_id_for("alice@example.com", f"m-{T0.timestamp()}-{id(store)}")
    # GIVEN a task made from a caller's message
    _, created = store.create(task_id, context_id="c-1", created_by="alice@example.com", now=T0)
    again, created_again = store.create(task_id, context_id="c-2", created_by="bob@example.com", now=T0)
    assert (created, created_again) == (True, False)
    assert again.context_id == "c-1", "the same message again is the same task, as first made"
    # THEN each change is claimed once, and the task ends once
    assert [store.claim_notice(task_id, "working:start") for _ in range(2)] == [True, False]
    assert store.claim_notice(task_id, "input-required:q-1")
    assert store.end(task_id, "completed", result={"refund": "done"})
    assert not store.end(task_id, "canceled"), "a task that ended stays as it ended"
    kept = store.get(task_id)
    assert kept is not None
    assert (kept.ended, kept.result, kept.notified) == (
        "completed",
        {"refund": "done"},
        {"working:start", "input-required:q-1"},
    )
    # AND no claim is made on a task that does not exist
    assert not store.claim_notice("no-such-task", "working:start")


def test_the_task_item_is_not_a_started_thread_to_the_ledger(question_table: tuple[str, Any]) -> None:
    from agent_wait.aws import DynamoDbLedger

    name, client = question_table
    task_id = task_id_for("alice@example.com", f"m-thread-{id(client)}")
    DynamoDbTaskStore(name, client=client).create(task_id, context_id=task_id, created_by="a", now=T0)
    assert not DynamoDbLedger(name, client=client).thread_exists(thread_for(task_id))


def test_a_result_too_large_to_keep_is_kept_as_a_note_with_its_size(question_table: tuple[str, Any]) -> None:
    name, client = question_table
    store = DynamoDbTaskStore(name, client=client)
    task_id = task_id_for("alice@example.com", f"m-large-{id(store)}")
    store.create(task_id, context_id=task_id, created_by="a", now=T0)
    store.end(task_id, "completed", result={"text": "x" * (MAX_RESULT_BYTES + 1)})
    kept = store.get(task_id)
    assert kept is not None
    assert kept.result["truncated"] is True
    assert kept.result["bytes"] > MAX_RESULT_BYTES


# -- push ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "private_push", "allowed"),
    [
        ("http://127.0.0.1:9/push", False, False),
        ("http://169.254.169.254/latest/meta-data", False, False),
        ("http://10.0.0.7/push", False, False),
        ("ftp://example.com/push", False, False),
        ("http://127.0.0.1:9/push", True, True),
        ("ftp://127.0.0.1/push", True, False),
    ],
)
def test_push_urls_go_to_public_addresses_only_unless_private_push(url: str, private_push: bool, allowed: bool) -> None:
    assert run_sync(push_url_check(private_push)(url)) is allowed


def test_a_push_receiver_that_is_down_is_a_log_line_not_an_error(question_table: tuple[str, Any]) -> None:
    from a2a.types.a2a_pb2 import TaskState

    from agent_wait.host.a2a.states import TaskView
    from agent_wait.host.a2a.tasks import PushTarget

    name, client = question_table
    store = DynamoDbTaskStore(name, client=client)
    task_id = task_id_for("alice@example.com", f"m-down-{id(store)}")
    store.create(task_id, context_id=task_id, created_by="a", now=T0)
    store.put_push(task_id, PushTarget("p-1", "http://127.0.0.1:9/nobody-listens", token="t"))
    item = store.get(task_id)
    assert item is not None
    told = TaskNotifier(store, private_push=True).tell(item, TaskView(TaskState.TASK_STATE_WORKING, "working:start"))
    assert told, "the change is claimed and its delivery tried; the refused connection is logged by the SDK's sender"


# -- what is not served -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "says"),
    [
        ("ListTasks", "ListTasks is not served"),
        ("SendStreamingMessage", "streaming is not served"),
        ("GetExtendedAgentCard", "the public card is the card"),
    ],
)
def test_what_is_not_served_is_a_json_rpc_error_saying_so(
    question_table: tuple[str, Any], method: str, says: str
) -> None:
    name, client = question_table
    ledger = InMemoryLedger()
    service = AnswerService(ledger, InMemoryEntryQueue(), clock=lambda: T0)
    store = DynamoDbTaskStore(name, client=client)
    a2a = A2aService(A2aAgent("R", "d"), store, service, TaskNotifier(store), api_url="https://api.example.com")
    app = create_app(lambda: ApiContext(ledger=ledger, service=service, clock=lambda: T0, a2a=a2a))
    params = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params if "Message" in method else {}}
    reply = call(app, "POST", "/a2a", body, claims=ALICE, headers={"A2A-Version": "1.0"})
    assert reply.status == 200, reply
    text = reply.body if method == "SendStreamingMessage" else reply.json()["error"]["message"]
    assert says in text


# -- the state a task is in ---------------------------------------------------------------------------------------


def test_a_tasks_state_is_read_from_its_threads_questions_failure_and_item() -> None:
    from datetime import timedelta

    from a2a.types.a2a_pb2 import TaskState

    from agent_wait.contract.envelope import Question, WaitEnvelope
    from agent_wait.contract.schema import QuestionStatus
    from agent_wait.host.a2a.states import task_view
    from agent_wait.host.a2a.tasks import TaskItem
    from agent_wait.ledger import Decision, FailureKind, ThreadFailure

    ledger, thread = InMemoryLedger(), thread_for("t-1")
    item = TaskItem("t-1", "t-1", "2026-12-08T09:00:00Z", "alice@example.com")

    def asked(question_id: str, minutes: int) -> Any:
        question = Question(thread, question_id, {"function": "refund", "args": {"amount": 900}})
        return ledger.open(WaitEnvelope.create(question, now=T0 + timedelta(minutes=minutes)), now=T0).record

    def view(records: list[Any], *, failure: Any = None, ended: str | None = None) -> tuple[Any, str]:
        shown = task_view(TaskItem(**{**_fields(item), "ended": ended}), records, failure)
        return shown.state, shown.change

    # Nothing asked yet: working since the start. Asked: input-required on the first open question.
    assert view([]) == (TaskState.TASK_STATE_WORKING, "working:start")
    first, second = asked("q-1", 0), asked("q-2", 1)
    assert view([second, first]) == (TaskState.TASK_STATE_INPUT_REQUIRED, "input-required:q-1")
    # Decided and carried to the agent: working on it, named for it; ended completed once the run is over.
    decided = ledger.decide(thread, "q-1", Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-1"), now=T0)
    ledger.decide(thread, "q-2", Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-2"), now=T0)
    records = ledger.questions(thread)
    assert decided.won
    assert view(records)[0] == TaskState.TASK_STATE_WORKING
    assert view(records, ended="completed") == (TaskState.TASK_STATE_COMPLETED, "completed")
    # A failed thread is a failed task, named by the message that failed; a cancel outranks everything.
    failure = ThreadFailure(thread, FailureKind.ANSWER, "q-2", "a-2", "ValueError", "2026-12-08T09:01:00Z")
    assert view(records, failure=failure) == (TaskState.TASK_STATE_FAILED, "failed:a-2")
    assert view([first], failure=failure, ended="canceled") == (TaskState.TASK_STATE_CANCELED, "canceled")


def _fields(item: Any) -> dict[str, Any]:
    import dataclasses

    return {field.name: getattr(item, field.name) for field in dataclasses.fields(item)}
