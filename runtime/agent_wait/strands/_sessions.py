"""Strands session repositories for hosted agents: in the checkpoint table (DynamoDB), or in memory.

Strands persists an agent through a `SessionRepository` (the session, the agent's state with its
interrupt state, and one record per message); `RepositorySessionManager(session_id=thread_id,
session_repository=...)` restores it into a fresh `Agent`. The bundled stack already deploys a
DynamoDB checkpoint table and grants the router read/write on it, so the router keeps sessions there
rather than in a bucket it would need for `S3SessionManager`.

Layout, one item per record (`PK = "STRANDS#<session_id>"`):

    SK = "SESSION"                                  the Session
    SK = "AGENT#<agent_id>"                         the SessionAgent (state, interrupt state, ...)
    SK = "MESSAGE#<agent_id>#<message_id:012d>"     one SessionMessage (zero-padded: sort-key order is message order)
    SK = "MULTI_AGENT#<id>"                         a multi-agent's state

A session and a message are created with a conditional write: two hosts that append message N of
the same thread cannot both win (the loser raises `ThreadStateConflictError` and its run fails, to
be retried). Bodies over 32 KB are stored compressed; one record over 400 KB even compressed raises
`ThreadStateTooLargeError`.
"""

from __future__ import annotations

import copy
import threading
from abc import abstractmethod
from typing import TYPE_CHECKING, Any

from strands.session.session_repository import SessionRepository
from strands.types.exceptions import SessionException
from strands.types.session import Session, SessionAgent, SessionMessage

from agent_wait.asking.stored import PK, StateTable, decode_body, encode_body
from agent_wait.errors import ArgumentError, ThreadStateConflictError

if TYPE_CHECKING:
    from strands.multiagent.base import MultiAgentBase

__all__ = ("DynamoDbSessionRepository", "InMemorySessionRepository", "ItemSessionRepository")

PREFIX = "STRANDS#"
"""Partition-key prefix of every Strands item in the checkpoint table (LangGraph's items never use it)."""

SESSION_KEY = "SESSION"


def _agent_key(agent_id: str) -> str:
    return f"AGENT#{agent_id}"


def _message_prefix(agent_id: str) -> str:
    return f"MESSAGE#{agent_id}#"


def _message_key(agent_id: str, message_id: int) -> str:
    if not isinstance(message_id, int) or message_id < 0:
        raise ArgumentError(f"message_id=<{message_id}> | message id must be a non-negative integer")
    return f"{_message_prefix(agent_id)}{message_id:012d}"


def _multi_agent_key(multi_agent_id: str) -> str:
    return f"MULTI_AGENT#{multi_agent_id}"


class ItemSessionRepository(SessionRepository):
    """A `SessionRepository` over one document per record; backends implement three primitives.

    The rules (Strands' own, as its file repository keeps them): creating a session that exists
    raises `SessionException`; updating an agent, a message or a multi-agent that does not exist
    raises `SessionException` and keeps the record's `created_at`; messages list in id order.
    """

    @abstractmethod
    def _get(self, session_id: str, key: str) -> dict[str, Any] | None:
        """The document stored under `key`, or None."""

    @abstractmethod
    def _put(self, session_id: str, key: str, document: dict[str, Any], *, create: bool) -> None:
        """Store `document` under `key`; with `create`, only if nothing is there (else `ThreadStateConflictError`)."""

    @abstractmethod
    def _list(self, session_id: str, prefix: str) -> list[dict[str, Any]]:
        """Every document whose key starts with `prefix`, in key order."""

    # -- sessions ------------------------------------------------------------------------------------

    def create_session(self, session: Session, **kwargs: Any) -> Session:
        try:
            self._put(session.session_id, SESSION_KEY, session.to_dict(), create=True)
        except ThreadStateConflictError as exc:
            raise SessionException(f"Session {session.session_id} already exists") from exc
        return session

    def read_session(self, session_id: str, **kwargs: Any) -> Session | None:
        document = self._get(session_id, SESSION_KEY)
        return Session.from_dict(document) if document is not None else None

    # -- agents --------------------------------------------------------------------------------------

    def create_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        self._put(session_id, _agent_key(session_agent.agent_id), session_agent.to_dict(), create=False)

    def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> SessionAgent | None:
        document = self._get(session_id, _agent_key(agent_id))
        return SessionAgent.from_dict(document) if document is not None else None

    def update_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        previous = self.read_agent(session_id, session_agent.agent_id)
        if previous is None:
            raise SessionException(f"Agent {session_agent.agent_id} in session {session_id} does not exist")
        session_agent.created_at = previous.created_at
        self._put(session_id, _agent_key(session_agent.agent_id), session_agent.to_dict(), create=False)

    # -- messages ------------------------------------------------------------------------------------

    def create_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        key = _message_key(agent_id, session_message.message_id)
        self._put(session_id, key, session_message.to_dict(), create=True)

    def read_message(self, session_id: str, agent_id: str, message_id: int, **kwargs: Any) -> SessionMessage | None:
        document = self._get(session_id, _message_key(agent_id, message_id))
        return SessionMessage.from_dict(document) if document is not None else None

    def update_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        previous = self.read_message(session_id, agent_id, session_message.message_id)
        if previous is None:
            raise SessionException(f"Message {session_message.message_id} does not exist")
        session_message.created_at = previous.created_at
        key = _message_key(agent_id, session_message.message_id)
        self._put(session_id, key, session_message.to_dict(), create=False)

    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> list[SessionMessage]:
        documents = self._list(session_id, _message_prefix(agent_id))
        end = None if limit is None else offset + limit
        return [SessionMessage.from_dict(document) for document in documents[offset:end]]

    # -- multi-agents --------------------------------------------------------------------------------

    def create_multi_agent(self, session_id: str, multi_agent: MultiAgentBase, **kwargs: Any) -> None:
        self._put(session_id, _multi_agent_key(multi_agent.id), multi_agent.serialize_state(), create=False)

    def read_multi_agent(self, session_id: str, multi_agent_id: str, **kwargs: Any) -> dict[str, Any] | None:
        return self._get(session_id, _multi_agent_key(multi_agent_id))

    def update_multi_agent(self, session_id: str, multi_agent: MultiAgentBase, **kwargs: Any) -> None:
        if self._get(session_id, _multi_agent_key(multi_agent.id)) is None:
            raise SessionException(f"MultiAgent state {multi_agent.id} in session {session_id} does not exist")
        self._put(session_id, _multi_agent_key(multi_agent.id), multi_agent.serialize_state(), create=False)


class InMemorySessionRepository(ItemSessionRepository):
    """Sessions in a dict, for tests and single-process hosts; shared by every agent built over it."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], dict[str, Any]] = {}
        self._lock = threading.Lock()

    def _get(self, session_id: str, key: str) -> dict[str, Any] | None:
        with self._lock:
            return copy.deepcopy(self._items.get((session_id, key)))

    def _put(self, session_id: str, key: str, document: dict[str, Any], *, create: bool) -> None:
        # A JSON round trip, so what is read back is a copy, shaped exactly as the DynamoDB backend returns it.
        stored = decode_body(encode_body(document, thread_id=session_id, what=key))
        with self._lock:
            if create and (session_id, key) in self._items:
                raise ThreadStateConflictError(
                    f"session {session_id!r}: {key} was already written by another writer; nothing was written",
                    thread_id=session_id,
                )
            self._items[(session_id, key)] = stored

    def _list(self, session_id: str, prefix: str) -> list[dict[str, Any]]:
        with self._lock:
            keys = sorted(key for sid, key in self._items if sid == session_id and key.startswith(prefix))
            return [copy.deepcopy(self._items[(session_id, key)]) for key in keys]


class DynamoDbSessionRepository(ItemSessionRepository):
    """Strands sessions in the checkpoint table, under `PK = "STRANDS#<session_id>"` (layout in the module docstring).

    Calls `GetItem`, `PutItem` (conditional for sessions and messages) and `Query` only.

    Example:
        >>> import boto3  # doctest: +SKIP
        >>> repository = DynamoDbSessionRepository("checkpoints", client=boto3.client("dynamodb"))  # doctest: +SKIP
        >>> manager = RepositorySessionManager(session_id="order-4471", session_repository=repository)  # doctest: +SKIP

    Args:
        table_name: the checkpoint table (`AGENT_WAIT_CHECKPOINT_TABLE`).
        client: a boto3 DynamoDB client.
    """

    def __init__(self, table_name: str, *, client: Any) -> None:
        self._table = StateTable(table_name, client=client, prefix=PREFIX)
        self.table_name = table_name

    def _get(self, session_id: str, key: str) -> dict[str, Any] | None:
        item = self._table.get(session_id, key)
        return decode_body(item) if item is not None else None

    def _put(self, session_id: str, key: str, document: dict[str, Any], *, create: bool) -> None:
        body = encode_body(document, thread_id=session_id, what=f"Strands record {key}", table=self.table_name)
        self._table.put(
            session_id,
            key,
            body,
            condition="attribute_not_exists(#pk)" if create else None,
            names={"#pk": PK} if create else None,
            conflict=f"{key} was already written by another writer",
        )

    def _list(self, session_id: str, prefix: str) -> list[dict[str, Any]]:
        return [decode_body(item) for item in self._table.query(session_id, prefix)]
