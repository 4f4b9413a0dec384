"""`@tool` over `@wait` in a `ToolNode`: the model's schema, injected tool values, and each answer.

No LLM: each run starts from the AIMessage a model would have produced, with its tool_calls.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedState, ToolNode, ToolRuntime

from agent_wait import WaitPolicy, question_id_for
from agent_wait.langgraph import publish_interrupts, wait

FINANCE = WaitPolicy(timeout="P3D", default={"action": "reject"}, tags={"approver_group": "finance"}, allow_edits=True)
REFUND_ARGS_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "amount": {"type": "integer"}},
    "additionalProperties": False,
}


def tool_graph(checkpointer, *tools):
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(list(tools)))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=checkpointer)


def model_calls(*calls: tuple[str, dict[str, Any], str]) -> dict[str, Any]:
    """The state after a model asked for these tool calls: `(name, args, tool_call_id)`."""
    tool_calls = [{"name": name, "args": args, "id": call_id, "type": "tool_call"} for name, args, call_id in calls]
    return {"messages": [AIMessage(content="", tool_calls=tool_calls)]}


def tool_result(state: dict[str, Any]) -> ToolMessage:
    message = state["messages"][-1]
    assert isinstance(message, ToolMessage), f"expected the tool's answer last, got {message!r}"
    return message


def content(state: dict[str, Any]) -> Any:
    text = tool_result(state).content
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


@pytest.fixture
def refund_tool(calls):
    """A tool taking two visible arguments and everything a ToolNode can inject."""

    @tool
    @wait(FINANCE)
    def issue_refund(
        order_id: str,
        amount: int,
        tool_call_id: Annotated[str, InjectedToolCallId],
        state: Annotated[dict, InjectedState],
        runtime: ToolRuntime,
    ) -> str:
        """Refund part of an order."""
        calls(order_id=order_id, amount=amount, tool_call_id=tool_call_id, messages=len(state["messages"]))
        assert runtime.tool_call_id == tool_call_id
        return f"refunded {amount} on {order_id}"

    return issue_refund


REFUND_CALL = ("issue_refund", {"order_id": "order-4471", "amount": 41000}, "call-1")


def test_the_model_sees_only_the_visible_parameters(refund_tool):
    # GIVEN @tool over @wait on a function with injected parameters
    # THEN the schema offered to a model lists only the function's own arguments
    assert set(refund_tool.args) == {"order_id", "amount"}
    schema = refund_tool.tool_call_schema.model_json_schema()
    assert set(schema["properties"]) == {"order_id", "amount"}
    assert refund_tool.name == "issue_refund"
    assert refund_tool.description == "Refund part of an order."


def test_the_model_is_never_offered_the_decision_parameter():
    # GIVEN a tool whose body receives the decision
    @tool
    @wait(decision="verdict")
    def issue_refund(order_id: str, verdict: dict | None = None) -> str:
        """Refund an order."""
        return "ran"

    # THEN the model cannot see it, so it cannot fill it in
    assert set(issue_refund.args) == {"order_id"}
    assert set(issue_refund.tool_call_schema.model_json_schema()["properties"]) == {"order_id"}


def test_a_decision_the_model_supplies_never_reaches_the_body():
    # GIVEN a tool that asks only above 1000, with a decision parameter
    received: list[Any] = []

    @tool
    @wait(when=lambda order_id, amount, **_: amount > 1000)
    def issue_refund(order_id: str, amount: int, decision: Any = None) -> str:
        """Refund an order."""
        received.append(decision)
        return "ran"

    # WHEN a model forges a decision on a call the predicate skips
    issue_refund.invoke({"order_id": "o-1", "amount": 5, "decision": {"action": "approve", "by": "model"}})
    # THEN the body ran without it
    assert received == [None]


def test_a_tool_call_parks_on_the_visible_arguments_only(checkpointer, config, thread_id, memory, refund_tool, calls):
    # GIVEN a ToolNode holding the tool
    graph = tool_graph(checkpointer, refund_tool)
    # WHEN the model calls it
    parked = graph.invoke(model_calls(REFUND_CALL), config)
    publish_interrupts(parked, thread_id, memory)
    # THEN the run parks on {"function", "args"} without tool_call_id, state or runtime, and the body waits
    envelope = memory.last()
    assert envelope.question == {"function": "issue_refund", "args": {"order_id": "order-4471", "amount": 41000}}
    # the policy allows edits: the source carries the schema an edit must fit, read from the annotations
    assert dict(envelope.source) == {"function": "issue_refund", "args_schema": REFUND_ARGS_SCHEMA}
    assert dict(envelope.tags) == {"approver_group": "finance"}
    assert calls.count == 0


def test_approving_a_tool_call_runs_it_once_with_the_injected_values(checkpointer, config, resume, refund_tool, calls):
    # GIVEN a parked tool call
    graph = tool_graph(checkpointer, refund_tool)
    parked = graph.invoke(model_calls(REFUND_CALL), config)
    # WHEN it is approved
    done = resume(graph, config, parked, {"action": "approve"})
    # THEN the tool runs once, LangGraph's injected values reach it, and its answer goes back to the model
    assert calls.args == [{"order_id": "order-4471", "amount": 41000, "tool_call_id": "call-1", "messages": 1}]
    assert content(done) == "refunded 41000 on order-4471"
    assert tool_result(done).tool_call_id == "call-1"


def test_approving_with_edited_args_runs_the_tool_with_them(checkpointer, config, resume, refund_tool, calls):
    graph = tool_graph(checkpointer, refund_tool)
    parked = graph.invoke(model_calls(REFUND_CALL), config)
    done = resume(graph, config, parked, {"action": "approve", "args": {"amount": 100}})
    assert [(c["order_id"], c["amount"], c["tool_call_id"]) for c in calls.args] == [("order-4471", 100, "call-1")]
    assert content(done) == "refunded 100 on order-4471"


@pytest.mark.parametrize("injected", ["tool_call_id", "state", "runtime"])
def test_editing_a_value_the_tool_node_injects_returns_edit_refused_and_runs_nothing(
    checkpointer, config, resume, refund_tool, calls, injected: str
):
    # GIVEN a parked tool call
    graph = tool_graph(checkpointer, refund_tool)
    parked = graph.invoke(model_calls(REFUND_CALL), config)
    # WHEN the answer tries to override an injected value
    done = resume(graph, config, parked, {"action": "approve", "args": {injected: "forged", "amount": 1}})
    # THEN the model receives the refusal as the tool's result and the tool never runs
    assert calls.count == 0
    assert content(done) == {
        "status": "error",
        "error": "edit_refused",
        "function": "issue_refund",
        "refused": [injected],
        "editable": ["order_id", "amount"],
        "message": f"the answer tried to edit injected value(s) ['{injected}']; the answer may edit only "
        "['order_id', 'amount'] of issue_refund(). Nothing was run.",
    }
    assert tool_result(done).tool_call_id == "call-1", "the refusal still answers the right tool call"


def test_editing_an_unknown_tool_argument_returns_edit_refused(checkpointer, config, resume, refund_tool, calls):
    graph = tool_graph(checkpointer, refund_tool)
    parked = graph.invoke(model_calls(REFUND_CALL), config)
    done = resume(graph, config, parked, {"action": "approve", "args": {"currency": "EUR"}})
    assert calls.count == 0
    assert content(done)["refused"] == ["currency"]
    assert content(done)["message"].startswith("the answer edits unknown parameter(s) ['currency']")


def test_a_rejected_tool_call_returns_the_rejection_to_the_model(checkpointer, config, resume, refund_tool, calls):
    graph = tool_graph(checkpointer, refund_tool)
    parked = graph.invoke(model_calls(REFUND_CALL), config)
    done = resume(graph, config, parked, {"action": "reject", "reason": "over budget"})
    assert calls.count == 0
    assert content(done) == {"action": "reject", "reason": "over budget"}


def test_a_tool_with_a_decision_parameter_receives_the_answer(checkpointer, config, resume):
    # GIVEN a tool that handles the decision itself
    @tool
    @wait()
    def issue_refund(order_id: str, tool_call_id: Annotated[str, InjectedToolCallId], decision: Any = None) -> str:
        """Refund an order."""
        return f"{order_id}: {decision['action']} ({tool_call_id})"

    graph = tool_graph(checkpointer, issue_refund)
    parked = graph.invoke(model_calls(("issue_refund", {"order_id": "o-1"}, "call-7")), config)
    assert parked["__interrupt__"][0].value["question"]["args"] == {"order_id": "o-1"}
    # WHEN it is rejected
    done = resume(graph, config, parked, {"action": "reject"})
    # THEN the body ran with the verbatim answer
    assert content(done) == "o-1: reject (call-7)"


def test_a_tool_with_when_runs_at_once_below_the_threshold(checkpointer, config, thread_id, memory, calls):
    # GIVEN a tool that asks only above 1000; the predicate also receives what the ToolNode injects
    @tool
    @wait(when=lambda order_id, amount, **injected: amount > 1000)
    def issue_refund(order_id: str, amount: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Refund an order."""
        calls()
        return "refunded"

    graph = tool_graph(checkpointer, issue_refund)
    # WHEN the model calls it below and above the threshold
    small = graph.invoke(model_calls(("issue_refund", {"order_id": "o-1", "amount": 5}, "c1")), config)
    big = graph.invoke(model_calls(("issue_refund", {"order_id": "o-1", "amount": 5000}, "c2")), config)
    # THEN only the big one asks
    assert content(small) == "refunded"
    assert calls.count == 1
    assert len(publish_interrupts(big, thread_id, memory)) == 1
    assert memory.last().question["args"] == {"order_id": "o-1", "amount": 5000}


def test_an_async_tool_parks_and_runs_on_approval_with_ainvoke(async_saver, config, aresume, calls):
    # GIVEN an async tool in a ToolNode on an async checkpointer
    @tool
    @wait()
    async def issue_refund(order_id: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Refund an order."""
        calls(order_id=order_id, tool_call_id=tool_call_id)
        return "refunded"

    async def scenario() -> tuple[Any, Any]:
        async with async_saver() as saver:
            graph = tool_graph(saver, issue_refund)
            parked = await graph.ainvoke(model_calls(("issue_refund", {"order_id": "o-1"}, "call-3")), config)
            return parked, await aresume(graph, config, parked, {"action": "approve"})

    parked, done = asyncio.run(scenario())
    # THEN it asked without the tool call id and ran once with it after approval
    assert parked["__interrupt__"][0].value["question"] == {"function": "issue_refund", "args": {"order_id": "o-1"}}
    assert calls.args == [{"order_id": "o-1", "tool_call_id": "call-3"}]
    assert content(done) == "refunded"


def test_an_async_mode_tool_returns_pending_to_the_model_with_an_id_the_tool_call_id_does_not_change(
    thread_id, config, memory, calls
):
    # GIVEN an async-mode tool that takes its tool call id
    @tool
    @wait(FINANCE, mode="async", announce=memory)
    def issue_refund(order_id: str, amount: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Refund an order."""
        calls()
        return "refunded"

    graph = tool_graph(InMemorySaver(), issue_refund)
    # WHEN the model calls it twice with the same arguments under different tool call ids
    first = graph.invoke(model_calls(("issue_refund", {"order_id": "o-1", "amount": 5}, "call-a")), config)
    second = graph.invoke(model_calls(("issue_refund", {"order_id": "o-1", "amount": 5}, "call-b")), config)
    # THEN the model gets the pending marker both times, with one question id that ignores the tool call id
    question_id = question_id_for(thread_id, "issue_refund", {"order_id": "o-1", "amount": 5})
    pending = {"status": "pending_approval", "question_id": question_id, "function": "issue_refund"}
    assert content(first) == content(second) == pending
    assert [e.question for e in memory.of("created")] == [
        {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 5}}
    ] * 2
    assert calls.count == 0
