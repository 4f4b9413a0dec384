"""`agent-wait dev` keeps its state: a stack started with a state folder, stopped and started again, carries on.

Each test asks the refund agent a question on one `EmulatedStack`, stops it, and starts a second one on the same
folder, as Ctrl-C and the same `agent-wait dev` would: the question is still listed, what was handed out before the
restart (an inbox tab's token, a printed signed link) still answers it, and the agent resumes once.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from _http import call
from examples.refund_agent.demo import MovableClock, count_refunds

from agent_wait.local.stack import EmulatedStack

LARGE = 900
"""Over the refund's auto-approve limit: finance is asked."""


def _ask(local: EmulatedStack) -> tuple[str, str]:
    """Start a refund over the limit; (thread, question id)."""
    thread = f"order-state-{uuid.uuid4().hex[:8]}"
    local.send(
        {"thread_id": thread, "input": {"order_id": thread, "amount": LARGE}, "start_id": uuid.uuid4().hex},
        deduplication_id=uuid.uuid4().hex,
    )
    [question] = [q for outcome in local.pump().outcomes for q in outcome.asked]
    return thread, question


def _listed(local: EmulatedStack, token: str) -> list[str]:
    reply = call(f"{local.api_url}/questions", token=token)
    assert reply.status == 200, reply
    return [q["question_id"] for q in reply.body["questions"]]


def test_a_question_asked_before_a_restart_is_listed_and_answered_with_the_old_token_and_the_agent_resumes_once(
    refund_template: dict[str, Any], tmp_path: Path
) -> None:
    # GIVEN a stack on a state folder that asked finance a question, and an inbox tab's token from before
    clock = MovableClock()
    with EmulatedStack(refund_template, clock=clock, state_dir=tmp_path) as first:
        thread, question = _ask(first)
        token = first.issuer.token("finance@example.com", ["finance"])
        url = first.api_url
    # WHEN the stack stops and starts again on the same folder
    with EmulatedStack(refund_template, clock=clock, state_dir=tmp_path) as second:
        # THEN the API is where it was, the question is listed, and the old token answers it
        assert second.api_url == url
        assert question in _listed(second, token)
        answer = {"answer": {"action": "approve"}}
        reply = call(f"{second.api_url}/questions/{question}/answer", method="POST", token=token, body=answer)
        assert reply.status in (200, 202), reply
        second.pump()
        # AND the agent resumed from its checkpoint exactly once
        assert count_refunds(second, thread) == 1
        second.pump()
        assert count_refunds(second, thread) == 1


def test_a_signed_link_printed_before_a_restart_answers_after_it(
    refund_template: dict[str, Any], tmp_path: Path
) -> None:
    from agent_wait.cli._links import question_link
    from agent_wait.cli._target import Target

    # GIVEN a stack on a state folder that asked a question, and its signed link as `dev` prints it
    clock = MovableClock()
    with EmulatedStack(refund_template, clock=clock, state_dir=tmp_path) as first:
        thread, question = _ask(first)
        link = question_link(Target.of_local_stack(first), question, "approve", approver="finance@example.com")
    # WHEN the stack stops and starts again on the same folder, and the link is used
    with EmulatedStack(refund_template, clock=clock, state_dir=tmp_path) as second:
        page, token = link.split("#", 1)
        reply = call(f"{page.removesuffix('/confirm')}/link/answer", method="POST", body={"token": token})
        # THEN it decides the question, and the agent resumes once
        assert reply.status == 200, reply
        second.pump()
        assert count_refunds(second, thread) == 1


def test_a_fresh_start_forgets_the_saved_state(refund_template: dict[str, Any], tmp_path: Path) -> None:
    from agent_wait.local.state import forget_state

    # GIVEN a stack on a state folder that asked a question, stopped
    clock = MovableClock()
    with EmulatedStack(refund_template, clock=clock, state_dir=tmp_path) as first:
        _, question = _ask(first)
    # WHEN the saved state is forgotten (`agent-wait dev --fresh`) and the stack starts again
    forget_state(tmp_path)
    with EmulatedStack(refund_template, clock=clock, state_dir=tmp_path) as second:
        # THEN it starts empty
        token = second.issuer.token("finance@example.com", ["finance"])
        assert question not in _listed(second, token)
        assert _listed(second, token) == []


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("{not json", "not a state file"),
        (json.dumps({"format": 999, "stack_name": "x"}), "format 999"),
    ],
    ids=["corrupt", "another-version"],
)
def test_a_state_file_that_cannot_be_read_is_refused_naming_the_file_and_fresh(
    refund_template: dict[str, Any], tmp_path: Path, content: str, why: str
) -> None:
    from agent_wait.local.state import STATE_FILE, StateFileError

    # GIVEN a state folder whose state file is corrupt or of another format
    (tmp_path / STATE_FILE).write_text(content)
    # WHEN a stack starts on it
    with pytest.raises(StateFileError) as raised:
        EmulatedStack(refund_template, state_dir=tmp_path).start()
    # THEN the error names the file, what is wrong, and `--fresh`
    message = str(raised.value)
    assert str(tmp_path / STATE_FILE) in message
    assert why in message
    assert "--fresh" in message
    assert EmulatedStack._running is None
