"""The refund agent as an AWS Lambda durable function: the same question, asked with `agent_wait.durable.ask`.

    order → over the auto-approve limit? ask finance (wait_for_callback) → approved? issue_refund (a step) → done

The question, its policy (`FINANCE`: deadline, default, reminder, escalation) and the refund's side effect are the
graph's (`graph.py`); only the host differs: Lambda keeps the execution's state and replays it, and the router
completes its callback with finance's decision instead of resuming a graph. The thread is the order id, so the
question reads the same in the inbox, the CLI and the ledger as the graph's. The ledger and the announcer come from
the variables `AgentWait.serve_durable_function` sets (`AGENT_WAIT_TABLE`, `AGENT_WAIT_TOPIC_ARN`).
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from aws_durable_execution_sdk_python import DurableContext, durable_execution

from agent_wait.common.times import utc_now
from agent_wait.durable import ask

from .graph import AUTO_APPROVE_LIMIT, FINANCE, _record_refund

__all__ = ("CLOCK", "handler")

CLOCK: list[Callable[[], datetime]] = [utc_now]
"""When a question counts as asked: now. `agent-wait demo` puts its movable clock here, the one its router and sweep
read, so a question asked after the demo moved time on is judged by the same clock."""


@functools.cache
def _asking(table: str, topic: str | None) -> tuple[Any, list[Any]]:
    """The ledger and the announcers, built once per table and topic (a warm Lambda keeps them)."""
    from agent_wait.aws import DynamoDbLedger, SnsAnnounce

    return DynamoDbLedger(table), [SnsAnnounce(topic)] if topic else []


@durable_execution
def handler(event: dict[str, Any], context: DurableContext) -> dict[str, Any]:
    """Refund `event["amount"]` on `event["order_id"]`, asking finance first when it is over the limit."""
    order_id, amount = event["order_id"], event["amount"]
    if amount > AUTO_APPROVE_LIMIT:
        ledger, announce = _asking(os.environ["AGENT_WAIT_TABLE"], os.environ.get("AGENT_WAIT_TOPIC_ARN"))
        question = {"function": "issue_refund", "args": {"order_id": order_id, "amount": amount}}
        answer = ask(context, question, FINANCE, ledger=ledger, announce=announce, thread_id=order_id, clock=CLOCK[0])
        if not isinstance(answer, dict) or answer.get("action") != "approve":
            return {"status": "declined", "order_id": order_id}

    def issue_refund(_: Any) -> dict[str, Any]:
        refund_id = f"rf-{uuid.uuid4().hex[:12]}"
        _record_refund(order_id, refund_id, amount)
        return {"status": "refunded", "refund_id": refund_id, "amount": amount}

    return context.step(issue_refund, name="issue_refund")
