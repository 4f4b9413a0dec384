"""The deadline of a question an MCP client asked: the sweep applies the policy's default, and the task completes
with it, marked expired (its own stack, since the clock moves three days)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from tests.local.mcp_clients import Door
from tests.local.test_mcp_server import asked, got

pytestmark = pytest.mark.timeout(300)


def test_the_deadline_completes_the_task_with_the_default(refund_template: dict[str, Any]) -> None:
    from tests.support.refund_world import refund_stack

    with refund_stack(refund_template, "mcp-deadline") as world:
        door = Door(world.local.api_url, token=world.local.issuer.token("ana@example.com"))
        task = asked(door)
        # WHEN nobody answers within the policy's three days: the sweep applies the default
        world.later(timedelta(days=3, minutes=2))
        door = Door(world.local.api_url, token=world.local.issuer.token("ana@example.com"))
        done = got(door, task.task_id)
        # THEN the task is completed with the default, marked expired
        assert done.status == "completed", done
        result = done.call_result()
        assert result is not None
        assert result.structured_content == {
            "answer": {"action": "reject", "reason": "no response within P3D"},
            "expired": True,
            "answered_by": None,
        }
        assert "nobody answered by the deadline" in (done.status_message or "")
