"""The MCP server: `ask_person` and the tasks extension's methods on the `mcp` SDK's low-level `Server`.

The SDK does the protocol (the 2026-07-28 envelope, headers, JSON-RPC, `tools/list`, `server/discover`, errors);
this module declares the tool and hands each call to `PersonAsker` (`agent_wait.mcp.asking`), which does the rest
on the question ledger. A refused call is a tool error (`isError: true`) whose text says what was wrong and what to
do; an unknown or another caller's task is JSON-RPC `-32602` ("no task ...") on `tasks/get` and `tasks/cancel`.

One `Server` per request (`build_server`): it carries the request's caller, proven by the route's authorizer.
"""

from __future__ import annotations

from typing import Any

from agent_wait.errors import ArgumentError, require_extra

require_extra("agent_wait.mcp", "mcp", "mcp")

from mcp.server.context import ServerRequestContext  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp.types import (  # noqa: E402
    CLIENT_CAPABILITIES_META_KEY,
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ErrorData,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

from agent_wait.common.canonical_json import to_jsonable  # noqa: E402
from agent_wait.mcp.asking import Caller, PersonAsker  # noqa: E402
from agent_wait.mcp.task_state import TaskState, TaskView  # noqa: E402
from agent_wait.mcp.tasks import (  # noqa: E402
    TASKS_EXTENSION,
    CreateTaskResult,
    GetTaskResult,
    TaskIdParams,
    task_wire,
)

__all__ = ("SERVER_NAME", "TOOL_NAME", "ask_person_tool", "build_server", "call_result")

SERVER_NAME = "agent-wait"
TOOL_NAME = "ask_person"
FAILED_CODE = -32603
"""The JSON-RPC code a failed task's `error` carries (internal error: the decision could not be carried through)."""


def ask_person_tool(policy_names: tuple[str, ...]) -> Tool:
    """The `ask_person` tool as `tools/list` shows it: its arguments, and the policies a call may name."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "question": {
                "description": "What to ask: a sentence, or an object the inbox shows field by field.",
                "anyOf": [{"type": "string", "minLength": 1}, {"type": "object"}],
            },
            "response_schema": {
                "type": "object",
                "description": "A JSON Schema the answer must fit; the person answers with a form made from it.",
            },
            "policy": {
                "type": "string",
                "enum": list(policy_names),
                "description": "The named policy the question falls under: who may answer, the deadline, its default.",
            },
            "tags": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Instead of policy: tags that select exactly one of the server's policies.",
            },
            "idempotency_key": {
                "type": "string",
                "maxLength": 255,
                "description": "The same key again (from any client of yours) returns the same task.",
            },
        },
        "required": ["question"],
        "additionalProperties": False,
    }
    return Tool(
        name=TOOL_NAME,
        title="Ask a person",
        description=(
            "Ask a person a question and get their answer later, as a task: poll tasks/get until it is completed "
            "(the answer, or the policy's default at the deadline) or cancelled. The server's policy decides who "
            "may answer; the person answers in the inbox, Slack or email."
        ),
        input_schema=schema,
    )


def call_result(view: TaskView) -> CallToolResult:
    """A completed task's tool result: the answer as structured content (and as JSON text for older clients)."""
    content = {
        "answer": to_jsonable(view.answer, where="answer"),
        "expired": view.expired,
        "answered_by": view.answered_by,
    }
    text = TextContent(type="text", text=_json(content))
    return CallToolResult(content=[text], structured_content=content, is_error=False)


def _task(view: TaskView, poll_interval_ms: int, model: type[CreateTaskResult] | type[GetTaskResult]) -> Any:
    fields: dict[str, Any] = {
        "task_id": view.task_id,
        "status": view.state.value,
        "status_message": view.status_message,
        "created_at": view.created_at,
        "last_updated_at": view.last_updated_at,
        "poll_interval_ms": poll_interval_ms,
    }
    if model is GetTaskResult and view.state is TaskState.COMPLETED:
        fields["result"] = call_result(view).model_dump(by_alias=True, mode="json", exclude_none=True)
    if model is GetTaskResult and view.state is TaskState.FAILED:
        fields["error"] = ErrorData(code=FAILED_CODE, message=view.status_message)
    return task_wire(model(**fields))


def _refused(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _declares_tasks(params: CallToolRequestParams) -> bool:
    """Whether the call's client declared the tasks extension in its per-request capabilities."""
    meta: Any = params.meta or {}
    capabilities = meta.get(CLIENT_CAPABILITIES_META_KEY) or {}
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def build_server(asker: PersonAsker, caller: Caller) -> Server[Any]:
    """The MCP server for one request from `caller`: `ask_person`, `tasks/get`, `tasks/cancel`."""

    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=[ask_person_tool(asker.policies.names)])

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> Any:
        if params.name != TOOL_NAME:
            raise MCPError(INVALID_PARAMS, f"unknown tool {params.name!r}; this server has {TOOL_NAME!r}")
        if not _declares_tasks(params):
            return _refused(
                f"{TOOL_NAME} answers as a task, since a person may take days: declare the tasks extension "
                f"({TASKS_EXTENSION}) in your client's capabilities, then poll tasks/get"
            )
        try:
            view = asker.ask(caller, params.arguments, request_id=ctx.request_id)
        except ArgumentError as exc:
            return _refused(str(exc))
        return _task(view, asker.poll_interval_ms, CreateTaskResult)

    async def get_task(ctx: ServerRequestContext[Any], params: TaskIdParams) -> Any:
        view = asker.get(caller, params.task_id)
        if view is None:
            raise MCPError(INVALID_PARAMS, f"no task {params.task_id!r}")
        return _task(view, asker.poll_interval_ms, GetTaskResult)

    async def cancel_task(ctx: ServerRequestContext[Any], params: TaskIdParams) -> Any:
        view = asker.cancel(caller, params.task_id)
        if view is None:
            raise MCPError(INVALID_PARAMS, f"no task {params.task_id!r}")
        return {"resultType": "complete"}  # an acknowledgement: tasks/get says what became of the task

    server: Server[Any] = Server(SERVER_NAME, on_list_tools=list_tools, on_call_tool=call_tool)
    server.add_request_handler("tasks/get", TaskIdParams, get_task)
    server.add_request_handler("tasks/cancel", TaskIdParams, cancel_task)
    server.extensions[TASKS_EXTENSION] = {}
    return server


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
