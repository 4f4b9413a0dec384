"""`@wait` on `async def` (interrupt mode, driven by `ainvoke`) and `@wait(mode="async")` (publish and return)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from agent_wait import (
    BaseAnnounce,
    ConfigurationError,
    EnvelopeError,
    InMemoryAnnounce,
    WaitPolicy,
    question_id_for,
)
from agent_wait.langgraph import publish_interrupts, wait

FINANCE = WaitPolicy(timeout="P3D", default={"action": "reject"}, tags={"approver_group": "finance"}, allow_edits=True)
REFUND_ARGS_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "amount": {"type": "integer"}},
    "additionalProperties": False,
}

# --- async def in interrupt mode ------------------------------------------------------------------


def _async_refund_node(calls):
    @wait(FINANCE)
    async def issue_refund(order_id: str, amount: int) -> dict[str, Any]:
        await asyncio.sleep(0)
        calls(order_id=order_id, amount=amount)
        return {"refunded": order_id, "amount": amount}

    async def refund(state):
        return {"result": await issue_refund(state["order_id"], state["amount"])}

    return refund


def test_async_def_parks_on_function_and_args_and_approve_runs_the_body_once(
    async_saver, build_graph, config, thread_id, memory, aresume, calls
):
    # GIVEN an async node awaiting an async @wait function, on an async-capable checkpointer
    async def scenario() -> tuple[Any, Any]:
        async with async_saver() as saver:
            graph = build_graph(saver, _async_refund_node(calls))
            # WHEN the run parks, is published, and is approved
            parked = await graph.ainvoke({"order_id": "o-1", "amount": 5}, config)
            publish_interrupts(parked, thread_id, memory)
            assert calls.count == 0
            return parked, await aresume(graph, config, parked, {"action": "approve"})

    parked, done = asyncio.run(scenario())
    # THEN it asked {"function", "args"} and the body ran exactly once with them
    assert memory.last().question == {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 5}}
    assert memory.last().question_id == parked["__interrupt__"][0].id
    assert calls.args == [{"order_id": "o-1", "amount": 5}]
    assert done["result"] == {"refunded": "o-1", "amount": 5}


@pytest.mark.parametrize(
    ("answer", "expected_calls", "expected_result"),
    [
        (
            {"action": "approve", "args": {"amount": 2}},
            [{"order_id": "o-1", "amount": 2}],
            {"refunded": "o-1", "amount": 2},
        ),
        ({"action": "reject"}, [], {"action": "reject"}),
        ("later", [], "later"),
    ],
    ids=["edited", "rejected", "other"],
)
def test_async_def_applies_edits_and_returns_other_answers_in_place(
    async_saver, build_graph, config, aresume, calls, answer, expected_calls, expected_result
):
    async def scenario() -> Any:
        async with async_saver() as saver:
            graph = build_graph(saver, _async_refund_node(calls))
            parked = await graph.ainvoke({"order_id": "o-1", "amount": 5}, config)
            return await aresume(graph, config, parked, answer)

    done = asyncio.run(scenario())
    assert calls.args == expected_calls
    assert done["result"] == expected_result


def test_async_def_refuses_an_unknown_edit_and_runs_nothing(async_saver, build_graph, config, aresume, calls):
    async def scenario() -> Any:
        async with async_saver() as saver:
            graph = build_graph(saver, _async_refund_node(calls))
            parked = await graph.ainvoke({"order_id": "o-1", "amount": 5}, config)
            return await aresume(graph, config, parked, {"action": "approve", "args": {"amont": 1}})

    done = asyncio.run(scenario())
    assert calls.count == 0
    assert done["result"]["error"] == "edit_refused"
    assert done["result"]["refused"] == ["amont"]


def test_async_def_with_a_decision_parameter_always_runs_with_the_answer(async_saver, build_graph, config, aresume):
    received: list[Any] = []

    @wait(decision="verdict")
    async def issue_refund(order_id: str, verdict: Any = None) -> str:
        received.append((order_id, verdict))
        return "handled"

    async def refund(state):
        return {"result": await issue_refund("o-1")}

    async def scenario() -> Any:
        async with async_saver() as saver:
            graph = build_graph(saver, refund)
            parked = await graph.ainvoke({}, config)
            assert parked["__interrupt__"][0].value["question"]["args"] == {"order_id": "o-1"}
            return await aresume(graph, config, parked, {"action": "reject"})

    assert asyncio.run(scenario())["result"] == "handled"
    assert received == [("o-1", {"action": "reject"})]


def test_async_def_on_a_node_never_publishes_config(async_saver, build_graph, config, thread_id, aresume):
    # GIVEN an async @wait node that takes the run's config
    seen: list[str] = []

    @wait()
    async def approve_order(state, config: RunnableConfig):
        seen.append(config["configurable"]["thread_id"])
        return {"status": "done"}

    async def scenario() -> tuple[Any, Any]:
        async with async_saver() as saver:
            graph = build_graph(saver, approve_order)
            parked = await graph.ainvoke({"order_id": "o-1"}, config)
            return parked, await aresume(graph, config, parked, {"action": "approve"})

    parked, done = asyncio.run(scenario())
    assert parked["__interrupt__"][0].value["question"] == {
        "function": "approve_order",
        "args": {"state": {"order_id": "o-1"}},
    }
    assert done["status"] == "done"
    assert seen == [thread_id]


def test_async_def_when_skips_asking_and_runs_the_body(build_graph, config, calls):
    @wait(when=lambda order_id, amount: amount > 1000)
    async def issue_refund(order_id: str, amount: int) -> str:
        calls(order_id=order_id, amount=amount)
        return "refunded"

    async def refund(state):
        return {"result": await issue_refund("o-1", 5)}

    done = asyncio.run(build_graph(InMemorySaver(), refund).ainvoke({}, config))
    assert done["result"] == "refunded"
    assert "__interrupt__" not in done
    assert calls.count == 1


def test_async_def_when_asks_anyway_if_the_predicate_raises(build_graph, config, calls):
    @wait(when=lambda order_id, amount: 1 / 0)
    async def issue_refund(order_id: str, amount: int) -> str:
        calls()
        return "refunded"

    async def refund(state):
        return {"result": await issue_refund("o-1", 5)}

    parked = asyncio.run(build_graph(InMemorySaver(), refund).ainvoke({}, config))
    assert len(parked["__interrupt__"]) == 1
    assert calls.count == 0


# --- mode="async": publish from inside the run and return at once ---------------------------------


def _async_mode_graph(graph_of, memory, calls, *, policy: WaitPolicy = FINANCE):
    @wait(policy, mode="async", announce=memory)
    def issue_refund(order_id: str, amount: int) -> str:
        calls(order_id=order_id, amount=amount)
        return "refunded"

    def refund(state):
        return {"result": issue_refund(state["order_id"], state["amount"])}

    return graph_of(refund)


def test_async_mode_publishes_from_inside_the_run_and_returns_pending_approval(
    graph_of, config, thread_id, memory, calls, asked_at
):
    # GIVEN a @wait(mode="async") function with an in-memory announcer
    graph = _async_mode_graph(graph_of, memory, calls)
    # WHEN a run calls it
    done = graph.invoke({"order_id": "order-4471", "amount": 41000}, config)
    # THEN the run is not parked, the body did not run, and the call returned the pending marker
    args = {"order_id": "order-4471", "amount": 41000}
    question_id = question_id_for(thread_id, "issue_refund", args)
    assert "__interrupt__" not in done
    assert calls.count == 0
    assert done["result"] == {"status": "pending_approval", "question_id": question_id, "function": "issue_refund"}
    # AND exactly one envelope was published during the run, with the same question id and the policy
    (envelope,) = memory.of("created")
    assert envelope.question_id == question_id
    assert envelope.thread_id == thread_id
    assert envelope.question == {"function": "issue_refund", "args": args}
    # the policy allows edits: the source carries the schema an edit must fit, read from the annotations
    assert dict(envelope.source) == {"function": "issue_refund", "args_schema": REFUND_ARGS_SCHEMA}
    assert envelope.default == {"action": "reject"}
    assert dict(envelope.tags) == {"approver_group": "finance"}
    assert envelope.expires_at is not None


def test_async_mode_gives_the_same_question_id_to_the_same_call_on_the_same_thread(
    graph_of, config, thread_id, memory, calls
):
    # GIVEN a thread that makes the same async-mode call twice (a redelivered start, a model retrying)
    graph = _async_mode_graph(graph_of, memory, calls)
    first = graph.invoke({"order_id": "o-1", "amount": 5}, config)["result"]
    second = graph.invoke({"order_id": "o-1", "amount": 5}, config)["result"]
    # THEN both calls share one question id (the DynamoDB and FIFO backends dedupe on it)
    assert first["question_id"] == second["question_id"]
    assert len({e.dedupe_key for e in memory.of("created")}) == 1
    # AND other arguments or another thread give another question
    third = graph.invoke({"order_id": "o-1", "amount": 6}, config)["result"]
    other = graph.invoke({"order_id": "o-1", "amount": 5}, {"configurable": {"thread_id": f"{thread_id}-b"}})
    assert len({first["question_id"], third["question_id"], other["result"]["question_id"]}) == 3


def test_async_mode_never_publishes_or_hashes_injected_config_or_the_decision(graph_of, thread_id, memory):
    # GIVEN an async-mode function taking the run's config and a decision parameter
    @wait(mode="async", announce=memory)
    def issue_refund(order_id: str, config: RunnableConfig, decision: Any = None) -> str:
        return "ran"

    def refund(state, config: RunnableConfig):
        return {"result": issue_refund("o-1", config)}

    graph = graph_of(refund)
    # WHEN two runs on the thread call it (each run has its own config: run id, checkpoint, callbacks)
    first = graph.invoke({}, {"configurable": {"thread_id": thread_id}, "tags": ["one"]})["result"]
    second = graph.invoke({}, {"configurable": {"thread_id": thread_id}, "tags": ["two"]})["result"]
    # THEN the question id is the hash of the visible arguments only
    expected = question_id_for(thread_id, "issue_refund", {"order_id": "o-1"})
    assert first["question_id"] == second["question_id"] == expected
    assert [e.question["args"] for e in memory.of("created")] == [{"order_id": "o-1"}] * 2


def test_async_mode_when_skips_asking_runs_the_body_and_publishes_nothing(graph_of, config, memory, calls):
    @wait(mode="async", announce=memory, when=lambda order_id, amount: amount > 1000)
    def issue_refund(order_id: str, amount: int) -> str:
        calls(order_id=order_id, amount=amount)
        return "refunded"

    def refund(state):
        return {"result": issue_refund("o-1", 5)}

    assert graph_of(refund).invoke({}, config)["result"] == "refunded"
    assert calls.count == 1
    assert memory.events == []


def test_async_mode_with_an_announcer_that_raises_still_returns_pending(graph_of, config, memory, calls, caplog):
    # GIVEN an announcer that fails next to one that works
    class Broken(BaseAnnounce):
        name = "broken"

        def deliver(self, envelope, transition):
            raise ConnectionError("endpoint down")

    @wait(mode="async", announce=[Broken(), memory])
    def issue_refund(order_id: str) -> str:
        calls()
        return "ran"

    def refund(state):
        return {"result": issue_refund("o-1")}

    # WHEN the call publishes
    done = graph_of(refund).invoke({}, config)
    # THEN the run goes on, the working announcer delivered, and the failure is a log line
    assert done["result"]["status"] == "pending_approval"
    assert len(memory.of("created")) == 1
    assert calls.count == 0
    assert "announce failed: announcer=broken" in caplog.text


def test_async_mode_refuses_non_json_arguments_and_publishes_nothing(graph_of, config, memory):
    @wait(mode="async", announce=memory)
    def issue_refund(order_id: str, amount: Any) -> str:
        return "ran"

    def refund(state):
        return {"result": issue_refund("o-1", {1, 2})}

    with pytest.raises(EnvelopeError, match=re.escape("args.amount is a set, which is not JSON")):
        graph_of(refund).invoke({}, config)
    assert memory.events == []


def test_async_def_in_async_mode_publishes_and_returns_pending_approval(build_graph, config, thread_id, memory, calls):
    # GIVEN an async def in async mode, awaited from an async node
    @wait(FINANCE, mode="async", announce=memory)
    async def issue_refund(order_id: str, amount: int) -> str:
        calls()
        return "refunded"

    async def refund(state):
        return {"result": await issue_refund("o-1", 5)}

    # WHEN the graph runs with ainvoke
    done = asyncio.run(build_graph(InMemorySaver(), refund).ainvoke({}, config))
    # THEN it published once and returned the pending marker with the derived id
    question_id = question_id_for(thread_id, "issue_refund", {"order_id": "o-1", "amount": 5})
    assert done["result"] == {"status": "pending_approval", "question_id": question_id, "function": "issue_refund"}
    assert [e.question_id for e in memory.of("created")] == [question_id]
    assert calls.count == 0


THREAD_ID_MESSAGE = (
    "@wait(mode='async') needs the run's thread id: call it inside a graph invoked with "
    "{'configurable': {'thread_id': ...}}"
)


def test_async_mode_outside_a_graph_run_is_refused_and_publishes_nothing(memory):
    # GIVEN an async-mode function called as plain Python, outside any run
    @wait(mode="async", announce=memory)
    def issue_refund(order_id: str) -> str:
        return "ran"

    # WHEN / THEN it cannot know the thread, so it says where to call it from
    with pytest.raises(EnvelopeError, match=re.escape(THREAD_ID_MESSAGE)):
        issue_refund("o-1")
    assert memory.events == []


def test_async_def_in_async_mode_outside_a_graph_run_is_refused(memory):
    @wait(mode="async", announce=memory)
    async def issue_refund(order_id: str) -> str:
        return "ran"

    with pytest.raises(EnvelopeError, match=re.escape(THREAD_ID_MESSAGE)):
        asyncio.run(issue_refund("o-1"))


def test_async_mode_in_a_run_without_a_thread_id_is_refused(build_graph, memory):
    # GIVEN a graph with no checkpointer, invoked without a thread id
    @wait(mode="async", announce=memory)
    def issue_refund(order_id: str) -> str:
        return "ran"

    def refund(state):
        return {"result": issue_refund("o-1")}

    # WHEN / THEN the same explained refusal
    with pytest.raises(EnvelopeError, match=re.escape(THREAD_ID_MESSAGE)):
        build_graph(None, refund).invoke({})
    assert memory.events == []


ASYNC_NEEDS_ANNOUNCE = (
    "@wait(mode='async') publishes from inside the call, so it needs announce=[...]; "
    "without it nothing would see the question"
)


@pytest.mark.parametrize("announce", [None, []], ids=["none", "empty-list"])
def test_async_mode_without_announcers_is_refused(announce: Any):
    with pytest.raises(ConfigurationError, match=re.escape(ASYNC_NEEDS_ANNOUNCE)):
        wait(mode="async", announce=announce)


def test_announce_must_hold_announcers():
    with pytest.raises(TypeError, match=re.escape("announce must hold BaseAnnounce instances; got a str")):
        wait(mode="async", announce=["https://example.com/hook"])  # type: ignore[list-item]


def test_async_mode_accepts_one_announcer_or_several(graph_of, config):
    # GIVEN two announcers
    first, second = InMemoryAnnounce(), InMemoryAnnounce()

    @wait(mode="async", announce=[first, second])
    def issue_refund(order_id: str) -> str:
        return "ran"

    def refund(state):
        return {"result": issue_refund("o-1")}

    # WHEN the call publishes
    graph_of(refund).invoke({}, config)
    # THEN both received the same envelope
    assert first.last() is second.last()
    assert first.last() is not None
