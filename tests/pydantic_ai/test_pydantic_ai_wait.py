"""`@wait` on Pydantic AI tools: the same rules as on LangGraph, with the answer riding in the deferred metadata."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic_ai.exceptions import UserError
from pydantic_ai.tools import DeferredToolResults
from pydantic_ai_script import scripted_agent

from agent_wait import (
    ConfigurationError,
    EnvelopeError,
    InMemoryAnnounce,
    QuestionTooLargeError,
    WaitPolicy,
    question_id_for,
)
from agent_wait.common.times import deadline
from agent_wait.pydantic_ai import deferred_tool_results, publish_interrupts, questions_from_result, wait
from pydantic_ai import DeferredToolRequests, RunContext, ToolApproved

FINANCE = WaitPolicy(
    timeout="P3D",
    default={"action": "reject", "reason": "no response within P3D"},
    tags={"approver_group": "finance"},
    answer_ttl="PT15M",
    correlation={"provider": "zendesk", "id": "T-1"},
    allow_edits=True,
)
REFUND_ARGS_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}, "amount": {"type": "integer"}},
    "additionalProperties": False,
}
REFUND_CALL = ("issue_refund", {"order_id": "order-4471", "amount": 41000}, "call-refund-1")


def refund_agent(policy: WaitPolicy = FINANCE, **wait_kwargs: Any) -> tuple[Any, Any, list[dict[str, Any]]]:
    """An agent with a `@wait` refund tool; returns (agent, script, the tool's runs)."""
    agent, script = scripted_agent(REFUND_CALL)
    runs: list[dict[str, Any]] = []

    @agent.tool
    @wait(policy, **wait_kwargs)
    def issue_refund(ctx: RunContext[Any], order_id: str, amount: int) -> str:
        """Refund an order.

        Args:
            order_id: the order to refund.
            amount: the amount in cents.
        """
        runs.append({"order_id": order_id, "amount": amount, "tool_call_id": ctx.tool_call_id})
        return f"refunded {amount} on {order_id}"

    return agent, script, runs


def resume(agent: Any, parked: Any, answers: dict[str, Any]) -> Any:
    return agent.run_sync(
        None, message_history=parked.all_messages(), deferred_tool_results=deferred_tool_results(answers)
    )


# --- ask / park ----------------------------------------------------------------------------------


def test_wait_parks_the_run_and_the_envelope_carries_the_policy():
    # GIVEN a @wait tool with a finance policy
    agent, _, runs = refund_agent()
    memory = InMemoryAnnounce()
    now = datetime(2026, 9, 11, 9, 0, tzinfo=UTC)
    # WHEN the model calls it
    result = agent.run_sync("refund order-4471")
    reports = publish_interrupts(result, "order-4471", memory, now=now)
    # THEN the run ends on a deferred approval, the body has not run, and one envelope is published
    assert isinstance(result.output, DeferredToolRequests)
    assert [call.tool_call_id for call in result.output.approvals] == ["call-refund-1"]
    assert runs == []
    assert [r.ok for r in reports] == [True]
    envelope = memory.of("created")[0].to_dict()
    # AND its fields come from the policy; the question id is the tool_call_id
    assert envelope["question_id"] == "call-refund-1"
    assert envelope["thread_id"] == "order-4471"
    assert envelope["question"] == {"function": "issue_refund", "args": {"order_id": "order-4471", "amount": 41000}}
    # the policy allows edits: the source carries the schema an edit must fit, read from the annotations
    assert envelope["source"] == {"function": "issue_refund", "args_schema": REFUND_ARGS_SCHEMA}
    assert envelope["allowed_actions"] == ["approve", "reject"]
    assert envelope["default"] == {"action": "reject", "reason": "no response within P3D"}
    assert envelope["answer_ttl"] == "PT15M"
    assert envelope["correlation"] == {"provider": "zendesk", "id": "T-1"}
    assert envelope["tags"] == {"approver_group": "finance"}
    assert envelope["reply_with"] == {"thread_id": "order-4471", "question_id": "call-refund-1", "answer": None}


def test_expires_at_is_fixed_when_asked_and_survives_a_republish():
    # GIVEN a parked run, published once
    agent, _, _ = refund_agent()
    result = agent.run_sync("refund")
    first = publish_interrupts(result, "t-1", InMemoryAnnounce())[0].envelope
    # WHEN it is published again a day later
    later = publish_interrupts(result, "t-1", InMemoryAnnounce(), now=datetime.now(UTC) + timedelta(days=1))[0].envelope
    # THEN the deadline still counts from when the tool asked (it rides in the call's metadata)
    asked_at = questions_from_result(result, "t-1")[0].asked_at
    assert asked_at is not None
    assert later.expires_at == first.expires_at == deadline(asked_at, timedelta(days=3))
    assert later.event_id != first.event_id


def test_the_run_context_and_the_decision_parameter_are_neither_published_nor_shown_to_the_model():
    # GIVEN a @wait tool that takes a RunContext and a decision parameter
    agent, script = scripted_agent(("approve_deploy", {"service": "api"}, "call-d"))

    @agent.tool
    @wait()
    def approve_deploy(ctx: RunContext[Any], service: str, decision: Any = None) -> str:
        return f"{service}: {decision}"

    # WHEN the model calls it
    result = agent.run_sync("deploy")
    # THEN the model's schema holds only the function's own argument, and so does the question
    assert set(script.schemas["approve_deploy"]["properties"]) == {"service"}
    assert questions_from_result(result, "t").pop().value == {"function": "approve_deploy", "args": {"service": "api"}}


def test_a_function_without_run_context_gets_one_from_the_wrapper_and_registers_with_agent_tool():
    # GIVEN a plain function (no RunContext) under @wait, registered with agent.tool
    agent, script, _ = refund_agent()
    # WHEN the model calls it
    agent.run_sync("refund")
    # THEN the schema shows only its own parameters, with their descriptions
    schema = script.schemas["issue_refund"]
    assert set(schema["properties"]) == {"order_id", "amount"}
    assert schema["properties"]["amount"]["description"] == "the amount in cents."


def test_agent_tool_plain_refuses_a_wait_tool_because_wait_needs_the_run_context():
    # GIVEN a @wait function (its wrapper takes the RunContext)
    agent, _ = scripted_agent(REFUND_CALL)

    @wait()
    def issue_refund(order_id: str, amount: int) -> str:
        return "refunded"

    # WHEN it is registered with tool_plain, THEN Pydantic AI refuses it at registration
    with pytest.raises(
        UserError, match=re.escape("RunContext annotations can only be used with tools that take context")
    ):
        agent.tool_plain(issue_refund)


# --- answers -------------------------------------------------------------------------------------


def test_approve_runs_the_body_with_the_original_arguments():
    agent, script, runs = refund_agent()
    parked = agent.run_sync("refund")
    # WHEN the answer approves
    done = resume(agent, parked, {"call-refund-1": {"action": "approve"}})
    # THEN the body ran once with the model's arguments and the model saw its return
    assert runs == [{"order_id": "order-4471", "amount": 41000, "tool_call_id": "call-refund-1"}]
    assert script.last_seen == {"call-refund-1": "refunded 41000 on order-4471"}
    assert done.output == '{"call-refund-1": "refunded 41000 on order-4471"}'


def test_an_approval_without_metadata_counts_as_approve():
    # GIVEN a host that approves with the framework's own shorthand (no metadata)
    agent, _, runs = refund_agent()
    parked = agent.run_sync("refund")
    agent.run_sync(
        None,
        message_history=parked.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"call-refund-1": True}),
    )
    # THEN the body runs, as for {"action": "approve"}
    assert [run["amount"] for run in runs] == [41000]


def test_approve_with_args_runs_the_body_with_the_edited_arguments():
    agent, script, runs = refund_agent()
    parked = agent.run_sync("refund")
    resume(agent, parked, {"call-refund-1": {"action": "approve", "args": {"amount": 20000}}})
    assert runs == [{"order_id": "order-4471", "amount": 20000, "tool_call_id": "call-refund-1"}]
    assert script.last_seen == {"call-refund-1": "refunded 20000 on order-4471"}


@pytest.mark.parametrize(
    ("edits", "refused", "reason"),
    [
        ({"currency": "EUR"}, ["currency"], "the answer edits unknown parameter(s) ['currency']"),
        ({"ctx": None, "amount": 1}, ["ctx"], "the answer tried to edit injected value(s) ['ctx']"),
    ],
)
def test_an_edit_of_an_unknown_or_injected_parameter_is_refused_and_runs_nothing(edits, refused, reason):
    # GIVEN a @wait tool that takes its RunContext as `ctx`
    agent, script, runs = refund_agent()
    parked = agent.run_sync("refund")
    # WHEN the answer tries to edit a parameter it may not
    resume(agent, parked, {"call-refund-1": {"action": "approve", "args": edits}})
    # THEN the body did not run and the model received the edit_refused value
    assert runs == []
    value = script.last_seen["call-refund-1"]
    assert value["error"] == "edit_refused"
    assert value["refused"] == refused
    assert value["editable"] == ["order_id", "amount"]
    assert value["message"].startswith(reason)


def test_reject_never_runs_the_body_and_the_model_reads_the_answer_as_the_denial_message():
    # GIVEN a parked refund
    agent, script, runs = refund_agent()
    parked = agent.run_sync("refund")
    # WHEN the answer is anything but approve
    resume(agent, parked, {"call-refund-1": {"action": "reject", "reason": "over budget"}})
    # THEN Pydantic AI denies the call (ToolDenied): the body never runs; the answer reaches the model as JSON text
    assert runs == []
    assert script.last_seen == {"call-refund-1": '{"action":"reject","reason":"over budget"}'}


def test_a_string_answer_is_the_denial_message_as_is():
    agent, script, runs = refund_agent()
    parked = agent.run_sync("refund")
    resume(agent, parked, {"call-refund-1": "not today"})
    assert runs == []
    assert script.last_seen == {"call-refund-1": "not today"}


def test_a_decision_parameter_receives_an_approving_answer_verbatim_and_edits_are_not_applied():
    # GIVEN a @wait tool with a decision parameter
    agent, _ = scripted_agent(("approve_deploy", {"service": "api"}, "call-d"))
    seen: list[Any] = []

    @agent.tool
    @wait()
    def approve_deploy(ctx: RunContext[Any], service: str, decision: Any = None) -> str:
        seen.append((service, decision))
        return "ok"

    parked = agent.run_sync("deploy")
    answer = {"action": "approve", "note": "go", "args": {"service": "web"}}
    resume(agent, parked, {"call-d": answer})
    # THEN the whole answer arrives there and the body decides (arguments stay as the model gave them)
    assert seen == [("api", answer)]


def test_a_decision_function_sees_approvals_only_because_a_denied_call_never_runs():
    # GIVEN a decision function (on LangGraph it would receive every answer)
    agent, script = scripted_agent(("approve_deploy", {"service": "api"}, "call-d"))
    seen: list[Any] = []

    @agent.tool
    @wait(decision="verdict")
    def approve_deploy(ctx: RunContext[Any], service: str, verdict: Any) -> str:
        seen.append(verdict)
        return "ok"

    parked = agent.run_sync("deploy")
    # WHEN the answer rejects
    resume(agent, parked, {"call-d": {"action": "reject"}})
    # THEN the function never ran: Pydantic AI's ToolDenied short-circuits the call
    assert seen == []
    assert script.last_seen == {"call-d": '{"action":"reject"}'}


def test_override_args_from_the_framework_are_what_wait_sees_and_publishes():
    # GIVEN a host that approves with the framework's own override_args
    agent, _, runs = refund_agent()
    parked = agent.run_sync("refund")
    agent.run_sync(
        None,
        message_history=parked.all_messages(),
        deferred_tool_results=DeferredToolResults(
            approvals={"call-refund-1": ToolApproved(override_args={"order_id": "order-4471", "amount": 5})},
            metadata={"call-refund-1": {"action": "approve"}},
        ),
    )
    # THEN the body runs with those arguments (Pydantic AI validated them against the schema first)
    assert [run["amount"] for run in runs] == [5]


# --- when=, async mode, refusals -----------------------------------------------------------------


def test_when_false_runs_the_body_without_asking():
    agent, _, runs = refund_agent(when=lambda ctx, order_id, amount: amount > 50000)
    result = agent.run_sync("refund")
    assert result.output == '{"call-refund-1": "refunded 41000 on order-4471"}'
    assert questions_from_result(result, "t") == []
    assert len(runs) == 1


def test_when_true_asks_and_a_failing_predicate_asks_anyway():
    for predicate in (lambda ctx, order_id, amount: amount > 100, lambda *a: 1 / 0):
        agent, _, runs = refund_agent(when=predicate)
        result = agent.run_sync("refund")
        assert isinstance(result.output, DeferredToolRequests)
        assert runs == []


def test_when_is_called_with_the_arguments_the_function_itself_takes():
    # GIVEN a function without a RunContext: the predicate does not receive the wrapper's one
    agent, _ = scripted_agent(REFUND_CALL)
    calls: list[tuple[Any, ...]] = []

    @agent.tool
    @wait(when=lambda *args, **kwargs: calls.append((args, kwargs)) or True)
    def issue_refund(order_id: str, amount: int) -> str:
        return "refunded"

    agent.run_sync("refund")
    assert calls == [((), {"order_id": "order-4471", "amount": 41000})]


@dataclass
class Deps:
    thread_id: str


@pytest.mark.parametrize("deps", [Deps("order-4471"), {"thread_id": "order-4471"}], ids=["attribute", "key"])
def test_async_mode_publishes_from_the_call_and_returns_pending_approval(deps):
    # GIVEN an async-mode @wait tool and deps carrying the thread id
    memory = InMemoryAnnounce()
    agent, script = scripted_agent(REFUND_CALL)
    runs: list[int] = []

    @agent.tool
    @wait(FINANCE, mode="async", announce=[memory])
    def issue_refund(order_id: str, amount: int) -> str:
        runs.append(amount)
        return "refunded"

    # WHEN the model calls it
    result = agent.run_sync("refund", deps=deps)
    # THEN nothing is parked, the body did not run, and the model got the pending result with the derived id
    qid = question_id_for("order-4471", "issue_refund", {"order_id": "order-4471", "amount": 41000})
    pending = {"status": "pending_approval", "question_id": qid, "function": "issue_refund"}
    assert runs == []
    assert (
        result.output
        == f'{{"call-refund-1": {{"status": "pending_approval", "question_id": "{qid}", "function": "issue_refund"}}}}'
    )
    assert script.last_seen == {"call-refund-1": pending}
    envelope = memory.of("created")[0]
    assert (envelope.question_id, envelope.thread_id, envelope.tags) == (
        qid,
        "order-4471",
        {"approver_group": "finance"},
    )


def test_async_mode_without_a_thread_id_in_deps_raises_envelope_error():
    agent, _ = scripted_agent(REFUND_CALL)

    @agent.tool
    @wait(mode="async", announce=[InMemoryAnnounce()])
    def issue_refund(order_id: str, amount: int) -> str:
        return "refunded"

    with pytest.raises(EnvelopeError, match=re.escape("@wait(mode='async') needs the run's thread id")):
        agent.run_sync("refund", deps=None)


def test_async_tools_park_and_run_the_same_way():
    agent, _ = scripted_agent(REFUND_CALL)
    runs: list[int] = []

    @agent.tool
    @wait(FINANCE)
    async def issue_refund(order_id: str, amount: int) -> str:
        runs.append(amount)
        return "refunded"

    parked = asyncio.run(agent.run("refund"))
    assert isinstance(parked.output, DeferredToolRequests)
    assert runs == []
    results = deferred_tool_results({"call-refund-1": {"action": "approve", "args": {"amount": 7}}})
    asyncio.run(agent.run(None, message_history=parked.all_messages(), deferred_tool_results=results))
    assert runs == [7]


def test_non_json_arguments_are_refused_before_anything_is_parked():
    # GIVEN a tool whose argument Pydantic AI validates into a datetime (not JSON)
    agent, _ = scripted_agent(("book", {"at": "2026-09-14T09:00:00Z"}, "call-b"))

    @agent.tool
    @wait()
    def book(at: datetime) -> str:
        return "booked"

    # WHEN the model calls it, THEN the tool raises and the run fails: nothing is parked or published
    with pytest.raises(EnvelopeError, match=re.escape("args.at is a datetime, which is not JSON")):
        agent.run_sync("book")


def test_an_oversized_question_is_refused_before_anything_is_parked():
    agent, _ = scripted_agent(("store", {"blob": "x" * 70_000}, "call-s"))

    @agent.tool
    @wait()
    def store(blob: str) -> str:
        return "stored"

    with pytest.raises(QuestionTooLargeError, match="the limit is 65,536 bytes"):
        agent.run_sync("store")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "later"}, "@wait mode must be one of ['interrupt', 'async']; got 'later'"),
        ({"mode": "async"}, "@wait(mode='async') publishes from inside the call, so it needs announce=[...]"),
        ({"announce": [InMemoryAnnounce()]}, "@wait(mode='interrupt') does not publish from inside the run"),
    ],
)
def test_a_wrong_mode_is_refused_at_decoration(kwargs, message):
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        wait(**kwargs)


def test_a_policy_that_is_not_a_wait_policy_is_refused():
    with pytest.raises(EnvelopeError, match=re.escape("@wait takes a WaitPolicy as its first argument; got a dict")):
        wait({"timeout": "P1D"})  # type: ignore[arg-type]


def test_calling_a_wait_tool_without_a_run_context_names_the_registration_to_use():
    @wait()
    def issue_refund(amount: int) -> str:
        return "refunded"

    with pytest.raises(ConfigurationError, match=re.escape("register it with agent.tool")):
        issue_refund(5)
