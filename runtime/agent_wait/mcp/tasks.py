"""The tasks extension's wire shapes (`io.modelcontextprotocol/tasks`, SEP-2663, for MCP 2026-07-28), on `mcp.types`.

MCP 2026-07-28 moved tasks out of the core protocol into this extension: a server answers `tools/call` with a task
handle (`resultType: "task"`), the client polls `tasks/get` (the task, with the tool's `result` once `completed` or
the JSON-RPC `error` once `failed`) and may `tasks/cancel` it. There is no `tasks/result` and no `tasks/list` in this
revision. The `mcp` SDK 2.1 ships the 2025-11-25 in-core task types only (`mcp.types.Task`: `ttl`, `pollInterval`,
wire-incompatible), so the 2026 shapes are declared here on the SDK's own bases (`mcp.types.Result`,
`RequestParams`, `Request`), reusing its `TaskStatus`, `CallToolResult` and `ErrorData`. Both ends use them: the
server (`agent_wait.mcp.server`) and a Python client (`TasksClaim`, a `ClientExtension` for `mcp.client.Client`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar, Literal

from agent_wait.errors import ArgumentError, require_extra

require_extra("agent_wait.mcp", "mcp", "mcp")

from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim  # noqa: E402
from mcp.types import CallToolResult, ErrorData, Request, RequestParams, Result, TaskStatus  # noqa: E402

__all__ = (
    "TASKS_EXTENSION",
    "CancelTaskRequest",
    "CancelTaskResult",
    "CreateTaskResult",
    "GetTaskRequest",
    "GetTaskResult",
    "TaskIdParams",
    "TasksClaim",
    "task_wire",
)

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The extension's identifier: a client declares it in its per-request capabilities to receive tasks."""


class TaskFields(Result):
    """A task's fields (SEP-2663 `Task`)."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str
    """ISO 8601: when the question was asked."""
    last_updated_at: str
    ttl_ms: int | None = None
    """How long from creation the server keeps the task, in milliseconds; None: unlimited."""
    poll_interval_ms: int | None = None
    """How often to poll `tasks/get`, in milliseconds."""


class CreateTaskResult(TaskFields):
    """`tools/call`'s answer when the server made a task of it: a task handle, in lieu of a `CallToolResult`."""

    result_type: Literal["task"] = "task"


class GetTaskResult(TaskFields):
    """`tasks/get`'s answer: the task, with the tool's `result` when `completed`, the `error` when `failed`."""

    result_type: Literal["complete"] = "complete"
    result: dict[str, Any] | None = None
    """The `CallToolResult` of the original `tools/call` (its wire form), once completed."""
    error: ErrorData | None = None
    """The JSON-RPC error the task failed with."""

    def call_result(self) -> CallToolResult | None:
        """The completed task's `CallToolResult`, or None before it completed."""
        return CallToolResult.model_validate(self.result) if self.result is not None else None


class TaskIdParams(RequestParams):
    """`tasks/get` and `tasks/cancel` params."""

    task_id: str


class GetTaskRequest(Request[TaskIdParams, Literal["tasks/get"]]):
    """Poll a task."""

    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param: ClassVar[str | None] = "taskId"  # SEP-2663: `Mcp-Name` mirrors the task id


class CancelTaskRequest(Request[TaskIdParams, Literal["tasks/cancel"]]):
    """Ask the server to cancel a task (an empty acknowledgement; `tasks/get` tells what became of it)."""

    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param: ClassVar[str | None] = "taskId"


class CancelTaskResult(Result):
    """`tasks/cancel`'s answer: an acknowledgement (cancelling is cooperative; `tasks/get` says what became of it)."""

    result_type: Literal["complete"] = "complete"


def task_wire(task: TaskFields) -> dict[str, Any]:
    """`task` as its wire JSON: camelCase, absent optionals left out, but `ttlMs` always present (null: unlimited)."""
    wire = task.model_dump(by_alias=True, mode="json", exclude_none=True)
    wire["ttlMs"] = task.ttl_ms
    return wire


class TasksClaim(ClientExtension):
    """For a Python `mcp.client.Client`: declare the tasks extension and claim `resultType: "task"` results.

    `client.session.call_tool(..., allow_claimed=True)` then returns a `CreateTaskResult` (the task to poll), and
    `client.call_tool(...)` hands a task to `resolve` (given: e.g. poll `tasks/get` until it is done, sleeping the
    task's `poll_interval_ms`); without `resolve`, `client.call_tool` refuses a task.

    Example:
        async with Client(url, extensions=[TasksClaim()]) as client:
            task = await client.session.call_tool("ask_person", {"question": "Refund 900?"}, allow_claimed=True)
            got = await client.session.send_request(
                GetTaskRequest(params=TaskIdParams(task_id=task.task_id)), GetTaskResult
            )
    """

    identifier = TASKS_EXTENSION

    def __init__(
        self, resolve: Callable[[CreateTaskResult, ClaimContext], Awaitable[CallToolResult]] | None = None
    ) -> None:
        self._resolve = resolve

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (ResultClaim(result_type="task", model=CreateTaskResult, resolve=self._resolved),)

    async def _resolved(self, task: CreateTaskResult, context: ClaimContext) -> CallToolResult:
        if self._resolve is None:
            raise ArgumentError(
                f"the server answered with task {task.task_id}; poll it with tasks/get (GetTaskRequest), or give "
                "TasksClaim(resolve=...)",
                argument="resolve",
            )
        return await self._resolve(task, context)
