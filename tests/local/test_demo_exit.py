"""`agent-wait demo`'s exit status and its refusal of unknown scenario names."""

from __future__ import annotations

import io
from typing import Any

import pytest
from examples.refund_agent.demo import run


def test_an_unknown_scenario_name_is_refused_with_the_names_to_choose_from() -> None:
    out = io.StringIO()
    assert run(["no-such-scenario"], out=out) == 2
    assert "choose from: auto-approve, approve" in out.getvalue()


def test_a_wrong_outcome_makes_the_demo_exit_non_zero(monkeypatch: pytest.MonkeyPatch, refund_template: dict) -> None:
    # GIVEN a scenario whose check fails (as a regression in the router would make it)
    import examples.refund_agent.demo as demo
    import examples.refund_agent.local as local

    def broken(world: Any, thread: str) -> None:
        world.check("a check that does not hold", False)

    monkeypatch.setitem(demo.SCENARIOS, "broken", ("A broken scenario", broken))
    monkeypatch.setattr(local, "template", lambda: refund_template)
    out = io.StringIO()
    # WHEN the demo runs it / THEN it says which scenario was wrong and exits non-zero
    assert run(["broken"], out=out) == 1
    assert "0 of 1 scenarios behaved as they should; wrong: broken" in out.getvalue()


def test_a_scenario_narrates_only_its_own_question_when_an_earlier_scenario_left_one_open(
    monkeypatch: pytest.MonkeyPatch, refund_template: dict
) -> None:
    # GIVEN the redelivered start (which leaves its question open), then the late approve (whose sweep expires it too)
    import examples.refund_agent.local as local

    monkeypatch.setattr(local, "template", lambda: refund_template)
    out = io.StringIO()
    # WHEN the demo runs both
    assert run(["redelivered-start", "late-approve"], out=out) == 0, out.getvalue()
    # THEN the late approve speaks of its own order's question only, not of the earlier scenario's
    late = out.getvalue().partition("2. A late approve after expiry")[2]
    assert "sweep: sent the default for this order's question" in late
    assert "2 overdue" not in late
    assert late.count("announced wait.expired") == 1, late
    assert "(and 1 answer(s) for questions earlier scenarios left open)" in late
