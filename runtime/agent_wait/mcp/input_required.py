"""Answer an MCP server's `InputRequiredResult` through agent-wait, for agents that call MCP servers themselves.

An MCP server (protocol 2026-07-28) that needs a person returns an `InputRequiredResult` in place of a tool's result;
the client retries the original request with `inputResponses` and the echoed `requestState`. `call_tool` drives that
loop with a person who is not at the screen: each round's `inputRequests` become one agent-wait question written in
the `mcp_elicitation` dialect (the payload LangChain's `MCPAdapter` raises, so it is announced, answered in every
channel and checked exactly as the adapter's is: docs/dialects.md), the agent parks until it is answered, and the call
is retried with the answers.

The wait holds no connection: each attempt connects, calls and disconnects before the agent parks (LangGraph's
`interrupt` unwinds the run), and the resumed run calls the tool again on a new connection. Like `MCPAdapter`, the
resumed run issues the call from its first round, so a server should assign the same request keys to the same call
(most derive them from what they ask).

Example:
    >>> from agent_wait.mcp.input_required import call_tool  # doctest: +SKIP
    >>> async def book(day: str) -> str:  # a LangGraph node's body, run under the router  # doctest: +SKIP
    ...     result = await call_tool("https://bookings.example.com/mcp", "book_table", {"day": day})
    ...     return result.content[0].text  # after a person answered the server's question
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

from agent_wait.errors import ArgumentError, require_extra

require_extra("agent_wait.mcp", "mcp", "mcp")

from mcp.client import Client  # noqa: E402  (after the extra check, on purpose)
from mcp.client.session import ClientSession  # noqa: E402
from mcp.types import (  # noqa: E402
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    InputResponses,
)

from agent_wait.dialects import mcp_elicitation  # noqa: E402

__all__ = ("Park", "Server", "call_tool", "elicitation_round", "input_responses")

Park = Callable[[dict[str, Any]], Any]
"""Parks the agent on a question and returns its answer once resumed (LangGraph's `interrupt`, by default)."""

Server = str | Callable[[], AbstractAsyncContextManager[Any]]
"""Where the tool is: a streamable HTTP URL, or a callable opening a connection (an `mcp.client.Client` or an
initialized `ClientSession` as the `async with` value)."""

MAX_ROUNDS = 16
"""The most rounds one call may ask before `call_tool` gives up: a server that never finishes would park forever."""


def elicitation_round(tool_name: str, result: InputRequiredResult) -> dict[str, Any]:
    """The `mcp_elicitation` question for one round: `{"type", "tool_name", "requests": [...]}`, one request per key.

    Args:
        tool_name: the tool whose call waits (shown as the round's headline when it asks several things).
        result: the server's `InputRequiredResult`.

    Raises:
        ArgumentError: the round asks for no input (a continuation) or for something a person cannot give through
            agent-wait (sampling, roots); answer those in the client, or call without this helper.
    """
    requests = result.input_requests or {}
    if not requests:
        raise ArgumentError(
            f"the MCP tool {tool_name!r} returned a round with no input requests (a continuation of long work); "
            "only elicitation rounds are asked of people: poll the server's task instead",
            argument="result",
        )
    others = sorted(f"{key} ({request.method})" for key, request in requests.items() if not _elicits(request))
    if others:
        raise ArgumentError(
            f"the MCP tool {tool_name!r} asked for input a person cannot give through agent-wait: {', '.join(others)}; "
            "only elicitation requests (form or URL) are asked. Answer sampling and roots in the client",
            argument="result",
        )
    return {
        "type": mcp_elicitation.NAME,
        "tool_name": tool_name,
        "requests": [_request(key, request) for key, request in requests.items() if isinstance(request, ElicitRequest)],
    }


def _elicits(request: Any) -> bool:
    return isinstance(request, ElicitRequest)


def _request(key: str, request: ElicitRequest) -> dict[str, Any]:
    params = request.params
    if isinstance(params, ElicitRequestFormParams):
        return {"key": key, "message": params.message, "mode": "form", "requested_schema": params.requested_schema}
    return {"key": key, "message": params.message, "mode": "url", "url": str(params.url)}


def input_responses(question: Mapping[str, Any], resumed: Any) -> InputResponses:
    """The `inputResponses` of the retried call, from the answer the agent resumed with (`{"responses": {...}}`).

    The router has checked the answer already (`mcp_elicitation.answer_problem`, and each form's content against its
    `requested_schema`); an answer resumed in-process is checked here the same way, by shape.

    Raises:
        ArgumentError: the answer misses a request's key, names an action MCP does not have, or carries content a
            request cannot take.
    """
    problem = mcp_elicitation.answer_problem(question, resumed)
    if problem is None and not mcp_elicitation.is_native(resumed):
        problem = "resume with {'responses': {key: {'action', 'content'?}}}, the dialect's own answer"
    if problem is not None:
        raise ArgumentError(f"cannot retry the MCP call with this answer: {problem}", argument="resumed")
    return {
        key: ElicitResult(action=response["action"], content=response.get("content"))
        for key, response in resumed["responses"].items()
    }


def _interrupt(value: dict[str, Any]) -> Any:
    from langgraph.types import interrupt  # imported when used: another framework passes its own park

    return interrupt(value)


def _connection(server: Server) -> AbstractAsyncContextManager[Any]:
    return Client(server) if isinstance(server, str) else server()


async def call_tool(
    server: Server,
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    park: Park | None = None,
) -> CallToolResult:
    """Call an MCP tool, asking a person through agent-wait each time the server needs input.

    Each attempt opens its own connection and closes it before the agent parks, so nothing is held across the wait
    (and parking, which raises, never unwinds through the SDK's task groups).

    Args:
        server: the server's streamable HTTP URL (`mcp.client.Client(url)`), or a callable that opens a connection:
            an async context manager yielding an `mcp.client.Client` or an initialized `ClientSession`.
        name: the tool.
        arguments: its arguments.
        park: parks the agent on the round's question and returns the answer once resumed. Default: LangGraph's
            `interrupt` (`langgraph.types.interrupt`), which the router hosting the graph recognises as an
            `mcp_elicitation` question and resumes with the answer in the dialect's own shape.

    Returns:
        The tool's final result, after the server received the answers.

    Raises:
        GraphInterrupt: (LangGraph) while a round waits for its answer: that is the park, not a failure.
        ArgumentError: a round asks for what a person cannot give; an answer cannot be applied; more than
            `MAX_ROUNDS` rounds.
    """
    ask = park or _interrupt
    responses: InputResponses | None = None
    state: str | None = None
    for _ in range(MAX_ROUNDS + 1):
        async with _connection(server) as connected:
            session: ClientSession = connected.session if isinstance(connected, Client) else connected
            result = await session.call_tool(
                name,
                arguments,
                input_responses=responses,
                request_state=state,  # opaque: echoed back verbatim
                allow_input_required=True,
            )
        if not isinstance(result, InputRequiredResult):
            return result
        question = elicitation_round(name, result)
        responses = input_responses(question, ask(question))  # parks here, with no connection open
        state = result.request_state
    raise ArgumentError(
        f"the MCP tool {name!r} still asks for input after {MAX_ROUNDS} rounds; it is not finishing",
        argument="name",
    )
