"""The hosted agent behind A2A v1.0: the SDK's `RequestHandler`, answered from the ledger and the entry queue.

One request per invocation, as the answer API's Lambda serves it: nothing is held in memory between requests. A task's
state is read from the ledger each time (`agent_wait.host.a2a.states`), never kept in a task store of its own.

- `SendMessage` without a task id starts a task: the thread `a2a-<task id>` is started through the entry queue, as the
  queue door starts one (`{"thread_id", "input", "start_id"}`), and the task is returned `working` at once (the
  router runs it). Its id is made from the caller and the message id: the same message sent again is the same task,
  and starts nothing new. The input is the message's data part (`{"order_id": "o-1", "amount": 900}`), else its
  text. A push config in the request's configuration is kept with the task.
- `SendMessage` with a task id answers the question the task waits on (`input-required`): a data part that is an
  object (`{"action": "approve"}`, or what the question's answer schema asks), else a text that is one of the
  allowed actions (`approve`). It is decided through the one decision path (`AnswerService.answer`), by the caller
  (their person key, from their token), recorded `via` `api`.
- `GetTask` reads where the task stands; `CancelTask` cancels the question it waits on (`AnswerService.cancel`, the
  one path for a person's cancel) and the task ends `canceled`.
- Push-notification configs: created, read, listed and deleted with the v1.0 methods; kept on the task's item.
- Not served: streaming (`SendStreamingMessage`, `SubscribeToTask`: a Lambda answers once; poll `GetTask` or set
  a push config), `ListTasks`, and the extended agent card.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import RequestHandler
from a2a.server.tasks.push_notification_config_store import normalize_push_notification_config
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import (
    ExtendedAgentCardNotConfiguredError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.protobuf.json_format import MessageToDict

from agent_wait.common.times import utc_now
from agent_wait.contract.messages import group_id_for, parse_message
from agent_wait.engine.answering import VerdictKind
from agent_wait.engine.checks import Answerer
from agent_wait.engine.handover import AnswerService
from agent_wait.errors import MessageError
from agent_wait.host.a2a.agent import A2aAgent
from agent_wait.host.a2a.follow import read_view
from agent_wait.host.a2a.parts import answer_in, start_input
from agent_wait.host.a2a.push import TaskNotifier, as_config, push_url_check, run_sync
from agent_wait.host.a2a.states import TaskView, as_task
from agent_wait.host.a2a.tasks import DynamoDbTaskStore, PushTarget, TaskItem, task_id_for, thread_for

__all__ = ("ANSWERER_STATE", "A2aService", "HostedAgentHandler")

ANSWERER_STATE = "agent_wait.answerer"
"""The `ServerCallContext.state` key of the caller, as the JWT authorizer proved them (an `Answerer`)."""
_ENDED: dict[TaskState, str] = {
    TaskState.TASK_STATE_COMPLETED: "completed",
    TaskState.TASK_STATE_FAILED: "failed",
    TaskState.TASK_STATE_CANCELED: "canceled",
}


@dataclass
class A2aService:
    """What the A2A routes work with, built once per cold start.

    Args:
        agent: the hosted agent's card fields.
        tasks: the tasks, on the question table.
        service: decides answers and cancels (the one decision path), and holds the entry queue starts go to.
        notifier: tells the tasks' push configs of state changes.
        api_url: the answer API's base URL, for the card's endpoint; None: the request's own.
        clock: returns now (UTC).
    """

    agent: A2aAgent
    tasks: DynamoDbTaskStore
    service: AnswerService
    notifier: TaskNotifier
    api_url: str | None = None
    clock: Callable[[], datetime] = field(default=utc_now)


class HostedAgentHandler(RequestHandler):
    """The SDK's request handler over agent-wait: `JsonRpcDispatcher` routes each v1.0 method here.

    Args:
        a2a: the routes' dependencies (`A2aService`).
    """

    def __init__(self, a2a: A2aService) -> None:
        self.a2a = a2a

    # -- messages ------------------------------------------------------------------------------------

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task | Message:
        caller = _caller(context)
        message = params.message
        if not message.message_id:
            raise InvalidParamsError(message="message.messageId is required: your own id for this message")
        if message.task_id:
            return self._answer(message, caller)
        return self._start(params, caller)

    def _start(self, params: SendMessageRequest, caller: Answerer) -> Task:
        message, store = params.message, self.a2a.tasks
        task_id = task_id_for(caller.sender or caller.answered_by or "", message.message_id)
        start = {"thread_id": thread_for(task_id), "input": start_input(message), "start_id": task_id}
        try:
            parse_message(json.dumps(start))  # the router's own rules: refused here, with the reason, not dead-lettered
        except MessageError as exc:
            raise InvalidParamsError(message=f"the message cannot start the agent: {exc.message}") from exc
        store.create(
            task_id,
            context_id=message.context_id or task_id,
            created_by=caller.answered_by or "",
            now=self.a2a.clock(),
        )
        if params.configuration.HasField("task_push_notification_config"):
            self._keep_push(task_id, params.configuration.task_push_notification_config, caller)
        # Sent again for a message sent again: the queue and the router's start record make it one start.
        self.a2a.service.entry_queue.send(
            start, group_id=group_id_for(start["thread_id"]), deduplication_id=f"a2a-start:{task_id}"
        )
        return self._told(self._item(task_id))

    def _answer(self, message: Message, caller: Answerer) -> Task:
        item = self._item(message.task_id)
        if message.context_id and message.context_id != item.context_id:
            raise InvalidParamsError(
                message=f"context {message.context_id} is not task {item.task_id}'s ({item.context_id})"
            )
        view = read_view(self.a2a.service.ledger, item)
        question = view.question
        if question is None:
            raise InvalidParamsError(message=_no_question(item, view))
        answer = answer_in(message, question)
        if answer is None:
            actions = " or ".join(question.envelope.allowed_actions) or "an answer"
            raise InvalidParamsError(
                message=f"task {item.task_id} waits on question {question.question_id}, and this message answers "
                f'nothing: send a data part such as {{"action": "approve"}}, or the text {actions}',
                data={"question_id": question.question_id},
            )
        answer_id = _answer_id(caller, message.message_id, question.question_id)
        result = self.a2a.service.answer(question.question_id, answer, caller, answer_id=answer_id)
        verdict = result.verdict
        if verdict.kind is VerdictKind.REFUSED:
            reason = verdict.reason.value if verdict.reason else "refused"
            raise InvalidParamsError(
                message=f"the answer to question {question.question_id} was refused ({reason}): {verdict.detail}",
                data={"reason": reason, "question_id": question.question_id},
            )
        return self._told(self._item(item.task_id))

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any]:
        raise UnsupportedOperationError(message=_NO_STREAMING)
        yield  # pragma: no cover - an async generator, as the interface declares

    async def on_subscribe_to_task(self, params: Any, context: ServerCallContext) -> AsyncGenerator[Any]:
        raise UnsupportedOperationError(message=_NO_STREAMING)
        yield  # pragma: no cover - an async generator, as the interface declares

    # -- tasks ---------------------------------------------------------------------------------------

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        _caller(context)
        item = self._item(params.id)
        return as_task(item, read_view(self.a2a.service.ledger, item))

    async def on_list_tasks(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        raise UnsupportedOperationError(message="ListTasks is not served: keep the task ids SendMessage returns")

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task | None:
        caller = _caller(context)
        item = self._item(params.id)
        view = read_view(self.a2a.service.ledger, item)
        question = view.question
        if question is None:
            raise TaskNotCancelableError(message=_not_cancelable(item, view))
        reason = str(MessageToDict(params.metadata).get("reason") or "cancelled through A2A CancelTask")
        answer_id = _answer_id(caller, f"cancel\0{uuid.uuid4().hex}", question.question_id)
        verdict = self.a2a.service.cancel(question.question_id, reason, caller, answer_id=answer_id).verdict
        if verdict.kind is VerdictKind.REFUSED:
            reason_code = verdict.reason.value if verdict.reason else "refused"
            raise TaskNotCancelableError(
                message=f"question {question.question_id} cannot be cancelled ({reason_code}): {verdict.detail}",
                data={"reason": reason_code, "question_id": question.question_id},
            )
        self.a2a.tasks.end(item.task_id, "canceled")
        return self._told(self._item(item.task_id))

    # -- push-notification configs -----------------------------------------------------------------------

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        caller = _caller(context)
        item = self._item(params.task_id)
        return self._keep_push(item.task_id, params, caller)

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        caller = _caller(context)
        item = self._item(params.task_id)
        for target in _owned(item, caller):
            if target.id == (params.id or item.task_id):
                return as_config(item.task_id, target)
        raise InvalidParamsError(message=f"task {item.task_id} has no push config {params.id!r} of yours")

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        caller = _caller(context)
        item = self._item(params.task_id)
        configs = [as_config(item.task_id, target) for target in _owned(item, caller)]
        return ListTaskPushNotificationConfigsResponse(configs=configs)

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        caller = _caller(context)
        item = self._item(params.task_id)
        if not any(target.id == params.id for target in _owned(item, caller)):
            raise InvalidParamsError(message=f"task {item.task_id} has no push config {params.id!r} of yours")
        self.a2a.tasks.delete_push(item.task_id, params.id)

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        raise ExtendedAgentCardNotConfiguredError(message="there is no extended card: the public card is the card")

    # -- steps ---------------------------------------------------------------------------------------

    def _item(self, task_id: str) -> TaskItem:
        item = self.a2a.tasks.get(task_id) if task_id else None
        if item is None:
            raise TaskNotFoundError(
                message=f"no task {task_id!r}: start one with a message that names no taskId",
                data={"task_id": task_id},
            )
        return item

    def _told(self, item: TaskItem) -> Task:
        """The task as it stands, its push configs told of the change (once: a repeat tells nobody)."""
        view = read_view(self.a2a.service.ledger, item)
        self.a2a.notifier.tell(item, view)
        return as_task(item, view)

    def _keep_push(
        self, task_id: str, config: TaskPushNotificationConfig, caller: Answerer
    ) -> TaskPushNotificationConfig:
        normalized = normalize_push_notification_config(task_id, config)
        if not run_sync(push_url_check(self.a2a.agent.private_push)(normalized.url)):
            raise InvalidParamsError(
                message="the push URL must be http(s) to a public address (not loopback, private or link-local)",
                data={"task_id": task_id},
            )
        auth = normalized.authentication
        target = PushTarget(
            id=normalized.id,
            url=normalized.url,
            token=normalized.token,
            scheme=auth.scheme,
            credentials=auth.credentials,
            owner=caller.answered_by or "",
        )
        self.a2a.tasks.put_push(task_id, target)
        return as_config(task_id, target)


_NO_STREAMING = "streaming is not served: poll GetTask, or set a push config to be told of each state change"


def _caller(context: ServerCallContext) -> Answerer:
    """The caller the JWT authorizer proved; a request without one never reaches here (the route refuses it)."""
    caller = context.state.get(ANSWERER_STATE)
    if not isinstance(caller, Answerer):
        raise InvalidParamsError(message="not signed in: send a bearer token from the API's issuer")
    return caller


def _owned(item: TaskItem, caller: Answerer) -> list[PushTarget]:
    return [target for target in item.push if target.owner == (caller.answered_by or "")]


def _answer_id(caller: Answerer, message_id: str, question_id: str) -> str:
    """An answer's id from the caller, their message id and the question: the same message sent again repeats."""
    seed = f"{caller.sender}\0{message_id}\0{question_id}"
    return "a2a:" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:40]


def _no_question(item: TaskItem, view: TaskView) -> str:
    ended = _ENDED.get(view.state)
    if ended is not None:
        return f"task {item.task_id} is {ended} and takes no more messages; start a new task"
    return f"task {item.task_id} is working, not waiting on anyone: send the next message when it is input-required"


def _not_cancelable(item: TaskItem, view: TaskView) -> str:
    ended = _ENDED.get(view.state)
    if ended is not None:
        return f"task {item.task_id} is already {ended}"
    return f"task {item.task_id} is working: a task is cancelled while it waits on a person (input-required)"
