"""`publish_interrupts(result, thread_id, announce, reply_to=...)`: one envelope per pending question."""

from __future__ import annotations

import operator
import re
from datetime import datetime
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import Interrupt, interrupt

from agent_wait import (
    MAX_QUESTION_BYTES,
    BaseAnnounce,
    EnvelopeError,
    InMemoryAnnounce,
    QuestionTooLargeError,
    WaitPolicy,
)
from agent_wait.langgraph import ask, publish_interrupts, questions_from_result, wait


class FanOut(TypedDict, total=False):
    log: Annotated[list, operator.add]


def two_questions_graph(checkpointer):
    """START fans out to two nodes that each ask their own question."""

    @wait(WaitPolicy(tags={"team": "ops"}))
    def restart(service: str) -> str:
        return f"restarted {service}"

    def left(state):
        return {"log": [ask({"approve": "left"}, WaitPolicy(timeout="PT1H"))]}

    def right(state):
        return {"log": [restart("billing")]}

    builder = StateGraph(FanOut)
    builder.add_node("left", left)
    builder.add_node("right", right)
    builder.add_edge(START, "left")
    builder.add_edge(START, "right")
    builder.add_edge("left", END)
    builder.add_edge("right", END)
    return builder.compile(checkpointer=checkpointer)


def test_one_envelope_per_pending_question(checkpointer, config, thread_id, memory):
    # GIVEN a run parked on two questions at once
    parked = two_questions_graph(checkpointer).invoke({"log": []}, config)
    assert len(parked["__interrupt__"]) == 2
    # WHEN it is published
    reports = publish_interrupts(parked, thread_id, memory)
    # THEN there is one envelope per interrupt, each with its own id, policy and source
    assert len(reports) == 2
    by_id = {e.question_id: e for e in memory.of("created")}
    assert set(by_id) == {item.id for item in parked["__interrupt__"]}
    seen = {repr(e.question): (e.source and dict(e.source), dict(e.tags)) for e in by_id.values()}
    assert seen == {
        repr({"approve": "left"}): (None, {}),
        repr({"function": "restart", "args": {"service": "billing"}}): ({"function": "restart"}, {"team": "ops"}),
    }


def test_each_report_says_what_every_announcer_did(graph_of, config, thread_id):
    # GIVEN two announcers and a parked run
    def confirm(state):
        return {"result": ask("ok?")}

    first, second = InMemoryAnnounce(), InMemoryAnnounce()
    parked = graph_of(confirm).invoke({}, config)
    # WHEN it is published to both
    (report,) = publish_interrupts(parked, thread_id, [first, second])
    # THEN both delivered the same envelope and the report says so
    assert report.ok
    assert report.delivered == ("memory", "memory")
    assert first.last() is second.last() is report.envelope


@pytest.mark.parametrize(
    "result",
    [None, {}, {"result": "done"}, {"__interrupt__": None}, {"__interrupt__": []}, {"__interrupt__": ()}],
    ids=["none", "empty", "finished", "interrupt-none", "interrupt-empty-list", "interrupt-empty-tuple"],
)
def test_nothing_is_published_when_nothing_is_pending(result: Any, thread_id, memory):
    # GIVEN a result with no pending question
    # WHEN it is published
    reports = publish_interrupts(result, thread_id, memory)
    # THEN nothing goes out, and that is not an error
    assert reports == []
    assert memory.events == []


def test_a_finished_run_publishes_nothing(graph_of, config, thread_id, memory):
    def plain(state):
        return {"result": "done"}

    assert publish_interrupts(graph_of(plain).invoke({}, config), thread_id, memory) == []
    assert memory.events == []


def test_reply_to_lands_on_every_envelope(graph_of, config, thread_id, memory):
    # GIVEN a host that publishes where answers should go
    def confirm(state):
        return {"result": ask("ok?")}

    reply_to = {"type": "sqs", "queue_url": "https://sqs.us-east-1.amazonaws.com/123/entry.fifo"}
    # WHEN it publishes with reply_to
    publish_interrupts(graph_of(confirm).invoke({}, config), thread_id, memory, reply_to=reply_to)
    # THEN the envelope carries it
    assert memory.last().to_dict()["reply_to"] == reply_to


def test_reply_to_defaults_to_null(graph_of, config, thread_id, memory):
    def confirm(state):
        return {"result": ask("ok?")}

    publish_interrupts(graph_of(confirm).invoke({}, config), thread_id, memory)
    assert memory.last().to_dict()["reply_to"] is None


def test_a_reply_to_that_is_not_json_is_refused(graph_of, config, thread_id, memory):
    def confirm(state):
        return {"result": ask("ok?")}

    parked = graph_of(confirm).invoke({}, config)
    with pytest.raises(EnvelopeError, match=re.escape("reply_to is a set, which is not JSON")):
        publish_interrupts(parked, thread_id, memory, reply_to={"a", "b"})
    assert memory.events == []


NOT_A_RESULT = "publish_interrupts expects the dict graph.invoke(...) returns; got a "
NOT_INTERRUPTS = "result['__interrupt__'] must be the list of langgraph.types.Interrupt that graph.invoke returns"


@pytest.mark.parametrize(
    ("garbage", "message"),
    [
        ("parked", NOT_A_RESULT + "str"),
        ([Interrupt(value="x", id="0" * 32)], NOT_A_RESULT + "list"),
        (42, NOT_A_RESULT + "int"),
        ({"__interrupt__": "x"}, NOT_INTERRUPTS),
        ({"__interrupt__": [1]}, NOT_INTERRUPTS),
        ({"__interrupt__": [{"value": "x", "id": "abc"}]}, NOT_INTERRUPTS),
        ({"__interrupt__": Interrupt(value="x", id="0" * 32)}, NOT_INTERRUPTS),
    ],
    ids=["string", "list-of-interrupts", "int", "interrupt-string", "interrupt-int-list", "dict-items", "bare"],
)
def test_a_garbage_result_is_refused_with_what_graph_invoke_returns(garbage: Any, message: str, thread_id, memory):
    # GIVEN something that is not what graph.invoke returns
    # WHEN it is passed to publish_interrupts
    # THEN EnvelopeError says what was expected, and nothing is published
    with pytest.raises(EnvelopeError, match=re.escape(message)):
        publish_interrupts(garbage, thread_id, memory)
    assert memory.events == []


def test_a_state_snapshot_is_refused_with_what_graph_invoke_returns(graph_of, config, thread_id, memory):
    # GIVEN a host that passes graph.get_state(...) by mistake
    def confirm(state):
        return {"result": ask("ok?")}

    graph = graph_of(confirm)
    graph.invoke({}, config)
    # WHEN / THEN the refusal names what it got
    with pytest.raises(EnvelopeError, match=re.escape(NOT_A_RESULT + "StateSnapshot")):
        publish_interrupts(graph.get_state(config), thread_id, memory)


@pytest.mark.parametrize("bad_thread_id", ["", None, 7], ids=["empty", "none", "int"])
def test_a_missing_thread_id_is_refused(graph_of, config, memory, bad_thread_id: Any):
    def confirm(state):
        return {"result": ask("ok?")}

    parked = graph_of(confirm).invoke({}, config)
    with pytest.raises(EnvelopeError, match=re.escape(f"thread_id must be a non-empty string; got {bad_thread_id!r}")):
        publish_interrupts(parked, bad_thread_id, memory)
    assert memory.events == []


def test_a_plain_interrupt_whose_value_is_not_json_is_refused_at_publish(graph_of, config, thread_id, memory):
    # GIVEN code that interrupts with a datetime (LangGraph accepts it; the contract cannot carry it)
    def legacy(state):
        return {"result": interrupt({"at": datetime(2026, 1, 1)})}

    parked = graph_of(legacy).invoke({}, config)
    # WHEN / THEN publishing refuses it with the path and the fix
    with pytest.raises(EnvelopeError, match=re.escape("question.at is a datetime, which is not JSON")):
        publish_interrupts(parked, thread_id, memory)
    assert memory.events == []


def test_a_plain_interrupt_over_the_size_limit_is_refused_at_publish(graph_of, config, thread_id, memory):
    def legacy(state):
        return {"result": interrupt("x" * MAX_QUESTION_BYTES)}

    parked = graph_of(legacy).invoke({}, config)
    with pytest.raises(QuestionTooLargeError, match=re.escape("Publish a reference instead")):
        publish_interrupts(parked, thread_id, memory)
    assert memory.events == []


def test_an_announcer_that_raises_never_escapes_publish_interrupts(graph_of, config, thread_id, memory):
    # GIVEN an announcer whose backend is down, next to one that works
    class Broken(BaseAnnounce):
        name = "broken"

        def deliver(self, envelope, transition):
            raise TimeoutError("connect timed out")

    def confirm(state):
        return {"result": ask("ok?")}

    parked = graph_of(confirm).invoke({}, config)
    # WHEN the run is published
    (report,) = publish_interrupts(parked, thread_id, [Broken(), memory])
    # THEN the failure is in the report, not raised, and the other announcer delivered
    assert not report.ok
    assert [(d.announcer, d.error) for d in report.failed] == [("broken", "TimeoutError: connect timed out")]
    assert report.delivered == ("memory",)
    assert memory.last() is report.envelope


def test_questions_from_result_reads_without_publishing(graph_of, config, thread_id):
    # GIVEN a parked run
    def confirm(state):
        return {"result": ask("ok?", WaitPolicy(timeout="PT1H"))}

    parked = graph_of(confirm).invoke({}, config)
    # WHEN its questions are read
    (question,) = questions_from_result(parked, thread_id)
    # THEN each carries the thread, LangGraph's id, the question, its policy and when it was asked
    assert (question.thread_id, question.question_id, question.value) == (
        thread_id,
        parked["__interrupt__"][0].id,
        "ok?",
    )
    assert question.policy.timeout_iso == "PT1H"
    assert question.asked_at is not None
