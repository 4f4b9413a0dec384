"""Telling a task's push-notification configs of its state changes, once each, with the SDK's sender.

Whoever sees a change tells it: the router after a run (input-required, completed, failed; and working for a decision
it carried to the agent), the answer API after an answer given by A2A message (working) and after CancelTask
(canceled). Each change is claimed on the task item first (`DynamoDbTaskStore.claim_notice`), so a redelivered
message, or a second component seeing the same change, tells nobody twice. Delivery is the SDK's
`BasePushNotificationSender`: a POST of the task (`{"task": {...}}`) with the config's token in
`X-A2A-Notification-Token` and its `Authorization`; a failed delivery is logged by it and never raised, so a push
receiver that is down never fails a run. A claimed change is not told again when its delivery failed: the task
itself (`GetTask`) always says where it stands.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from a2a.server.context import ServerCallContext
from a2a.server.tasks import BasePushNotificationSender, PushNotificationConfigStore
from a2a.types.a2a_pb2 import AuthenticationInfo, TaskPushNotificationConfig
from a2a.utils.push_url_validator import validate_push_notification_url

from agent_wait.host.a2a.states import TaskView, as_task
from agent_wait.host.a2a.tasks import DynamoDbTaskStore, PushTarget, TaskItem

__all__ = ("TaskNotifier", "as_config", "push_url_check", "run_sync")

logger = logging.getLogger("agent_wait.host")
T = TypeVar("T")
PUSH_TIMEOUT_SECONDS = 10.0
"""How long one push delivery may take: a slow receiver must not hold the router's thread for long."""


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` to its end from synchronous code, in a thread of its own when this one already runs a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def push_url_check(private_push: bool) -> Callable[[str], Coroutine[Any, Any, bool]]:
    """The push URL policy: the SDK's (`validate_push_notification_url`: http(s) to a public address only), or, with
    `private_push` (dev and tests), http(s) to any address."""
    if not private_push:
        return validate_push_notification_url

    async def any_http(url: str) -> bool:
        return url.startswith(("http://", "https://"))

    return any_http


def as_config(task_id: str, target: PushTarget) -> TaskPushNotificationConfig:
    """A kept push target as the A2A config it was made from."""
    config = TaskPushNotificationConfig(id=target.id, task_id=task_id, url=target.url, token=target.token)
    if target.scheme:
        config.authentication.CopyFrom(AuthenticationInfo(scheme=target.scheme, credentials=target.credentials))
    return config


class _Targets(PushNotificationConfigStore):
    """One task's kept push targets, read once, as the SDK's sender reads configs (dispatch only)."""

    def __init__(self, item: TaskItem) -> None:
        self._configs = [as_config(item.task_id, target) for target in item.push]

    async def get_info_for_dispatch(self, task_id: str) -> list[TaskPushNotificationConfig]:
        return list(self._configs)

    async def get_info(self, task_id: str, context: ServerCallContext) -> list[TaskPushNotificationConfig]:
        return list(self._configs)  # pragma: no cover - the sender reads configs for dispatch only

    async def set_info(
        self, task_id: str, notification_config: TaskPushNotificationConfig, context: ServerCallContext
    ) -> None:  # pragma: no cover - never written through
        raise NotImplementedError

    async def delete_info(
        self, task_id: str, context: ServerCallContext, config_id: str | None = None
    ) -> None:  # pragma: no cover - never written through
        raise NotImplementedError


class TaskNotifier:
    """Tells a task's push configs of a state change, once per change.

    Args:
        store: the tasks (claims each change on its item).
        private_push: deliver to loopback and private addresses too (dev and tests only).
        log: a stdlib-compatible logger.
    """

    def __init__(self, store: DynamoDbTaskStore, *, private_push: bool = False, log: Any = None) -> None:
        self.store = store
        self.private_push = private_push
        self.log = log or logger

    def tell(self, item: TaskItem, view: TaskView) -> bool:
        """Tell `item`'s push configs that the task now stands as `view` says; True when this call told them.

        Nothing is told when the task has no config, or when the change was already claimed. Never raises for a
        receiver: a failed delivery is a log line.
        """
        if not item.push or not self.store.claim_notice(item.task_id, view.change):
            return False
        run_sync(self._send(item, view))
        self.log.info(
            "A2A task change told",
            extra={"thread_id": item.thread_id, "task_id": item.task_id, "change": view.change},
        )
        return True

    async def _send(self, item: TaskItem, view: TaskView) -> None:
        import httpx

        async with httpx.AsyncClient(timeout=PUSH_TIMEOUT_SECONDS) as client:
            sender = BasePushNotificationSender(
                client, _Targets(item), push_url_validator=push_url_check(self.private_push)
            )
            await sender.send_notification(item.task_id, as_task(item, view))
