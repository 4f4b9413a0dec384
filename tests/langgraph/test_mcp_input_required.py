"""`agent_wait.mcp.input_required`: an agent that calls an MCP server itself (the `mcp` SDK's client, no LangChain)
parks on the server's `InputRequiredResult` as an `mcp_elicitation` question, and retries the call with the person's
answer as `inputResponses` and the echoed `requestState`.

The graph runs behind a `Router` (tests/hosted_router.py) against the test MCP server over HTTP
(tests/support/elicit_server.py); the question is answered as any door answers, and the server receives it once.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import Any, NotRequired, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from mcp.types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult
from tests.agents.mcp_elicit_graphs import run_async
from tests.hosted_router import RouterRig
from tests.support.elicit_server import CONTACT, ElicitServer, elicit_server

from agent_wait.engine import OutcomeKind
from agent_wait.errors import ArgumentError, MissingExtraError
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.mcp.input_required import call_tool, elicitation_round, input_responses


class Booking(TypedDict):
    day: str
    result: NotRequired[str]


@pytest.fixture(scope="module")
def server() -> Iterator[ElicitServer]:
    with elicit_server() as running:
        yield running


def _graph(url: str) -> Any:
    async def book_async(day: str) -> str:
        result = await call_tool(url, "book_table", {"day": day})  # connects per attempt: none held across the wait
        return " ".join(getattr(block, "text", "") for block in result.content)

    def book(state: Booking) -> dict[str, Any]:
        return {"result": run_async(book_async(state["day"]))}

    builder = StateGraph(Booking)
    builder.add_node("book", book)
    builder.add_edge(START, "book")
    builder.add_edge("book", END)
    return builder.compile(checkpointer=InMemorySaver())


def test_an_agent_parks_on_the_servers_round_and_retries_with_the_answer_once(server: ElicitServer) -> None:
    # GIVEN an agent behind the router that books through the MCP server with the helper
    rig = RouterRig(LangGraphAdapter(_graph(server.url)))
    # WHEN it starts: the server's round becomes one mcp_elicitation question, and the agent parks
    started = rig.start("t-helper", {"day": "mon"})
    (question,) = started.asked
    envelope = rig.record("t-helper", question).envelope
    source = {k: v for k, v in (envelope.source or {}).items() if k != "version"}  # the graph's version stamp aside
    assert source == {"dialect": "mcp_elicitation", "tool": "book_table", "modes": ["form"]}
    assert envelope.question["requests"] == [
        {"key": "contact", "message": "Who is booking?", "mode": "form", "requested_schema": CONTACT}
    ]
    assert [call for call in server.received if call["day"] == "mon"] == []
    # AND a bad answer is refused before anything reaches the server
    refused = rig.answer("t-helper", question, {"action": "accept", "name": "Ana"})
    assert refused.kind is OutcomeKind.REFUSED
    # WHEN a person accepts with the form's content, and the answer is delivered twice
    answer = {"action": "accept", "name": "Ana", "seats": 4}
    applied = rig.answer("t-helper", question, answer, answer_id="a-1")
    again = rig.answer("t-helper", question, answer, answer_id="a-1")
    # THEN the call is retried once, with the answer and the echoed state
    assert applied.kind is OutcomeKind.APPLIED, applied
    assert again.kind is not OutcomeKind.APPLIED
    assert [call for call in server.received if call["day"] == "mon"] == [
        {
            "day": "mon",
            "state": "day=mon",
            "responses": {"contact": {"action": "accept", "content": {"name": "Ana", "seats": 4}}},
        }
    ]


def test_a_decline_reaches_the_server_as_a_decline(server: ElicitServer) -> None:
    rig = RouterRig(LangGraphAdapter(_graph(server.url)))
    (question,) = rig.start("t-decline", {"day": "tue"}).asked
    assert rig.answer("t-decline", question, {"action": "decline", "name": "typed, then declined"}).kind is (
        OutcomeKind.APPLIED
    )
    assert [call["responses"] for call in server.received if call["day"] == "tue"] == [
        {"contact": {"action": "decline", "content": None}}
    ]


def _round(**requests: Any) -> InputRequiredResult:
    return InputRequiredResult(input_requests=requests, request_state="s")


def test_a_round_of_sampling_or_roots_is_refused_with_what_to_do() -> None:
    from mcp.types import CreateMessageRequest, CreateMessageRequestParams, ListRootsRequest

    sampling = CreateMessageRequest(params=CreateMessageRequestParams(messages=[], max_tokens=5))
    with pytest.raises(ArgumentError, match=re.escape("a person cannot give through agent-wait: llm (sampling/")):
        elicitation_round("book_table", _round(llm=sampling, roots=ListRootsRequest()))
    with pytest.raises(ArgumentError, match=re.escape("returned a round with no input requests")):
        elicitation_round("book_table", InputRequiredResult(request_state="s"))


def test_an_answer_resumed_in_process_is_checked_before_the_retry() -> None:
    form = ElicitRequest(params=ElicitRequestFormParams(message="Who?", requested_schema=CONTACT))
    question = elicitation_round("book_table", _round(contact=form))
    with pytest.raises(ArgumentError, match=re.escape("missing: ['contact']")):
        input_responses(question, {"responses": {}})
    with pytest.raises(ArgumentError, match=re.escape("resume with {'responses'")):
        input_responses(question, {"action": "accept"})
    assert input_responses(question, {"responses": {"contact": {"action": "cancel"}}})["contact"].action == "cancel"


def test_without_the_mcp_extra_the_helper_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    monkeypatch.delitem(sys.modules, "agent_wait.mcp.input_required")
    with pytest.raises(MissingExtraError, match=re.escape("pip install 'agent-wait[mcp]'")):
        import agent_wait.mcp.input_required  # noqa: F401
