"""Build the A2A parts from the settings: the answer API's service (card, JSON-RPC) and the router's task follower.
Each imports the SDK (the `a2a` extra) only when `AGENT_WAIT_AGENT_CARD` is set."""

from __future__ import annotations

from typing import Any

from agent_wait.contract.schema import Settings
from agent_wait.errors import require_extra
from agent_wait.host.settings import HostSettings, required

__all__ = ("a2a_follower", "a2a_service")


def _store(settings: HostSettings, client: Any) -> Any:
    require_extra("agent_wait.host.a2a", "a2a", "a2a")
    from agent_wait.host.a2a.tasks import DynamoDbTaskStore

    return DynamoDbTaskStore(required(settings.table, Settings.TABLE), client=client)


def a2a_service(settings: HostSettings, ledger: Any, service: Any, *, client: Any, log: Any = None) -> Any:
    """The answer API's A2A service (`agent_wait.host.a2a.handler.A2aService`) over its ledger and answer service."""
    store = _store(settings, client)
    from agent_wait.host.a2a.handler import A2aService
    from agent_wait.host.a2a.push import TaskNotifier

    notifier = TaskNotifier(store, private_push=settings.a2a.private_push, log=log)
    return A2aService(settings.a2a, store, service, notifier, api_url=settings.api_url)


def a2a_follower(settings: HostSettings, router: Any, *, session: Any = None, log: Any = None) -> Any:
    """The router's task follower (`agent_wait.host.a2a.follow.TaskFollower`), its run watcher registered on
    `router`; None when A2A is off (no client is made)."""
    if settings.a2a is None:
        return None
    import boto3

    store = _store(settings, (session or boto3.Session()).client("dynamodb"))
    from agent_wait.host.a2a.follow import TaskFollower
    from agent_wait.host.a2a.push import TaskNotifier

    notifier = TaskNotifier(store, private_push=settings.a2a.private_push, log=log)
    follower = TaskFollower(store, router.ledger, notifier, log=log)
    router.questions.watchers.append(follower.watch)
    return follower
