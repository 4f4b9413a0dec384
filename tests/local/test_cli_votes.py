"""`agent-wait answer` over the answer API on a quorum question: a recorded vote is a success, a second vote says so.

The API's responses (202 `voted`, 409 `already_voted`, 200 `repeated` while still open) are pinned by
tests/host/test_quorum_routes.py; here the CLI's reading of them (and of the 409s about a thread), with the HTTP
call stubbed.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from agent_wait.cli import _api
from agent_wait.cli._target import CliError, Target

TARGET = Target(queue_url="https://sqs/entry.fifo", table="questions", api_url="https://api.example.com")


def _answer(monkeypatch: pytest.MonkeyPatch, status: int, payload: dict[str, Any]) -> str:
    monkeypatch.setattr(_api, "_call", lambda *args, **kwargs: (status, payload))
    return _api.answer(TARGET, "q-1", "approve", token="t")


def test_a_recorded_vote_says_how_many_more_approvals_are_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    line = _answer(monkeypatch, 202, {"result": "voted", "status": "open", "remaining": 1, "approvals": 1})
    assert line == "vote 'approve' recorded on question q-1; 1 more approval needed"


def test_a_second_vote_is_one_line_that_says_it_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    payload = {"reason": "already_voted", "detail": "alice voted already; a second vote changes nothing"}
    with pytest.raises(CliError, match="you already voted on question q-1; a second vote changes nothing"):
        _answer(monkeypatch, 409, payload)


def test_a_resent_vote_on_an_open_question_is_not_called_a_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    line = _answer(monkeypatch, 200, {"result": "repeated", "status": "open", "outcome": None})
    assert line == "your vote on question q-1 was already recorded with this same answer; nothing changed"


@pytest.mark.parametrize(
    ("reason", "says"),
    [
        ("thread_failed", "the agent failed on its thread; run agent-wait retry THREAD after the fix"),
        ("thread_busy", "the agent is running on its thread right now; answer again in a few seconds"),
        ("not_parked", "the agent is no longer waiting on it, so no answer can reach it"),
    ],
)
def test_a_refusal_about_the_thread_says_nothing_was_decided_and_what_to_do(
    monkeypatch: pytest.MonkeyPatch, reason: str, says: str
) -> None:
    # The question is open: the 409 is about its thread, never a decision by "someone else at None".
    payload = {"reason": reason, "detail": "d", "question": {"status": "open", "outcome": None}}
    with pytest.raises(CliError, match=re.escape(f"question q-1 was not answered: {says}")) as refused:
        _answer(monkeypatch, 409, payload)
    assert "already decided" not in str(refused.value)
