"""Operators on the emulator: `agent-wait cancel` and `agent-wait answer Q1 Q2 ... approve` over the real answer API
(API Gateway's JWT authorizer played locally), the real router and the DynamoDB ledger; each decides once.

One emulated refund stack for the module (`world`, tests/local/conftest.py); the CLI runs as from another terminal.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from agent_wait.cli import main
from agent_wait.cli._target import Target


@pytest.fixture
def alice(world: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The CLI pointed at the running stack (its state file), and a token for alice in finance."""
    local = world.local
    monkeypatch.chdir(tmp_path)
    Target.of_local_stack(local).save()  # as `agent-wait dev` saves it
    from agent_wait.host import router

    router._router()  # the router had its cold start in its own environment, before the CLI runs in another
    for name in ("AGENT_WAIT_QUEUE_URL", "AGENT_WAIT_TABLE", "AGENT_WAIT_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return local.issuer.token("alice@example.com", ("finance",))


def _refunds(world: Any, count: int) -> list[tuple[str, str]]:
    asked = []
    for _ in range(count):
        thread = f"order-op-{uuid.uuid4().hex[:8]}"
        asked.append((thread, world.question_of(world.start(thread, 900))))
    return asked


def test_cancel_and_bulk_answers_decide_once_each_through_the_real_api_router_and_ledger(
    world: Any, alice: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN three refunds waiting on finance
    (t1, q1), (t2, q2), (t3, q3) = _refunds(world, 3)
    world.announced()
    capsys.readouterr()

    # WHEN alice cancels the first with a reason, then answers all three at once
    assert main(["cancel", q1, "--reason", "the customer withdrew the request", "--token", alice]) == 0
    cancelled = capsys.readouterr().out
    assert main(["answer", q2, q3, q1, "approve", "--token", alice]) == 1
    answered = capsys.readouterr().out
    outcomes = world.local.pump().outcomes
    told = [(e["type"], e["question_id"]) for e in world.announced()]

    # THEN the cancel won, the two others won, and the cancelled one refused the approval, each on its own line
    assert f"question {q1} cancelled by alice@example.com on thread {t1}" in cancelled
    lines = [line for line in answered.splitlines() if not line.startswith("{")]  # the API's own log lines are JSON
    assert [line.split()[:2] for line in lines[:3]] == [["won", q2], ["won", q3], ["refused", q1]]
    assert "409 cancelled" in lines[2]
    assert lines[3] == "2 of 3 decided; 1 refused (see above)"
    # AND the router resumed each agent once: the cancelled one with the policy's default (no refund)
    assert sorted(o.kind.value for o in outcomes) == ["applied"] * 3
    assert (world.refunds(t1), world.refunds(t2), world.refunds(t3)) == (0, 1, 1)
    # AND the DynamoDB row says cancelled, by whom, why, then resumed; announced cancelled
    row = world.row(t1, q1)
    assert (row["status"], row["outcome"], row["answered_by"], row["via"], row["reason"]) == (
        "resumed",
        "cancelled",
        "alice@example.com",
        "api",
        "the customer withdrew the request",
    )
    # The agent got a cancellation, never the policy's default (issue 40: a default may approve)
    assert row["answer"] == {
        "action": "cancelled",
        "reason": "the customer withdrew the request",
        "by": "alice@example.com",
    }
    assert ("wait.cancelled", q1) in told
    assert ("wait.answered", q2) in told

    # AND `agent-wait questions show` says who cancelled it and why
    assert main(["questions", "show", q1]) == 0
    shown = capsys.readouterr().out
    assert "decision cancelled by alice@example.com via api at " in shown
    assert "reason   the customer withdrew the request" in shown

    # AND a cancel after an answer is refused (409), and nothing more runs
    assert main(["cancel", q2, "--reason", "too late", "--token", alice]) == 1
    assert f"question {q2}: the answer API refused to cancel it (already_decided)" in capsys.readouterr().err
    assert world.pump() == []
    assert world.refunds(t2) == 1


def test_cancel_needs_a_token_and_a_reason(world: Any, alice: str, capsys: pytest.CaptureFixture[str]) -> None:
    ((_, question),) = _refunds(world, 1)
    capsys.readouterr()

    assert main(["cancel", question, "--reason", "no token"]) == 1
    assert "cancelling a question needs a bearer token" in capsys.readouterr().err
    assert main(["cancel", question, "--reason", " ", "--token", alice]) == 1
    assert "(invalid_answer): a cancel needs a reason" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["cancel", question])  # --reason is required
    assert world.pump() == []


def test_questions_by_outcome_lists_a_cancel_with_who_and_why_after_the_agent_resumed(
    world: Any, alice: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    # GIVEN one refund cancelled and one answered, and both agents resumed
    (_, cancelled), (_, answered) = _refunds(world, 2)
    assert main(["cancel", cancelled, "--reason", "duplicate order", "--token", alice]) == 0
    assert main(["answer", answered, "approve", "--token", alice]) == 0
    world.local.pump()
    capsys.readouterr()

    # WHEN the cancelled questions are listed
    assert main(["questions", "--status", "cancelled"]) == 0
    listed = capsys.readouterr().out.splitlines()
    # THEN the cancel is there, saying it was cancelled, by whom, why, and that the agent resumed; the answer is not
    [line] = [line for line in listed if cancelled in line]
    assert line.startswith("cancelled ")
    assert "agent=resumed" in line
    assert 'cancelled_by=alice@example.com reason="duplicate order"' in line
    assert " by=" not in line
    assert "via=" not in line
    assert not any(answered in line for line in listed)

    # AND --status answered lists the answer, by whom and how, and not the cancel
    assert main(["questions", "--status", "answered"]) == 0
    listed = capsys.readouterr().out.splitlines()
    [line] = [line for line in listed if answered in line]
    assert line.startswith("answered ")
    assert "agent=resumed" in line
    assert "by=alice@example.com via=api" in line
    assert not any(cancelled in line for line in listed)

    # AND in JSON each row says its outcome, what the agent did, and a cancel's reason
    assert main(["questions", "--status", "cancelled", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"thread_id"')]
    [row] = [row for row in rows if row["question_id"] == cancelled]
    assert (row["outcome"], row["agent"], row["answered_by"], row["reason"]) == (
        "cancelled",
        "resumed",
        "alice@example.com",
        "duplicate order",
    )
