"""One synthesized RefundAgentStack template and one local stack for the demo and CLI tests; and no test here passes
while the emulator refused a function a call (its IAM check: `agent_wait.local.iam`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.iam_denials import iam_denials  # noqa: F401 - autouse: no test passes while a call was refused


@pytest.fixture(scope="session")
def refund_template() -> dict[str, Any]:
    from examples.refund_agent.local import template

    return template()


@pytest.fixture(scope="module")
def world(refund_template: dict[str, Any]) -> Iterator[Any]:
    """The refund stack on the embedded emulator, with a movable clock and a topic observer."""
    import io

    from examples.refund_agent.demo import MovableClock, World

    from agent_wait.cli._dev import Observer
    from agent_wait.local.stack import EmulatedStack

    clock = MovableClock()
    local = EmulatedStack(refund_template, clock=clock, stack_name=f"demo-{id(clock)}")
    local.start()
    try:
        yield World(local, clock, Observer(local), io.StringIO())
    finally:
        local.stop()
