"""`InMemoryLedger`'s standing grants (`GrantLedger`): a dict under a lock, with the conditional semantics a
DynamoDB grant would have."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import datetime

from agent_wait.common.times import format_rfc3339
from agent_wait.ledger.grants import Grant, GrantLedger

__all__ = ("MemoryGrants",)


class MemoryGrants(GrantLedger):
    """Grants kept in memory. Every write is a compare-and-set under one lock, as one conditional write would be."""

    def __init__(self) -> None:
        self._grants: dict[str, Grant] = {}
        self._grants_lock = threading.Lock()

    def add_grant(self, grant: Grant) -> Grant:
        with self._grants_lock:
            return self._grants.setdefault(grant.grant_id, grant)

    def live_grants(self, function: str, *, now: datetime) -> list[Grant]:
        with self._grants_lock:
            kept = list(self._grants.values())
        live = [g for g in kept if g.terms.function == function and g.live(now)]
        return sorted(live, key=lambda g: (g.granted_at, g.grant_id))

    def use_grant(self, grant_id: str, question_id: str, *, now: datetime) -> Grant | None:
        with self._grants_lock:
            grant = self._grants.get(grant_id)
            if grant is None:
                return None
            if question_id in grant.decided:
                return grant
            if not grant.live(now):
                return None
            left = None if grant.uses_left is None else grant.uses_left - 1
            used = replace(grant, uses_left=left, decided=(*grant.decided, question_id))
            self._grants[grant_id] = used
            return used

    def revoke_grant(self, grant_id: str, *, by: str, now: datetime) -> Grant | None:
        with self._grants_lock:
            grant = self._grants.get(grant_id)
            if grant is None or grant.revoked_at is not None:
                return grant
            revoked = replace(grant, revoked_at=format_rfc3339(now), revoked_by=by)
            self._grants[grant_id] = revoked
            return revoked

    def grant(self, grant_id: str) -> Grant | None:
        with self._grants_lock:
            return self._grants.get(grant_id)

    def grants(self, *, now: datetime, live_only: bool = False, limit: int = 100) -> list[Grant]:
        with self._grants_lock:
            kept = list(self._grants.values())
        chosen = [g for g in kept if g.live(now)] if live_only else kept
        return sorted(chosen, key=lambda g: (g.granted_at, g.grant_id), reverse=True)[:limit]
