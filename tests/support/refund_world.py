"""The refund stack on the emulator as the channel loop tests drive it: start a refund, read its row and its
refunds, move the clock and let the sweep run. `tests/local/test_email_loop.py` and `test_slack_loop.py` build on it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

GRAPH = "tests.browser.inbox_graph:build_graph"
"""The refund graph the loop tests run (its `kind` input picks the question: a refund, an editable one, ...)."""


@dataclass
class RefundWorld:
    """A started `EmulatedStack` of the refund example, and the clock it reads."""

    local: Any
    clock: Any

    def ask(self, amount: int = 900, kind: str = "refund") -> tuple[str, str]:
        """Start a refund over the limit on a new thread; (thread, question id)."""
        thread = f"order-{uuid.uuid4().hex[:6]}"
        self.local.send(
            {"thread_id": thread, "input": {"order_id": thread, "amount": amount, "kind": kind}, "start_id": thread},
            deduplication_id=uuid.uuid4().hex,
        )
        asked = [q for outcome in self.local.pump().outcomes for q in outcome.asked]
        assert len(asked) == 1, asked
        return thread, asked[0]

    def row(self, question: str) -> Any:
        from agent_wait.aws.ledger import DynamoDbLedger

        record = DynamoDbLedger(self.local.table, client=self.local.client("dynamodb")).find(question)
        assert record is not None
        return record

    def refunds(self, order_id: str) -> list[int]:
        """The amounts refunded for `order_id` (the example's own table), in order."""
        from examples.refund_agent.settings import REFUND_TABLE_VARIABLE

        response = self.local.client("dynamodb").query(
            TableName=self.local.environment[REFUND_TABLE_VARIABLE],
            KeyConditionExpression="order_id = :o",
            ExpressionAttributeValues={":o": {"S": order_id}},
        )
        return [int(item["amount"]["N"]) for item in response["Items"]]

    def later(self, by: timedelta) -> None:
        """Move the clock by `by`, run the sweep, and deliver what it sent."""
        self.clock.offset += by
        self.local.sweep()
        self.local.pump()


@contextmanager
def refund_stack(template: Mapping[str, Any], name: str, environment: Mapping[str, str] = {}) -> Iterator[RefundWorld]:
    """The refund example's stack on the emulator (`GRAPH` its graph, `environment` besides), stopped after."""
    from examples.refund_agent.demo import MovableClock

    from agent_wait.local.stack import EmulatedStack

    clock = MovableClock()
    local = EmulatedStack(
        dict(template),
        clock=clock,
        stack_name=f"{name}-{uuid.uuid4().hex[:8]}",
        extra_environment={"AGENT_WAIT_GRAPH": GRAPH, **environment},
    )
    local.start()
    try:
        yield RefundWorld(local, clock)
    finally:
        local.stop()
