"""Facts about LangGraph 1.2.x that agent-wait relies on (DESIGN.md), pinned so an upgrade that changes one fails here.

Each test measures LangGraph itself, with plain `interrupt()` and counters, on InMemorySaver and on
SqliteSaver. Measured on langgraph 1.2.24; the docstrings say what was observed and why it matters.
"""

from __future__ import annotations

import operator
import re
import threading
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

UNKNOWN_ID = "0" * 32
"""Shaped like an Interrupt.id (32 lowercase hex) but naming no question."""


class Log(TypedDict, total=False):
    log: Annotated[list, operator.add]


class Counters:
    """How often each node ran, split at its interrupt(): `before` counts entries, `after` counts answers."""

    def __init__(self) -> None:
        self.ran: dict[str, int] = {}

    def hit(self, name: str) -> None:
        self.ran[name] = self.ran.get(name, 0) + 1

    def __getitem__(self, name: str) -> int:
        return self.ran.get(name, 0)


def chain_graph(checkpointer, counters: Counters):
    """START -> first -> ask_a -> ask_b -> last -> END; ask_a and ask_b each interrupt once."""

    def first(state):
        counters.hit("first")
        return {"log": ["first"]}

    def asking(name: str):
        def node(state):
            counters.hit(f"{name}.before")
            answer = interrupt({"question": name, "entries": counters[f"{name}.before"]})
            counters.hit(f"{name}.after")
            return {"log": [f"{name}:{answer}"]}

        node.__name__ = name
        return node

    def last(state):
        counters.hit("last")
        return {"log": ["last"]}

    builder = StateGraph(Log)
    previous = START
    for node in (first, asking("ask_a"), asking("ask_b"), last):
        builder.add_node(node.__name__, node)
        builder.add_edge(previous, node.__name__)
        previous = node.__name__
    builder.add_edge(previous, END)
    return builder.compile(checkpointer=checkpointer)


def position(graph, config) -> tuple[str, int]:
    """The thread's latest checkpoint id and how many checkpoints it has."""
    state = graph.get_state(config)
    return state.config["configurable"]["checkpoint_id"], len(list(graph.get_state_history(config)))


# --- (1) stale, unknown and duplicate resumes -----------------------------------------------------


def test_fact_a_resume_for_an_unknown_question_id_raises_nothing_writes_no_checkpoint_and_re_runs_the_pending_node(
    checkpointer, config
):
    """Measured: no error, the same checkpoint id and history length, and ask_a entered once more.

    So code before interrupt() runs again on every such resume (it must be free of side effects),
    and the router checks the ledger (question open on this thread) before it invokes.
    """
    # GIVEN a thread parked on ask_a
    counters = Counters()
    graph = chain_graph(checkpointer, counters)
    parked = graph.invoke({"log": []}, config)
    before = position(graph, config)
    # WHEN a resume names a question that does not exist
    again = graph.invoke(Command(resume={UNKNOWN_ID: "yes"}), config)
    # THEN nothing raised, no checkpoint was written, and the pending node ran again up to its interrupt
    assert position(graph, config) == before
    assert (counters["ask_a.before"], counters["ask_a.after"], counters["first"]) == (2, 0, 1)
    # AND the same question is still pending under the same id
    assert [i.id for i in again["__interrupt__"]] == [i.id for i in parked["__interrupt__"]]
    assert again["log"] == ["first"]


def test_fact_a_duplicate_resume_after_the_thread_moved_on_runs_nothing_of_the_answered_node(checkpointer, config):
    """Measured: after ask_a was answered and the thread parked on ask_b, delivering ask_a's answer again
    (same or different) raises nothing, writes no checkpoint, never re-enters ask_a, and the first
    decision stands; but ask_b, the node now pending, is re-entered up to its interrupt() each time.
    """
    # GIVEN a thread whose first question was answered and which now waits on the second
    counters = Counters()
    graph = chain_graph(checkpointer, counters)
    first_question = graph.invoke({"log": []}, config)["__interrupt__"][0].id
    moved_on = graph.invoke(Command(resume={first_question: "yes"}), config)
    second_question = moved_on["__interrupt__"][0].id
    before = position(graph, config)
    assert (counters["ask_a.after"], counters["ask_b.before"]) == (1, 1)
    # WHEN the first answer arrives again, and then a different one
    duplicate = graph.invoke(Command(resume={first_question: "yes"}), config)
    different = graph.invoke(Command(resume={first_question: "no"}), config)
    # THEN ask_a never ran again, the first decision stands, and nothing was written
    assert (counters["ask_a.before"], counters["ask_a.after"]) == (2, 1)
    assert duplicate["log"] == different["log"] == ["first", "ask_a:yes"]
    assert position(graph, config) == before
    # AND the pending ask_b was re-entered once per delivery, still waiting on the same question
    assert (counters["ask_b.before"], counters["ask_b.after"]) == (3, 0)
    assert [i.id for i in duplicate["__interrupt__"]] == [i.id for i in different["__interrupt__"]] == [second_question]


def test_fact_a_duplicate_resume_after_the_run_finished_runs_nothing_at_all(checkpointer, config):
    """Measured: once the graph has reached END, a repeated answer re-enters no node and writes nothing."""
    # GIVEN a finished thread
    counters = Counters()
    graph = chain_graph(checkpointer, counters)
    first_question = graph.invoke({"log": []}, config)["__interrupt__"][0].id
    second_question = graph.invoke(Command(resume={first_question: "yes"}), config)["__interrupt__"][0].id
    finished = graph.invoke(Command(resume={second_question: "ok"}), config)
    ran, before = dict(counters.ran), position(graph, config)
    # WHEN either answer is delivered again
    late = [graph.invoke(Command(resume={qid: "again"}), config) for qid in (second_question, first_question)]
    # THEN nothing ran, nothing was written, and the result is the final state with nothing pending
    assert counters.ran == ran
    assert position(graph, config) == before
    assert late == [finished, finished]
    assert "__interrupt__" not in finished
    assert finished["log"] == ["first", "ask_a:yes", "ask_b:ok", "last"]


def test_fact_a_re_run_replaces_the_pending_interrupt_value_under_the_same_id(checkpointer, config):
    """Measured: the re-run caused by a stale resume raises interrupt() again with a freshly computed value,
    and get_state() then reports that new value under the unchanged id. Anything computed before
    interrupt() (such as ask()'s asked_at) is therefore recomputed; the ledger keeps the first deadline.
    """
    counters = Counters()
    graph = chain_graph(checkpointer, counters)
    parked = graph.invoke({"log": []}, config)
    assert parked["__interrupt__"][0].value == {"question": "ask_a", "entries": 1}
    # WHEN a stale resume re-runs ask_a
    again = graph.invoke(Command(resume={UNKNOWN_ID: "x"}), config)
    # THEN the pending value is the re-run's, under the same id, in the result and in the checkpoint
    (pending,) = graph.get_state(config).interrupts
    assert again["__interrupt__"][0].value == pending.value == {"question": "ask_a", "entries": 2}
    assert pending.id == parked["__interrupt__"][0].id


def test_fact_a_resume_map_whose_keys_are_not_interrupt_ids_is_delivered_whole_to_the_pending_question(
    checkpointer, config
):
    """Measured: LangGraph reads Command(resume={k: v}) as a map only when every key is 32 lowercase hex
    characters. Otherwise the whole dict is one plain resume value, and with one question pending it is
    that question's answer: the node runs on and a checkpoint is written. resume_command refuses such ids.
    """
    counters = Counters()
    graph = chain_graph(checkpointer, counters)
    graph.invoke({"log": []}, config)
    before = position(graph, config)
    # WHEN a resume names a made-up id
    result = graph.invoke(Command(resume={"q-1": {"action": "approve"}}), config)
    # THEN ask_a received the whole map as its answer and the thread moved on
    assert result["log"] == ["first", "ask_a:{'q-1': {'action': 'approve'}}"]
    assert counters["ask_a.after"] == 1
    assert position(graph, config) != before


# --- (2) a resume on a thread that never existed --------------------------------------------------


@pytest.mark.parametrize(
    "resume", [{UNKNOWN_ID: "yes"}, {"q-1": "yes"}, "yes"], ids=["interrupt-id-map", "other-map", "plain-value"]
)
def test_fact_a_resume_on_a_thread_that_never_existed_starts_the_graph_from_start(checkpointer, resume: Any):
    """Measured: no error; the first node runs and the run parks on ask_a, which never sees the resume value.
    So the router checks that the thread is known before it resumes anything.
    """
    counters = Counters()
    graph = chain_graph(checkpointer, counters)
    config = {"configurable": {"thread_id": "never-seen"}}
    # WHEN an answer arrives for a thread with no checkpoint
    result = graph.invoke(Command(resume=resume), config)
    # THEN the graph ran from START and parked on its first question
    assert (counters["first"], counters["ask_a.before"], counters["ask_a.after"]) == (1, 1, 0)
    assert result["log"] == ["first"]
    assert result["__interrupt__"][0].value == {"question": "ask_a", "entries": 1}


def test_fact_a_start_delivered_again_to_a_parked_thread_re_runs_from_start_under_a_new_question_id(
    checkpointer, config
):
    """Measured: invoking a parked thread with input again runs `first` again, writes new checkpoints and
    parks on the same question under a NEW Interrupt.id; the old id is then stale (a resume with it runs
    nothing but the pending node's entry). So the router must dedupe starts before invoking a parked thread;
    an envelope's question_id does not survive a redelivered start.
    """
    counters = Counters()
    graph = chain_graph(checkpointer, counters)
    parked = graph.invoke({"log": []}, config)
    before = position(graph, config)
    # WHEN the same start is delivered again
    again = graph.invoke({"log": []}, config)
    # THEN the graph re-ran from START and the pending question has a new id
    assert counters["first"] == 2
    assert position(graph, config)[1] > before[1]
    assert again["__interrupt__"][0].id != parked["__interrupt__"][0].id
    # AND an answer to the old id does not answer it
    stale = graph.invoke(Command(resume={parked["__interrupt__"][0].id: "yes"}), config)
    assert counters["ask_a.after"] == 0
    assert stale["__interrupt__"][0].id == again["__interrupt__"][0].id


# --- (3) parallel interrupting tools in one ToolNode ----------------------------------------------


def two_tool_calls() -> dict[str, Any]:
    calls = [
        {"name": "alpha", "args": {"x": 1}, "id": "call-alpha", "type": "tool_call"},
        {"name": "beta", "args": {"y": 2}, "id": "call-beta", "type": "tool_call"},
    ]
    return {"messages": [AIMessage(content="", tool_calls=calls)]}


def tool_graph(checkpointer, *tools):
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(list(tools)))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=checkpointer)


def tool_answers(state: dict[str, Any]) -> dict[str, str]:
    return {m.tool_call_id: m.content for m in state["messages"] if isinstance(m, ToolMessage)}


def test_fact_parallel_interrupting_tools_in_one_tool_node_surface_one_at_a_time_and_take_answers_by_call_order(
    checkpointer, thread_id
):
    """Measured (tools run one after another, max_concurrency=1): the run parks on alpha's question alone;
    answering it re-runs the ToolNode, alpha (re-entered) takes that answer and beta's question surfaces
    under a different id; answering that re-runs both again and each takes the answer in the order the
    tools call interrupt(). The answers are a list per task, matched by position, not by tool.
    """
    received: list[tuple[str, Any]] = []

    @tool
    def alpha(x: int) -> str:
        """First tool."""
        answer = interrupt({"tool": "alpha"})
        received.append(("alpha", answer))
        return f"alpha:{answer}"

    @tool
    def beta(y: int) -> str:
        """Second tool."""
        answer = interrupt({"tool": "beta"})
        received.append(("beta", answer))
        return f"beta:{answer}"

    graph = tool_graph(checkpointer, alpha, beta)
    config = {"configurable": {"thread_id": thread_id}, "max_concurrency": 1}
    # WHEN the model calls both tools in one message
    first = graph.invoke(two_tool_calls(), config)
    # THEN only one question surfaces
    assert [i.value for i in first["__interrupt__"]] == [{"tool": "alpha"}]
    # WHEN it is answered, the next one surfaces under a new id
    second = graph.invoke(Command(resume={first["__interrupt__"][0].id: "for-alpha"}), config)
    assert [i.value for i in second["__interrupt__"]] == [{"tool": "beta"}]
    assert second["__interrupt__"][0].id != first["__interrupt__"][0].id
    # WHEN that is answered, both tools finish with the answers in call order
    done = graph.invoke(Command(resume={second["__interrupt__"][0].id: "for-beta"}), config)
    assert "__interrupt__" not in done
    assert tool_answers(done) == {"call-alpha": "alpha:for-alpha", "call-beta": "beta:for-beta"}
    assert received == [("alpha", "for-alpha"), ("alpha", "for-alpha"), ("beta", "for-beta")]


def test_fact_parallel_tools_in_one_tool_node_can_receive_each_others_answers(checkpointer, thread_id):
    """Measured (tools in parallel threads, beta reaching interrupt() before alpha on every run): the run
    parks on alpha's question (the first call in the model's message), but its answer goes to beta,
    the first tool to call interrupt() on the re-run. Beta's own question is never surfaced, and alpha's
    question surfaces again under a new id. This is why DESIGN.md says: one interrupt per node/task.
    """
    beta_asked = threading.Event()
    received: list[tuple[str, Any]] = []

    @tool
    def alpha(x: int) -> str:
        """First tool; reaches interrupt() only after beta has."""
        assert beta_asked.wait(5), "beta never reached interrupt()"
        answer = interrupt({"tool": "alpha"})
        received.append(("alpha", answer))
        return f"alpha:{answer}"

    @tool
    def beta(y: int) -> str:
        """Second tool."""
        try:
            answer = interrupt({"tool": "beta"})
        finally:
            beta_asked.set()
        received.append(("beta", answer))
        return f"beta:{answer}"

    graph = tool_graph(checkpointer, alpha, beta)
    config = {"configurable": {"thread_id": thread_id}}
    # WHEN the model calls both, and the question shown (alpha's) is answered
    first = graph.invoke(two_tool_calls(), config)
    assert [i.value for i in first["__interrupt__"]] == [{"tool": "alpha"}]
    beta_asked.clear()
    second = graph.invoke(Command(resume={first["__interrupt__"][0].id: "meant-for-alpha"}), config)
    # THEN beta took alpha's answer, and alpha's question is pending again under a new id
    assert received == [("beta", "meant-for-alpha")]
    assert [i.value for i in second["__interrupt__"]] == [{"tool": "alpha"}]
    assert second["__interrupt__"][0].id != first["__interrupt__"][0].id
    # WHEN alpha's question is answered again, the run finishes; beta was never asked its own question
    beta_asked.clear()
    done = graph.invoke(Command(resume={second["__interrupt__"][0].id: "second-for-alpha"}), config)
    assert tool_answers(done) == {"call-alpha": "alpha:second-for-alpha", "call-beta": "beta:meant-for-alpha"}


# --- (4) result["__interrupt__"] is the source of truth --------------------------------------------


def two_branch_graph(checkpointer):
    def left(state):
        return {"log": [f"left:{interrupt('left?')}"]}

    def right(state):
        return {"log": [f"right:{interrupt('right?')}"]}

    builder = StateGraph(Log)
    builder.add_node("left", left)
    builder.add_node("right", right)
    builder.add_edge(START, "left")
    builder.add_edge(START, "right")
    builder.add_edge("left", END)
    builder.add_edge("right", END)
    return builder.compile(checkpointer=checkpointer)


def test_fact_after_resuming_one_of_two_parallel_questions_the_result_lists_only_the_one_still_pending(
    checkpointer, config
):
    """Measured: both questions surface together; after one is answered, result["__interrupt__"] (and
    get_state().interrupts) list only the other, and the answered node's update is already in the state.
    """
    graph = two_branch_graph(checkpointer)
    # GIVEN a run parked on two questions in separate nodes
    parked = graph.invoke({"log": []}, config)
    by_value = {i.value: i.id for i in parked["__interrupt__"]}
    assert set(by_value) == {"left?", "right?"}
    # WHEN one is answered
    after = graph.invoke(Command(resume={by_value["left?"]: "yes"}), config)
    # THEN only the other is reported pending, by the result and by the checkpoint
    assert [(i.value, i.id) for i in after["__interrupt__"]] == [("right?", by_value["right?"])]
    assert [i.id for i in graph.get_state(config).interrupts] == [by_value["right?"]]
    assert after["log"] == ["left:yes"]
    # AND answering the other finishes the run with nothing pending
    done = graph.invoke(Command(resume={by_value["right?"]: "ok"}), config)
    assert "__interrupt__" not in done
    assert sorted(done["log"]) == ["left:yes", "right:ok"]


def test_fact_a_plain_resume_with_two_questions_pending_is_refused(checkpointer, config):
    """Measured: Command(resume=value) without ids while two questions wait raises RuntimeError, writing nothing."""
    graph = two_branch_graph(checkpointer)
    graph.invoke({"log": []}, config)
    before = position(graph, config)
    with pytest.raises(
        RuntimeError,
        match=re.escape("When there are multiple pending interrupts, you must specify the interrupt id when resuming."),
    ):
        graph.invoke(Command(resume="yes"), config)
    assert position(graph, config) == before
