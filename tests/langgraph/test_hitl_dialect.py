"""Pin the shapes of LangChain's `HumanInTheLoopMiddleware` that `agent_wait.dialects.langchain_hitl` reads.

The core recognises the middleware structurally (it never imports langchain), so these tests fail if a
langchain release changes the interrupt value or the decision types.
"""

from __future__ import annotations

import typing

import pytest
import tests.agents.hitl_graphs as hitl
from langchain.agents.middleware import human_in_the_loop
from langgraph.checkpoint.memory import InMemorySaver

from agent_wait import InMemoryAnnounce, WaitEnvelope
from agent_wait.dialects import dialect_of, langchain_hitl, resume_value
from agent_wait.errors import EnvelopeError
from agent_wait.langgraph import LangGraphAdapter, WaitPublisher, publish_interrupts, resume_command


def _parked(kind: str) -> typing.Any:
    graph = hitl.build_hitl_graph(InMemorySaver())
    return graph.invoke(hitl.start_input(kind, f"pin-{kind}"), {"configurable": {"thread_id": f"pin-{kind}"}})


def test_the_middleware_parks_once_per_turn_on_action_requests_and_review_configs() -> None:
    result = _parked("both")
    (item,) = result["__interrupt__"]
    assert set(item.value) == {"action_requests", "review_configs"}
    assert [set(r) for r in item.value["action_requests"]] == [{"name", "args", "description"}] * 2
    assert [set(c) for c in item.value["review_configs"]] == [{"action_name", "allowed_decisions"}] * 2
    assert typing.get_args(human_in_the_loop.DecisionType) == langchain_hitl.DECISIONS


def test_the_middleware_reads_decisions_with_these_keys() -> None:
    hints = {
        name: set(typing.get_type_hints(cls))
        for name, cls in [
            ("approve", human_in_the_loop.ApproveDecision),
            ("edit", human_in_the_loop.EditDecision),
            ("reject", human_in_the_loop.RejectDecision),
            ("respond", human_in_the_loop.RespondDecision),
        ]
    }
    assert hints == {kind: required | optional for kind, (required, optional) in langchain_hitl._FIELDS.items()}
    assert set(typing.get_type_hints(human_in_the_loop.HITLResponse)) == {"decisions"}


def test_a_middleware_question_is_published_with_its_dialect_and_reads_back_the_same() -> None:
    result = _parked("both")
    announce = InMemoryAnnounce()
    publish_interrupts(result, "pin-both", announce)
    (envelope,) = announce.of("created")
    assert envelope.allowed_actions == ("approve", "edit", "reject", "respond")
    assert dict(envelope.source or {}) == {"dialect": "langchain_hitl", "tools": ["issue_refund", "close_case"]}
    assert envelope.rules["edits"] is False  # our edit form names one call; this turn reviews two
    again = WaitEnvelope.from_json(envelope.to_json())
    assert again == envelope
    assert dialect_of(again) == "langchain_hitl"
    assert resume_value(again, {"action": "reject", "note": "no"}) == {
        "decisions": [{"type": "reject", "message": "no"}, {"type": "reject", "message": "no"}]
    }


def test_wait_publisher_translates_our_answer_for_the_middleware() -> None:
    # GIVEN a middleware agent hosted by WaitPublisher (a host that is not the router)
    announce = InMemoryAnnounce()
    agent = WaitPublisher(LangGraphAdapter(hitl.build_hitl_graph(InMemorySaver())), announce=announce)
    agent.invoke(hitl.start_input("refund", "o-publisher"), "t-publisher")
    (question,) = announce.of("created")

    # WHEN our own reject arrives for it
    result = agent.invoke(
        {"question_id": question.question_id, "answer": {"action": "reject", "note": "no"}}, "t-publisher"
    )

    # THEN the middleware received one reject decision with the note as its message, and the tool did not run
    assert "with reason: no" in [m for m in result["messages"] if m.type == "tool"][-1].content
    assert hitl.runs("o-publisher") == []
    assert [e.question_id for e in announce.of("resumed")] == [question.question_id]


@pytest.mark.parametrize("parked_on", ["result", "state"])
def test_resume_command_puts_our_approval_in_the_middlewares_decisions_in_process(parked_on: str) -> None:
    # GIVEN a middleware graph parked on a batched review of two calls, resumed in-process (no router)
    graph = hitl.build_hitl_graph(InMemorySaver())
    thread_id, order_id = f"inproc-hitl-{parked_on}", f"o-inproc-{parked_on}"
    config = {"configurable": {"thread_id": thread_id}}
    result = graph.invoke(hitl.start_input("both", order_id), config)
    (item,) = result["__interrupt__"]
    parked = result if parked_on == "result" else graph.get_state(config)

    # WHEN the README's answer is resumed with what the thread is parked on
    message = {"thread_id": thread_id, "question_id": item.id, "answer": {"action": "approve"}}
    graph.invoke(resume_command(message, parked), config)

    # THEN the middleware got one approve decision per call (no KeyError 'decisions'), and both tools ran
    assert sorted(name for name, _ in hitl.runs(order_id)) == ["close_case", "issue_refund"]


def test_resume_command_refuses_an_answer_for_a_question_the_thread_is_not_parked_on() -> None:
    result = _parked("both")
    message = {"thread_id": "pin-both", "question_id": "0" * 32, "answer": {"action": "approve"}}

    with pytest.raises(EnvelopeError, match=r"not parked on question 0{32}"):
        resume_command(message, result)


def _parked_per_call(kind: str) -> typing.Any:
    graph = hitl.build_hitl_per_call_graph(InMemorySaver())
    thread = f"pin-pc-{kind}"
    return graph.invoke(hitl.start_input(kind, thread), {"configurable": {"thread_id": thread}})


def test_per_call_mode_parks_once_per_gated_call_on_a_tool_approval_with_a_decision_schema() -> None:
    result = _parked_per_call("refund")
    (item,) = result["__interrupt__"]
    assert set(item.value) == set(typing.get_type_hints(human_in_the_loop.ToolApprovalRequest))
    assert item.value["type"] == "tool_approval"
    assert set(item.response_schema["discriminator"]["mapping"]) == set(langchain_hitl.DECISIONS)
    assert item.response_schema["discriminator"]["propertyName"] == "type"


def test_a_per_call_tool_with_one_decision_type_gets_that_decisions_plain_schema() -> None:
    # close_case allows approve and reject; a tool allowing one type gets its plain object schema.
    schema = human_in_the_loop._decision_schema(["approve"], "close_case")
    from pydantic import TypeAdapter

    plain = TypeAdapter(schema).json_schema()
    assert plain["properties"]["type"]["const"] == "approve"
    assert langchain_hitl._schema_decisions(plain) == ["approve"]


def test_a_per_call_question_is_published_with_its_mode_and_schema_and_translates_to_one_decision() -> None:
    result = _parked_per_call("close")
    announce = InMemoryAnnounce()
    publish_interrupts(result, "pin-pc-close", announce)
    (envelope,) = announce.of("created")
    assert envelope.allowed_actions == ("approve", "reject")
    assert dict(envelope.source or {}) == {"dialect": "langchain_hitl", "tools": ["close_case"], "mode": "per_call"}
    assert envelope.rules["response_schema"] == result["__interrupt__"][0].response_schema
    assert resume_value(envelope, {"action": "reject", "note": "no"}) == {"type": "reject", "message": "no"}
    assert resume_value(envelope, {"type": "approve"}) == {"type": "approve"}
