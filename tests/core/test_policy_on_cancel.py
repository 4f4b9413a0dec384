"""`WaitPolicy(on_cancel=...)`: the answer a cancelled question gives its agent rides in the envelope's rules; without
it a cancel delivers a cancellation, never the default."""

from __future__ import annotations

import re

import pytest

from agent_wait import PolicyError, WaitPolicy
from agent_wait.policy import MAX_DEFAULT_BYTES


def test_a_declared_cancellation_answer_rides_in_the_rules_and_round_trips() -> None:
    policy = WaitPolicy(default={"action": "reject"}, on_cancel={"action": "reject", "reason": "cancelled"})

    assert policy.rules()["on_cancel"] == {"action": "reject", "reason": "cancelled"}
    assert WaitPolicy.from_dict(policy.to_dict()).on_cancel == {"action": "reject", "reason": "cancelled"}


def test_without_one_the_rules_say_nothing_so_a_cancel_delivers_a_cancellation() -> None:
    # A cancel then gives the agent {"action": "cancelled", "reason", "by"}, never the default
    # (tests/engine/test_cancel.py).
    policy = WaitPolicy(default={"action": "reject"})

    assert policy.on_cancel is None
    assert "on_cancel" not in policy.rules()
    assert "on_cancel" not in policy.to_dict()


def test_a_cancellation_answer_must_be_small_json() -> None:
    with pytest.raises(PolicyError, match=re.escape("on_cancel must be JSON")):
        WaitPolicy(on_cancel={"when": object()})
    with pytest.raises(PolicyError, match=re.escape(f"the limit is {MAX_DEFAULT_BYTES:,} (MAX_DEFAULT_BYTES)")):
        WaitPolicy(on_cancel={"note": "x" * MAX_DEFAULT_BYTES})
