"""A LangGraph agent that books through an MCP server with LangChain's `MCPAdapter`, for the elicitation tests.

`MCPAdapter` answers the server's `InputRequiredResult` with `interrupt({"type": "mcp_elicitation", ...})` (its
default; langchain 1.5 has no `elicitation=` switch), so the agent parks on the server's question and retries the
call with the answer once resumed. The node connects anew on every run: no connection is held across the wait.

The host drives graphs with `invoke`, and MCP tools are `async`: the node runs the call in its own event loop on a
worker thread (the caller's thread may run a loop already: Playwright's), carrying the node's context (LangGraph's
config, which `interrupt()` reads) into the call.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import warnings
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph

URL_VARIABLE = "BOOKING_MCP_URL"
"""Where the test's MCP server listens (set in the router's environment)."""


class Booking(TypedDict):
    day: str
    mode: NotRequired[str]
    result: NotRequired[str]


async def _book(url: str, day: str, mode: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # langchain.mcp is in beta, and says so
        from langchain.mcp import MCPAdapter

    tools = await MCPAdapter(url).list_tools()
    (book_table,) = [tool for tool in tools if tool.name == "book_table"]
    result = await book_table.ainvoke({"day": day, "mode": mode})
    blocks = result if isinstance(result, list) else [result]  # the tool's content blocks
    return " ".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in blocks)


def run_async(call: Coroutine[Any, Any, str]) -> str:
    """Run `call` to its end in a new event loop on a worker thread, in the node's context; its exception (an
    interrupt among them) is raised here."""
    context = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(context.run, asyncio.run, call).result()


def book(state: Booking) -> dict[str, Any]:
    """Book the table through the MCP server; parks while the server's question waits for a person."""
    url = os.environ[URL_VARIABLE]
    return {"result": run_async(_book(url, state["day"], state.get("mode", "form")))}


def build_graph(checkpointer: Any) -> Any:
    """START → book → END."""
    builder = StateGraph(Booking)
    builder.add_node("book", book)
    builder.add_edge(START, "book")
    builder.add_edge("book", END)
    return builder.compile(checkpointer=checkpointer)
