"""Graphs that park on LangGraph's `interrupt(value, response_schema=...)`.

The router loads `tests.agents.schema_graphs:build_schema_graph`. The start's `kind` picks the schema:

    "model"   a pydantic model (`RefundLimit`): LangGraph publishes its JSON Schema and validates the resume,
              raising `ValidationError` inside the agent for one that does not fit
    "json"    a JSON Schema dict: LangGraph publishes it as is and validates nothing
    "choice"  a JSON Schema whose `action` property has an enum: those are the question's actions

The node stores what `interrupt` returned as `received`.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel, Field


class RefundLimit(BaseModel):
    """What the reviewer sets for an order."""

    limit: int = Field(ge=0, description="Largest refund in cents")
    channel: Literal["email", "phone"] = "email"


JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"limit": {"type": "integer", "minimum": 0}, "reason": {"type": "string"}},
    "required": ["limit"],
    "additionalProperties": False,
}
CHOICE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"action": {"enum": ["ship", "hold"]}, "note": {"type": "string"}},
    "required": ["action"],
}


class SchemaState(TypedDict):
    order_id: str
    kind: str
    received: NotRequired[Any]


def ask_limit(state: SchemaState) -> dict[str, Any]:
    prompt = {"prompt": f"Set a refund limit for order {state['order_id']}", "order_id": state["order_id"]}
    if state["kind"] == "model":
        got: Any = interrupt(prompt, response_schema=RefundLimit)
        return {"received": got.model_dump()}
    schema = JSON_SCHEMA if state["kind"] == "json" else CHOICE_SCHEMA
    return {"received": interrupt(prompt, response_schema=schema)}


def build_schema_graph(checkpointer: Any) -> Any:
    builder = StateGraph(SchemaState)
    builder.add_node("ask_limit", ask_limit)
    builder.add_edge(START, "ask_limit")
    builder.add_edge("ask_limit", END)
    return builder.compile(checkpointer=checkpointer)
