"""Every construct variant these tests synthesize runs on the emulator, as `agent-wait dev --app` runs it.

A template feature the local stack cannot stand up makes the functions refuse their settings at start. Found this
way and fixed: a customer managed key (its policy names the functions' roles, so the key and all it encrypts were
left out), `precise_deadlines=True` (no target or role for the schedules), and webhooks whose URL is a secret (no
URL in it on the emulator).
"""

from __future__ import annotations

from typing import Any

import pytest

VARIANTS = ("refund", "features", "quiet", "answering", "cognito_api", "slack")
"""The `tests/cdk/conftest.py` stacks (`embedded` is left out: its graph lives in a temporary folder)."""


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_stack_starts_on_the_emulator(variant: str, request: pytest.FixtureRequest) -> None:
    from agent_wait.local.stack import EmulatedStack

    synthesized: Any = request.getfixturevalue(variant)
    local = EmulatedStack(synthesized.template.to_json(), stack_name=f"variant-{variant.replace('_', '-')}")
    local.start()  # every function's settings read, the router's agent loaded, the API served
    try:
        assert local.environment["AGENT_WAIT_TABLE"]
        assert local.client("dynamodb").describe_table(TableName=local.table)["Table"]["TableStatus"] == "ACTIVE"
    finally:
        local.stop()
