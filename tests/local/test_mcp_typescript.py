"""The official TypeScript MCP SDK (`@modelcontextprotocol/client` 2.4.0, from npm, run with node) against the refund
stack's MCP server: it negotiates MCP 2026-07-28 and lists `ask_person`; the call returns a task; the question is in
the inbox; an approval there completes the task with the answer; a second client retrying gets the same task;
`tasks/cancel` cancels the question; the deadline completes one with the default. (The SDK's `Client.callTool`
does not claim task results yet, which the first test pins: the calls go through the SDK's own transport.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.local._http import call
from tests.support.refund_world import RefundWorld, refund_stack

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "local" / "mcp_client.mjs"
SDK = ROOT / "node_modules" / "@modelcontextprotocol" / "client" / "package.json"


@pytest.fixture(scope="module")
def world(refund_template: dict[str, Any]) -> Iterator[RefundWorld]:
    if shutil.which("node") is None or not SDK.exists():
        pytest.skip("needs node and the TypeScript SDK: run `npm ci` at the repository root")
    with refund_stack(refund_template, "mcp-ts") as world:
        yield world


def node(world: RefundWorld, command: str, argument: str = "", *, user: str = "ana@example.com") -> Any:
    """One run of the TypeScript client (a fresh client each time): its JSON line."""
    token = world.local.issuer.token(user)
    ran = subprocess.run(
        ["node", str(SCRIPT), f"{world.local.api_url}/mcp", token, command, argument],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    return json.loads(ran.stdout.strip().splitlines()[-1])


def ask(world: RefundWorld, **arguments: Any) -> dict[str, Any]:
    task = node(world, "ask", json.dumps({"question": f"Refund order {uuid.uuid4().hex[:6]}?", **arguments}))
    assert task["resultType"] == "task", task
    return task


def test_the_sdk_negotiates_2026_07_28_and_lists_ask_person(world: RefundWorld) -> None:
    listed = node(world, "tools")
    assert listed["protocolVersion"] == "2026-07-28"
    (tool,) = listed["tools"]
    assert tool["name"] == "ask_person"
    assert tool["inputSchema"]["properties"]["policy"]["enum"] == ["refund-approval"]
    assert tool["inputSchema"]["additionalProperties"] is False
    # The SDK's Client.callTool refuses the tasks extension's result today (a known gap of 2.4.0; pinned here so a
    # release that claims it shows up): the task it was handed exists, and its id is the same on a retry.
    key = f"ts-probe-{uuid.uuid4().hex[:6]}"
    refused = node(world, "calltool", json.dumps({"question": "Probe?", "idempotency_key": key}))
    assert refused["error"] == {
        "code": "UNSUPPORTED_RESULT_TYPE",
        "data": {"resultType": "task", "method": "tools/call"},
    }
    probe = ask(world, question="Probe?", idempotency_key=key)
    assert node(world, "cancel", probe["taskId"])["resultType"] == "complete"


def test_a_task_from_typescript_is_answered_in_the_inbox(world: RefundWorld) -> None:
    task = ask(world)
    assert task["status"] == "working"
    # The inbox lists its question
    inbox = call(f"{world.local.api_url}/questions?status=open", token=world.local.issuer.token("finn@example.com"))
    assert task["taskId"] in {q["question_id"] for q in inbox.body["questions"]}
    # An approval there completes the task with the answer
    answered = call(
        f"{world.local.api_url}/questions/{task['taskId']}/answer",
        method="POST",
        token=world.local.issuer.token("finn@example.com", ["finance"]),
        body={"answer": {"action": "approve"}},
    )
    assert answered.status == 200, answered.body
    done = node(world, "get", task["taskId"])
    assert done["status"] == "completed", done
    assert done["result"]["structuredContent"] == {
        "answer": {"action": "approve"},
        "expired": False,
        "answered_by": "finn@example.com",
    }


def test_a_second_typescript_client_retrying_gets_the_same_task(world: RefundWorld) -> None:
    key = f"ts-{uuid.uuid4().hex[:6]}"
    first = ask(world, question="Refund order 77?", idempotency_key=key)
    again = ask(world, question="Refund order 77?", idempotency_key=key)
    assert again["taskId"] == first["taskId"]


def test_tasks_cancel_from_typescript_cancels_the_question(world: RefundWorld) -> None:
    task = ask(world)
    assert node(world, "cancel", task["taskId"])["resultType"] == "complete"
    done = node(world, "get", task["taskId"])
    assert done["status"] == "cancelled", done
    assert world.row(task["taskId"]).outcome.value == "cancelled"
    # Another person's client finds no such task
    assert node(world, "get", task["taskId"], user="bob@example.com")["error"]["code"] == -32602


def test_the_deadline_completes_a_typescript_task_with_the_default(world: RefundWorld) -> None:
    task = ask(world)
    world.later(timedelta(days=3, minutes=2))
    done = node(world, "get", task["taskId"])
    assert done["status"] == "completed", done
    assert done["result"]["structuredContent"]["answer"] == {"action": "reject", "reason": "no response within P3D"}
    assert done["result"]["structuredContent"]["expired"] is True
