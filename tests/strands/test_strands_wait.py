"""`@wait` on Strands tools: the same rules as on LangGraph, parked on `tool_context.interrupt`."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from strands.types.tools import ToolContext
from strands_script import scripted_agent

from agent_wait import ConfigurationError, EnvelopeError, InMemoryAnnounce, WaitPolicy, question_id_for
from agent_wait.common.times import deadline
from agent_wait.strands import interrupt_responses, publish_interrupts, questions_from_result, wait
from strands import Agent, tool

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
REFUND_CALL = ("issue_refund", {"order_id": "order-4471", "amount": 41000}, "tooluse-1")


def refund_agent(policy: WaitPolicy = FINANCE, **wait_kwargs: Any) -> tuple[Agent, Any, list[dict[str, Any]]]:
    """An agent with a `@wait` refund tool; returns (agent, model, the tool's runs)."""
    runs: list[dict[str, Any]] = []

    @tool(context=True)
    @wait(policy, **wait_kwargs)
    def issue_refund(order_id: str, amount: int, tool_context: ToolContext) -> str:
        """Refund an order.

        Args:
            order_id: the order to refund.
            amount: the amount in cents.
        """
        runs.append({"order_id": order_id, "amount": amount, "tool_use_id": tool_context.tool_use["toolUseId"]})
        return f"refunded {amount} on {order_id}"

    agent, model = scripted_agent([issue_refund], REFUND_CALL)
    return agent, model, runs


def only_question_id(result: Any) -> str:
    (item,) = result.interrupts
    return item.id


# --- ask / park ----------------------------------------------------------------------------------


def test_wait_parks_the_run_and_the_envelope_carries_the_policy():
    # GIVEN a @wait tool with a finance policy
    agent, _, runs = refund_agent()
    memory = InMemoryAnnounce()
    # WHEN the model calls it
    result = agent("refund order-4471")
    reports = publish_interrupts(result, "order-4471", memory)
    # THEN the run stops on one interrupt, the body has not run, and one envelope is published
    assert result.stop_reason == "interrupt"
    assert runs == []
    assert [r.ok for r in reports] == [True]
    envelope = memory.of("created")[0].to_dict()
    # AND the question id is the interrupt's id; the other fields come from the policy
    assert envelope["question_id"] == only_question_id(result)
    assert envelope["question_id"].startswith("v1:tool_call:tooluse-1:")
    assert envelope["question"] == {"function": "issue_refund", "args": {"order_id": "order-4471", "amount": 41000}}
    # the policy allows edits: the source carries the schema an edit must fit, read from the annotations
    assert envelope["source"] == {"function": "issue_refund", "args_schema": REFUND_ARGS_SCHEMA}
    assert envelope["allowed_actions"] == ["approve", "reject"]
    assert envelope["default"] == {"action": "reject", "reason": "no response within P3D"}
    assert envelope["answer_ttl"] == "PT15M"
    assert envelope["correlation"] == {"provider": "zendesk", "id": "T-1"}
    assert envelope["tags"] == {"approver_group": "finance"}


def test_expires_at_is_fixed_when_asked_and_survives_a_republish():
    agent, _, _ = refund_agent()
    result = agent("refund")
    first = publish_interrupts(result, "t-1", InMemoryAnnounce())[0].envelope
    later = publish_interrupts(result, "t-1", InMemoryAnnounce(), now=datetime.now(UTC) + timedelta(days=1))[0]
    asked_at = questions_from_result(result, "t-1")[0].asked_at
    assert asked_at is not None
    assert later.envelope.expires_at == first.expires_at == deadline(asked_at, timedelta(days=3))


def test_the_tool_context_and_the_decision_parameter_are_neither_published_nor_shown_to_the_model():
    @tool(context=True)
    @wait()
    def approve_deploy(service: str, tool_context: ToolContext, decision: Any = None) -> str:
        return "ok"

    agent, model = scripted_agent([approve_deploy], ("approve_deploy", {"service": "api"}, "tu-d"))
    result = agent("deploy")
    assert set(model.specs["approve_deploy"]["inputSchema"]["json"]["properties"]) == {"service"}
    assert questions_from_result(result, "t")[0].value == {"function": "approve_deploy", "args": {"service": "api"}}


def test_a_function_without_tool_context_gets_one_from_the_wrapper():
    # GIVEN a plain function under @wait and @tool(context=True)
    runs: list[int] = []

    @tool(context=True)
    @wait()
    def issue_refund(order_id: str, amount: int) -> str:
        """Refund an order.

        Args:
            order_id: the order.
            amount: cents.
        """
        runs.append(amount)
        return "refunded"

    agent, model = scripted_agent([issue_refund], REFUND_CALL)
    # WHEN it parks and is approved
    parked = agent("refund")
    agent(interrupt_responses({only_question_id(parked): {"action": "approve"}}))
    # THEN the schema shows only its own parameters, and the body ran
    assert model.specs["issue_refund"]["inputSchema"]["json"]["properties"]["amount"]["description"] == "cents."
    assert set(model.specs["issue_refund"]["inputSchema"]["json"]["properties"]) == {"order_id", "amount"}
    assert runs == [41000]


def test_a_wait_tool_without_context_true_is_refused_by_strands_at_decoration():
    @wait()
    def issue_refund(order_id: str) -> str:
        return "refunded"

    with pytest.raises(ValueError, match=re.escape("@tool(context) must be set if passing in ToolContext param")):
        tool(issue_refund)


def test_a_non_context_parameter_named_tool_context_is_refused():
    with pytest.raises(ConfigurationError, match=re.escape("already has a 'tool_context' parameter")):

        @wait()
        def odd(tool_context: str) -> str:
            return tool_context


# --- answers -------------------------------------------------------------------------------------


def test_approve_runs_the_body_with_the_original_arguments():
    agent, model, runs = refund_agent()
    parked = agent("refund")
    done = agent(interrupt_responses({only_question_id(parked): {"action": "approve"}}))
    assert done.stop_reason == "end_turn"
    assert runs == [{"order_id": "order-4471", "amount": 41000, "tool_use_id": "tooluse-1"}]
    assert model.last_seen == {"tooluse-1": "refunded 41000 on order-4471"}


def test_approve_with_args_runs_the_body_with_the_edited_arguments():
    agent, model, runs = refund_agent()
    parked = agent("refund")
    agent(interrupt_responses({only_question_id(parked): {"action": "approve", "args": {"amount": 20000}}}))
    assert [run["amount"] for run in runs] == [20000]
    assert model.last_seen == {"tooluse-1": "refunded 20000 on order-4471"}


@pytest.mark.parametrize(
    ("edits", "refused", "reason"),
    [
        ({"currency": "EUR"}, ["currency"], "the answer edits unknown parameter(s) ['currency']"),
        ({"tool_context": None}, ["tool_context"], "the answer tried to edit injected value(s) ['tool_context']"),
    ],
)
def test_an_edit_of_an_unknown_or_injected_parameter_is_refused_and_runs_nothing(edits, refused, reason):
    agent, model, runs = refund_agent()
    parked = agent("refund")
    agent(interrupt_responses({only_question_id(parked): {"action": "approve", "args": edits}}))
    assert runs == []
    value = model.last_seen["tooluse-1"]
    assert value["error"] == "edit_refused"
    assert value["refused"] == refused
    assert value["editable"] == ["order_id", "amount"]
    assert value["message"].startswith(reason)


def test_reject_is_returned_in_place_of_the_body():
    # GIVEN a parked refund
    agent, model, runs = refund_agent()
    parked = agent("refund")
    # WHEN the answer is anything but approve
    answer = {"action": "reject", "reason": "over budget"}
    agent(interrupt_responses({only_question_id(parked): answer}))
    # THEN (as on LangGraph) the body did not run and the answer itself is the tool's result
    assert runs == []
    assert model.last_seen == {"tooluse-1": answer}


def test_a_decision_parameter_receives_every_answer_verbatim():
    seen: list[Any] = []

    @tool(context=True)
    @wait(decision="verdict")
    def approve_deploy(service: str, verdict: Any) -> str:
        seen.append(verdict)
        return "decided"

    for answer in ({"action": "reject", "why": "freeze"}, {"action": "approve", "args": {"service": "web"}}, "maybe"):
        agent, _ = scripted_agent([approve_deploy], ("approve_deploy", {"service": "api"}, "tu-d"))
        parked = agent("deploy")
        agent(interrupt_responses({only_question_id(parked): answer}))
    # THEN unlike Pydantic AI, a rejection reaches the decision function too
    assert seen == [{"action": "reject", "why": "freeze"}, {"action": "approve", "args": {"service": "web"}}, "maybe"]


# --- when=, async mode, refusals -----------------------------------------------------------------


def test_when_false_runs_the_body_without_asking():
    agent, model, runs = refund_agent(when=lambda order_id, amount, tool_context: amount > 50000)
    result = agent("refund")
    assert result.stop_reason == "end_turn"
    assert questions_from_result(result, "t") == []
    assert len(runs) == 1
    assert model.last_seen == {"tooluse-1": "refunded 41000 on order-4471"}


def test_when_true_asks_and_a_failing_predicate_asks_anyway():
    for predicate in (lambda order_id, amount, tool_context: amount > 100, lambda **kw: 1 / 0):
        agent, _, runs = refund_agent(when=predicate)
        assert agent("refund").stop_reason == "interrupt"
        assert runs == []


def test_when_is_called_with_the_arguments_the_function_itself_takes():
    calls: list[Any] = []

    @tool(context=True)
    @wait(when=lambda *args, **kwargs: calls.append((args, kwargs)) or True)
    def issue_refund(order_id: str, amount: int) -> str:
        return "refunded"

    agent, _ = scripted_agent([issue_refund], REFUND_CALL)
    agent("refund")
    assert calls == [((), {"order_id": "order-4471", "amount": 41000})]


def async_refund(memory: InMemoryAnnounce, runs: list[int]) -> Any:
    @tool(context=True)
    @wait(FINANCE, mode="async", announce=[memory])
    def issue_refund(order_id: str, amount: int) -> str:
        runs.append(amount)
        return "refunded"

    return issue_refund


def test_async_mode_publishes_from_the_call_and_returns_pending_approval():
    # GIVEN an async-mode @wait tool, invoked with the thread id in invocation_state
    memory, runs = InMemoryAnnounce(), []
    agent, model = scripted_agent([async_refund(memory, runs)], REFUND_CALL)
    # WHEN the model calls it
    result = agent("refund", invocation_state={"thread_id": "order-4471"})
    # THEN nothing is parked, the body did not run, the model got the pending result with the derived id
    qid = question_id_for("order-4471", "issue_refund", {"order_id": "order-4471", "amount": 41000})
    assert result.stop_reason == "end_turn"
    assert runs == []
    assert model.last_seen == {
        "tooluse-1": {"status": "pending_approval", "question_id": qid, "function": "issue_refund"}
    }
    envelope = memory.of("created")[0]
    assert (envelope.question_id, envelope.thread_id) == (qid, "order-4471")
    assert envelope.tags == {"approver_group": "finance"}


def test_async_mode_falls_back_to_the_session_managers_session_id(tmp_path):
    from strands.session.file_session_manager import FileSessionManager

    memory, runs = InMemoryAnnounce(), []
    session = FileSessionManager(session_id="order-77", storage_dir=str(tmp_path))
    agent, _ = scripted_agent([async_refund(memory, runs)], REFUND_CALL, session_manager=session)
    agent("refund")
    assert memory.of("created")[0].thread_id == "order-77"


def test_async_mode_without_a_thread_id_returns_the_error_to_the_model():
    # Strands turns a tool's exception into an error result; nothing is published or run
    memory, runs = InMemoryAnnounce(), []
    agent, model = scripted_agent([async_refund(memory, runs)], REFUND_CALL)
    agent("refund")
    assert "@wait(mode='async') needs the run's thread id" in model.last_seen["tooluse-1"]["error"]
    assert memory.events == []
    assert runs == []


def test_async_tools_park_and_run_the_same_way():
    runs: list[int] = []

    @tool(context=True)
    @wait(FINANCE)
    async def issue_refund(order_id: str, amount: int) -> str:
        await asyncio.sleep(0)
        runs.append(amount)
        return "refunded"

    agent, _ = scripted_agent([issue_refund], REFUND_CALL)
    parked = agent("refund")
    assert parked.stop_reason == "interrupt"
    assert runs == []
    agent(interrupt_responses({only_question_id(parked): {"action": "approve", "args": {"amount": 7}}}))
    assert runs == [7]


def test_non_json_arguments_are_refused_and_the_model_reads_the_refusal():
    # GIVEN a tool whose argument Strands validates into a datetime (not JSON)
    runs: list[Any] = []

    @tool(context=True)
    @wait()
    def book(at: datetime) -> str:
        runs.append(at)
        return "booked"

    agent, model = scripted_agent([book], ("book", {"at": "2026-09-14T09:00:00Z"}, "tu-b"))
    # WHEN the model calls it
    result = agent("book")
    # THEN Strands returns the EnvelopeError to the model as an error result: nothing parked, nothing run
    assert result.stop_reason == "end_turn"
    assert runs == []
    assert "args.at is a datetime, which is not JSON" in model.last_seen["tu-b"]["error"]


def test_an_oversized_question_is_refused_and_the_model_reads_the_refusal():
    @tool(context=True)
    @wait()
    def store(blob: str) -> str:
        return "stored"

    agent, model = scripted_agent([store], ("store", {"blob": "x" * 70_000}, "tu-s"))
    assert agent("store").stop_reason == "end_turn"
    assert "the limit is 65,536 bytes" in model.last_seen["tu-s"]["error"]


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


def test_an_injected_agent_parameter_is_not_published_and_cannot_be_edited():
    @tool(context=True)
    @wait()
    def issue_refund(amount: int, agent: Any) -> str:
        return f"refunded {amount} by {type(agent).__name__}"

    agent, model = scripted_agent([issue_refund], ("issue_refund", {"amount": 5}, "tu-1"))
    parked = agent("refund")
    assert questions_from_result(parked, "t")[0].value == {"function": "issue_refund", "args": {"amount": 5}}
    agent(interrupt_responses({only_question_id(parked): {"action": "approve", "args": {"agent": None}}}))
    assert model.last_seen["tu-1"]["refused"] == ["agent"]


def test_calling_a_wait_tool_outside_an_agent_names_the_missing_tool_context():
    @tool(context=True)
    @wait()
    def issue_refund(amount: int) -> str:
        return "refunded"

    with pytest.raises(ConfigurationError, match=re.escape("decorate it with @tool(context=True)")):
        issue_refund(amount=5)
