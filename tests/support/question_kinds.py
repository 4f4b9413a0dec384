"""One question of each kind a channel draws, parked as its framework parks it (`unpack_question`, as the bindings
do), for the tests that render every kind in every channel.

- `review`: LangChain `HumanInTheLoopMiddleware`'s batched review (its default mode), two calls;
- `agent_inbox`: an Agent Inbox `HumanInterrupt` (the list form) that allows accept, edit, response and ignore;
- `schema`: `interrupt(value, response_schema=...)`: a prompt, and a form the answer must fit;
- `tool_call`: the middleware's per-call approval of one tool call;
- `wait_call`: a `@wait` call (`{"function", "args"}`), edits allowed;
- `prompt`: a plain `interrupt("...")`.

`RAW` lists what a person must never see: JSON's `{"`, an escaped line break, Markdown's `**`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from agent_wait import Question, WaitEnvelope, WaitPolicy
from agent_wait.asking.wait import unpack_question

__all__ = ("HEADLINES", "KINDS", "RAW", "T0", "calls_of", "envelope_of", "question_of")

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
RAW = ('{"', "\\n", "**")
"""What a person must never see in a channel: raw JSON, an escaped line break, Markdown's bold markers."""

DROP = "Tool execution requires approval\n\n**Drop** the `orders` table and everything that refers to it."
NOTIFY = "Tool execution requires approval\n\nTell the **ops** team in `#ops`."

REVIEW = {
    "action_requests": [
        {"name": "drop_table", "args": {"table": "orders", "cascade": True}, "description": DROP},
        {"name": "notify_team", "args": {"channel": "#ops", "message": "Orders table dropped"}, "description": NOTIFY},
    ],
    "review_configs": [
        {"action_name": "drop_table", "allowed_decisions": ["approve", "edit", "reject"]},
        {"action_name": "notify_team", "allowed_decisions": ["approve", "edit", "reject"]},
    ],
}
AGENT_INBOX = [
    {
        "action_request": {"action": "send_invoice", "args": {"customer": "ACME", "amount": 1200}},
        "config": {"allow_accept": True, "allow_edit": True, "allow_respond": True, "allow_ignore": True},
        "description": "Send the **December** invoice\n\n- net 30\n- in EUR",
    }
]
SCHEMA_QUESTION = {"prompt": "How many **seats** should we order?", "team": "platform"}
RESPONSE_SCHEMA = {
    "type": "object",
    "properties": {
        "seats": {"type": "integer", "minimum": 1, "description": "Seats to order"},
        "note": {"type": "string"},
    },
    "required": ["seats"],
    "additionalProperties": False,
}
TOOL_CALL = {
    "type": "tool_approval",
    "tool_call_id": "call-1",
    "name": "issue_refund",
    "args": {"order_id": "A-1042", "amount": 1250},
    "description": "Refund **over the limit**",
}
TOOL_CALL_SCHEMA = {
    "oneOf": [
        {"type": "object", "properties": {"type": {"const": "approve"}}, "required": ["type"]},
        {
            "type": "object",
            "properties": {"type": {"const": "reject"}, "message": {"type": "string"}},
            "required": ["type"],
        },
    ],
    "discriminator": {"propertyName": "type", "mapping": {"approve": {}, "reject": {}}},
}
WAIT_CALL = {"function": "issue_refund", "args": {"order_id": "A-7", "amount": 900}}
PROMPT = "Ship the **release** tonight?\nIt has 3 open issues."

KINDS = ("review", "agent_inbox", "schema", "tool_call", "wait_call", "prompt")

HEADLINES = {
    "review": "Review 2 tool calls: drop_table, notify_team",
    "agent_inbox": "send_invoice(customer=",
    "schema": "How many seats should we order?",
    "tool_call": "issue_refund(order_id=",
    "wait_call": "issue_refund(order_id=",
    "prompt": "Ship the release tonight?",
}
"""What each kind's headline starts with (the inbox's summary, Markdown read as text)."""

DEADLINE = WaitPolicy(timeout="P1D")


def question_of(kind: str, question_id: str | None = None) -> Question:
    """The question of `kind` as its framework parks it, with a one-day deadline."""
    qid = question_id or f"q-{kind}"
    thread = f"t-{qid}"
    if kind == "wait_call":
        policy = WaitPolicy(timeout="P1D", allowed_actions=("approve", "reject"), allow_edits=True)
        return Question(thread, qid, WAIT_CALL, policy, source={"function": "issue_refund"}, asked_at=T0)
    value, schema = {
        "review": (REVIEW, None),
        "agent_inbox": (AGENT_INBOX, None),
        "schema": (SCHEMA_QUESTION, RESPONSE_SCHEMA),
        "tool_call": (TOOL_CALL, TOOL_CALL_SCHEMA),
        "prompt": (PROMPT, None),
    }[kind]
    parked = unpack_question(value, thread, qid, response_schema=schema)
    policy = WaitPolicy.from_dict({**parked.policy.to_dict(), "timeout": "P1D"})
    return replace(parked, policy=policy, asked_at=T0)


def envelope_of(kind: str, question_id: str | None = None, **create: Any) -> WaitEnvelope:
    return WaitEnvelope.create(question_of(kind, question_id), now=T0, **create)


def calls_of(kind: str) -> list[str]:
    """The calls a kind's question asks about, each shown in a block of its own."""
    return {
        "review": ["drop_table", "notify_team"],
        "agent_inbox": ["send_invoice"],
        "tool_call": ["issue_refund"],
        "wait_call": ["issue_refund"],
    }.get(kind, [])
