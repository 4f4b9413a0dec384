"""Standing grants as a ledger keeps them (`Grant`), and the capability that keeps them (`GrantLedger`).

A grant is made by an approval (`agent_wait.policy.grants.grant_terms` says what it covers) and kept under an id
derived from the function and the question it was made on (`grant_id_for`), so the same answer delivered twice makes
one grant. Each later ask it decides takes one use with one conditional write (`use_grant`): N concurrent asks
against a one-use grant get exactly one use, and the same question asking again (a redelivery) gets the use it
already took, never a second. A revoke holds for every `use_grant` after it. Standard library only.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_wait.common.times import format_rfc3339, parse_rfc3339
from agent_wait.contract.messages import internal_id
from agent_wait.ledger.records import QuestionRecord
from agent_wait.policy.grants import GrantTerms

__all__ = (
    "GRANT_ID_SEPARATOR",
    "GRANT_VIA",
    "Grant",
    "GrantLedger",
    "grant_answer_id",
    "grant_id_for",
    "grant_id_of",
    "new_grant",
)


GRANT_VIA = "grant"
"""The `via` of a decision a standing grant made."""

GRANT_ID_SEPARATOR = "~"
"""Between the function and the question in a grant's id: URL-safe, and never in a Python function's name."""


def grant_id_for(function: str, question_id: str) -> str:
    """The id of the grant an approval of `question_id` (asking `function`) makes: one question, at most one grant.
    It starts with the function's name, so a store that keeps grants in key order finds a function's together."""
    return f"{function}{GRANT_ID_SEPARATOR}{question_id}"


def grant_answer_id(grant_id: str, question_id: str) -> str:
    """The answer id of `grant_id`'s decision of `question_id`: the same on every attempt, and it names the grant."""
    return internal_id(f"grant:{grant_id}", question_id)


def grant_id_of(record: QuestionRecord) -> str | None:
    """The id of the grant that decided `record`, read back from its answer id (`grant_answer_id`): no read of the
    grant. None when no grant decided it."""
    if record.via != GRANT_VIA:  # read first: the channels pass row views that carry no answer id otherwise
        return None
    answer_id = record.answer_id
    if answer_id is None:
        return None
    start, end = internal_id("grant", ""), f":{record.question_id}"  # agent-wait:grant:<grant id>:<question id>
    if not (answer_id.startswith(start) and answer_id.endswith(end) and len(answer_id) > len(start) + len(end)):
        return None
    return answer_id[len(start) : -len(end)]


@dataclass(frozen=True, slots=True)
class Grant:
    """One standing grant: what it covers, who made it, how long and how often it may still decide, and what it
    decided."""

    grant_id: str
    terms: GrantTerms
    question_id: str
    """The question whose approval made it."""
    granted_by: str
    """The person key of who granted (`Answerer.answered_by`)."""
    via: str
    """The door it was made through."""
    granted_at: str
    """RFC 3339."""
    expires_at: str
    """RFC 3339: `granted_at` plus the terms' `ttl`. It decides nothing from then on."""
    uses_left: int | None
    """How many more asks it may decide; None: any number until it expires."""
    subject: str | None = None
    """The granter's proven per-person subject at their door, beside the key."""
    groups: tuple[str, ...] = ()
    """The granter's proven groups when they granted: a later question whose policy names answerer groups is decided
    by the grant only if the granter could have answered it."""
    granters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Who the question's policy let grant (`Grants.groups` and `.people`, as `{"groups": ..., "people": ...}`; both
    empty: anyone who could answer). They, the granter and the audit group may see and revoke it."""
    decided: tuple[str, ...] = field(default=())
    """The questions it decided, in order."""
    revoked_at: str | None = None
    revoked_by: str | None = None

    def live(self, now: datetime) -> bool:
        """True while it may decide an ask: not revoked, not expired, a use left."""
        return (
            self.revoked_at is None
            and now < parse_rfc3339(self.expires_at)
            and (self.uses_left is None or self.uses_left > 0)
        )

    def to_item(self) -> dict[str, Any]:
        return {
            "grant_id": self.grant_id,
            "terms": self.terms.to_dict(),
            "question_id": self.question_id,
            "granted_by": self.granted_by,
            "via": self.via,
            "granted_at": self.granted_at,
            "expires_at": self.expires_at,
            "uses_left": self.uses_left,
            "subject": self.subject,
            "groups": list(self.groups),
            "granters": {kind: list(names) for kind, names in self.granters.items()},
            "decided": list(self.decided),
            "revoked_at": self.revoked_at,
            "revoked_by": self.revoked_by,
        }

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Grant:
        uses_left = item.get("uses_left")
        return cls(
            grant_id=str(item["grant_id"]),
            terms=GrantTerms.from_dict(item["terms"]),
            question_id=str(item["question_id"]),
            granted_by=str(item["granted_by"]),
            via=str(item["via"]),
            granted_at=str(item["granted_at"]),
            expires_at=str(item["expires_at"]),
            uses_left=None if uses_left is None else int(uses_left),
            subject=item.get("subject"),
            groups=tuple(str(g) for g in item.get("groups") or ()),
            granters={str(kind): tuple(map(str, names)) for kind, names in dict(item.get("granters") or {}).items()},
            decided=tuple(str(q) for q in item.get("decided") or ()),
            revoked_at=item.get("revoked_at"),
            revoked_by=item.get("revoked_by"),
        )


def new_grant(
    terms: GrantTerms,
    *,
    question_id: str,
    granted_by: str,
    via: str,
    now: datetime,
    subject: str | None = None,
    groups: tuple[str, ...] = (),
    granters: Mapping[str, tuple[str, ...]] | None = None,
) -> Grant:
    """The grant an approval of `question_id` makes at `now`, with all its uses left."""
    return Grant(
        grant_id=grant_id_for(terms.function, question_id),
        terms=terms,
        question_id=question_id,
        granted_by=granted_by,
        via=via,
        granted_at=format_rfc3339(now),
        expires_at=format_rfc3339(now + terms.ttl),
        uses_left=terms.uses,
        subject=subject,
        groups=groups,
        granters=dict(granters or {}),
    )


class GrantLedger(ABC):
    """Capability `grants`: standing grants, found by function at ask time, each use one conditional write."""

    @abstractmethod
    def add_grant(self, grant: Grant) -> Grant:
        """Keep `grant`; the grant already kept under its id is returned unchanged (a redelivered answer)."""

    @abstractmethod
    def live_grants(self, function: str, *, now: datetime) -> list[Grant]:
        """The grants of `function` that are live at `now`, oldest first (one read)."""

    @abstractmethod
    def use_grant(self, grant_id: str, question_id: str, *, now: datetime) -> Grant | None:
        """Take one use of the grant for `question_id`, in one conditional write, and return the grant after it; or
        None when it is not live at `now` (revoked, expired, used up) or unknown. A question that already took a use
        of it gets the grant back as it is, and no second use."""

    @abstractmethod
    def revoke_grant(self, grant_id: str, *, by: str, now: datetime) -> Grant | None:
        """Revoke the grant for every later `use_grant`; the first revoke is kept. None when there is no such
        grant."""

    @abstractmethod
    def grant(self, grant_id: str) -> Grant | None:
        """The grant kept under `grant_id`, read consistently; None when there is none."""

    @abstractmethod
    def grants(self, *, now: datetime, live_only: bool = False, limit: int = 100) -> list[Grant]:
        """Grants, newest first, at most `limit`; with `live_only`, only those live at `now`."""
