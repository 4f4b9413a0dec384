"""Standing grants as people see them: list, show and revoke, each for whoever may.

Every door that shows grants (the answer API's `GET/DELETE /grants`, the inbox's grants page, `agent-wait grants`)
asks this book, so one rule says who sees what. A person sees and may revoke a grant when they made it, when the policy
it was made under lets them grant (`Grant.granters`: both lists empty means anyone who could answer, so then everyone
signed in), or when they are in the deployment's audit group. An operator with the deployment's credentials (the CLI)
sees and revokes every grant. A revoke is one conditional write and holds for every ask after it: the router reads a
function's live grants with a consistent read.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from agent_wait.common.times import utc_now
from agent_wait.engine.checks import Answerer
from agent_wait.errors import GrantError
from agent_wait.ledger.grants import Grant, GrantLedger
from agent_wait.people.keys import person_keys

__all__ = ("OPERATOR", "GrantBook", "grant_view")

OPERATOR = None
"""Who `GrantBook` serves when the caller holds the deployment's own credentials (the CLI): it sees every grant."""


class GrantBook:
    """List, show and revoke grants for a person (an `Answerer` as their door proved them) or the operator.

    Args:
        grants: where grants are kept.
        audit_group: members of this group see and revoke every grant (`AGENT_WAIT_AUDIT_GROUP`); None: nobody by
            group.
        clock: returns now (UTC).
    """

    def __init__(
        self, grants: GrantLedger, *, audit_group: str | None = None, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self.grants = grants
        self.audit_group = audit_group
        self.clock = clock

    def may_see(self, grant: Grant, person: Answerer | None) -> bool:
        """True when `person` (None: the operator) may see and revoke `grant`."""
        if person is None:
            return True
        if self.audit_group is not None and self.audit_group in person.groups:
            return True
        if person_keys((grant.granted_by, grant.subject)) & person.keys:
            return True
        groups, people = grant.granters.get("groups", ()), grant.granters.get("people", ())
        if not (groups or people):
            return True
        return bool(set(person.groups) & set(groups)) or bool(person_keys(people) & person.keys)

    def list(self, person: Answerer | None, *, live_only: bool = True, limit: int = 100) -> list[Grant]:
        """The grants `person` may see, newest first; with `live_only`, only those that may still decide an ask."""
        kept = self.grants.grants(now=self.clock(), live_only=live_only, limit=limit)
        return [grant for grant in kept if self.may_see(grant, person)]

    def show(self, grant_id: str, person: Answerer | None) -> Grant:
        """The grant `grant_id`, read consistently.

        Raises:
            GrantError: `unknown_grant` when there is none, or when `person` may not see it (a grant's existence is
                not told to someone it does not concern).
        """
        grant = self.grants.grant(grant_id)
        if grant is None or not self.may_see(grant, person):
            raise GrantError("unknown_grant", f"no grant {grant_id!r} that you may see; list them with GET /grants")
        return grant

    def revoke(self, grant_id: str, person: Answerer | None, *, by: str | None = None) -> Grant:
        """Revoke `grant_id` for every ask after this; the grant as kept after (a second revoke keeps the first).

        Args:
            by: who revokes, for the record; defaults to the person's key (`operator` for the operator).

        Raises:
            GrantError: `unknown_grant` as for `show`.
        """
        self.show(grant_id, person)
        who = by or (person.answered_by if person is not None else None) or "operator"
        revoked = self.grants.revoke_grant(grant_id, by=who, now=self.clock())
        if revoked is None:  # gone between the read and the write: only expiry removes one
            raise GrantError("unknown_grant", f"no grant {grant_id!r}; it may have expired and been removed")
        return revoked


def grant_view(grant: Grant, *, now: datetime) -> dict[str, Any]:
    """A grant as JSON for people and tools (`GET /grants`, the inbox's grants page, `agent-wait grants --json`): what
    it covers, who made it when and through which door, on which question, how many uses are left, what it decided,
    and whether it is live at `now`."""
    terms = grant.terms
    return {
        "grant_id": grant.grant_id,
        "function": terms.function,
        "pins": {name: pin.to_dict() for name, pin in terms.pins.items()},
        "exact": all(pin.kind == "equals" for pin in terms.pins.values()) and set(terms.pins) == set(terms.parameters),
        "parameters": list(terms.parameters),
        "tags": dict(terms.tags),
        "scope": terms.scope,
        "thread_id": terms.thread_id,
        "question_id": grant.question_id,
        "granted_by": grant.granted_by,
        "via": grant.via,
        "granted_at": grant.granted_at,
        "expires_at": grant.expires_at,
        "uses": terms.uses,
        "uses_left": grant.uses_left,
        "decided": list(grant.decided),
        "revoked_at": grant.revoked_at,
        "revoked_by": grant.revoked_by,
        "live": grant.live(now),
    }
