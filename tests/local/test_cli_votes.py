"""`agent-wait answer` over the answer API on a quorum question: a recorded vote is a success, a second vote says so.

The API's responses (202 `voted`, 409 `already_voted`, 200 `repeated` while still open) are pinned by
tests/host/test_quorum_routes.py; here the CLI's reading of them, with the HTTP call stubbed.
"""

from __future__ import annotations

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
