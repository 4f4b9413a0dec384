"""`agent-wait dev` from `pip install 'agent-wait[local]'`: a feature of the stack whose library is not installed is
turned off and named with the extra that brings it, instead of failing the API's cold start."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from agent_wait.contract.schema import Settings
from agent_wait.local.stack import EmulatedStack


def test_a_feature_whose_library_is_missing_is_off_and_says_which_extra_brings_it(
    refund_template: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN an installation without the mcp, pywebpush and webauthn libraries (a2a-sdk is there)
    missing = {"mcp", "pywebpush", "webauthn"}
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in missing else found(name, *a))
    local = EmulatedStack(refund_template)
    environment = {Settings.MCP_POLICIES.value: "{}", Settings.AGENT_CARD.value: "{}", "AGENT_WAIT_TABLE": "t"}
    # WHEN the stack's settings are made
    kept = local._without_missing_extras(environment)
    # THEN the MCP server, push and passkeys are off, each naming its extra; A2A and the rest stay
    assert kept == {Settings.AGENT_CARD.value: "{}", "AGENT_WAIT_TABLE": "t"}
    assert local.features_off == {
        "mcp": "the MCP server (/mcp): pip install 'agent-wait[mcp]'",
        "push": "web push to the inbox: pip install 'agent-wait[push]'",
        "passkey": "passkeys in the inbox: pip install 'agent-wait[passkey]'",
    }
    assert local._passkey_origin() == {}


def test_with_every_library_installed_nothing_is_off(refund_template: dict[str, Any]) -> None:
    local = EmulatedStack(refund_template)
    environment = {Settings.MCP_POLICIES.value: "{}"}
    assert local._without_missing_extras(environment) == environment
    assert local.features_off == {}
