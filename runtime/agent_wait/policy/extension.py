"""Moving a question's deadline later: who may (`Extension`, a policy field), and what each move did (`Extended`).

`WaitPolicy(extend=Extension(groups=["finance-managers"], max_total="P7D"))` lets members of those groups (or the
people named) move an open question's deadline later, by at most `max_total` past the deadline it was asked with,
all moves together. Without `extend=` nobody may move it: a deadline is a promise to the agent and to whoever
waits on its default, so a policy author opts in and says by whom and how far.

Each move is kept on the question's row (`Extended`) and announced as `wait.extended`. The reminders and
escalation steps not yet sent when it was made move by the same amount, so the schedule the policy describes
keeps its shape around the new deadline; those already sent stay where they happened (`shifted`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from agent_wait.common.durations import (
    ACCEPTED_FORMS,
    MAX_DURATION,
    DurationSyntaxError,
    format_duration,
    parse_duration,
)
from agent_wait.common.times import parse_rfc3339
from agent_wait.errors import PolicyError
from agent_wait.people.keys import person_keys
from agent_wait.policy._names import check_names

__all__ = ("Extended", "Extension", "shifted")


@dataclass(frozen=True, slots=True, init=False)
class Extension:
    """Who may move a question's deadline later, and by how much at most in all.

    Args:
        groups: members of any of these groups (an API user's group claims) may extend.
        people: these people may extend, by their key (`agent_wait.people.keys`): an address (any case, with or without
            `email:`), else the subject a door proves (a token's `iss#sub`, `slack:T:U`). Never a username.
        max_total: how far past the deadline it was asked with the deadline may move, all extensions together
            (ISO 8601 such as 'P7D', or seconds). Required: an unbounded extension is a question that never ends.

    Example:
        >>> Extension(groups=["finance-managers"], max_total="P7D").to_dict()
        {'groups': ['finance-managers'], 'people': [], 'max_total': 'P7D'}
    """

    groups: tuple[str, ...]
    people: tuple[str, ...]
    max_total: timedelta
    max_total_iso: str

    def __init__(self, *, groups: Iterable[str] = (), people: Iterable[str] = (), max_total: str | float) -> None:
        checked_groups = check_names("extend", groups, label="extend groups", spaces=False)
        checked_people = check_names("extend", people, label="extend people")
        if not (checked_groups or checked_people):
            raise PolicyError(
                "extend",
                {"groups": [], "people": []},
                "extend must name groups or people who may move the deadline, e.g. "
                "Extension(groups=['finance-managers'], max_total='P7D'); leave extend unset so nobody may",
            )
        try:
            delta = parse_duration(max_total)
        except DurationSyntaxError as exc:
            raise PolicyError("extend", max_total, f"extend max_total must be {ACCEPTED_FORMS}; {exc}") from None
        if delta > MAX_DURATION:
            raise PolicyError(
                "extend", max_total, f"extend max_total must be at most P{MAX_DURATION.days}D; got {max_total!r}"
            )
        object.__setattr__(self, "groups", checked_groups)
        object.__setattr__(self, "people", checked_people)
        object.__setattr__(self, "max_total", delta)
        text = max_total.strip().upper() if isinstance(max_total, str) else format_duration(delta)
        object.__setattr__(self, "max_total_iso", text)

    def allows(self, *, groups: Iterable[str], names: Iterable[str | None]) -> bool:
        """True when someone in `groups`, or known by one of `names` (compared by person key), may extend."""
        return bool(set(groups) & set(self.groups)) or bool(person_keys(names) & person_keys(self.people))

    def to_dict(self) -> dict[str, Any]:
        return {"groups": list(self.groups), "people": list(self.people), "max_total": self.max_total_iso}

    @classmethod
    def parse(cls, value: object) -> Extension:
        """An `Extension`, or the dict `to_dict` writes (as it rides in the envelope's `rules`)."""
        if isinstance(value, Extension):
            return value
        if isinstance(value, Mapping) and "max_total" in value and set(value) <= {"groups", "people", "max_total"}:
            return cls(groups=value.get("groups") or (), people=value.get("people") or (), max_total=value["max_total"])
        raise PolicyError(
            "extend",
            value,
            f"extend must be Extension(groups=[...], people=[...], max_total='P7D') or its dict; got {value!r}",
        )


@dataclass(frozen=True, slots=True)
class Extended:
    """One move of a question's deadline, as kept on its row."""

    at: str
    """RFC 3339 time it was made."""
    by: str | None
    """Who moved it, as the door proved them (`answered_by` of an API user)."""
    previous: str
    """The deadline before (RFC 3339)."""
    until: str
    """The deadline after (RFC 3339)."""
    reminders: int
    """Reminders already sent when it was made: those after them moved."""
    escalations: int
    """Escalation steps already in effect when it was made: those after them moved."""

    @property
    def delta(self) -> timedelta:
        """How far this move took the deadline."""
        return parse_rfc3339(self.until) - parse_rfc3339(self.previous)

    def to_item(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "by": self.by,
            "previous": self.previous,
            "until": self.until,
            "reminders": self.reminders,
            "escalations": self.escalations,
        }

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Extended:
        return cls(
            at=str(item["at"]),
            by=item.get("by"),
            previous=str(item["previous"]),
            until=str(item["until"]),
            reminders=int(item.get("reminders") or 0),
            escalations=int(item.get("escalations") or 0),
        )


def shifted(times: Sequence[datetime], extensions: Sequence[Extended], *, sent: str) -> tuple[datetime, ...]:
    """`times` (the policy's follow-up times, in order, from the deadline it was asked with) after `extensions`.

    The follow-up at index `i` moves by every extension made while fewer than `i + 1` of its kind had been sent
    (`sent` names the kind: `"reminders"` or `"escalations"`), so what was still to come moves with the deadline and
    what already happened stays put. Order is kept: a later follow-up never moves less than an earlier one.
    """
    moved = []
    for index, moment in enumerate(times):
        delta = sum((e.delta for e in extensions if getattr(e, sent) <= index), timedelta(0))
        moved.append(moment + delta)
    return tuple(moved)
