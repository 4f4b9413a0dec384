"""Every scenario of `agent-wait demo` is a test: the real handlers, on the emulator, through the queue."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from examples.refund_agent.demo import SCENARIOS


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario_behaves_as_it_should(world: Any, name: str) -> None:
    # GIVEN the refund stack on the emulator
    title, scenario = SCENARIOS[name]
    before = len(world.checks)
    # WHEN the scenario runs through the entry queue, the router and the sweep
    scenario(world, f"order-{name}-{uuid.uuid4().hex[:6]}")
    # THEN every check a person would make holds
    wrong = [description for description, ok in world.checks[before:] if not ok]
    assert not wrong, f"{title}: wrong outcomes: {wrong}\n{world.out.getvalue()}"
    assert world.checks[before:], f"{title} checked nothing"
