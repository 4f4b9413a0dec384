"""The refund agent called over A2A v1.0 with the `a2a-sdk` client, on the local answer API over the emulator.

A2A is turned on as `AgentWait(a2a=...)` turns it on (`AGENT_WAIT_AGENT_CARD`); the client reads the agent card, sends
a message with a push config, and the router runs the refund on thread `a2a-<task id>`. A push receiver (a local HTTP
server) records what it is told. Requests from the client go through the local JWT authorizer, as through API
Gateway's.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from _http import call
from a2a.client import ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError, TaskNotCancelableError, TaskNotFoundError
from examples.refund_agent.demo import MovableClock, count_refunds
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Value

from agent_wait.local.stack import EmulatedStack

AGENT = {
    "name": "Refunds",
    "description": "Refunds an order: send a data part {order_id, amount}; finance approves refunds over 500",
    "skills": [{"id": "refund", "name": "Refund an order", "description": "Refunds one order", "tags": ["refunds"]}],
}
"""What `AgentWait(a2a=A2aProps(...))` puts in `AGENT_WAIT_AGENT_CARD`; the local stack adds `private_push` (the push
receiver is on 127.0.0.1)."""
LARGE = 900
"""Over the refund's auto-approve limit: finance is asked."""


@dataclass
class Receiver:
    """A push receiver on 127.0.0.1: each POST's JSON body and its notification token, in order."""

    url: str = ""
    posts: list[tuple[dict[str, Any], str | None]] = field(default_factory=list)

    def states(self, task_id: str) -> list[str]:
        """The states told for `task_id`, in order (`TASK_STATE_` left off, lower case)."""
        return [
            body["task"]["status"]["state"].removeprefix("TASK_STATE_").lower().replace("_", "-")
            for body, _ in self.posts
            if body.get("task", {}).get("id") == task_id
        ]


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    received = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            received.posts.append((json.loads(self.rfile.read(length)), self.headers.get("X-A2A-Notification-Token")))
            self.send_response(200)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    received.url = f"http://127.0.0.1:{server.server_address[1]}/a2a-push"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield received
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def local(refund_template: dict[str, Any]) -> Iterator[EmulatedStack]:
    """The refund stack on the emulator with A2A on, its answer API on 127.0.0.1."""
    stack = EmulatedStack(
        refund_template,
        clock=MovableClock(),
        stack_name=f"a2a-{uuid.uuid4().hex[:8]}",
        extra_environment={"AGENT_WAIT_AGENT_CARD": json.dumps(AGENT)},
    )
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


@dataclass
class Caller:
    """An A2A client of the hosted refund agent, signed in as one person."""

    local: EmulatedStack
    token: str

    def _run(self, call: Any) -> Any:
        async def go() -> Any:
            async with httpx.AsyncClient(headers={"Authorization": f"Bearer {self.token}"}, timeout=60) as http:
                factory = ClientFactory(ClientConfig(streaming=False, httpx_client=http))
                client = await factory.create_from_url(self.local.api_url)
                return await call(client)

        return asyncio.run(go())

    def send(self, message: Message, *, push: TaskPushNotificationConfig | None = None) -> Task:
        request = SendMessageRequest(message=message)
        if push is not None:
            request.configuration.CopyFrom(SendMessageConfiguration(task_push_notification_config=push))

        async def send(client: Any) -> Task:
            responses = [response async for response in client.send_message(request)]
            assert len(responses) == 1, responses
            assert responses[0].HasField("task"), responses
            return responses[0].task

        return self._run(send)

    def get(self, task_id: str) -> Task:
        return self._run(lambda client: client.get_task(GetTaskRequest(id=task_id)))

    def cancel(self, task_id: str) -> Task:
        return self._run(lambda client: client.cancel_task(CancelTaskRequest(id=task_id)))

    def push_configs(self, task_id: str) -> list[TaskPushNotificationConfig]:
        request = ListTaskPushNotificationConfigsRequest(task_id=task_id)
        return list(self._run(lambda client: client.list_task_push_notification_configs(request)).configs)


def _caller(local: EmulatedStack, user: str = "alice@example.com") -> Caller:
    return Caller(local, local.issuer.token(user, ["finance"]))


def _refund(order_id: str, amount: int = LARGE) -> Message:
    data = Value()
    ParseDict({"order_id": order_id, "amount": amount}, data)
    return Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(data=data)])


def _reply(task_id: str, *, text: str | None = None, data: dict[str, Any] | None = None) -> Message:
    part = Part(text=text) if text is not None else Part(data=ParseDict(data or {}, Value()))
    return Message(message_id=uuid.uuid4().hex, task_id=task_id, role=Role.ROLE_USER, parts=[part])


def _asked(task: Task) -> dict[str, Any]:
    """The question an input-required task carries: its status message's data part."""
    (data,) = [MessageToDict(part.data) for part in task.status.message.parts if part.HasField("data")]
    return data


def _started(local: EmulatedStack, caller: Caller, order_id: str, **push: Any) -> Task:
    config = TaskPushNotificationConfig(**push) if push else None
    task = caller.send(_refund(order_id), push=config)
    assert task.status.state == TaskState.TASK_STATE_WORKING, task
    local.pump()
    return caller.get(task.id)


# -- the card ---------------------------------------------------------------------------------------------------


def test_the_agent_card_is_public_and_names_the_json_rpc_endpoint_and_bearer_auth(local: EmulatedStack) -> None:
    reply = call(f"{local.api_url}/.well-known/agent-card.json")
    assert reply.status == 200, reply
    card = reply.body
    assert (card["name"], card["capabilities"]["pushNotifications"]) == ("Refunds", True)
    assert card["supportedInterfaces"][0]["url"] == f"{local.api_url}/a2a"
    assert card["supportedInterfaces"][0]["protocolBinding"] == "JSONRPC"
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "bearer"
    assert [skill["id"] for skill in card["skills"]] == ["refund"]


# -- the flow ---------------------------------------------------------------------------------------------------


def test_a_refund_sent_over_a2a_asks_finance_is_answered_in_the_inbox_and_completes(
    local: EmulatedStack, receiver: Receiver
) -> None:
    caller = _caller(local)
    order = f"order-a2a-{uuid.uuid4().hex[:8]}"
    # GIVEN a refund sent as an A2A message with a push config, run by the router
    task = _started(local, caller, order, url=receiver.url, token="tok-inbox")
    # THEN the task is input-required, carrying the question: its text, its id, the call and the answer form
    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, task
    asked = _asked(task)
    assert asked["call"] == {"name": "issue_refund", "arguments": {"order_id": order, "amount": LARGE}}
    assert asked["answer_form"]["allowed_actions"] == ["approve", "reject"]
    assert "issue_refund" in task.status.message.parts[0].text
    # WHEN finance approves it through the inbox's own route
    inbox = call(
        f"{local.api_url}/questions/{asked['question_id']}/answer",
        method="POST",
        token=local.issuer.token("bob@example.com", ["finance"]),
        body={"answer": {"action": "approve"}},
    )
    assert inbox.status == 200, inbox
    local.pump()
    # THEN the task completes, with the run's result as its artifact, and the refund ran once
    done = caller.get(task.id)
    assert done.status.state == TaskState.TASK_STATE_COMPLETED, done
    (artifact,) = done.artifacts
    assert MessageToDict(artifact.parts[0].data)["refund"]["status"] == "refunded"
    assert count_refunds(local, f"a2a-{task.id}") == 0  # the order id is the agent's input, not the thread
    assert count_refunds(local, order) == 1
    # AND the push receiver was told each state change once, with the config's token
    assert receiver.states(task.id) == ["working", "input-required", "working", "completed"]
    assert {token for body, token in receiver.posts if body["task"]["id"] == task.id} == {"tok-inbox"}


def test_the_same_message_again_is_the_same_task_and_tells_nobody_twice(
    local: EmulatedStack, receiver: Receiver
) -> None:
    caller = _caller(local)
    order = f"order-a2a-{uuid.uuid4().hex[:8]}"
    message = _refund(order)
    push = TaskPushNotificationConfig(url=receiver.url, token="tok-again")
    first = caller.send(message, push=push)
    local.pump()
    # WHEN the client sends the very same message again (a retry), and the router sees the start again
    again = caller.send(message, push=push)
    local.send({"thread_id": f"a2a-{first.id}", "input": {"order_id": order, "amount": LARGE}, "start_id": first.id})
    replayed = local.pump().outcomes
    # THEN it is the same task, still waiting on the one question, and no state change was told twice
    assert again.id == first.id
    assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert {outcome.kind.value for outcome in replayed} == {"start_replayed"}  # the agent did not run again
    assert receiver.states(first.id) == ["working", "input-required"]
    assert len(caller.push_configs(first.id)) == 1


def test_an_answer_sent_as_the_next_message_completes_the_task(local: EmulatedStack, receiver: Receiver) -> None:
    caller = _caller(local)
    order = f"order-a2a-{uuid.uuid4().hex[:8]}"
    task = _started(local, caller, order, url=receiver.url, token="tok-message")
    # WHEN the client answers with the text "approve" as the task's next message
    answered = caller.send(_reply(task.id, text="approve"))
    # THEN the decision is the caller's, made at once; the router carries it on and the task completes
    assert answered.status.state == TaskState.TASK_STATE_WORKING, answered
    question = _asked(task)["question_id"]
    shown = call(f"{local.api_url}/questions/{question}", token=caller.token).body
    assert (shown["outcome"]["answered_by"], shown["outcome"]["answer"]) == ("alice@example.com", {"action": "approve"})
    local.pump()
    assert caller.get(task.id).status.state == TaskState.TASK_STATE_COMPLETED
    assert count_refunds(local, order) == 1
    assert receiver.states(task.id) == ["working", "input-required", "working", "completed"]


def test_a_data_part_answer_rejects_and_the_refund_never_runs(local: EmulatedStack) -> None:
    caller = _caller(local)
    order = f"order-a2a-{uuid.uuid4().hex[:8]}"
    task = _started(local, caller, order)
    caller.send(_reply(task.id, data={"action": "reject", "reason": "duplicate order"}))
    local.pump()
    assert caller.get(task.id).status.state == TaskState.TASK_STATE_COMPLETED
    assert count_refunds(local, order) == 0


def test_cancel_task_cancels_the_question_and_the_task_ends_canceled(local: EmulatedStack, receiver: Receiver) -> None:
    caller = _caller(local)
    order = f"order-a2a-{uuid.uuid4().hex[:8]}"
    task = _started(local, caller, order, url=receiver.url, token="tok-cancel")
    question = _asked(task)["question_id"]
    cancelled = caller.cancel(task.id)
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED, cancelled
    local.pump()  # the router carries the cancellation to the agent, which moves on without refunding
    assert caller.get(task.id).status.state == TaskState.TASK_STATE_CANCELED
    assert call(f"{local.api_url}/questions/{question}", token=caller.token).body["outcome"]["status"] == "cancelled"
    assert count_refunds(local, order) == 0
    assert receiver.states(task.id) == ["working", "input-required", "canceled"]
    # AND a canceled task cannot be cancelled again
    with pytest.raises(TaskNotCancelableError, match="already canceled"):
        caller.cancel(task.id)


# -- refusals ---------------------------------------------------------------------------------------------------


def test_without_a_token_the_endpoint_is_unauthorized(local: EmulatedStack) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
    reply = call(f"{local.api_url}/a2a", method="POST", body=body, headers={"A2A-Version": "1.0"})
    assert (reply.status, reply.body) == (401, {"message": "Unauthorized"})


def test_an_unknown_task_is_task_not_found(local: EmulatedStack) -> None:
    caller = _caller(local)
    with pytest.raises(TaskNotFoundError, match="no task 'no-such-task'"):
        caller.get("no-such-task")
    with pytest.raises(TaskNotFoundError, match="start one with a message that names no taskId"):
        caller.send(_reply("no-such-task", text="approve"))


def test_a_message_that_answers_nothing_is_invalid_params_and_the_question_stays_open(local: EmulatedStack) -> None:
    caller = _caller(local)
    task = _started(local, caller, f"order-a2a-{uuid.uuid4().hex[:8]}")
    with pytest.raises(InvalidParamsError, match=r"answers nothing: send a data part such as .*approve or reject"):
        caller.send(_reply(task.id, text="hello there"))
    assert caller.get(task.id).status.state == TaskState.TASK_STATE_INPUT_REQUIRED


def test_an_action_the_question_does_not_allow_is_refused_with_its_reason(local: EmulatedStack) -> None:
    caller = _caller(local)
    task = _started(local, caller, f"order-a2a-{uuid.uuid4().hex[:8]}")
    with pytest.raises(InvalidParamsError, match=r"was refused \(action_not_allowed\)"):
        caller.send(_reply(task.id, data={"action": "escalate"}))
    assert caller.get(task.id).status.state == TaskState.TASK_STATE_INPUT_REQUIRED


def test_a_message_to_a_completed_task_is_refused(local: EmulatedStack) -> None:
    caller = _caller(local)
    task = caller.send(_refund(f"order-a2a-{uuid.uuid4().hex[:8]}", amount=100))  # under the limit: nobody is asked
    local.pump()
    assert caller.get(task.id).status.state == TaskState.TASK_STATE_COMPLETED
    with pytest.raises(InvalidParamsError, match="is completed and takes no more messages"):
        caller.send(_reply(task.id, text="approve"))


def test_a_thread_that_fails_is_a_failed_task_saying_how_it_is_retried(
    local: EmulatedStack, receiver: Receiver
) -> None:
    caller = _caller(local)
    # GIVEN a refund the agent refuses to start (its amount is not a positive whole number: the agent raises)
    task = caller.send(_refund(f"order-a2a-{uuid.uuid4().hex[:8]}", amount=-5), push=None)
    caller._run(
        lambda client: client.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=task.id, url=receiver.url, token="tok-failed")
        )
    )
    local.pump()
    # THEN the task failed, its status saying how an operator runs it again, and its push config was told
    failed = caller.get(task.id)
    assert failed.status.state == TaskState.TASK_STATE_FAILED, failed
    assert f"agent-wait retry a2a-{task.id}" in failed.status.message.parts[0].text
    assert receiver.states(task.id) == ["failed"]


# -- the documentation's client ---------------------------------------------------------------------------------


def test_the_client_in_docs_a2a_md_starts_a_task_and_reads_its_state(local: EmulatedStack) -> None:
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "a2a.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", page, re.DOTALL) if "ask_for_refund" in b]
    namespace: dict[str, Any] = {}
    exec(compile(block, "docs/a2a.md", "exec"), namespace)  # the page's own snippet, run as written
    caller = _caller(local)
    order = f"order-a2a-doc-{uuid.uuid4().hex[:8]}"
    task_id = asyncio.run(namespace["ask_for_refund"](local.api_url, caller.token, order))
    assert asyncio.run(namespace["task_state"](local.api_url, caller.token, task_id)) == "TASK_STATE_WORKING"
    local.pump()
    assert asyncio.run(namespace["task_state"](local.api_url, caller.token, task_id)) == "TASK_STATE_INPUT_REQUIRED"


def test_a_caller_the_policy_does_not_name_is_refused_and_one_it_names_answers(local: EmulatedStack) -> None:
    # GIVEN the refund agent whose policy lets finance alone answer (`local_api_graph`), hosted on the same stack
    original = local.environment["AGENT_WAIT_GRAPH"]
    local.use_agent("local_api_graph:build_graph")
    try:
        oscar = Caller(local, local.issuer.token("oscar@example.com", ["ops"]))
        task = _started(local, oscar, f"order-a2a-{uuid.uuid4().hex[:8]}")
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        # WHEN oscar (ops) answers his own task by message, THEN the policy refuses him: he is not finance
        with pytest.raises(InvalidParamsError, match=r"was refused \(answerer_not_allowed\)"):
            oscar.send(_reply(task.id, text="approve"))
        assert oscar.get(task.id).status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        # AND alice (finance) answers the same task by message: hers is the decision
        _caller(local).send(_reply(task.id, text="approve"))
        local.pump()
        assert oscar.get(task.id).status.state == TaskState.TASK_STATE_COMPLETED
    finally:
        local.use_agent(original)
