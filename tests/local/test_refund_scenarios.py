"""Every scenario of `agent-wait demo` is a test: the real handlers, on the emulator, through the queue."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from examples.refund_agent.demo import SCENARIOS


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario_behaves_as_it_should(world: Any, name: str) -> None:
    # GIVEN the refund stack on the emulator
    title, scenario = SCENARIOS[name]
    before = len(world.checks)
    # WHEN the scenario runs through the entry queue, the router and the sweep
    scenario(world, f"order-{name}-{uuid.uuid4().hex[:6]}")
    # THEN every check a person would make holds
    wrong = [description for description, ok in world.checks[before:] if not ok]
    assert not wrong, f"{title}: wrong outcomes: {wrong}\n{world.out.getvalue()}"
    assert world.checks[before:], f"{title} checked nothing"


def test_a_dev_stack_emails_each_question_by_itself_and_shows_it_at_dev_email(world: Any) -> None:
    """`agent-wait dev` needs no email setting: a refund over the limit emails finance, with its own links."""
    import re
    import urllib.request

    from agent_wait.local.email_preview import sent_emails
    from agent_wait.local.email_setup import LOCAL_SENDER

    # GIVEN the refund stack as `agent-wait dev` runs it (no AGENT_WAIT_EMAIL_* in its template or environment)
    thread = f"order-email-{uuid.uuid4().hex[:6]}"
    # WHEN the agent asks finance about a refund over the limit
    question = world.question_of(world.start(thread, 900))
    # THEN finance's address is emailed once, from the local sender, with working signed links to the local API
    (sent,) = [e for e in sent_emails() if e.question_id == question]
    assert (sent.to, sent.sender) == ("finance@example.com", LOCAL_SENDER)
    assert sent.subject.startswith("Your answer is needed: issue_refund(order_id=")
    links = dict(re.findall(r"^(Approve|Reject): (http://127\.0\.0\.1:\d+/\S+)$", sent.text, re.MULTILINE))
    assert set(links) == {"Approve", "Reject"}
    with urllib.request.urlopen(f"{world.local.api_url}/dev/email", timeout=10) as response:
        assert f"question {question}" in response.read().decode("utf-8")
