"""`@wait` in interrupt mode on sync functions and nodes: what is asked, and what each answer does."""

from __future__ import annotations

import inspect
import logging
import re
from datetime import datetime
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import StreamWriter

from agent_wait import (
    MAX_QUESTION_BYTES,
    ConfigurationError,
    EnvelopeError,
    InMemoryAnnounce,
    QuestionTooLargeError,
    WaitPolicy,
)
from agent_wait.langgraph import MARKER, publish_interrupts, wait

FINANCE = WaitPolicy(timeout="P3D", default={"action": "reject"}, tags={"approver_group": "finance"}, allow_edits=True)


@pytest.fixture
def refund_graph(graph_of, calls):
    """A node that calls `@wait(FINANCE) issue_refund(order_id, amount)` and stores what the call returned."""

    @wait(FINANCE)
    def issue_refund(order_id: str, amount: int) -> dict[str, Any]:
        calls(order_id=order_id, amount=amount)
        return {"refunded": order_id, "amount": amount}

    def refund(state):
        return {"result": issue_refund(state["order_id"], amount=state["amount"])}

    return graph_of(refund)


START_VALUE = {"order_id": "order-4471", "amount": 41000}


# --- what is asked ------------------------------------------------------------------------------


def test_wait_parks_on_the_function_name_and_its_arguments(refund_graph, config, thread_id, memory, calls, asked_at):
    # GIVEN a node calling a @wait function
    # WHEN the run reaches the call
    parked = refund_graph.invoke(START_VALUE, config)
    publish_interrupts(parked, thread_id, memory)
    # THEN the run parks on {"function", "args"}, the body has not run, and the envelope carries the policy
    assert calls.count == 0
    envelope = memory.last()
    assert envelope.question == {"function": "issue_refund", "args": {"order_id": "order-4471", "amount": 41000}}
    # the policy allows edits, so the source carries the schema an edit must fit (from the annotations)
    assert dict(envelope.source) == {
        "function": "issue_refund",
        "args_schema": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "amount": {"type": "integer"}},
            "additionalProperties": False,
        },
    }
    assert envelope.question_id == parked["__interrupt__"][0].id
    assert envelope.expires_at == "2026-09-14T09:00:00Z"
    assert envelope.default == {"action": "reject"}
    assert dict(envelope.tags) == {"approver_group": "finance"}


def test_wait_publishes_the_same_args_whether_called_positionally_or_by_keyword(graph_of, config):
    # GIVEN the same @wait function called two ways
    @wait()
    def issue_refund(order_id: str, amount: int = 10) -> str:
        return "ran"

    def by_position(state):
        return {"result": issue_refund("o-1", 5)}

    def by_keyword(state):
        return {"result": issue_refund(amount=5, order_id="o-1")}

    def with_default(state):
        return {"result": issue_refund("o-1")}

    # WHEN each parks
    questions = [
        graph_of(node).invoke({}, {"configurable": {"thread_id": node.__name__}})["__interrupt__"][0].value["question"]
        for node in (by_position, by_keyword, with_default)
    ]
    # THEN the args are bound by name, with defaults filled in
    assert questions[0] == questions[1] == {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 5}}
    assert questions[2] == {"function": "issue_refund", "args": {"order_id": "o-1", "amount": 10}}


def test_wait_keeps_the_functions_name_docstring_and_visible_signature():
    # GIVEN a decorated function
    @wait()
    def issue_refund(order_id: str, amount: int) -> str:
        """Refund an order."""
        return "ran"

    # THEN tools and graphs built from it see the original function
    assert issue_refund.__name__ == "issue_refund"
    assert issue_refund.__doc__ == "Refund an order."
    assert list(inspect.signature(issue_refund).parameters) == ["order_id", "amount"]


# --- answers ------------------------------------------------------------------------------------


def test_approve_runs_the_body_once_with_the_asked_arguments(refund_graph, config, resume, calls):
    # GIVEN a run parked on a @wait call
    parked = refund_graph.invoke(START_VALUE, config)
    # WHEN it is approved
    done = resume(refund_graph, config, parked, {"action": "approve"})
    # THEN the body runs exactly once, with the arguments that were asked about, and its value is returned
    assert calls.args == [{"order_id": "order-4471", "amount": 41000}]
    assert done["result"] == {"refunded": "order-4471", "amount": 41000}
    assert "__interrupt__" not in done


def test_approve_with_extra_fields_still_runs_the_body(refund_graph, config, resume, calls):
    # GIVEN a run parked on a @wait call
    parked = refund_graph.invoke(START_VALUE, config)
    # WHEN the approval carries a note and who approved
    resume(refund_graph, config, parked, {"action": "approve", "note": "ok", "by": "ana"})
    # THEN the body runs (only `action` and `args` mean anything to @wait)
    assert calls.count == 1


def test_approve_with_args_runs_the_body_with_the_edited_arguments(refund_graph, config, resume, calls):
    # GIVEN a run parked on issue_refund(order-4471, 41000)
    parked = refund_graph.invoke(START_VALUE, config)
    # WHEN the approver lowers the amount
    done = resume(refund_graph, config, parked, {"action": "approve", "args": {"amount": 20000}})
    # THEN the body runs once with the edit applied and the other argument kept
    assert calls.args == [{"order_id": "order-4471", "amount": 20000}]
    assert done["result"] == {"refunded": "order-4471", "amount": 20000}


def test_approve_with_empty_args_runs_the_body_unchanged(refund_graph, config, resume, calls):
    parked = refund_graph.invoke(START_VALUE, config)
    resume(refund_graph, config, parked, {"action": "approve", "args": {}})
    assert calls.args == [{"order_id": "order-4471", "amount": 41000}]


def test_editing_an_unknown_parameter_returns_edit_refused_and_runs_nothing(refund_graph, config, resume, calls):
    # GIVEN a run parked on issue_refund
    parked = refund_graph.invoke(START_VALUE, config)
    # WHEN the approval edits a parameter the function does not have (a typo), alongside a real one
    done = resume(refund_graph, config, parked, {"action": "approve", "args": {"amont": 1, "amount": 2}})
    # THEN the error value comes back in place of the body, naming what was refused and what may be edited
    assert calls.count == 0
    assert done["result"] == {
        "status": "error",
        "error": "edit_refused",
        "function": "issue_refund",
        "refused": ["amont"],
        "editable": ["order_id", "amount"],
        "message": "the answer edits unknown parameter(s) ['amont']; the answer may edit only "
        "['order_id', 'amount'] of issue_refund(). Nothing was run.",
    }


def test_an_edit_refusal_is_logged_with_ids_only(refund_graph, config, resume, caplog):
    parked = refund_graph.invoke(START_VALUE, config)
    with caplog.at_level(logging.WARNING, logger="agent_wait.wait"):
        resume(refund_graph, config, parked, {"action": "approve", "args": {"amont": 1}})
    assert "edit refused: function=issue_refund refused=['amont']" in caplog.text
    assert "order-4471" not in caplog.text, "question content never goes into a warning"


def test_editing_decision_on_a_function_without_a_decision_parameter_is_an_unknown_edit(
    refund_graph, config, resume, calls
):
    parked = refund_graph.invoke(START_VALUE, config)
    done = resume(refund_graph, config, parked, {"action": "approve", "args": {"decision": "yes"}})
    assert calls.count == 0
    assert done["result"]["refused"] == ["decision"]


@pytest.mark.parametrize("edits", [["amount", 5], "amount=5", 7], ids=["list", "string", "number"])
def test_args_that_are_not_an_object_return_edit_refused_and_run_nothing(
    refund_graph, config, resume, calls, edits: Any
):
    # GIVEN a run parked on issue_refund
    parked = refund_graph.invoke(START_VALUE, config)
    # WHEN the approval's args is not an object
    done = resume(refund_graph, config, parked, {"action": "approve", "args": edits})
    # THEN nothing runs and the error says what args must be
    assert calls.count == 0
    assert done["result"]["error"] == "edit_refused"
    assert done["result"]["refused"] == []
    assert done["result"]["message"].startswith(f"'args' must be an object, got {type(edits).__name__}; ")


@pytest.mark.parametrize(
    "answer",
    [
        {"action": "reject"},
        {"action": "reject", "reason": "over budget"},
        {"action": "escalate"},
        {"action": "Approve"},
        {"approve": True},
        "approve",
        "later",
        42,
        0,
        [],
        None,
    ],
    ids=repr,
)
def test_any_answer_other_than_approve_is_returned_in_place_of_the_body(
    refund_graph, config, resume, calls, answer: Any
):
    # GIVEN a run parked on issue_refund
    parked = refund_graph.invoke(START_VALUE, config)
    # WHEN the answer is not {"action": "approve"}
    done = resume(refund_graph, config, parked, answer)
    # THEN the body never runs and the call returns the answer itself
    assert calls.count == 0
    assert done.get("result") == answer


def test_a_function_with_a_decision_parameter_always_runs_and_receives_the_answer_verbatim(graph_of, config, resume):
    # GIVEN a @wait function that wants to see the decision itself
    received: list[tuple[str, Any]] = []

    @wait()
    def issue_refund(order_id: str, decision: Any = None) -> str:
        received.append((order_id, decision))
        return "handled"

    def refund(state):
        return {"result": issue_refund(state["order_id"])}

    graph = graph_of(refund)
    answers = [{"action": "reject", "why": "no"}, {"action": "approve", "args": {"order_id": "edited"}}, "later", None]
    for index, answer in enumerate(answers):
        config = {"configurable": {"thread_id": f"decision-{index}"}}
        # WHEN it is asked and answered
        parked = graph.invoke({"order_id": "o-1"}, config)
        assert parked["__interrupt__"][0].value["question"] == {"function": "issue_refund", "args": {"order_id": "o-1"}}
        done = resume(graph, config, parked, answer)
        # THEN the body runs every time with the whole answer, and edits are the function's own business
        assert done["result"] == "handled"
    assert received == [("o-1", answer) for answer in answers]


def test_decision_renames_the_parameter_that_receives_the_answer(graph_of, config, resume):
    # GIVEN @wait(decision="verdict"), on a function that also has an ordinary parameter called decision
    received: list[Any] = []

    @wait(decision="verdict")
    def choose(decision: str, verdict: Any = None) -> str:
        received.append((decision, verdict))
        return "ran"

    def node(state):
        return {"result": choose("plan-b")}

    graph = graph_of(node)
    # WHEN it parks
    parked = graph.invoke({}, config)
    # THEN `decision` is published like any argument and `verdict` is not
    assert parked["__interrupt__"][0].value["question"] == {"function": "choose", "args": {"decision": "plan-b"}}
    # AND a rejection still runs the body, delivered in `verdict`
    resume(graph, config, parked, {"action": "reject"})
    assert received == [("plan-b", {"action": "reject"})]


def test_the_decision_parameter_is_hidden_from_the_signature_frameworks_see():
    # GIVEN a @wait function with a decision parameter
    @wait()
    def issue_refund(order_id: str, decision: Any = None) -> str:
        return "ran"

    # THEN a framework building a schema from it does not offer `decision` to a model
    assert list(inspect.signature(issue_refund).parameters) == ["order_id"]


# --- @wait on a node, with values LangGraph injects -----------------------------------------------


def test_wait_on_a_node_publishes_the_state_but_never_config_runtime_store_or_writer(
    graph_of, config, thread_id, memory, resume
):
    # GIVEN a @wait node that takes everything LangGraph can inject
    seen: list[tuple[Any, ...]] = []

    @wait()
    def approve_order(state, config: RunnableConfig, runtime: Runtime, store: BaseStore, writer: StreamWriter):
        seen.append((config["configurable"]["thread_id"], type(runtime).__name__, type(store).__name__))
        return {"status": "done"}

    graph = graph_of(approve_order, store=InMemoryStore())
    # WHEN it parks and is published
    parked = graph.invoke({"order_id": "o-1"}, config)
    publish_interrupts(parked, thread_id, memory)
    # THEN only the state is in the question
    assert memory.last().question == {"function": "approve_order", "args": {"state": {"order_id": "o-1"}}}
    # AND on approval LangGraph's own values reach the body
    done = resume(graph, config, parked, {"action": "approve"})
    assert done["status"] == "done"
    assert seen == [(thread_id, "Runtime", "InMemoryStore")]


@pytest.mark.parametrize("injected", ["config", "runtime", "store", "writer"])
def test_editing_a_value_langgraph_injects_into_a_node_returns_edit_refused_and_runs_nothing(
    graph_of, config, resume, injected: str
):
    # GIVEN a parked @wait node with injected parameters
    ran: list[str] = []

    @wait()
    def approve_order(state, config: RunnableConfig, runtime: Runtime, store: BaseStore, writer: StreamWriter):
        ran.append("body")
        return {"status": "done"}

    graph = graph_of(approve_order, store=InMemoryStore())
    parked = graph.invoke({"order_id": "o-1"}, config)
    # WHEN the answer tries to override an injected value
    done = resume(graph, config, parked, {"action": "approve", "args": {injected: {}}})
    # THEN the node returns the refusal in place (it lands in the state) and the body never runs
    assert ran == []
    assert (done["status"], done["error"], done["refused"]) == ("error", "edit_refused", [injected])


def test_an_edit_under_a_policy_that_does_not_opt_in_runs_nothing(graph_of, config, resume, caplog):
    # GIVEN a @wait function whose policy is the default (no edits), resumed in-process (no host to refuse it)
    runs: list[int] = []

    @wait()
    def issue_refund(order_id: str, amount: int) -> str:
        runs.append(amount)
        return "ran"

    def refund(state):
        return {"result": issue_refund(state["order_id"], state["amount"])}

    graph = graph_of(refund)
    parked = graph.invoke(START_VALUE, config)
    # WHEN the answer edits the amount
    with caplog.at_level(logging.WARNING, logger="agent_wait.wait"):
        done = resume(graph, config, parked, {"action": "approve", "args": {"amount": 1}})
    # THEN the body did not run, and the error value says how the author would opt in
    assert runs == []
    assert (done["result"]["error"], done["result"]["refused"]) == ("edit_refused", ["amount"])
    assert "WaitPolicy(allow_edits=True)" in done["result"]["message"]
    assert "edit refused: function=issue_refund allows no edits" in caplog.text


def test_an_edited_value_that_does_not_fit_the_annotation_runs_nothing_in_process(graph_of, config, resume):
    # GIVEN a @wait function that opts in to edits, resumed in-process
    runs: list[Any] = []

    @wait(WaitPolicy(allow_edits=True))
    def issue_refund(order_id: str, amount: int) -> str:
        runs.append(amount)
        return "ran"

    def refund(state):
        return {"result": issue_refund(state["order_id"], state["amount"])}

    graph = graph_of(refund)
    parked = graph.invoke(START_VALUE, config)
    # WHEN the answer edits the amount to a value an int parameter cannot take
    done = resume(graph, config, parked, {"action": "approve", "args": {"amount": "lots"}})
    # THEN the body did not run, and the error value names the parameter
    assert runs == []
    assert (done["result"]["error"], done["result"]["refused"]) == ("edit_refused", ["amount"])


def test_edit_refused_for_an_injected_value_says_it_was_injected(graph_of, config, resume):
    # GIVEN a @wait helper that takes the run's config
    @wait(WaitPolicy(allow_edits=True))
    def issue_refund(order_id: str, config: RunnableConfig) -> str:
        return "ran"

    def refund(state, config: RunnableConfig):
        return {"result": issue_refund("o-1", config)}

    graph = graph_of(refund)
    parked = graph.invoke({}, config)
    assert parked["__interrupt__"][0].value["question"]["args"] == {"order_id": "o-1"}
    # WHEN the answer tries to swap the config
    done = resume(graph, config, parked, {"action": "approve", "args": {"config": {"configurable": {}}}})
    # THEN the message names the injected value and what may be edited
    assert done["result"]["message"] == (
        "the answer tried to edit injected value(s) ['config']; the answer may edit only ['order_id'] of "
        "issue_refund(). Nothing was run."
    )


def test_approve_with_edited_state_runs_the_node_with_that_state(graph_of, config, resume):
    # GIVEN a parked @wait node
    seen: list[dict[str, Any]] = []

    @wait(WaitPolicy(allow_edits=True))
    def approve_order(state):
        seen.append(dict(state))
        return {"status": "done", "amount": state["amount"]}

    graph = graph_of(approve_order)
    parked = graph.invoke({"order_id": "o-1", "amount": 900}, config)
    # WHEN the approver edits the state argument
    done = resume(graph, config, parked, {"action": "approve", "args": {"state": {"order_id": "o-1", "amount": 9}}})
    # THEN the node body sees the edited state
    assert seen == [{"order_id": "o-1", "amount": 9}]
    assert done["amount"] == 9


def test_a_rejected_node_returns_the_answer_as_its_update(graph_of, config, resume):
    # GIVEN a parked @wait node
    @wait()
    def approve_order(state):
        return {"status": "done"}

    graph = graph_of(approve_order)
    parked = graph.invoke({"order_id": "o-1"}, config)
    # WHEN it is rejected
    done = resume(graph, config, parked, {"action": "reject", "note": "no"})
    # THEN the rejection is the node's return value, applied to the state like any update
    assert done["action"] == "reject"
    assert done["note"] == "no"
    assert "status" not in done


# --- when= ----------------------------------------------------------------------------------------


@pytest.fixture
def gated_graph(graph_of, calls):
    """issue_refund asks only for amounts over 1000."""

    @wait(when=lambda order_id, amount: amount > 1000)
    def issue_refund(order_id: str, amount: int) -> str:
        calls(order_id=order_id, amount=amount)
        return "refunded"

    def refund(state):
        return {"result": issue_refund(state["order_id"], state["amount"])}

    return graph_of(refund)


def test_when_asks_only_when_the_predicate_is_true(gated_graph, config, thread_id, memory, calls):
    # GIVEN a predicate that asks above 1000
    # WHEN the amount is above it
    parked = gated_graph.invoke({"order_id": "o-1", "amount": 5000}, config)
    # THEN the run parks and the body waits
    assert len(publish_interrupts(parked, thread_id, memory)) == 1
    assert calls.count == 0


def test_when_skips_asking_runs_the_body_and_publishes_nothing(gated_graph, config, thread_id, memory, calls):
    # GIVEN a predicate that asks above 1000
    # WHEN the amount is below it
    done = gated_graph.invoke({"order_id": "o-1", "amount": 50}, config)
    # THEN the body runs at once, nothing is parked, and there is nothing to publish
    assert calls.args == [{"order_id": "o-1", "amount": 50}]
    assert done["result"] == "refunded"
    assert "__interrupt__" not in done
    assert publish_interrupts(done, thread_id, memory) == []
    assert memory.events == []


def test_when_asks_anyway_if_the_predicate_raises(graph_of, config, thread_id, memory, calls, caplog):
    # GIVEN a predicate that fails on this call
    @wait(when=lambda order_id, amount: amount["cents"] > 1000)
    def issue_refund(order_id: str, amount: int) -> str:
        calls(order_id=order_id, amount=amount)
        return "refunded"

    def refund(state):
        return {"result": issue_refund(state["order_id"], state["amount"])}

    # WHEN the call is made
    with caplog.at_level(logging.WARNING, logger="agent_wait.wait"):
        parked = graph_of(refund).invoke({"order_id": "o-1", "amount": 50}, config)
    # THEN it asks (the safe side), the body waits, and the failure is logged
    assert len(publish_interrupts(parked, thread_id, memory)) == 1
    assert calls.count == 0
    assert "when= predicate failed for issue_refund (TypeError)" in caplog.text
    assert "asking anyway" in caplog.text


def test_a_failing_when_predicate_never_logs_the_arguments_above_debug(graph_of, config, caplog):
    # GIVEN a predicate whose error quotes the call's arguments (a card number, as real errors often do)
    canary = "card-4111-1111-1111-1111"

    def predicate(order_id: str, amount: int) -> bool:
        raise ValueError(f"no rule for {order_id}")

    @wait(when=predicate)
    def issue_refund(order_id: str, amount: int) -> str:
        return "refunded"

    # WHEN the call is made with logging at DEBUG
    with caplog.at_level(logging.DEBUG, logger="agent_wait.wait"):
        graph_of(lambda state: {"result": issue_refund(state["order_id"], state["amount"])}).invoke(
            {"order_id": canary, "amount": 50}, config
        )
    # THEN the argument appears only at DEBUG, never at INFO or above
    assert any(canary in r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG)
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO and canary in r.getMessage()]


def test_when_receives_the_arguments_as_the_call_passed_them(graph_of, config):
    # GIVEN a predicate that records what it was given
    seen: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def predicate(*args: Any, **kwargs: Any) -> bool:
        seen.append((args, kwargs))
        return False

    @wait(when=predicate)
    def issue_refund(order_id: str, amount: int) -> str:
        return "ran"

    def refund(state):
        return {"result": issue_refund("o-1", amount=5)}

    # WHEN the call is made
    graph_of(refund).invoke({}, config)
    # THEN the predicate saw exactly the call's positional and keyword arguments
    assert seen == [(("o-1",), {"amount": 5})]


# --- bad inputs -----------------------------------------------------------------------------------


def test_non_json_arguments_are_refused_before_parking(graph_of, config, calls):
    # GIVEN a @wait function called with a datetime
    @wait()
    def schedule(order_id: str, when: Any) -> str:
        calls()
        return "ran"

    def node(state):
        return {"result": schedule("o-1", datetime(2026, 1, 1))}

    graph = graph_of(node)
    # WHEN / THEN EnvelopeError names the argument, and nothing is parked or run
    with pytest.raises(EnvelopeError, match=re.escape("args.when is a datetime, which is not JSON; pass dict")):
        graph.invoke({}, config)
    assert graph.get_state(config).interrupts == ()
    assert calls.count == 0


def test_oversized_arguments_are_refused_before_parking(graph_of, config, calls):
    # GIVEN a @wait function called with the payload instead of a reference
    @wait()
    def review(document: str) -> str:
        calls()
        return "ran"

    def node(state):
        return {"result": review("x" * MAX_QUESTION_BYTES)}

    graph = graph_of(node)
    # WHEN / THEN QuestionTooLargeError tells the caller to publish a reference, and nothing is parked
    with pytest.raises(QuestionTooLargeError, match=re.escape("Publish a reference instead")):
        graph.invoke({}, config)
    assert graph.get_state(config).interrupts == ()
    assert calls.count == 0


def test_wait_refuses_a_policy_that_is_not_a_wait_policy():
    with pytest.raises(EnvelopeError, match=re.escape("@wait takes a WaitPolicy as its first argument; got a dict")):
        wait({"timeout": "PT1H"})  # type: ignore[arg-type]


def test_interrupt_mode_refuses_announce():
    # GIVEN interrupt mode (the default) with announcers
    # WHEN / THEN it is refused: code before interrupt() re-runs on resume, so it must not publish
    with pytest.raises(
        ConfigurationError,
        match=re.escape(
            "@wait(mode='interrupt') does not publish from inside the run (code before an interrupt re-runs on "
            "resume); drop announce= and publish after the run with publish_interrupts(), or use the router"
        ),
    ):
        wait(announce=InMemoryAnnounce())


def test_an_unknown_mode_is_refused():
    with pytest.raises(
        ConfigurationError, match=re.escape("@wait mode must be one of ['interrupt', 'async']; got 'deferred'")
    ):
        wait(mode="deferred")


def test_the_marker_carries_the_source_function_through_the_checkpoint(refund_graph, config):
    refund_graph.invoke(START_VALUE, config)
    (pending,) = refund_graph.get_state(config).interrupts
    assert pending.value[MARKER]["source"]["function"] == "issue_refund"
    assert set(pending.value[MARKER]["source"]["args_schema"]["properties"]) == {"order_id", "amount"}
    assert pending.value[MARKER]["policy"] == FINANCE.to_dict()
