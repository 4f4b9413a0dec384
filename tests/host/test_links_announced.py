"""Signed answer links go only to the announcers configured to carry them, never to the log."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

import pytest
import tests.agents.graphs as graphs
from langgraph.checkpoint.memory import InMemorySaver

from agent_wait import InMemoryAnnounce, LogAnnounce
from agent_wait.engine import InMemoryDeadLetter, Router
from agent_wait.host.links import LinkKeys, answer_links, verify_token
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger

T0 = datetime(2026, 9, 11, 9, 0, tzinfo=UTC)
KEYS = LinkKeys.parse(json.dumps({"active": "k1", "k1": "a-link-signing-key-of-at-least-32-chars"}))
API = "https://answers.example.com"


class ChatAnnounce(InMemoryAnnounce):
    """Stands for an announcer the deployment lets carry links (named as the SNS announcer is)."""

    name = "sns"


def test_links_reach_only_the_announcers_that_carry_them(caplog: pytest.LogCaptureFixture) -> None:
    # GIVEN a router whose chat announcer carries links, beside a log announcer and another in-memory one
    chat, other = ChatAnnounce(), InMemoryAnnounce()
    router = Router(
        LangGraphAdapter(graphs.build_graph(InMemorySaver())),
        InMemoryLedger(),
        dead_letter=InMemoryDeadLetter(),
        announce=[chat, other, LogAnnounce()],
        reply_to={"queue_url": "https://sqs.example/entry.fifo", "api_url": API},
        clock=lambda: T0,
        link_maker=lambda envelope: answer_links(KEYS, API, envelope, now=T0),
        link_announcers=frozenset({"sns"}),
    )
    caplog.set_level(logging.DEBUG)

    # WHEN a question is asked
    (question_id,) = router.handle(json.dumps({"thread_id": "t-l", "input": {"order_id": "o-l", "amount": 900}})).asked

    # THEN the chat announcer's envelope has one working link per action; the others have the API URL only
    links = chat.last().reply_to["links"]
    assert sorted(links) == ["approve", "reject"]
    token = links["approve"].split("#", 1)[1]
    assert links["approve"].startswith(f"{API}/questions/{question_id}/confirm#")
    assert verify_token(KEYS, token, question_id=question_id, now=T0).action == "approve"
    assert other.last().reply_to == {"queue_url": "https://sqs.example/entry.fifo", "api_url": API}
    assert token not in caplog.text, "a link is a bearer capability: never in a log line"
