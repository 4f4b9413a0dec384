"""Every signed link a question of each kind gets (the links its email and Teams card carry) answers it through the
link door: no link leads to a refusal. A batched review's `edit` needs one edit per call, and an Agent Inbox reply
needs its text: neither is a link; the email and the card send a person to the inbox for them
(`tests/announce/test_question_kinds.py`).
"""

from __future__ import annotations

import json

import pytest
from tests.support.api_events import call
from tests.support.question_kinds import KINDS, T0, envelope_of

from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, create_app
from agent_wait.host.links import LinkKeys, answer_links
from agent_wait.ledger import InMemoryLedger

API = "https://api.example.com"
KEYS = LinkKeys.parse(json.dumps({"active": "k1", "k1": "k" * 40}))
ONE_CLICK = {
    "review": ["approve", "reject"],
    "agent_inbox": ["accept", "ignore"],
    "schema": [],
    "tool_call": ["approve", "reject"],
    "wait_call": ["approve", "reject"],
    "prompt": ["approve", "reject"],
}
"""The answers one press of a link can give, by kind."""


@pytest.mark.parametrize("kind", KINDS)
def test_a_question_gets_a_link_for_each_answer_one_press_can_give(kind: str) -> None:
    # GIVEN a question of each kind, WHEN its links are made
    links = answer_links(KEYS, API, envelope_of(kind), now=T0)
    # THEN there is one for each answer a press gives as it is, none for an edit, a reply or a form
    assert sorted(links) == sorted(ONE_CLICK[kind])


@pytest.mark.parametrize("kind", KINDS)
def test_every_link_of_each_kind_decides_its_question_through_the_link_door(kind: str) -> None:
    ledger, queue = InMemoryLedger(), InMemoryEntryQueue()
    service = AnswerService(ledger, queue, clock=lambda: T0)
    context = ApiContext(ledger=ledger, service=service, link_keys=KEYS, clock=lambda: T0)
    app = create_app(lambda: context)
    for action in answer_links(KEYS, API, envelope_of(kind), now=T0):
        # GIVEN a question of this kind, and its link for one action
        envelope = envelope_of(kind, f"q-{kind}-{action}")
        ledger.open(envelope, now=T0)
        token = answer_links(KEYS, API, envelope, now=T0)[action].split("#", 1)[1]
        # WHEN a person opens it and confirms
        read = call(app, "POST", f"/questions/{envelope.question_id}/link", {"token": token})
        answered = call(app, "POST", f"/questions/{envelope.question_id}/link/answer", {"token": token})
        # THEN it is decided with that action
        assert read.status == 200
        assert answered.status == 200, answered.body
        record = ledger.find(envelope.question_id)
        assert record is not None
        assert record.status is QuestionStatus.ANSWERED
        assert record.answer == {"action": action}
