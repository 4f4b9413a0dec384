"""What happens to a question while it waits: reminders, escalation steps and a quorum of approvers.

`WaitPolicy(reminders=..., escalation=..., quorum=...)` takes these. They ride in the envelope's `rules`
(so they round-trip through the envelope, the checkpoint and the ledger row like every policy field);
`FollowUps.of(rules)` reads them back wherever a question is handled. Every time here is relative to
when the question was asked (`after`) or to its deadline (`before_deadline`), so a republish never
moves one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

from agent_wait.common.durations import (
    ACCEPTED_FORMS,
    MAX_DURATION,
    DurationSyntaxError,
    format_duration,
    parse_duration,
)
from agent_wait.errors import PolicyError
from agent_wait.policy._names import check_names

__all__ = ("MAX_ESCALATION_STEPS", "MAX_REMINDERS", "Escalation", "FollowUps", "Quorum", "Reminder")

MAX_REMINDERS = 10
"""The most reminders one question may have; each is one announcement."""
MAX_ESCALATION_STEPS = 5
"""The most escalation steps one question may have."""


def _duration(owner: str, name: str, value: object) -> tuple[timedelta, str]:
    try:
        delta = parse_duration(value)
    except DurationSyntaxError as exc:
        raise PolicyError(owner, value, f"{owner} {name} must be {ACCEPTED_FORMS}; {exc}") from None
    if delta > MAX_DURATION:
        raise PolicyError(
            owner, value, f"{owner} {name} must be at most P{MAX_DURATION.days}D (about ten years); got {value!r}"
        )
    text = value.strip().upper() if isinstance(value, str) else format_duration(delta)
    return delta, text


@dataclass(frozen=True, slots=True, init=False)
class Reminder:
    """Announce the question again, as `wait.reminder`, to the audience it has at that time.

    Give exactly one of `after` (counted from when the question was asked) or `before_deadline`
    (counted back from its deadline; the policy needs a `timeout`). A plain duration string in
    `WaitPolicy(reminders=[...])` means `Reminder(after=...)`.

    Example:
        >>> Reminder(after="PT4H").to_dict(), Reminder(before_deadline="P1D").to_dict()
        ({'after': 'PT4H'}, {'before_deadline': 'P1D'})
    """

    after: timedelta | None
    before_deadline: timedelta | None
    text: str
    """The duration as ISO 8601 text, as written."""

    def __init__(self, *, after: str | float | None = None, before_deadline: str | float | None = None) -> None:
        if (after is None) == (before_deadline is None):
            raise PolicyError(
                "reminders",
                {"after": after, "before_deadline": before_deadline},
                "a reminder takes exactly one of after= (from when the question was asked) or before_deadline=, "
                "e.g. Reminder(after='PT4H') or Reminder(before_deadline='P1D')",
            )
        name, value = ("after", after) if after is not None else ("before_deadline", before_deadline)
        delta, text = _duration("reminders", name, value)
        object.__setattr__(self, "after", delta if after is not None else None)
        object.__setattr__(self, "before_deadline", delta if before_deadline is not None else None)
        object.__setattr__(self, "text", text)

    def offset(self, timeout: timedelta | None) -> timedelta:
        """How long after the question was asked this reminder is due."""
        if self.after is not None:
            return self.after
        if timeout is None or self.before_deadline is None:  # refused by `FollowUps.check`
            raise PolicyError("reminders", self.to_dict(), "a before_deadline reminder needs a timeout")
        return timeout - self.before_deadline

    def to_dict(self) -> dict[str, str]:
        return {"after": self.text} if self.after is not None else {"before_deadline": self.text}

    @classmethod
    def parse(cls, value: object) -> Reminder:
        """A `Reminder`, a duration (meaning `after`), or the dict `to_dict` writes."""
        if isinstance(value, Reminder):
            return value
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            return cls(after=value)
        if isinstance(value, Mapping) and set(value) in ({"after"}, {"before_deadline"}):
            return cls(**{str(key): item for key, item in value.items()})
        raise PolicyError(
            "reminders",
            value,
            "each reminder must be a duration such as 'PT4H' (after asking), Reminder(after=...) or "
            f"Reminder(before_deadline=...); got {value!r}",
        )


@dataclass(frozen=True, slots=True, init=False)
class Escalation:
    """One escalation step: after `after`, the question is also routed to new tags and answerers.

    The step is announced as `wait.escalated`, carrying the question's tags with `tags` laid over them, so
    an SNS filter policy or an EventBridge rule can route it to the new audience. `answerer_groups` and
    `answerer_principals` join those who may answer; with `replace_answerers=True` they take over instead.

    Example:
        >>> managers = {"approver_group": "finance-managers"}
        >>> step = Escalation(after="P2D", tags=managers, answerer_groups=["finance-managers"])
        >>> step.to_dict()["after"], step.answerer_groups
        ('P2D', ('finance-managers',))
    """

    after: timedelta
    after_iso: str
    tags: Mapping[str, str]
    answerer_groups: tuple[str, ...]
    answerer_principals: tuple[str, ...]
    replace_answerers: bool

    def __init__(
        self,
        *,
        after: str | float,
        tags: Mapping[str, str] | None = None,
        answerer_groups: Iterable[str] = (),
        answerer_principals: Iterable[str] = (),
        replace_answerers: bool = False,
    ) -> None:
        delta, text = _duration("escalation", "after", after)
        if tags is not None and (
            not isinstance(tags, Mapping)
            or not all(isinstance(k, str) and k and isinstance(v, str) for k, v in tags.items())
        ):
            raise PolicyError("escalation", tags, f"escalation tags must map non-empty str keys to str; got {tags!r}")
        groups = check_names("escalation", answerer_groups, label="escalation answerer_groups", spaces=False)
        principals = check_names("escalation", answerer_principals, label="escalation answerer_principals")
        if not isinstance(replace_answerers, bool):
            raise PolicyError("escalation", replace_answerers, "escalation replace_answerers must be True or False")
        if replace_answerers and not (groups or principals):
            raise PolicyError(
                "escalation",
                text,
                "an escalation step with replace_answerers=True must name answerer_groups or answerer_principals "
                "(who takes over)",
            )
        if not (tags or groups or principals):
            raise PolicyError(
                "escalation",
                text,
                "an escalation step must add tags (to route it) or answerers (who may then answer); it has neither",
            )
        object.__setattr__(self, "after", delta)
        object.__setattr__(self, "after_iso", text)
        object.__setattr__(self, "tags", MappingProxyType(dict(tags or {})))
        object.__setattr__(self, "answerer_groups", groups)
        object.__setattr__(self, "answerer_principals", principals)
        object.__setattr__(self, "replace_answerers", replace_answerers)

    def to_dict(self) -> dict[str, Any]:
        return {
            "after": self.after_iso,
            "tags": dict(self.tags),
            "answerer_groups": list(self.answerer_groups),
            "answerer_principals": list(self.answerer_principals),
            "replace_answerers": self.replace_answerers,
        }

    @classmethod
    def parse(cls, value: object) -> Escalation:
        if isinstance(value, Escalation):
            return value
        known = {"after", "tags", "answerer_groups", "answerer_principals", "replace_answerers"}
        if isinstance(value, Mapping) and "after" in value and set(value) <= known:
            return cls(**{str(key): item for key, item in value.items()})
        raise PolicyError(
            "escalation",
            value,
            "each escalation step must be Escalation(after=..., tags=..., answerer_groups=...) or its dict "
            f"with keys from {sorted(known)}; got {value!r}",
        )


@dataclass(frozen=True, slots=True, init=False)
class Quorum:
    """How many distinct answerers must approve before the question is decided, and which answers veto.

    Each answer is a vote, recorded and announced (`wait.voted`); a second vote by the same answerer
    changes nothing. The question is decided once: when `approvals` distinct answerers voted one of
    `approve`, or at once by any `veto` vote. The agent receives the deciding answer with `votes`, the
    list of every vote, added.

    Example:
        >>> Quorum(2).to_dict()
        {'approvals': 2, 'approve': ['approve'], 'veto': ['reject']}
    """

    approvals: int
    approve: tuple[str, ...]
    veto: tuple[str, ...]

    def __init__(
        self, approvals: int, *, approve: Iterable[str] = ("approve",), veto: Iterable[str] = ("reject",)
    ) -> None:
        if isinstance(approvals, bool) or not isinstance(approvals, int) or approvals < 1:
            raise PolicyError(
                "quorum", approvals, f"quorum approvals must be a whole number of at least 1; got {approvals!r}"
            )
        approving = check_names("quorum", approve, label="quorum approve")
        vetoing = check_names("quorum", veto, label="quorum veto")
        if not approving:
            raise PolicyError("quorum", approving, "quorum approve must name at least one action, e.g. ['approve']")
        if set(approving) & set(vetoing):
            raise PolicyError(
                "quorum", sorted(set(approving) & set(vetoing)), "an action cannot both approve and veto in a quorum"
            )
        object.__setattr__(self, "approvals", approvals)
        object.__setattr__(self, "approve", approving)
        object.__setattr__(self, "veto", vetoing)

    def to_dict(self) -> dict[str, Any]:
        return {"approvals": self.approvals, "approve": list(self.approve), "veto": list(self.veto)}

    def count(self, actions: Iterable[str | None]) -> int:
        """How many of `actions` approve."""
        return sum(1 for action in actions if action in self.approve)

    def decides(self, actions: Iterable[str | None]) -> bool:
        """True when these votes (in order, one per answerer) decide: the last one vetoes, or enough approve."""
        votes = list(actions)
        return bool(votes) and (votes[-1] in self.veto or self.count(votes) >= self.approvals)

    @classmethod
    def parse(cls, value: object) -> Quorum:
        if isinstance(value, Quorum):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return cls(value)
        if isinstance(value, Mapping) and "approvals" in value and set(value) <= {"approvals", "approve", "veto"}:
            return cls(
                value["approvals"],
                approve=value.get("approve", ("approve",)),
                veto=value.get("veto", ("reject",)),
            )
        raise PolicyError(
            "quorum", value, f"quorum must be a number of approvals such as 2, or Quorum(2, veto=[...]); got {value!r}"
        )


@dataclass(frozen=True, slots=True)
class FollowUps:
    """A question's reminders, escalation steps and quorum, in due order (`WaitPolicy.followups`, or read
    back from an envelope's `rules` with `FollowUps.of`)."""

    reminders: tuple[Reminder, ...] = ()
    escalation: tuple[Escalation, ...] = ()
    quorum: Quorum | None = None
    timeout: timedelta | None = field(default=None)

    @classmethod
    def build(
        cls,
        *,
        reminders: Iterable[object] | None,
        escalation: Iterable[object] | None,
        quorum: object,
        timeout: timedelta | None,
        allowed_actions: tuple[str, ...],
    ) -> FollowUps:
        """Check and order the policy's follow-ups (`WaitPolicy` calls this)."""
        parsed_reminders = tuple(Reminder.parse(r) for r in _sequence("reminders", reminders))
        steps = tuple(Escalation.parse(s) for s in _sequence("escalation", escalation))
        if len(parsed_reminders) > MAX_REMINDERS:
            raise PolicyError("reminders", len(parsed_reminders), f"at most {MAX_REMINDERS} reminders per question")
        if len(steps) > MAX_ESCALATION_STEPS:
            raise PolicyError("escalation", len(steps), f"at most {MAX_ESCALATION_STEPS} escalation steps per question")
        for reminder in parsed_reminders:
            if reminder.before_deadline is not None and timeout is None:
                raise PolicyError(
                    "reminders", reminder.to_dict(), "a before_deadline reminder needs a timeout on the policy"
                )
            if timeout is not None and not timedelta(0) < reminder.offset(timeout) < timeout:
                raise PolicyError(
                    "reminders",
                    reminder.to_dict(),
                    f"reminder {reminder.to_dict()} falls outside the question's life (timeout "
                    f"{format_duration(timeout)}); a reminder must come after asking and before the deadline",
                )
        offsets = [r.offset(timeout) for r in parsed_reminders]
        if len(set(offsets)) != len(offsets):
            raise PolicyError(
                "reminders", [r.to_dict() for r in parsed_reminders], "two reminders fall at the same time"
            )
        ordered = tuple(r for _, r in sorted(zip(offsets, parsed_reminders, strict=True), key=lambda pair: pair[0]))
        afters = [step.after for step in steps]
        if afters != sorted(set(afters)):
            raise PolicyError(
                "escalation",
                [s.after_iso for s in steps],
                "escalation steps must come in order, each later than the last",
            )
        if timeout is not None and steps and steps[-1].after >= timeout:
            raise PolicyError(
                "escalation",
                steps[-1].after_iso,
                f"escalation step after {steps[-1].after_iso} comes at or after the deadline "
                f"({format_duration(timeout)}); it would never happen",
            )
        parsed_quorum = None if quorum is None else Quorum.parse(quorum)
        if parsed_quorum is not None:
            missing = [a for a in parsed_quorum.approve + parsed_quorum.veto if a not in allowed_actions]
            if missing:
                raise PolicyError(
                    "quorum", missing, f"quorum actions {missing} are not in allowed_actions {list(allowed_actions)}"
                )
            if parsed_quorum.approvals == 1:
                parsed_quorum = None  # one approval decides: exactly the default, where any answer decides
        return cls(ordered, steps, parsed_quorum, timeout)

    @classmethod
    def of(cls, rules: Mapping[str, Any]) -> FollowUps:
        """The follow-ups recorded in an envelope's `rules` (none when it has none)."""
        reminders = tuple(Reminder.parse(r) for r in rules.get("reminders") or ())
        steps = tuple(Escalation.parse(s) for s in rules.get("escalation") or ())
        quorum = Quorum.parse(rules["quorum"]) if rules.get("quorum") else None
        return cls(reminders, steps, quorum)

    @property
    def voting(self) -> bool:
        """True when answers are votes (a quorum is set)."""
        return self.quorum is not None

    def rules(self) -> dict[str, Any]:
        """The envelope `rules` entries, only those that are set."""
        rules: dict[str, Any] = {}
        if self.reminders:
            rules["reminders"] = [r.to_dict() for r in self.reminders]
        if self.escalation:
            rules["escalation"] = [s.to_dict() for s in self.escalation]
        if self.quorum is not None:
            rules["quorum"] = self.quorum.to_dict()
        return rules

    def reminder_times(self, asked_at: datetime, expires_at: datetime | None) -> tuple[datetime, ...]:
        """When each reminder is due, in order."""
        times = []
        for reminder in self.reminders:
            if reminder.after is not None:
                times.append(asked_at + reminder.after)
            elif expires_at is not None and reminder.before_deadline is not None:
                times.append(expires_at - reminder.before_deadline)
        return tuple(sorted(times))

    def escalation_times(self, asked_at: datetime) -> tuple[datetime, ...]:
        """When each escalation step is due, in order."""
        return tuple(asked_at + step.after for step in self.escalation)

    def tags_at(self, tags: Mapping[str, str], level: int) -> dict[str, str]:
        """The question's routing tags once `level` escalation steps are in effect."""
        merged = dict(tags)
        for step in self.escalation[:level]:
            merged.update(step.tags)
        return merged

    def answerers_at(self, answerers: Mapping[str, Any] | None, level: int) -> dict[str, list[str]] | None:
        """Who may answer once `level` escalation steps are in effect (None: anyone the transport lets in)."""
        groups: list[str] = list((answerers or {}).get("groups") or ())
        principals: list[str] = list((answerers or {}).get("principals") or ())
        restricted = answerers is not None
        for step in self.escalation[:level]:
            if step.replace_answerers:
                groups, principals, restricted = list(step.answerer_groups), list(step.answerer_principals), True
            elif restricted:
                groups += [g for g in step.answerer_groups if g not in groups]
                principals += [p for p in step.answerer_principals if p not in principals]
        return {"groups": groups, "principals": principals} if restricted else None


def _sequence(name: str, values: Iterable[object] | None) -> tuple[object, ...]:
    if values is None:
        return ()
    if isinstance(values, str | Mapping) or not isinstance(values, Iterable):
        raise PolicyError(name, values, f"{name} must be a list; got a {type(values).__name__}")
    return tuple(values)
