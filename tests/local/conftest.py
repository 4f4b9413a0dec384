"""One synthesized RefundAgentStack template and one local stack for the demo and CLI tests; and no test here passes
while the emulator refused a function a call (its IAM check: `agent_wait.local.iam`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def iam_denials(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every call the emulator's IAM check refuses during a test, which fails the test unless the test takes them
    out of this list: a handler may swallow an `AccessDenied` (a broken announcer is a log line), so a passing flow
    alone does not prove the roles grant what it did."""
    from agent_wait.local.iam import LocalIam

    refused: list[Any] = []
    deny = LocalIam._deny

    def recorded(self: LocalIam, *args: Any, **kwargs: Any) -> Any:
        denial = deny(self, *args, **kwargs)
        refused.append(denial)
        return denial

    monkeypatch.setattr(LocalIam, "_deny", recorded)
    yield refused
    assert not refused, "the emulator refused a function these calls:\n" + "\n".join(d.message for d in refused)


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
