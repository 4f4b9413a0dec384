"""The refund agent for the inbox's browser tests, with two more kinds of question beside the example's own.

    START → load_order → {refund | refund_editable | refund_quorum | refund_escalating | survey | limit
                          | agent_inbox} → notify → END

The start message's `kind` picks the branch:

- `refund` (default): the refund example's own node and policy (approve/reject, edits not allowed).
- `editable`: the same refund, but its policy allows an approver to edit the arguments (the edit form).
- `quorum`: the same refund, but two different people must approve it (`quorum=2`; any reject decides).
- `escalating`: the same refund, answerable by finance only; two days after it is asked it also goes to
  finance-managers, who may then answer too.
- `survey`: a bare question that carries a JSON schema for its answer (`response_schema`), so the page
  builds its form from the schema.
- `limit`: LangGraph's own `interrupt(value, response_schema=RefundLimit)`: the answer is the form's values.
- `agent_inbox`: the refund asked as an Agent Inbox `HumanInterrupt` (accept, edit, respond, ignore); an
  accepted or edited request pays the refund.

Refunds are written to the stack's refunds table, one row per execution, as the example's are.
`AGENT_WAIT_GRAPH=tests.browser.inbox_graph:build_graph` names it.
"""

from __future__ import annotations

from typing import Any, NotRequired

from examples.refund_agent.graph import AUTO_APPROVE_LIMIT, FINANCE, RefundState, load_order, notify, refund
from examples.refund_agent.graph import issue_refund as example_refund
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from tests.agents.schema_graphs import RefundLimit

from agent_wait import WaitPolicy
from agent_wait.langgraph import ask, wait
from agent_wait.policy.extension import Extension
from agent_wait.policy.followup import Escalation

EDITABLE = WaitPolicy(
    timeout=FINANCE.timeout_iso,
    default=FINANCE.default,
    allowed_actions=FINANCE.allowed_actions,
    tags=FINANCE.tags,
    allow_edits=True,
)
"""The refund example's policy, except that an approver may edit the refund's arguments."""
QUORUM = WaitPolicy(
    timeout=FINANCE.timeout_iso,
    default=FINANCE.default,
    allowed_actions=FINANCE.allowed_actions,
    tags=FINANCE.tags,
    allow_edits=False,
    quorum=2,
)
"""The refund example's policy, except that two different people must approve (any reject decides at once)."""
ESCALATING = WaitPolicy(
    timeout=FINANCE.timeout_iso,
    default=FINANCE.default,
    allowed_actions=FINANCE.allowed_actions,
    tags=FINANCE.tags,
    allow_edits=False,
    answerer_groups=["finance"],
    escalation=[
        Escalation(after="P2D", tags={"approver_group": "finance-managers"}, answerer_groups=["finance-managers"])
    ],
    extend=Extension(groups=["finance-managers"], max_total="P3D"),
)
"""Finance only, until two days after asking: then finance-managers too. Finance-managers may extend its deadline
by up to three days in all."""
SURVEY_SCHEMA = {
    "type": "object",
    "properties": {
        "limit": {"type": "integer", "title": "Refund limit", "description": "The most this customer may get back."},
        "reason": {"type": "string", "title": "Reason"},
        "channel": {"type": "string", "title": "Tell the customer by", "enum": ["email", "phone"]},
    },
    "required": ["limit"],
}


class InboxState(RefundState):
    kind: NotRequired[str]
    decision: NotRequired[Any]
    description: NotRequired[str]
    """The Agent Inbox request's description (Markdown), instead of "Refund order …?"."""
    message: NotRequired[str]
    """A message to the customer, asked with the Agent Inbox request as one more argument."""


# The example's own refund body (undecorated), asked under the editable policy: the refund pays whatever amount
# the approver left in the edit form.
issue_refund = wait(EDITABLE, when=lambda order_id, amount: amount > AUTO_APPROVE_LIMIT)(example_refund.__wrapped__)


def refund_editable(state: InboxState) -> dict[str, Any]:
    return {"refund": issue_refund(state["order_id"], state["amount"])}


# The example's own refund body again (`@wait` keeps it as `__wrapped__`), under each follow-up policy.
quorum_refund = wait(QUORUM)(example_refund.__wrapped__)  # pyright: ignore[reportFunctionMemberAccess]
escalating_refund = wait(ESCALATING)(example_refund.__wrapped__)  # pyright: ignore[reportFunctionMemberAccess]


def refund_quorum(state: InboxState) -> dict[str, Any]:
    return {"refund": quorum_refund(state["order_id"], state["amount"])}


def refund_escalating(state: InboxState) -> dict[str, Any]:
    return {"refund": escalating_refund(state["order_id"], state["amount"])}


def survey(state: InboxState) -> dict[str, Any]:
    question = {
        "prompt": f"Set a refund limit for order {state['order_id']}",
        "order_id": state["order_id"],
        "response_schema": SURVEY_SCHEMA,
    }
    return {"decision": ask(question, EDITABLE)}


def limit(state: InboxState) -> dict[str, Any]:
    prompt = {"prompt": f"Set a refund limit for order {state['order_id']}", "order_id": state["order_id"]}
    return {"decision": interrupt(prompt, response_schema=RefundLimit).model_dump()}


def agent_inbox(state: InboxState) -> dict[str, Any]:
    args: dict[str, Any] = {"order_id": state["order_id"], "amount": state["amount"]}
    if "message" in state:
        args["message"] = state["message"]
    request = {
        "action_request": {"action": "issue_refund", "args": args},
        "config": {"allow_accept": True, "allow_edit": True, "allow_respond": True, "allow_ignore": True},
        "description": state.get("description") or f"Refund order {state['order_id']}?",
    }
    response = interrupt([request])[0]
    if response["type"] == "accept":
        return {"refund": example_refund.__wrapped__(state["order_id"], state["amount"])}
    if response["type"] == "edit":
        edited = response["args"]["args"]
        return {"refund": example_refund.__wrapped__(edited["order_id"], edited["amount"])}
    return {"decision": response}


BRANCHES = ("refund", "refund_editable", "refund_quorum", "refund_escalating", "survey", "limit", "agent_inbox")


def _branch(state: InboxState) -> str:
    named = {"editable": "refund_editable", "quorum": "refund_quorum", "escalating": "refund_escalating"}
    kind = named.get(state.get("kind") or "", state.get("kind") or "refund")
    return kind if kind in BRANCHES else "refund"


def build_graph(checkpointer: Any) -> Any:
    """The compiled graph; the start's `kind` picks which question it asks."""
    builder = StateGraph(InboxState)
    builder.add_node("load_order", load_order)
    builder.add_node("refund", refund)
    builder.add_node("refund_editable", refund_editable)
    builder.add_node("refund_quorum", refund_quorum)
    builder.add_node("refund_escalating", refund_escalating)
    builder.add_node("survey", survey)
    builder.add_node("limit", limit)
    builder.add_node("agent_inbox", agent_inbox)
    builder.add_node("notify", notify)
    builder.add_edge(START, "load_order")
    builder.add_conditional_edges("load_order", _branch, list(BRANCHES))
    for node in BRANCHES:
        builder.add_edge(node, "notify")
    builder.add_edge("notify", END)
    return builder.compile(checkpointer=checkpointer)
