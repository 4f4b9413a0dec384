"""agent-wait as an MCP server, against the refund stack on the emulator (`AgentWait(mcp=McpProps(...))`, as
`agent-wait dev` serves it), with the official Python `mcp` client: `ask_person` returns a task, the question is in
the inbox, an approval there completes the task, a retry gets the same task, `tasks/cancel` cancels the question,
the deadline completes it with the default; people call with a JWT, machines with SigV4; every refusal is clear."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult
from tests.local._http import call
from tests.local.mcp_clients import Door, ask, cancel, get, tool_names
from tests.support.refund_world import GRAPH, RefundWorld

from agent_wait.local.sigv4 import LocalPrincipal
from agent_wait.mcp.tasks import CreateTaskResult, GetTaskResult

pytestmark = pytest.mark.timeout(300)

RUNNER_1 = LocalPrincipal("AKIDRUNNER1", "runner-secret-1", "arn:aws:sts::111122223333:assumed-role/agent-runner/one")
RUNNER_2 = LocalPrincipal("AKIDRUNNER2", "runner-secret-2", "arn:aws:sts::111122223333:assumed-role/agent-runner/two")
"""Two sessions of one role: one caller (`iam:arn:aws:sts::111122223333:assumed-role/agent-runner`)."""
OTHER = LocalPrincipal("AKIDOTHER", "other-secret", "arn:aws:iam::111122223333:user/other-bot")


@pytest.fixture(scope="module")
def world(refund_template: dict[str, Any]) -> Iterator[RefundWorld]:
    """The refund stack with its MCP server, and local signers for the IAM route."""
    from examples.refund_agent.demo import MovableClock

    from agent_wait.local.stack import EmulatedStack

    clock = MovableClock()
    local = EmulatedStack(
        dict(refund_template),
        clock=clock,
        stack_name=f"mcp-{uuid.uuid4().hex[:8]}",
        extra_environment={"AGENT_WAIT_GRAPH": GRAPH},
        iam_principals=(RUNNER_1, RUNNER_2, OTHER),
    )
    local.start()
    try:
        yield RefundWorld(local, clock)
    finally:
        local.stop()


def person(world: RefundWorld, user: str = "ana@example.com", groups: tuple[str, ...] = ()) -> Door:
    return Door(world.local.api_url, token=world.local.issuer.token(user, list(groups)))


def machine(world: RefundWorld, signer: LocalPrincipal) -> Door:
    from botocore.credentials import Credentials

    return Door(world.local.api_url, signer=Credentials(signer.access_key, signer.secret_key))


def asked(door: Door, **arguments: Any) -> CreateTaskResult:
    found = ask(door, {"question": f"Refund order {uuid.uuid4().hex[:6]}?", **arguments})
    assert isinstance(found, CreateTaskResult), found
    return found


def got(door: Door, task_id: str) -> GetTaskResult:
    found = get(door, task_id)
    assert isinstance(found, GetTaskResult), found
    return found


def tool_error(result: object) -> str:
    assert isinstance(result, CallToolResult), result
    assert result.is_error, result
    return " ".join(getattr(block, "text", "") for block in result.content)


def test_ask_person_returns_a_working_task_and_the_inbox_lists_its_question(world: RefundWorld) -> None:
    # GIVEN ana, signed in, with an MCP client that declares the tasks extension
    door = person(world)
    assert tool_names(door) == ["ask_person"]
    # WHEN she asks a person
    task = asked(door, policy="refund-approval")
    # THEN a task is created, working, and its question is open in the inbox's list, asked by ana, polled
    assert task.status == "working"
    assert task.task_id.startswith("mcp-")
    assert task.poll_interval_ms == 5000
    listed = call(f"{world.local.api_url}/questions?status=open", token=world.local.issuer.token("finn@example.com"))
    assert listed.status == 200
    ids = {q["question_id"]: q for q in listed.body["questions"]}
    assert task.task_id in ids, "the question an MCP client asked is in the inbox's list"
    view = ids[task.task_id]
    assert view["source"]["resume"] == "polled"
    assert view["source"]["asked_by"] == "ana@example.com"
    assert view["policy"]["tags"] == {"approver_group": "finance"}
    assert view["thread_id"] == f"mcp:{task.task_id}"
    # AND the sweep announces it on its first run past its minute of grace, like any question whose announcement is owed
    assert not world.row(task.task_id).announced
    world.later(timedelta(minutes=2))
    assert world.row(task.task_id).announced


def test_an_approval_in_the_inbox_completes_the_task_with_the_answer(world: RefundWorld) -> None:
    door = person(world)
    task = asked(door)
    # WHEN a finance person approves it in the inbox (the answer API, as the page does)
    approver = world.local.issuer.token("finn@example.com", ["finance"])
    answered = call(
        f"{world.local.api_url}/questions/{task.task_id}/answer",
        method="POST",
        token=approver,
        body={"answer": {"action": "approve"}},
    )
    assert answered.status == 200, answered.body
    # THEN the task is completed with the person's answer
    done = got(door, task.task_id)
    assert done.status == "completed", done
    result = done.call_result()
    assert result is not None
    assert not result.is_error
    assert result.structured_content == {
        "answer": {"action": "approve"},
        "expired": False,
        "answered_by": "finn@example.com",
    }
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    # AND the router marks the question resumed without running any agent (nothing waits but the poller)
    world.local.pump()
    assert world.row(task.task_id).status.value == "resumed"
    assert got(door, task.task_id).status == "completed"


def test_a_second_client_retrying_the_same_call_gets_the_same_task(world: RefundWorld) -> None:
    key = f"refund-{uuid.uuid4().hex[:6]}"
    first = asked(person(world), idempotency_key=key, question="Refund order 42?")
    # WHEN a second client of the same person retries the call (a new token, a new connection)
    again = asked(person(world), idempotency_key=key, question="Refund order 42?")
    # THEN it is the same task; another person with the same key gets their own
    assert again.task_id == first.task_id
    other = asked(person(world, "bob@example.com"), idempotency_key=key, question="Refund order 42?")
    assert other.task_id != first.task_id
    # AND the same key with another question is refused, saying why
    reused = ask(person(world), {"question": "Refund order 43?", "idempotency_key": key})
    assert "idempotency_key was used for another question" in tool_error(reused)


def test_a_retry_with_the_same_request_id_gets_the_same_task(world: RefundWorld) -> None:
    # GIVEN a raw JSON-RPC tools/call, sent twice with one request id (a client retrying after a lost response)
    token = world.local.issuer.token("ana@example.com")
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "ask_person",
            "arguments": {"question": f"Refund {uuid.uuid4().hex[:6]}?"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
                "io.modelcontextprotocol/clientInfo": {"name": "curl", "version": "1"},
            },
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "ask_person",
    }
    first = call(f"{world.local.api_url}/mcp", method="POST", token=token, body=body, headers=headers)
    second = call(f"{world.local.api_url}/mcp", method="POST", token=token, body=body, headers=headers)
    assert first.status == 200, first.body
    assert first.body["result"]["resultType"] == "task"
    assert second.body["result"]["taskId"] == first.body["result"]["taskId"]


def test_tasks_cancel_cancels_the_question_through_the_desk(world: RefundWorld) -> None:
    door = person(world)
    task = asked(door)
    # WHEN the asker cancels the task
    assert cancel(door, task.task_id) is None
    # THEN the task is cancelled, and so is its question, by the asker, with a reason
    done = got(door, task.task_id)
    assert done.status == "cancelled", done
    row = world.row(task.task_id)
    assert row.outcome is not None
    assert row.outcome.value == "cancelled"
    assert row.answered_by == "ana@example.com"
    assert row.via == "mcp"
    assert row.reason
    # AND a later approval in the inbox is refused: the first decision won
    approver = world.local.issuer.token("finn@example.com", ["finance"])
    late = call(
        f"{world.local.api_url}/questions/{task.task_id}/answer",
        method="POST",
        token=approver,
        body={"answer": {"action": "approve"}},
    )
    assert late.status == 409
    assert late.body["reason"] == "cancelled"
    # AND cancelling again changes nothing
    assert cancel(door, task.task_id) is None
    assert got(door, task.task_id).status == "cancelled"


def test_another_caller_sees_no_task(world: RefundWorld) -> None:
    task = asked(person(world))
    bob = person(world, "bob@example.com")
    for refused in (get(bob, task.task_id), cancel(bob, task.task_id), get(bob, "mcp-0000")):
        assert isinstance(refused, MCPError), refused
        assert "no task" in refused.message, refused
    assert got(person(world), task.task_id).status == "working"


def test_a_machine_signs_with_sigv4_and_its_role_is_one_caller(world: RefundWorld) -> None:
    # GIVEN two sessions of one role, signing with SigV4 on POST /mcp/iam
    first, second = machine(world, RUNNER_1), machine(world, RUNNER_2)
    task = asked(first, idempotency_key="nightly-report", question="Publish the nightly report?")
    # THEN the role is who asked, and its other session finds the same task
    assert (
        world.row(task.task_id).envelope.source["asked_by"] == "iam:arn:aws:sts::111122223333:assumed-role/agent-runner"
    )
    assert (
        asked(second, idempotency_key="nightly-report", question="Publish the nightly report?").task_id == task.task_id
    )
    assert got(second, task.task_id).status == "working"
    # AND another principal sees nothing of it
    refused = get(machine(world, OTHER), task.task_id)
    assert isinstance(refused, MCPError)


def test_the_routes_refuse_callers_without_a_valid_token_or_signature(world: RefundWorld) -> None:
    url = world.local.api_url
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    assert call(f"{url}/mcp", method="POST", body=ping).status == 401
    assert call(f"{url}/mcp", method="POST", body=ping, token="not-a-token").status == 401
    expired = world.local.issuer.token("ana@example.com", expires_in=1, issued_at=0)
    assert call(f"{url}/mcp", method="POST", body=ping, token=expired).status == 401
    unsigned = call(f"{url}/mcp/iam", method="POST", body=ping)
    assert unsigned.status == 403
    assert unsigned.body == {"message": "Forbidden"}
    forged = call(
        f"{url}/mcp/iam",
        method="POST",
        body=ping,
        headers={
            "Authorization": "AWS4-HMAC-SHA256 Credential=AKIDRUNNER1/20261208/us-east-1/execute-api/aws4_request, "
            "SignedHeaders=host;x-amz-date, Signature=" + "0" * 64,
            "X-Amz-Date": "20261208T000000Z",
        },
    )
    assert forged.status == 403
    # AND a bearer token does not open the IAM route, nor a signature the JWT one
    assert (
        call(f"{url}/mcp/iam", method="POST", body=ping, token=world.local.issuer.token("ana@example.com")).status
        == 403
    )


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"answerers": ["mallory@example.com"]}, "does not take ['answerers']"),
        ({"answerer_groups": ["everyone"]}, "does not take ['answerer_groups']"),
        ({"timeout": "PT1S"}, "the deadline and its default are set by the server's named policy"),
        ({"policy": "anything-goes"}, "unknown policy 'anything-goes'; this server asks under ['refund-approval']"),
        ({"tags": {"approver_group": "nobody"}}, "select no policy"),
        ({"surprise": 1}, "unknown argument(s) ['surprise']"),
    ],
)
def test_a_client_cannot_name_answerers_or_widen_the_policy(world: RefundWorld, arguments: Any, says: str) -> None:
    refused = ask(person(world), {"question": "Refund order 9?", **arguments})
    assert says in tool_error(refused)


def test_a_client_without_the_tasks_extension_is_told_to_declare_it(world: RefundWorld) -> None:
    token = world.local.issuer.token("ana@example.com")
    body = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {
            "name": "ask_person",
            "arguments": {"question": "Refund?"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "curl", "version": "1"},
            },
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "ask_person",
    }
    reply = call(f"{world.local.api_url}/mcp", method="POST", token=token, body=body, headers=headers)
    assert reply.body["result"]["isError"] is True
    assert "declare the tasks extension (io.modelcontextprotocol/tasks)" in reply.body["result"]["content"][0]["text"]
